//! `coplan simulate`: the paper's protocol over seeds and cycles, summarised per planner.

use std::path::PathBuf;

use super::args::{Inputs, PlanFormat, PlannerList, Repeats, Solving, Written, sim_options};
use super::error::SessionError;
use super::load::{Pair, Workload};
use super::progress::progress_bar;
use crate::sim::colocation::{self as colocation_sim, ColocationSimulation};
use crate::sim::preemption::{self as preemption_sim, PreemptionSimulation, SimOptions};

/// Seeds of a co-location simulation when none are given.
const DEFAULT_COLOCATION_SEEDS: u64 = 10;

/// `coplan simulate`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// Seeds and cycles.
    #[command(flatten)]
    pub repeats: Repeats,
    /// The planners to run.
    #[command(flatten)]
    pub planners: PlannerList,
    /// The output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
    pub format: PlanFormat,
    /// Where the output and its chart go.
    #[command(flatten)]
    pub written: Written,
    /// The exact side's backend and the run's time budget.
    #[command(flatten)]
    pub solving: Solving,
}

/// A simulation, and how it is to be written.
pub struct SimulateOutcome {
    /// The simulation.
    pub result: SimulationResult,
    /// The output format.
    pub format: PlanFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// Where the chart goes, when asked for.
    pub plot: Option<PathBuf>,
}

/// Loads the inputs and simulates, with a cycle bar on a terminal.
pub fn run(args: &SimulateArgs) -> Result<SimulateOutcome, SessionError> {
    let pair = args.inputs.load_solving(&args.solving)?;
    let options = sim_options(&args.repeats, &args.planners, None, args.solving.time_limit);
    let bar = progress_bar(simulation_units(&pair, &options));
    let result = simulate(&pair, &options, &|| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(SimulateOutcome {
        result,
        format: args.format,
        out: args.written.out.out.clone(),
        plot: args.written.plot.plot.clone(),
    })
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

/// The seeds of a co-location run: `--seeds`, else the default count.
pub fn colocation_seeds(options: &SimOptions) -> Vec<u64> {
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
