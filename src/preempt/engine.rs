//! The plan engine: builds the initial state, runs each planner over the preemptor list
//! (applying every decision before the next), measures the plans, computes both gaps and runs
//! the independent verifier on every plan.

use std::time::Instant;

use serde::Serialize;

use super::metrics::{self, Metrics};
use super::{
    BatchDecision, Decision, PlanError, PreemptionPlanner, Preemptor, Problem, Status, ilp,
    registry, scenario,
};
use crate::spec::preemption::TopologyQos;
use crate::spec::{Finding, PreemptionSpec};
use crate::topology::state::{ClusterState, Pod};
use crate::topology::{Cluster, Level, place};

/// What happened to one preemptor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub preemptor: String,
    pub workload: String,
    pub topology_qos: TopologyQos,
    /// Server chosen (also for a refused pod, whose victims were evicted there).
    pub node: Option<String>,
    pub victims: Vec<String>,
    pub gpus: Vec<u32>,
    pub cores: Vec<u32>,
    pub level: Option<Level>,
    pub required_level: Option<Level>,
    pub placed: bool,
    /// `placed`, `refused` (a guaranteed pod below its required level: admission failed) or
    /// `no-candidate`.
    pub outcome: Outcome,
    pub hit: bool,
    pub cost: f64,
    pub subsets_evaluated: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Placed,
    Refused,
    NoCandidate,
}

/// An event with what the engine needs besides its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub event: Event,
    pub qos: TopologyQos,
    pub victims: Vec<Pod>,
    /// Server type penalty of the placement level, when placed.
    pub slowdown: Option<f64>,
}

/// One planner's plan, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerReport {
    pub name: String,
    pub status: Status,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub gap_is_bound: bool,
    pub bound: Option<f64>,
    pub decision_gap: Option<f64>,
    pub runtime_ms: f64,
    pub truncated: bool,
    pub metrics: Metrics,
    pub events: Vec<Event>,
}

/// The whole plan output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanReport {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: Option<u64>,
    pub planners: Vec<PlannerReport>,
    /// Non-fatal remarks (e.g. a preemptor no server type can hold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why `plan` failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanFailure {
    /// The workload does not fit the cluster (cross-file findings, exit 2).
    #[error("the workload does not fit the cluster")]
    Invalid(Vec<Finding>),
    /// A planner name that does not exist (exit 2).
    #[error("unknown planner `{0}`")]
    UnknownPlanner(String),
    /// A planner or solver failed (exit 1).
    #[error("planner `{planner}` failed: {error}")]
    Planner { planner: String, error: PlanError },
    /// The verifier rejected a plan (exit 1).
    #[error("the verifier rejected the plan of `{planner}` at {event}: {reason}")]
    Verification {
        planner: String,
        event: String,
        reason: String,
    },
}

/// Options of one plan run.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Planners to run, in report order; `None` = the spec's `[planners].run`.
    pub planners: Option<Vec<String>>,
    /// Overrides `[fill].seed`.
    pub seed: Option<u64>,
}

/// A planner's run before measurement.
struct Run {
    status: Status,
    applied: Vec<Applied>,
    /// The state each event faced (sequential planners).
    faced: Vec<ClusterState>,
    runtime_ms: f64,
    bound: Option<f64>,
    /// False when a solver stopped before finding any plan (no events, no objective).
    incumbent: bool,
}

impl Run {
    fn objective(&self) -> f64 {
        self.applied.iter().map(|a| a.event.cost).sum()
    }
}

/// Plans a preemption workload with every requested planner.
pub fn plan(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &PlanOptions,
) -> Result<PlanReport, PlanFailure> {
    let names = options
        .planners
        .clone()
        .unwrap_or_else(|| spec.planners.run.clone());
    check_planner_names(&names)?;
    let problem = Problem::new(cluster, spec);
    let mut initial =
        scenario::initial_state(cluster, spec, options.seed).map_err(PlanFailure::Invalid)?;
    let preemptors = scenario::preemptors(spec, &mut initial);
    let warnings = unplaceable_warnings(cluster, &preemptors);
    let reports = plan_from_state(&problem, &initial, &preemptors, &names)?;
    Ok(PlanReport {
        schema_version: 1,
        kind: "preemption",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed: spec.fill.as_ref().map(|f| options.seed.unwrap_or(f.seed)),
        planners: reports,
        warnings,
    })
}

