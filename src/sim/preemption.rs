//! `coplan simulate` for preemption workloads, the paper's protocol (DESIGN §5.5): per seed,
//! fill to saturation by seeded churn; per cycle, plan the `[[preempt]]` list with every
//! planner from the same starting state, record the metrics, reset. Seeds run in parallel and
//! give the same result as a sequential run.

use std::collections::BTreeMap;

use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use super::stats::{Summary, summarize};
use crate::plan::cancel::Cancel;
use crate::plan::error::PlanningError;
use crate::plan::preemption::PreemptionPlannerReport;
use crate::preempt::planning::plan_from_state;
use crate::preempt::problem::Problem;
use crate::preempt::registry;
use crate::preempt::scenario::{self, FillGoal};
use crate::rng::SeededRng;
use crate::spec::PreemptionSpec;
use crate::spec::preemption::{ResetMode, TopologyQos};
use crate::topology::Cluster;
use crate::topology::state::ClusterState;

/// What to simulate; `None` = the spec's `[simulation]` / `[planners]` values.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Seeds to run (`--seeds`), each with its own initial fill.
    pub seeds: Option<Vec<u64>>,
    /// Cycles per seed (`--cycles`): each issues the `[[preempt]]` list from the same starting
    /// state.
    pub cycles: Option<u64>,
    /// Planners to compare, by registry name (`--planners`).
    pub planners: Option<Vec<String>>,
    /// `--solver` of a sweep: every scenario's `[planners] solver`.
    pub solver: Option<crate::spec::SolverBackend>,
    /// A stop request ends the run with `PlanningError::Interrupted` (checked per seed, per
    /// cycle, per planner and inside the exact searches).
    pub cancel: Cancel,
}

/// The metric values of one seed: per planner, metric → mean over the seed's cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedResult {
    /// The seed these values are of.
    pub seed: u64,
    /// Per planner, in the order asked: its name, metric → mean over the seed's cycles, and its
    /// totals over the cycles.
    pub per_planner: Vec<(String, BTreeMap<String, f64>, Totals)>,
}

/// Sums over cycles (and, in a report, over seeds) for paper-style totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Totals {
    /// Preemptors planned.
    pub preemptions: u64,
    /// Preemptors placed.
    pub placed: u64,
    /// Preemptors placed at or better than their required level.
    pub hits: u64,
    /// Guaranteed preemptors planned.
    pub preemptions_guaranteed: u64,
    /// Guaranteed preemptors that were hits.
    pub hits_guaranteed: u64,
    /// Best-effort preemptors planned.
    pub preemptions_best_effort: u64,
    /// Best-effort preemptors that were hits.
    pub hits_best_effort: u64,
    /// Pods evicted.
    pub victims: u64,
    /// Pods evicted for a preemptor that was then not placed.
    pub wasted_evictions: u64,
    /// Victim subsets (or dry runs) the planner evaluated.
    pub subsets_evaluated: u64,
    /// Wall time of the planner, in milliseconds (redacted in snapshots).
    pub runtime_ms: f64,
}

impl Totals {
    fn add_report(&mut self, r: &PreemptionPlannerReport) {
        self.preemptions += r.metrics.preemptions;
        self.placed += r.metrics.placed;
        self.hits += r.metrics.hits;
        self.victims += r.metrics.victims;
        self.wasted_evictions += r.metrics.wasted_evictions;
        self.subsets_evaluated += r.metrics.subsets_evaluated;
        self.runtime_ms += r.runtime_ms;
        for e in &r.events {
            match e.topology_qos {
                TopologyQos::Guaranteed => {
                    self.preemptions_guaranteed += 1;
                    self.hits_guaranteed += u64::from(e.hit);
                }
                TopologyQos::BestEffort => {
                    self.preemptions_best_effort += 1;
                    self.hits_best_effort += u64::from(e.hit);
                }
                TopologyQos::None => {}
            }
        }
    }

    fn add(&mut self, o: &Totals) {
        self.preemptions += o.preemptions;
        self.placed += o.placed;
        self.hits += o.hits;
        self.preemptions_guaranteed += o.preemptions_guaranteed;
        self.hits_guaranteed += o.hits_guaranteed;
        self.preemptions_best_effort += o.preemptions_best_effort;
        self.hits_best_effort += o.hits_best_effort;
        self.victims += o.victims;
        self.wasted_evictions += o.wasted_evictions;
        self.subsets_evaluated += o.subsets_evaluated;
        self.runtime_ms += o.runtime_ms;
    }
}

