//! `coplan plan`: plan a workload with every planner and compare them with the optimum.

use std::path::PathBuf;

use super::args::{EventsArg, Inputs, OutFile, PlanFormat, PlannerList, Solving};
use super::error::SessionError;
use super::load::{Pair, Workload};
use super::progress::{clear_run_progress, run_progress};
use crate::plan::cancel::Cancel;
use crate::plan::colocation::ColocationPlan;
use crate::plan::preemption::PreemptionPlan;
use crate::preempt::planning::{self, PlanOptions};

/// `coplan plan`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct PlanArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// The output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
    pub format: PlanFormat,
    /// The planners to run.
    #[command(flatten)]
    pub planners: PlannerList,
    /// Seed of the run: overrides [fill].seed (the initial fill) of a preemption workload
    /// and [planners].seed of a co-location workload.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
    /// Exit with code 3 when no planner places every preemptor.
    #[arg(long)]
    pub require_all_placed: bool,
    /// After the table, per planner: preemption, the K decisions with the largest excess
    /// over the per-event optimum on the state it faced (event, server, excess, the
    /// deciding cost term), the events to give `coplan explain --event`; co-location, the
    /// K tasks whose response differs most from `ilp`'s schedule (for `explain --task`).
    #[arg(long, value_name = "K")]
    pub worst: Option<usize>,
    /// The exact side's backend and the run's time budget.
    #[command(flatten)]
    pub solving: Solving,
    /// Preemption tables: which event lines to print per planner: `none`, `worst` (the
    /// costliest events), `all`. Default: all up to 50 events, else the worst with a note.
    #[arg(long, value_enum)]
    pub events: Option<EventsArg>,
}

/// A plan, and how it is to be written.
pub struct PlanOutcome {
    /// The plan.
    pub result: PlanResult,
    /// The output format.
    pub format: PlanFormat,
    /// Which event lines a preemption table prints.
    pub events: Option<EventsArg>,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// Whether the run fails (exit 3) when no planner placed everything.
    pub require_all_placed: bool,
}

impl PlanOutcome {
    /// Exit status: infeasible (3) under `--require-all-placed` when no planner placed all.
    pub fn verdict(&self) -> Result<(), SessionError> {
        if !self.require_all_placed || self.result.some_planner_placed_all() {
            return Ok(());
        }
        Err(SessionError::Infeasible(
            match self.result {
                PlanResult::Preemption(_) => {
                    "no planner placed every preemptor (--require-all-placed)"
                }
                PlanResult::Colocation(_) => "every planner dropped a task (--require-all-placed)",
            }
            .into(),
        ))
    }
}

/// Loads the inputs, checks the options and plans.
pub fn run(args: &PlanArgs) -> Result<PlanOutcome, SessionError> {
    // The budget counts from here: reading and filling a large cluster is part of it.
    let budget = Cancel::never()
        .with_budget(args.solving.time_limit)
        .reporting_to(run_progress());
    let pair = args.inputs.load_solving(&args.solving)?;
    if args.worst.is_some() && args.format == PlanFormat::Csv {
        return Err(SessionError::input(
            "`--worst` prints after the table or inside the JSON",
            Some("use `--format table` or `--format json` with `--worst`".into()),
        ));
    }
    let result = plan(
        &pair,
        args.planners.planners.clone(),
        args.seed,
        args.worst,
        budget,
    );
    clear_run_progress();
    Ok(PlanOutcome {
        result: result?,
        format: args.format,
        events: args.events,
        out: args.out.out.clone(),
        require_all_placed: args.require_all_placed,
    })
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
