//! `coplan sweep`: simulate the Cartesian product of spec values, one shard of it per process.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::args::{Inputs, LongFormat, PlannerList, Repeats, Solving, Written, sim_options};
use super::error::SessionError;
use super::load::{
    check_solver_built, event_solver_not_colocation, load_spec, load_trace, planning_error,
};
use super::progress::progress_bar;
use super::simulate::colocation_seeds;
use crate::colocate::registry as colocation_registry;
use crate::preempt::registry as preemption_registry;
use crate::sim::fingerprint::{self, SweepInputs, SweptKey};
use crate::sim::preemption::{self as preemption_sim, SimOptions};
use crate::sim::sweep::{self, SetArg, SweepError, SweepOutput, Traces};
use crate::spec::limits::MAX_SCENARIOS;
use crate::spec::preemption::EventSolver;
use crate::spec::{ColocationSpec, Expect, LoadedSpec, Spec, SpecKind};

/// `coplan sweep`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// KEY=V1,V2,… (repeatable).
    #[arg(long = "set", value_name = "KEY=V1,V2,…", required = true)]
    pub sets: Vec<String>,
    /// Seeds and cycles.
    #[command(flatten)]
    pub repeats: Repeats,
    /// The planners to run.
    #[command(flatten)]
    pub planners: PlannerList,
    /// Run only scenarios k with k mod N = I.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Shard count for a Kubernetes Indexed Job (index from JOB_COMPLETION_INDEX).
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = LongFormat::Csv)]
    pub format: LongFormat,
    /// Where the output and its chart go.
    #[command(flatten)]
    pub written: Written,
    /// The exact side's backend and the run's time budget.
    #[command(flatten)]
    pub solving: Solving,
}

/// A sweep's rows, and how they are to be written.
pub struct SweepOutcome {
    /// The rows of this shard.
    pub output: SweepOutput,
    /// The output format.
    pub format: LongFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// Where the chart goes, when asked for.
    pub plot: Option<PathBuf>,
    /// "workload on cluster", the chart's title.
    pub subject: String,
}

/// Checks the arguments, resolves the shard and runs it, with a cycle bar on a terminal.
pub fn run(args: &SweepArgs) -> Result<SweepOutcome, SessionError> {
    let Inputs { cluster, workload } = &args.inputs;
    let options = sim_options(
        &args.repeats,
        &args.planners,
        args.solving.solver.map(Into::into),
        args.solving.time_limit,
    );
    let prepared = prepare_sweep(
        cluster,
        workload,
        &args.sets,
        options,
        args.shard.as_deref(),
        args.shards,
        &|k| std::env::var(k).ok(),
    )?
    .with_event_solver(args.solving.event_solver.map(Into::into))?;
    let bar = progress_bar(prepared.units);
    let output = run_sweep(&prepared, &|| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(SweepOutcome {
        output,
        format: args.format,
        out: args.written.out.out.clone(),
        plot: args.written.plot.plot.clone(),
        subject: args.inputs.subject(),
    })
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
