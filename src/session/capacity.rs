//! `coplan capacity`: how much cluster a workload needs (a pool size or a request rate).

use std::path::{Path, PathBuf};

use super::args::{CapacityFormat, Inputs, PlannerList, Solving, Written, cycles_arg, seeds_arg};
use super::error::SessionError;
use super::interrupt::cooperative_stop;
use super::load::{Pair, Workload, load_spec};
use super::progress::progress_bar;
use crate::colocate::capacity::capacity_report;
use crate::plan::cancel::Cancel;
use crate::sim::capacity::{
    CapacityError, CapacityReport, Hold, PoolSearch, Progress as CapacityProgress, from_rates,
    parse_target, pool_capacity,
};
use crate::sim::preemption::SimOptions;
use crate::spec::{Expect, Spec, SpecKind};

/// `--hold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HoldArg {
    /// The pods the fill places on the spec's cluster.
    Pods,
    /// The GPU utilisation the fill reaches.
    Utilization,
}

impl From<HoldArg> for Hold {
    fn from(h: HoldArg) -> Self {
        match h {
            HoldArg::Pods => Hold::Pods,
            HoldArg::Utilization => Hold::Utilization,
        }
    }
}

/// `coplan capacity`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CapacityArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// The planners to run.
    #[command(flatten)]
    pub planners: PlannerList,
    /// Co-location: the seed of the probe runs.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Preemption: `METRIC>=X` or `METRIC<=X`, e.g. `hit_rate>=0.99`, `unplaced<=0`,
    /// `victims_per_preemption<=2`.
    #[arg(long, value_name = "METRIC>=X")]
    pub target: Option<String>,
    /// Preemption: the pool to resize, by index or `name_prefix` (needed with several pools).
    #[arg(long, value_name = "INDEX|PREFIX")]
    pub pool: Option<String>,
    /// Preemption: the smallest size to try (default: 1; below the spec's count the emptiest servers go and their `[[running]]` pods are re-placed).
    #[arg(long, value_name = "N")]
    pub min: Option<u32>,
    /// Preemption: the largest size to try (default: twice the spec's count).
    #[arg(long, value_name = "N")]
    pub max: Option<u32>,
    /// Preemption: seeds 1..=K (default: the workload's [simulation].seeds).
    #[arg(long, value_name = "K", value_parser = seeds_arg())]
    pub seeds: Option<u64>,
    /// Preemption: cycles per seed (default: [simulation].cycles).
    #[arg(long, value_parser = cycles_arg())]
    pub cycles: Option<u64>,
    /// Preemption: what stays fixed as the pool changes: the pods the fill places on the
    /// spec's cluster (`pods`), or the GPU utilisation the fill reaches (`utilization`).
    #[arg(long, value_enum, default_value_t = HoldArg::Pods)]
    pub hold: HoldArg,
    /// The output format.
    #[arg(long, value_enum, default_value_t = CapacityFormat::Table)]
    pub format: CapacityFormat,
    /// Where the output and its chart go.
    #[command(flatten)]
    pub written: Written,
    /// The exact side's backend and the run's time budget.
    #[command(flatten)]
    pub solving: Solving,
}

/// A capacity report, and how it is to be written.
pub struct CapacityOutcome {
    /// The report.
    pub report: CapacityReport,
    /// The output format.
    pub format: CapacityFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// Where the chart goes, when asked for.
    pub plot: Option<PathBuf>,
}

/// Loads the inputs, checks the options and searches, with a cycle bar on a terminal.
pub fn run(args: &CapacityArgs) -> Result<CapacityOutcome, SessionError> {
    let pair = args.inputs.load_solving(&args.solving)?;
    if args.written.plot.plot.is_some() && pair.kind() == SpecKind::Colocation {
        return Err(SessionError::input(
            "`--plot` draws a pool-size search; a co-location capacity searches a rate",
            Some("drop --plot: the JSON output lists every rate probed".into()),
        ));
    }
    let options = CapacityOptions {
        planners: args.planners.planners.clone(),
        seed: args.seed,
        target: args.target.clone(),
        pool: args.pool.clone(),
        min: args.min,
        max: args.max,
        seeds: args.seeds,
        cycles: args.cycles,
        hold: args.hold.into(),
        cancel: if pair.kind() == SpecKind::Preemption {
            cooperative_stop()
        } else {
            Cancel::never()
        }
        .with_budget(args.solving.time_limit),
    };
    let bar = progress_bar(0);
    let report = capacity(&args.inputs.cluster, &pair, &options, &|p| match p {
        CapacityProgress::Size { servers, cycles } => {
            bar.inc_length(cycles);
            bar.set_message(format!("{servers} servers"));
        }
        CapacityProgress::Cycle => bar.inc(1),
    })?;
    bar.finish_and_clear();
    Ok(CapacityOutcome {
        report,
        format: args.format,
        out: args.written.out.out.clone(),
        plot: args.written.plot.plot.clone(),
    })
}

/// `coplan capacity`'s options; which apply depends on the workload kind.
#[derive(Debug, Clone, Default)]
pub struct CapacityOptions {
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
    args: &CapacityOptions,
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
