//! One function per command: inputs in, one typed result or error out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::error::SessionError;
use super::explain_colocation;
use super::load::{
    Pair, Workload, check_solver_built, event_solver_not_colocation, line_error, load_cluster,
    load_spec, load_trace, located_error, planning_error, read_source, read_spec_source,
};
use crate::colocate::capacity::capacity_report;
use crate::colocate::latency::{self, Fit, Sample};
use crate::colocate::planning::candidate_run;
use crate::colocate::registry as colocation_registry;
use crate::colocate::setup::{cluster_findings, setup};
use crate::colocate::vidur;
pub use crate::colocate::vidur::VidurOptions;
use crate::plan::cancel::Cancel;
use crate::plan::colocation::{ColocationPlan, ColocationRun};
use crate::plan::estimate::{self, WorkEstimate};
use crate::plan::explain::EventExplanation;
use crate::plan::explain_colocation::TaskExplanation;
use crate::plan::preemption::PreemptionPlan;
use crate::preempt::explain::{self, ExplainOptions};
use crate::preempt::planning::{self, PlanOptions};
use crate::preempt::registry as preemption_registry;
use crate::sim::capacity::{
    CapacityError, CapacityReport, Hold, PoolSearch, Progress as CapacityProgress, from_rates,
    parse_target, pool_capacity,
};
use crate::sim::colocation::{self as colocation_sim, ColocationSimulation};
use crate::sim::fingerprint::{self, SweepInputs, SweptKey};
use crate::sim::merge;
use crate::sim::preemption::{self as preemption_sim, PreemptionSimulation, SimOptions};
use crate::sim::sweep::{self, SetArg, SweepError, SweepOutput, Traces};
use crate::spec::limits::MAX_SCENARIOS;
use crate::spec::preemption::EventSolver;
use crate::spec::{self, ColocationSpec, Expect, InvalidSpec, LoadedSpec, Spec, SpecKind};
use crate::topology::Cluster;
use crate::topology::state::{ClusterState, running_state};

/// Seeds of a co-location simulation when none are given.
const DEFAULT_COLOCATION_SEEDS: u64 = 10;

/// What `validate` found: the valid files, the invalid ones, the unreadable ones.
pub struct Validation {
    /// The files that loaded and validated, in argument order.
    pub valid: Vec<LoadedSpec>,
    /// The work each valid file asks for, where it is large (one entry per `valid` file; a
    /// preemption workload's needs the cluster among the files).
    pub estimates: Vec<Option<WorkEstimate>>,
    /// The files with spec errors, each with its located issues.
    pub invalid: Vec<InvalidSpec>,
    /// (message, help) of each file that could not be read.
    pub unreadable: Vec<(String, Option<String>)>,
    /// Clusters among the files; cross-file checks ran only with exactly one.
    pub clusters: usize,
}

/// Parses and validates every file; with exactly one cluster among them, checks each workload
/// against it.
pub fn validate(files: &[PathBuf]) -> Validation {
    let mut invalid = Vec::new();
    let mut unreadable = Vec::new();
    let mut loaded = Vec::new();
    for path in files {
        match read_spec_source(path) {
            Ok(source) => match spec::load(source, Expect::Any) {
                Ok(l) => loaded.push(l),
                Err(e) => invalid.push(e),
            },
            Err(SessionError::Input { message, help }) => unreadable.push((message, help)),
            Err(SessionError::Invalid(list)) => invalid.extend(list),
            Err(other) => unreadable.push((other.to_string(), None)),
        }
    }
    let clusters: Vec<&LoadedSpec> = loaded
        .iter()
        .filter(|l| l.spec.kind() == SpecKind::Cluster)
        .collect();
    let cluster = match clusters.as_slice() {
        [only] => match &only.spec {
            Spec::Cluster(c) => Some(Cluster::from_spec(c)),
            _ => None,
        },
        _ => None,
    };
    let cluster_count = clusters.len();
    let mut valid = Vec::new();
    for l in loaded {
        let cross = match (&cluster, &l.spec) {
            (Some(c), Spec::Preemption(w)) => running_state(c, w).err().unwrap_or_default(),
            (Some(c), Spec::Colocation(w)) => cluster_findings(c, w),
            _ => Vec::new(),
        };
        match l.check(cross) {
            Ok(()) => valid.push(l),
            Err(e) => invalid.push(e),
        }
    }
    let estimates = valid
        .iter()
        .map(|l| {
            let estimate = match (&cluster, &l.spec) {
                (Some(c), Spec::Preemption(w)) => Some(estimate::preemption(c, w)),
                (_, Spec::Colocation(w)) => Some(estimate::colocation(w)),
                _ => None,
            };
            estimate.filter(WorkEstimate::is_large)
        })
        .collect();
    Validation {
        valid,
        estimates,
        invalid,
        unreadable,
        clusters: cluster_count,
    }
}