/// Rejects a planner name that does not exist.
pub fn check_planner_names(names: &[String]) -> Result<(), PlanFailure> {
    let all = registry();
    match names
        .iter()
        .find(|n| !all.iter().any(|p| p.name() == n.as_str()))
    {
        Some(unknown) => Err(PlanFailure::UnknownPlanner(unknown.clone())),
        None => Ok(()),
    }
}

/// Plans `preemptors` from `initial` with the named planners (in that report order), measures
/// and verifies every plan and computes the gaps. Both gaps need their exact planner in `names`.
pub fn plan_from_state(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    names: &[String],
) -> Result<Vec<PlannerReport>, PlanFailure> {
    check_planner_names(names)?;
    let all = registry();
    let chosen: Vec<&dyn PreemptionPlanner> = names
        .iter()
        .filter_map(|n| all.iter().find(|p| p.name() == n.as_str()))
        .map(|p| p.as_ref())
        .collect();
    let with_decision_gap = names.iter().any(|n| n == "ilp");
    let mut runs: Vec<(&dyn PreemptionPlanner, Run)> = Vec::new();
    // Sequential planners first, so the joint planner can start from the best of them.
    let (joint, sequential): (Vec<&dyn PreemptionPlanner>, Vec<&dyn PreemptionPlanner>) =
        chosen.iter().copied().partition(|p| p.joint());
    for planner in sequential {
        let run = run_sequential(problem, planner, initial, preemptors, with_decision_gap)?;
        runs.push((planner, run));
    }
    for planner in joint {
        let best = runs
            .iter()
            .map(|(_, r)| r)
            .min_by(|a, b| a.objective().total_cmp(&b.objective()))
            .map(|r| r.applied.as_slice());
        let run = run_joint(problem, planner, initial, preemptors, best)?;
        runs.push((planner, run));
    }
    runs.sort_by_key(|(p, _)| names.iter().position(|n| n == p.name()));
    let mut reports = Vec::new();
    for (planner, run) in &runs {
        let report = measure(problem, *planner, run, with_decision_gap)?;
        crate::verify::verify_plan(problem.cluster, problem.spec, initial, preemptors, &report)
            .map_err(|e| PlanFailure::Verification {
                planner: planner.name().to_string(),
                event: e.event,
                reason: e.reason,
            })?;
        reports.push(report);
    }
    apply_gaps(&mut reports);
    Ok(reports)
}

fn unplaceable_warnings(cluster: &Cluster, preemptors: &[Preemptor]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for p in preemptors {
        if cluster
            .types
            .iter()
            .all(|t| t.required_level(p.request).is_none())
            && seen.insert(p.workload)
        {
            out.push(format!(
                "no server type can hold {} ({} GPUs, {} cores): planned as unplaced",
                p.name, p.request.gpus, p.request.cores
            ));
        }
    }
    out
}

fn run_sequential(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    keep_states: bool,
) -> Result<Run, PlanFailure> {
    let fail = |error| PlanFailure::Planner {
        planner: planner.name().to_string(),
        error,
    };
    let mut state = initial.clone();
    let mut applied = Vec::with_capacity(preemptors.len());
    let mut faced = Vec::new();
    let mut runtime = 0.0;
    for p in preemptors {
        if keep_states {
            faced.push(state.clone());
        }
        let t0 = Instant::now();
        let decision = planner.decide(problem, &state, p).map_err(fail)?;
        runtime += t0.elapsed().as_secs_f64() * 1000.0;
        applied.push(apply(problem, &mut state, p, &decision).map_err(fail)?);
    }
    Ok(Run {
        status: planner.status(),
        applied,
        faced,
        runtime_ms: runtime,
        bound: None,
        incumbent: true,
    })
}

fn run_joint(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    warm_start: Option<&[Applied]>,
) -> Result<Run, PlanFailure> {
    let fail = |error| PlanFailure::Planner {
        planner: planner.name().to_string(),
        error,
    };
    let t0 = Instant::now();
    let batch: BatchDecision = planner
        .decide_batch(problem, initial, preemptors, warm_start)
        .map_err(fail)?;
    let runtime = t0.elapsed().as_secs_f64() * 1000.0;
    let mut state = initial.clone();
    let mut applied = Vec::with_capacity(preemptors.len());
    let mut faced = Vec::new();
    for (p, d) in preemptors.iter().zip(&batch.decisions) {
        faced.push(state.clone());
        applied.push(apply(problem, &mut state, p, d).map_err(fail)?);
    }
    Ok(Run {
        status: batch.status,
        applied,
        faced,
        runtime_ms: runtime,
        bound: batch.bound,
        incumbent: !batch.decisions.is_empty() || preemptors.is_empty(),
    })
}