/// One planner summarised over seeds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PreemptionPlannerSummary {
    /// The planner's registry name.
    pub name: String,
    /// Metric → its summary over seeds of the per-seed means over cycles.
    pub metrics: BTreeMap<String, Summary>,
    /// Sums over every cycle of every seed (e.g. "hits 2225/5000").
    pub totals: Totals,
    /// Metric → its value on each seed, in the order of the top-level `seeds`; null where the
    /// planner had no value on that seed. What `coplan diff` pairs seed by seed.
    pub per_seed: BTreeMap<String, Vec<Option<f64>>>,
}

/// `coplan simulate` output of a preemption workload.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PreemptionSimulation {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"simulation"`.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// The seeds run, in the order given: the first of `seeds_requested` alone when
    /// `nothing_random`.
    pub seeds: Vec<u64>,
    /// The seeds asked for (`--seeds`, else `[simulation].seeds`).
    // Not required in the schema: outputs written before these fields existed stay valid.
    #[serde(default)]
    pub seeds_requested: Vec<u64>,
    /// Nothing in the workload depends on the seed (no `[fill]`, see
    /// [`nothing_random`]): one seed is run whatever was asked, and no confidence interval
    /// applies (every `ci95` is null).
    #[serde(default)]
    pub nothing_random: bool,
    /// What the reader should know about this run, one sentence each (why one seed ran).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Cycles per seed.
    pub cycles: u64,
    /// One summary per planner, in the order asked.
    pub planners: Vec<PreemptionPlannerSummary>,
    /// Per-seed values, for long-format output (not in JSON: the summaries are).
    #[serde(skip)]
    pub per_seed: Vec<SeedResult>,
}

/// Metrics that depend on the machine: left out of the per-seed values (the totals carry the
/// time), so that the same inputs give byte-identical rows and shards merge into exactly the
/// unsharded run.
pub const TIMING_METRICS: [&str; 1] = ["runtime_ms"];

/// The gang metrics a simulation of gangs writes per cycle (DESIGN §12.3), beside
/// [`GANG_HIT_RATE`]`<level>` for each required level.
pub const GANG_METRICS: [&str; 6] = [
    "gangs.placed",
    "gangs.partial",
    "gangs.split",
    "gangs.preferred_hits",
    "gangs.victims_per_gang",
    "gangs.over_eviction",
];

/// The prefix of a gang hit rate per required level (`gangs.hit_rate.rack`).
pub const GANG_HIT_RATE: &str = "gangs.hit_rate.";

/// Whether `metric` is one of the gang metrics a simulation of gangs writes.
pub fn is_gang_metric(metric: &str) -> bool {
    GANG_METRICS.contains(&metric)
        || metric
            .strip_prefix(GANG_HIT_RATE)
            .is_some_and(|level| !level.is_empty())
}

/// Resolved options.
pub fn resolve(spec: &PreemptionSpec, options: &SimOptions) -> (Vec<u64>, u64, Vec<String>) {
    let seeds = options
        .seeds
        .clone()
        .unwrap_or_else(|| spec.simulation.seeds.values());
    let cycles = options
        .cycles
        .unwrap_or(spec.simulation.cycles.max(1) as u64);
    let planners = options
        .planners
        .clone()
        .unwrap_or_else(|| spec.planners_to_run());
    (seeds, cycles, planners)
}

/// Whether nothing in a preemption workload depends on the seed.
///
/// The seed draws only the fill: the initial `[fill]` by churn, and under
/// `reset = "refill"` the churn round between cycles, whose departures are drawn among the
/// fill's pods and whose refill places fill pods. Everything else is fixed: `[[running]]` pods
/// sit at their ids (or where the deterministic node allocator puts a count), `[[preempt]]` is
/// a list, and no planner draws at random. So a workload without a `[fill]`, or whose mix gives
/// no class a positive weight (the fill then places nothing and no churn has a pod to draw),
/// starts every seed from the same state and every cycle from that state again: one seed
/// gives every value there is.
pub fn nothing_random(spec: &PreemptionSpec) -> bool {
    spec.fill
        .as_ref()
        .is_none_or(|fill| fill.mix.values().all(|&weight| weight <= 0.0))
}