/// A cluster and, with a preemption workload, the state of its `[[running]]` pods.
pub fn topology(
    cluster_path: &Path,
    workload_path: Option<&Path>,
) -> Result<(Cluster, Option<ClusterState>), SessionError> {
    let cluster = load_cluster(cluster_path)?;
    let Some(path) = workload_path else {
        return Ok((cluster, None));
    };
    let w = load_spec(path, Expect::Workload)?;
    let state = match &w.spec {
        Spec::Preemption(p) => match running_state(&cluster, p) {
            Ok(state) => Some(state),
            Err(findings) => {
                w.check(findings)
                    .map_err(|e| SessionError::Invalid(vec![e]))?;
                None
            }
        },
        Spec::Colocation(c) => {
            w.check(cluster_findings(&cluster, c))
                .map_err(|e| SessionError::Invalid(vec![e]))?;
            None
        }
        Spec::Cluster(_) => None,
    };
    Ok((cluster, state))
}

/// The plan of either workload kind.
pub enum PlanResult {
    /// A preemption plan.
    Preemption(PreemptionPlan),
    /// A co-location plan.
    Colocation(ColocationPlan),
}

impl PlanResult {
    /// Whether some planner placed every preemptor / dropped no task (`--require-all-placed`).
    pub fn some_planner_placed_all(&self) -> bool {
        match self {
            PlanResult::Preemption(r) => r
                .planners
                .iter()
                .any(|p| p.objective.is_some() && p.metrics.unplaced == 0),
            PlanResult::Colocation(r) => r
                .planners
                .iter()
                .any(|p| p.metrics.as_ref().is_some_and(|m| m.dropped == 0)),
        }
    }
}

/// Plans a workload with the named planners (`None`: the spec's `[planners].run`).
pub fn plan(
    pair: &Pair,
    planners: Option<Vec<String>>,
    seed: Option<u64>,
    worst: Option<usize>,
    cancel: Cancel,
) -> Result<PlanResult, SessionError> {
    if worst == Some(0) {
        return Err(SessionError::input(
            "`--worst 0` lists nothing",
            Some("`--worst K` lists each planner's K decisions (or tasks) furthest from the optimum; K ≥ 1".into()),
        ));
    }
    match &pair.workload {
        Workload::Preemption(spec) => {
            let options = PlanOptions {
                planners,
                seed,
                worst,
                cancel,
            };
            planning::plan(&pair.cluster, spec, &options)
                .map(PlanResult::Preemption)
                .map_err(|e| pair.planning_error(e))
        }
        Workload::Colocation { spec, trace } => crate::colocate::planning::plan_cancellable(
            &pair.cluster,
            spec,
            trace.as_deref(),
            (planners.as_deref(), seed, worst),
            cancel,
        )
        .map(PlanResult::Colocation)
        .map_err(|e| pair.planning_error(e)),
    }
}

/// What `explain` explains: a preemption event or a co-location task.
pub enum Explanation {
    /// A preemption event's explanation.
    Event(EventExplanation),
    /// A co-location task's explanation.
    Task(TaskExplanation),
}