/// Applies a decision: evict the victims, place the pod (node allocator unless the planner
/// placed it), check admission, price it.
pub fn apply(
    problem: &Problem<'_>,
    state: &mut ClusterState,
    p: &Preemptor,
    d: &Decision,
) -> Result<Applied, PlanError> {
    let mut victims = Vec::with_capacity(d.victims.len());
    for id in &d.victims {
        let pod = state
            .evict(*id)
            .map_err(|e| PlanError::Internal(format!("{}: {e}", p.name)))?;
        victims.push(pod);
    }
    let workload = problem.spec.workload[p.workload].name.clone();
    let mut event = Event {
        preemptor: p.name.clone(),
        workload,
        topology_qos: p.qos,
        node: None,
        victims: victims.iter().map(|v| v.name.clone()).collect(),
        gpus: Vec::new(),
        cores: Vec::new(),
        level: None,
        required_level: problem
            .cluster
            .types
            .iter()
            .filter_map(|t| t.required_level(p.request))
            .min(),
        placed: false,
        outcome: Outcome::NoCandidate,
        hit: false,
        cost: 0.0,
        subsets_evaluated: d.subsets_evaluated,
        truncated: d.truncated,
    };
    let mut slowdown = None;
    let mut placed_at = None;
    if let Some(server) = d.server {
        let t = problem.cluster.type_of(server);
        event.node = Some(problem.cluster.server(server).name.clone());
        event.required_level = t.required_level(p.request);
        let a = &state.servers[server.index()];
        let placement = match d.placement {
            _ if d.refuse => None,
            Some((g, c)) => Some((g, c, t.level_of(g, c))),
            None => place(t, a.free_gpus, a.free_cores, p.request)
                .map(|pl| (pl.gpus, pl.cores, pl.level)),
        };
        match placement {
            Some((g, c, level)) if problem.admits(server, p, level) => {
                let pod = Pod {
                    name: p.name.clone(),
                    workload: p.workload,
                    priority: p.priority,
                    // Pods placed by this plan are never victims of later preemptors in it.
                    preemptible: false,
                    server,
                    gpus: g,
                    cores: c,
                    start_time_s: None,
                };
                state
                    .add(problem.cluster, pod)
                    .map_err(|e| PlanError::Internal(format!("{}: {e}", p.name)))?;
                event.gpus = g.to_vec();
                event.cores = c.to_vec();
                event.level = Some(level);
                event.placed = true;
                event.outcome = Outcome::Placed;
                event.hit = event.required_level.is_some_and(|r| level <= r);
                slowdown = Some(level.penalty(&t.penalty));
                placed_at = Some((t, level));
            }
            Some((_, _, level)) => {
                event.level = Some(level);
                event.outcome = Outcome::Refused;
            }
            None => event.outcome = Outcome::Refused,
        }
    }
    let prios: Vec<i64> = victims.iter().map(|v| v.priority).collect();
    event.cost = problem.cost.event_cost(placed_at, &prios);
    Ok(Applied {
        event,
        qos: p.qos,
        victims,
        slowdown,
    })
}

fn measure(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    run: &Run,
    with_decision_gap: bool,
) -> Result<PlannerReport, PlanFailure> {
    let mut m = metrics::compute(&run.applied, problem.spec.now_s);
    let objective: f64 = run.applied.iter().map(|a| a.event.cost).sum();
    m.objective = run.incumbent.then_some(objective);
    m.runtime_ms = run.runtime_ms;
    let decision_gap = if with_decision_gap && run.incumbent {
        Some(decision_gap(problem, planner, run)?)
    } else {
        None
    };
    m.decision_gap = decision_gap;
    Ok(PlannerReport {
        name: planner.name().to_string(),
        status: run.status,
        objective: m.objective,
        gap: None,
        gap_is_bound: false,
        bound: match run.status {
            Status::Heuristic => None,
            _ => run.bound.or(m.objective),
        },
        decision_gap,
        runtime_ms: run.runtime_ms,
        truncated: run.applied.iter().any(|a| a.event.truncated),
        metrics: m,
        events: run.applied.iter().map(|a| a.event.clone()).collect(),
    })
}

