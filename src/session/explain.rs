//! `coplan explain`: one decision, every planner's choice beside the optimum on the same state.

use std::path::PathBuf;

use super::args::{ExplainFormat, Inputs, OutFile, PlannerList, Solving};
use super::error::SessionError;
use super::explain_colocation;
use super::load::{Pair, Workload};
use super::progress::{clear_run_progress, run_progress};
use crate::plan::cancel::Cancel;
use crate::plan::explain::EventExplanation;
use crate::plan::explain_colocation::TaskExplanation;
use crate::preempt::explain::{self, ExplainOptions};

/// `coplan explain`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ExplainArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// Preemption: the preemptor to explain, its position in the `[[preempt]]` list, from 1.
    #[arg(long, value_name = "N")]
    pub event: Option<usize>,
    /// Co-location: the task to explain, its id in the plan's events, from 0.
    #[arg(long, value_name = "ID")]
    pub task: Option<u32>,
    /// The planners to run.
    #[command(flatten)]
    pub planners: PlannerList,
    /// Overrides [fill].seed (the initial fill) of a preemption workload.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = ExplainFormat::Table)]
    pub format: ExplainFormat,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
    /// The exact side's backend and the run's time budget.
    #[command(flatten)]
    pub solving: Solving,
}

/// An explanation, and how it is to be written.
pub struct ExplainOutcome {
    /// The explanation.
    pub explanation: Explanation,
    /// The output format.
    pub format: ExplainFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
}

/// Loads the inputs and explains the event or task asked for.
pub fn run(args: &ExplainArgs) -> Result<ExplainOutcome, SessionError> {
    let budget = Cancel::never()
        .with_budget(args.solving.time_limit)
        .reporting_to(run_progress());
    let pair = args.inputs.load_solving(&args.solving)?;
    let explanation = explain(
        &pair,
        args.planners.planners.clone(),
        args.seed,
        args.event,
        args.task,
        budget,
    );
    clear_run_progress();
    Ok(ExplainOutcome {
        explanation: explanation?,
        format: args.format,
        out: args.out.out.clone(),
    })
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