/// `explain --event N` of a preemption workload, `explain --task ID` of a co-location one.
pub fn explain(
    pair: &Pair,
    planners: Option<Vec<String>>,
    seed: Option<u64>,
    event: Option<usize>,
    task: Option<u32>,
    cancel: Cancel,
) -> Result<Explanation, SessionError> {
    match (&pair.workload, event, task) {
        (Workload::Preemption(spec), Some(event), None) => {
            let options = ExplainOptions {
                planners,
                seed,
                event,
                cancel,
            };
            explain::explain_event(&pair.cluster, spec, &options)
                .map(Explanation::Event)
                .map_err(|e| pair.planning_error(e))
        }
        (Workload::Colocation { .. }, None, Some(task)) => {
            explain_colocation::explain_task(pair, planners, seed, task, cancel)
                .map(Explanation::Task)
        }
        (_, Some(_), Some(_)) => Err(SessionError::input(
            "`--event` and `--task` cannot be given together",
            Some("`--event N` explains a preemptor, `--task ID` a co-location task".into()),
        )),
        (Workload::Preemption(_), None, _) => Err(SessionError::input(
            "`explain` of a preemption workload needs `--event N`",
            Some(
                "N is the preemptor's position in the `[[preempt]]` list, from 1 (`--task` explains a co-location task)"
                    .into(),
            ),
        )),
        (Workload::Colocation { .. }, _, None) => Err(SessionError::input(
            "`explain` of a co-location workload needs `--task ID`",
            Some(
                "ID is the task's id in the plan's events, from 0 (`--event` explains a preemptor)"
                    .into(),
            ),
        )),
    }
}

/// The simulation of either workload kind.
pub enum SimulationResult {
    /// A preemption simulation.
    Preemption(PreemptionSimulation),
    /// A co-location simulation.
    Colocation(ColocationSimulation),
}

/// Units of progress a simulation reports: cycles (preemption) or seeds (co-location).
pub fn simulation_units(pair: &Pair, options: &SimOptions) -> u64 {
    match &pair.workload {
        Workload::Preemption(spec) => {
            let (seeds, cycles, _) = preemption_sim::resolve(spec, options);
            preemption_sim::seeds_to_run(spec, &seeds).len() as u64 * cycles
        }
        Workload::Colocation { .. } => colocation_seeds(options).len() as u64,
    }
}

fn colocation_seeds(options: &SimOptions) -> Vec<u64> {
    options
        .seeds
        .clone()
        .unwrap_or_else(|| (1..=DEFAULT_COLOCATION_SEEDS).collect())
}