/// Σ (event cost − per-event optimum on the state the planner faced) / max(1, Σ optimum).
fn decision_gap(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    run: &Run,
) -> Result<f64, PlanFailure> {
    if planner.name() == "ilp" {
        return Ok(0.0);
    }
    let mut excess = 0.0;
    let mut optimum_sum = 0.0;
    for (state, a) in run.faced.iter().zip(&run.applied) {
        let p = preemptor_of(problem, a);
        let opt = ilp::event_optimum(problem, state, &p).map_err(|error| PlanFailure::Planner {
            planner: "ilp".into(),
            error,
        })?;
        excess += a.event.cost - opt.cost;
        optimum_sum += opt.cost;
    }
    Ok(excess / optimum_sum.abs().max(1.0))
}

fn preemptor_of(problem: &Problem<'_>, a: &Applied) -> Preemptor {
    let wi = problem
        .spec
        .workload
        .iter()
        .position(|w| w.name == a.event.workload)
        .unwrap_or(0);
    let class = &problem.spec.workload[wi];
    Preemptor {
        name: a.event.preemptor.clone(),
        workload: wi,
        priority: class.priority,
        request: crate::topology::Request {
            gpus: class.gpus.max(0) as u32,
            cores: class.cores.max(0) as u32,
        },
        qos: class.topology_qos,
    }
}

/// `gap` of every planner against `ilp-batch`: its objective when optimal, else its bound.
fn apply_gaps(reports: &mut [PlannerReport]) {
    let reference = reports
        .iter()
        .find(|r| r.name == "ilp-batch")
        .and_then(|r| match r.status {
            Status::Optimal => r
                .bound
                .map(|b| (b, r.objective.is_some_and(|o| (o - b).abs() > 1e-9))),
            Status::TimeLimit => r.bound.map(|b| (b, true)),
            _ => None,
        });
    for r in reports.iter_mut() {
        if let (Some((reference, is_bound)), Some(obj)) = (reference, r.objective) {
            r.gap = Some((obj - reference) / reference.abs().max(1.0));
            r.gap_is_bound = is_bound;
            r.metrics.gap = r.gap;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(
        name: &str,
        status: Status,
        objective: Option<f64>,
        bound: Option<f64>,
    ) -> PlannerReport {
        PlannerReport {
            name: name.into(),
            status,
            objective,
            gap: None,
            gap_is_bound: false,
            bound,
            decision_gap: None,
            runtime_ms: 0.0,
            truncated: false,
            metrics: metrics::compute(&[], None),
            events: Vec::new(),
        }
    }

    #[test]
    fn gaps_use_the_batch_optimum_or_its_bound() {
        let mut optimal = vec![
            report("k8s-default", Status::Heuristic, Some(150.0), None),
            report("ilp-batch", Status::Optimal, Some(100.0), Some(100.0)),
        ];
        apply_gaps(&mut optimal);
        assert_eq!(optimal[0].gap, Some(0.5));
        assert!(!optimal[0].gap_is_bound);
        assert_eq!(optimal[1].gap, Some(0.0));

        let mut stopped = vec![
            report("k8s-default", Status::Heuristic, Some(150.0), None),
            report("ilp-batch", Status::TimeLimit, Some(140.0), Some(120.0)),
        ];
        apply_gaps(&mut stopped);
        assert_eq!(stopped[0].gap, Some(0.25));
        assert!(
            stopped[0].gap_is_bound,
            "a time-limited reference gives an upper bound"
        );

        let mut none = vec![
            report("k8s-default", Status::Heuristic, Some(150.0), None),
            report("ilp-batch", Status::TimeLimit, None, None),
        ];
        apply_gaps(&mut none);
        assert_eq!(none[0].gap, None, "no incumbent and no bound: no gap");

        let mut tiny = vec![report("ilp-batch", Status::Optimal, Some(0.4), Some(0.4))];
        apply_gaps(&mut tiny);
        assert_eq!(
            tiny[0].gap,
            Some(0.0),
            "max(1, |reference|) keeps small references sane"
        );
    }
}