/// The seeds to run of those asked: all of them, or only the first when
/// [`nothing_random`] (the others would repeat it and fake a zero-width interval).
pub fn seeds_to_run(spec: &PreemptionSpec, asked: &[u64]) -> Vec<u64> {
    if nothing_random(spec) {
        asked.iter().take(1).copied().collect()
    } else {
        asked.to_vec()
    }
}

/// The note a run of a workload with [`nothing_random`] carries (table, JSON, stderr).
pub fn one_seed_note(asked: usize) -> String {
    let asked = match asked {
        0 | 1 => String::new(),
        n => format!(" ({n} were asked)"),
    };
    format!(
        "nothing in this workload is random (no [fill] draws pods; every seed and every cycle \
         starts from the same state): one seed is run{asked} and no confidence interval applies"
    )
}

/// Runs the protocol. `progress` is called once per finished cycle (from worker threads).
/// A workload with [`nothing_random`] runs its first seed only and says so.
pub fn simulate(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &SimOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<PreemptionSimulation, PlanningError> {
    run(cluster, spec, options, true, progress)
}

/// [`simulate`] on every seed asked, even when nothing is random: a sweep's shards declare
/// their seeds and `merge` pairs rows by them, so a scenario cannot drop seeds on its own.
pub fn simulate_every_seed(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &SimOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<PreemptionSimulation, PlanningError> {
    run(cluster, spec, options, false, progress)
}

fn run(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &SimOptions,
    collapse: bool,
    progress: &(dyn Fn() + Sync),
) -> Result<PreemptionSimulation, PlanningError> {
    let (seeds_requested, cycles, planners) = resolve(spec, options);
    let fixed = collapse && nothing_random(spec);
    let seeds = if fixed {
        seeds_to_run(spec, &seeds_requested)
    } else {
        seeds_requested.clone()
    };
    let notes = if fixed {
        vec![one_seed_note(seeds_requested.len())]
    } else {
        Vec::new()
    };
    registry::resolve(&planners)?;
    let per_seed: Vec<Result<SeedResult, PlanningError>> = seeds
        .par_iter()
        .map(|&seed| {
            // Seeds not started yet when a stop comes do not start.
            options.cancel.check()?;
            run_seed(
                cluster,
                spec,
                seed,
                (cycles, options.cancel),
                &planners,
                progress,
            )
        })
        .collect();
    let per_seed: Vec<SeedResult> = per_seed.into_iter().collect::<Result<_, _>>()?;
    let summaries = planners
        .iter()
        .map(|name| {
            let mut by_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut by_seed: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
            let mut totals = Totals::default();
            for (i, sr) in per_seed.iter().enumerate() {
                if let Some((_, m, t)) = sr.per_planner.iter().find(|(n, _, _)| n == name) {
                    for (k, v) in m {
                        by_metric.entry(k.clone()).or_default().push(*v);
                        by_seed
                            .entry(k.clone())
                            .or_insert_with(|| vec![None; per_seed.len()])[i] = Some(*v);
                    }
                    totals.add(t);
                }
            }
            PreemptionPlannerSummary {
                name: name.clone(),
                metrics: by_metric
                    .into_iter()
                    .filter_map(|(k, v)| summarize(&v).map(|s| (k, s)))
                    .collect(),
                totals,
                per_seed: by_seed,
            }
        })
        .collect();
    Ok(PreemptionSimulation {
        schema_version: 1,
        kind: "simulation",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seeds,
        seeds_requested,
        nothing_random: fixed,
        notes,
        cycles,
        planners: summaries,
        per_seed,
    })
}

/// One seed: fill, then `cycles` cycles from the same starting state for every planner.
pub fn run_seed(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    seed: u64,
    (cycles, cancel): (u64, Cancel),
    planners: &[String],
    progress: &(dyn Fn() + Sync),
) -> Result<SeedResult, PlanningError> {
    let state =
        scenario::initial_state(cluster, spec, Some(seed)).map_err(PlanningError::Invalid)?;
    run_cycles(
        cluster,
        spec,
        state,
        (seed, FillGoal::Utilization),
        (cycles, cancel),
        planners,
        progress,
    )
}

/// The cycles of one seed from its initial `state`, every refill between cycles stopping at
/// `goal` (the goal the initial fill stopped at).
pub fn run_cycles(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    mut state: ClusterState,
    (seed, goal): (u64, FillGoal),
    (cycles, cancel): (u64, Cancel),
    planners: &[String],
    progress: &(dyn Fn() + Sync),
) -> Result<SeedResult, PlanningError> {
    let mut problem = Problem {
        cancel,
        ..Problem::new(cluster, spec)
    };
    // The churn between cycles draws from its own stream, derived from the seed.
    let mut rng = SeededRng::new(seed ^ 0x5eed_c7c1_e000_0000);
    // Per planner: metric → (sum over cycles, cycles with a value), and the totals.
    let mut sums: Vec<(MetricSums, Totals)> =
        vec![(BTreeMap::new(), Totals::default()); planners.len()];
    for cycle in 0..cycles {
        cancel.check()?;
        // Each cycle is one plan: its budget starts afresh, so a cycle's result does not
        // depend on how many ran before it.
        problem.cancel = cancel.restarted();
        let mut start = state.clone();
        let reports = if spec.has_gangs() {
            let gangs = crate::preempt::gang::gangs(problem.cluster, spec, &mut start);
            crate::preempt::gang::planning::plan_gangs(&problem, &start, &gangs, planners, None)?
        } else {
            let preemptors = scenario::preemptors(problem.cluster, spec, &mut start);
            plan_from_state(&problem, &start, &preemptors, planners)?
        };
        // A solve cut short by the stop request must not count as a result.
        cancel.check()?;
        for (report, (metrics, totals)) in reports.iter().zip(sums.iter_mut()) {
            totals.add_report(report);
            for (k, v) in numeric_metrics(report) {
                let e = metrics.entry(k).or_insert((0.0, 0));
                e.0 += v;
                e.1 += 1;
            }
        }
        if let (ResetMode::Refill, Some(fill)) = (spec.simulation.reset, &spec.fill) {
            let start_s =
                (fill.churn_rounds.max(0) as u64 + cycle + 1) as f64 * scenario::CHURN_ROUND_S;
            scenario::churn_round(cluster, spec, fill, goal, &mut rng, &mut state, start_s);
            // Departures are no disruptions: each budget is recounted over the pods that run
            // now, as its controller recounts it.
            state.attach_budgets(spec, spec.planners.respect_pdb);
        }
        progress();
    }
    Ok(SeedResult {
        seed,
        per_planner: planners
            .iter()
            .zip(sums)
            .map(|(name, (m, t))| {
                let means = m
                    .into_iter()
                    .map(|(k, (sum, n))| (k, sum / n.max(1) as f64))
                    .collect();
                (name.clone(), means, t)
            })
            .collect(),
    })
}

/// Per metric: the sum over cycles and the number of cycles with a value.
type MetricSums = BTreeMap<String, (f64, u64)>;

/// The numeric (non-null) metrics of a report, by name.
fn numeric_metrics(r: &PreemptionPlannerReport) -> Vec<(String, f64)> {
    let value = serde_json::to_value(&r.metrics).unwrap_or_default();
    let mut out: Vec<(String, f64)> = value
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !TIMING_METRICS.contains(&k.as_str()))
                .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    // A plan of gangs: its gang metrics too ([`GANG_METRICS`], [`GANG_HIT_RATE`]`<level>`).
    if let Some(g) = &r.metrics.gangs {
        let values = [
            Some(g.placed as f64),
            Some(g.partial as f64),
            Some(g.split as f64),
            Some(g.preferred_hits as f64),
            g.victims_per_gang,
            g.over_eviction,
        ];
        for (name, v) in GANG_METRICS.iter().zip(values) {
            if let Some(v) = v {
                out.push((name.to_string(), v));
            }
        }
        for (level, rate) in &g.hit_rate_by_level {
            out.push((format!("{GANG_HIT_RATE}{level}"), *rate));
        }
    }
    // By name, whatever order the map keeps.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