/// Simulates a workload over seeds; `progress` is called once per unit.
pub fn simulate(
    pair: &Pair,
    options: &SimOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<SimulationResult, SessionError> {
    match &pair.workload {
        Workload::Preemption(spec) => {
            preemption_sim::simulate(&pair.cluster, spec, options, progress)
                .map(SimulationResult::Preemption)
                .map_err(|e| pair.planning_error(e))
        }
        Workload::Colocation { spec, trace } => colocation_sim::simulate(
            &pair.cluster,
            spec,
            trace.as_deref(),
            &colocation_seeds(options),
            options.planners.as_deref(),
            (progress, options.cancel),
        )
        .map(SimulationResult::Colocation)
        .map_err(|e| pair.planning_error(e)),
    }
}

/// `coplan capacity`'s options; which apply depends on the workload kind.
#[derive(Debug, Clone, Default)]
pub struct CapacityArgs {
    /// Planners to run (`--planners`); default: the workload's `[planners].run`.
    pub planners: Option<Vec<String>>,
    /// Co-location: the seed of the probe runs.
    pub seed: Option<u64>,
    /// Preemption: `METRIC>=X` / `METRIC<=X`.
    pub target: Option<String>,
    /// Preemption: the pool to resize, by index or `name_prefix` (needed with several pools).
    pub pool: Option<String>,
    /// Preemption: the smallest pool size to try.
    pub min: Option<u32>,
    /// Preemption: the largest pool size to try.
    pub max: Option<u32>,
    /// Preemption: seeds 1..=K (default: the workload's `[simulation].seeds`).
    pub seeds: Option<u64>,
    /// Preemption: cycles per seed (default: `[simulation].cycles`).
    pub cycles: Option<u64>,
    /// Preemption: what stays fixed as the pool changes (the fill's pods or its GPU utilisation).
    pub hold: Hold,
    /// A stop request ends a preemption search between probes, seeds and cycles.
    pub cancel: Cancel,
}

/// Preemption: the fewest servers of one pool at which a target holds, per planner.
/// Co-location: every candidate planner's sustainable request rate. One report shape.
pub fn capacity(
    cluster_path: &Path,
    pair: &Pair,
    args: &CapacityArgs,
    progress: &(dyn Fn(CapacityProgress) + Sync),
) -> Result<CapacityReport, SessionError> {
    let workload_name = &pair.source.source.name;
    match &pair.workload {
        Workload::Preemption(spec) => {
            if args.seed.is_some() {
                return Err(SessionError::input(
                    format!(
                        "`{workload_name}`: a preemption capacity runs seeds 1..=K: use `--seeds K`, not `--seed`"
                    ),
                    None,
                ));
            }
            let Some(target) = &args.target else {
                return Err(SessionError::input(
                    format!(
                        "`{workload_name}`: a preemption capacity needs `--target METRIC>=X` (or `<=`)"
                    ),
                    Some("e.g. --target hit_rate>=0.99, --target unplaced<=0".into()),
                ));
            };
            let target = parse_target(target).map_err(capacity_error)?;
            let cluster_spec = match load_spec(cluster_path, Expect::Cluster)?.spec {
                Spec::Cluster(c) => c,
                _ => {
                    return Err(SessionError::Internal(
                        "a workload file loaded as a cluster".into(),
                    ));
                }
            };
            let search = PoolSearch {
                target,
                pool: args.pool.clone(),
                min: args.min,
                max: args.max,
                hold: args.hold,
                simulation: SimOptions {
                    seeds: args.seeds.map(|n| (1..=n).collect()),
                    cycles: args.cycles,
                    planners: args.planners.clone(),
                    solver: None,
                    cancel: args.cancel,
                },
            };
            pool_capacity(&cluster_spec, spec, &search, progress).map_err(|e| match e {
                CapacityError::Plan(e) => pair.planning_error(e),
                other => capacity_error(other),
            })
        }
        Workload::Colocation { spec, trace } => {
            let preemption_only = [
                ("--target", args.target.is_some()),
                ("--pool", args.pool.is_some()),
                ("--min", args.min.is_some()),
                ("--max", args.max.is_some()),
                ("--seeds", args.seeds.is_some()),
                ("--cycles", args.cycles.is_some()),
                ("--hold", args.hold != Hold::Pods),
            ];
            if let Some((flag, _)) = preemption_only.iter().find(|(_, given)| *given) {
                return Err(SessionError::input(
                    format!(
                        "`{workload_name}`: `{flag}` sizes a pool for a preemption workload; a \
                         co-location capacity is the sustainable request rate"
                    ),
                    Some("drop the option, or give a `kind = \"preemption\"` workload".into()),
                ));
            }
            let names = args
                .planners
                .clone()
                .unwrap_or_else(|| spec.planners.run.clone());
            capacity_report(&pair.cluster, spec, trace.as_deref(), &names, args.seed)
                .map(from_rates)
                .map_err(|e| pair.planning_error(e))
        }
    }
}

/// A capacity question that cannot be answered, as an input error.
fn capacity_error(e: CapacityError) -> SessionError {
    let help = match &e {
        CapacityError::TargetSyntax(_) => Some("e.g. --target hit_rate>=0.99".into()),
        _ => None,
    };
    SessionError::input(e.to_string(), help)
}

/// A sweep checked and ready to run.
pub struct PreparedSweep {
    cluster: toml::Value,
    workload: toml::Value,
    source: LoadedSpec,
    kind: SpecKind,
    sets: Vec<SetArg>,
    options: SimOptions,
    shard: (usize, usize),
    traces: Traces,
    /// What the sweep runs on, recorded in its output for `merge`.
    inputs: SweepInputs,
    /// Units of progress this shard reports.
    pub units: u64,
}

impl PreparedSweep {
    /// The sweep with every scenario's per-event optimum found by `event_solver` (when given:
    /// `--event-solver` becomes the scenarios' `[planners] event_solver`, as `--solver` does).
    pub fn with_event_solver(
        mut self,
        event_solver: Option<EventSolver>,
    ) -> Result<Self, SessionError> {
        let Some(e) = event_solver else {
            return Ok(self);
        };
        if self.kind == SpecKind::Colocation {
            return Err(event_solver_not_colocation());
        }
        self.inputs.event_solver = Some(e.name().into());
        if let toml::Value::Table(t) = &mut self.workload {
            let planners = t
                .entry("planners")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(p) = planners {
                p.insert("event_solver".into(), toml::Value::String(e.name().into()));
            }
        }
        Ok(self)
    }
}

fn sweep_input(e: SweepError) -> SessionError {
    match e {
        SweepError::Plan(f) => SessionError::Internal(f.to_string()),
        SweepError::Interrupted {
            finished,
            total,
            shard,
        } => sweep_interrupted(&finished, total, shard),
        other => SessionError::input(
            other.to_string(),
            Some("see `coplan sweep --help` for keys and shards".into()),
        ),
    }
}

fn toml_value(loaded: &LoadedSpec) -> Result<toml::Value, SessionError> {
    toml::from_str::<toml::Table>(&loaded.source.text)
        .map(toml::Value::Table)
        .map_err(|e| SessionError::Internal(format!("{}: {e}", loaded.source.name)))
}

/// Checks a sweep's arguments and files, resolves its shard (`--shard`, else the batch job's
/// environment read through `env`) and loads every trace its scenarios read.
pub fn prepare_sweep(
    cluster_path: &Path,
    workload_path: &Path,
    set_args: &[String],
    options: SimOptions,
    shard: Option<&str>,
    shards: Option<usize>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PreparedSweep, SessionError> {
    let sets: Vec<SetArg> = set_args
        .iter()
        .map(|s| sweep::parse_set(s))
        .collect::<Result<_, _>>()
        .map_err(sweep_input)?;
    let mut keys = BTreeSet::new();
    if let Some(repeated) = sets.iter().find(|s| !keys.insert(s.key.as_str())) {
        return Err(sweep_input(SweepError::RepeatedKey(repeated.key.clone())));
    }
    // Counted before the product is built: 10^9 scenarios once allocated 13.5 GB.
    let count = sets
        .iter()
        .fold(1u64, |n, s| n.saturating_mul(s.values.len() as u64));
    if count > MAX_SCENARIOS {
        return Err(sweep_input(SweepError::TooManyScenarios(count)));
    }
    let shard = match shard {
        Some(s) => sweep::parse_shard(s).map_err(sweep_input)?,
        None => sweep::shard_from_env(env, shards)
            .map_err(sweep_input)?
            .unwrap_or((0, 1)),
    };
    let cluster_file = load_spec(cluster_path, Expect::Cluster)?;
    let mut workload = load_spec(workload_path, Expect::Workload)?;
    let kind = workload.spec.kind();
    let solver = options.solver;
    if let Some(backend) = solver {
        match &mut workload.spec {
            Spec::Colocation(c) => c.planners.solver = backend,
            Spec::Preemption(p) => p.planners.solver = backend,
            Spec::Cluster(_) => {}
        }
    }
    match &workload.spec {
        Spec::Colocation(c) => check_solver_built(c.planners.solver)?,
        Spec::Preemption(p) => check_solver_built(p.planners.solver)?,
        Spec::Cluster(_) => {}
    }
    let mine = sweep::scenarios(&sets)
        .iter()
        .filter(|s| s.index % shard.1 == shard.0)
        .count() as u64;
    let mut traces = Traces::new();
    let (seeds, cycles, planners) = match &workload.spec {
        Spec::Colocation(c) => {
            if let Some(names) = &options.planners {
                colocation_registry::resolve(names)
                    .map_err(|e| planning_error(&workload, kind, e))?;
            }
            for path in trace_paths(c, &sets) {
                let requests = load_trace(&workload, &path)?;
                traces.insert(path, requests);
            }
            let planners = options
                .planners
                .clone()
                .unwrap_or_else(|| c.planners.run.clone());
            (colocation_seeds(&options), None, planners)
        }
        Spec::Preemption(p) => {
            let (seeds, cycles, planners) = preemption_sim::resolve(p, &options);
            preemption_registry::resolve(&planners)
                .map_err(|e| planning_error(&workload, kind, e))?;
            (seeds, Some(cycles), planners)
        }
        Spec::Cluster(_) => (Vec::new(), None, Vec::new()),
    };
    let units = seeds.len() as u64 * cycles.unwrap_or(1);
    let inputs = SweepInputs {
        version: fingerprint::VERSION.into(),
        cluster: fingerprint::content_hash(&cluster_file.source.text),
        workload: fingerprint::content_hash(&workload.source.text),
        sets: sets
            .iter()
            .map(|s| SweptKey {
                key: s.key.clone(),
                values: s.values.clone(),
            })
            .collect(),
        seeds: fingerprint::seeds_text(&seeds),
        cycles,
        planners,
        solver: solver.map(|b| b.name().to_string()),
        event_solver: None,
        time_limit: options.cancel.budget_s().map(|s| s.to_string()),
    };
    Ok(PreparedSweep {
        cluster: toml_value(&cluster_file)?,
        workload: {
            let mut value = toml_value(&workload)?;
            // `--solver` becomes the scenarios' `[planners] solver`.
            if let (Some(backend), toml::Value::Table(t)) = (solver, &mut value) {
                let planners = t
                    .entry("planners")
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let toml::Value::Table(p) = planners {
                    p.insert("solver".into(), toml::Value::String(backend.name().into()));
                }
            }
            value
        },
        source: workload,
        kind,
        sets,
        options,
        shard,
        traces,
        inputs,
        units: mine * units,
    })
}

/// What an interrupted sweep had done, and how to finish it.
fn sweep_interrupted(finished: &[usize], total: usize, shard: (usize, usize)) -> SessionError {
    let of_shard = if shard.1 > 1 {
        let mine = (shard.0..total).step_by(shard.1).count();
        format!(" ({mine} in shard {}/{})", shard.0, shard.1)
    } else {
        String::new()
    };
    let done = match finished {
        [] => format!("no scenario of {total}{of_shard} had finished"),
        [one] => format!("scenario {one} of {total}{of_shard} finished"),
        many => format!(
            "scenarios {} of {total}{of_shard} finished",
            many.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    SessionError::Interrupted(format!(
        "interrupted: {done}; nothing was written (a shard is written whole or not at all): re-run the same command to finish, or split the scenarios over machines with --shard I/N"
    ))
}

/// The traces a co-location sweep reads: the workload's own and any `inference.trace` value.
fn trace_paths(spec: &ColocationSpec, sets: &[SetArg]) -> BTreeSet<String> {
    let swept = sets
        .iter()
        .filter(|s| s.key == "inference.trace")
        .flat_map(|s| s.values.iter())
        .filter_map(|v| sweep::parse_value(v).as_str().map(String::from));
    spec.inference.trace.iter().cloned().chain(swept).collect()
}

/// Runs a prepared sweep; `progress` is called once per unit.
pub fn run_sweep(
    prepared: &PreparedSweep,
    progress: &(dyn Fn() + Sync),
) -> Result<SweepOutput, SessionError> {
    sweep::sweep(
        &prepared.cluster,
        &prepared.workload,
        &prepared.sets,
        &prepared.options,
        prepared.shard,
        &prepared.traces,
        progress,
    )
    .map(|output| SweepOutput {
        inputs: Some(prepared.inputs.clone()),
        ..output
    })
    .map_err(|e| match e {
        SweepError::Plan(f) => planning_error(&prepared.source, prepared.kind, f),
        other => sweep_input(other),
    })
}

/// Reads sweep shard outputs and joins them. A refusal points at the line of the file it is
/// about (the header, or the row).
pub fn merge_files(files: &[PathBuf]) -> Result<SweepOutput, SessionError> {
    // Each file's text is dropped once it is parsed (a shard of a million rows is tens of
    // megabytes; its parsed rows take 32 bytes each); a refusal reads the file it names again
    // to show its line.
    let located = |e: merge::MergeError, help: &str| {
        let source = files
            .iter()
            .find(|p| p.display().to_string() == e.file)
            .and_then(|p| read_source(p).ok());
        match source {
            Some(source) if e.line > 0 => located_error(
                &source,
                (e.line, None),
                &e.message,
                ("merge::shard", "this line"),
                help,
            ),
            _ => SessionError::input(e.to_string(), Some(help.into())),
        }
    };
    let mut inputs = Vec::new();
    for path in files {
        let source = read_source(path)?;
        let parsed = merge::parse(&source.name, &source.text).map_err(|e| {
            located(
                e,
                "merge takes the CSV or JSON Lines files of `coplan sweep`",
            )
        })?;
        inputs.push((source.name, parsed));
    }
    merge::merge(&inputs).map_err(|e| {
        located(
            e,
            "merge joins the shards of one `coplan sweep` run: the same files, `--set` values, seeds, cycles, planners and coplan version, each shard once",
        )
    })
}

/// One planner's run of a co-location workload, for its timeline.
pub struct Timeline {
    /// The planner's run: its events on every node and stage.
    pub run: ColocationRun,
    /// Nodes (pipeline replicas) of the run.
    pub nodes: usize,
    /// Pipeline stages per node.
    pub stages: usize,
}

/// The run of a candidate co-location planner on one seed.
pub fn timeline(pair: &Pair, planner: &str, seed: Option<u64>) -> Result<Timeline, SessionError> {
    let Workload::Colocation { spec, trace } = &pair.workload else {
        return Err(SessionError::input(
            format!(
                "`{}`: timeline takes a `kind = \"colocation\"` workload",
                pair.source.source.name
            ),
            None,
        ));
    };
    let s = setup(&pair.cluster, spec, trace.as_deref(), seed);
    match candidate_run(planner, &s).map_err(|e| pair.planning_error(e))? {
        Some(run) => Ok(Timeline {
            run,
            nodes: s.config.nodes,
            stages: s.config.stages,
        }),
        None => Err(SessionError::input(
            format!("planner `{planner}` has no timeline in this version"),
            None,
        )),
    }
}

/// Stage-latency samples derived from Vidur's per-layer table, with comment lines saying what
/// is measured and what derived.
pub fn import_vidur(
    path: &Path,
    options: &VidurOptions,
) -> Result<(Vec<Sample>, Vec<String>), SessionError> {
    let bad = |what: &str| Err(SessionError::input(what.to_string(), None));
    if options.layers_per_stage == 0 {
        return bad("--layers-per-stage must be at least 1");
    }
    if options.tensor_parallel == 0 {
        return bad("--tp must be at least 1");
    }
    if !(options.attention_efficiency > 0.0 && options.attention_efficiency <= 1.0) {
        return bad("--attention-efficiency must be in (0, 1]");
    }
    if options.max_tokens == 0 {
        return bad("--max-tokens must be at least 1");
    }
    let source = read_source(path)?;
    vidur::stage_samples(&source.text, options).map_err(|e| {
        line_error(
            &source,
            e.line,
            &e.message,
            "expected Vidur's mlp.csv (time_stats.<op>.median columns, num_tokens, \
             num_tensor_parallel_workers, n_head, n_kv_head, n_embd)",
        )
    })
}

/// Fits the latency model to a samples CSV.
pub fn profile_fit(path: &Path) -> Result<Fit, SessionError> {
    let source = read_source(path)?;
    let samples = latency::parse_samples_at_lines(&source.text).map_err(|e| {
        line_error(
            &source,
            e.line,
            &e.message,
            "expected rows `kind,batch,tokens,stage_s`, kind = forward | backward | decode",
        )
    })?;
    if samples.is_empty() {
        return Err(SessionError::input(
            format!("{}: no samples", source.name),
            None,
        ));
    }
    // A fit no workload's `[model]` accepts must not be printed as one: refused at the first
    // sample of the kind it was fitted to.
    latency::fit_for_spec(&samples).map_err(|e| {
        located_error(
            &source,
            (e.line, None),
            &e.message,
            ("profile::unfittable", &format!("the first {} sample", e.kind.as_str())),
            "a workload's [model] rules: docs/spec.md, \"Co-location workload\"; samples of several batch sizes, lengths and contexts, whose latency grows with them, fit",
        )
    })
}
