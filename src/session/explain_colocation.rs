//! `explain --task ID` of a co-location workload: the session's side (the
//! workload kind checked, planning errors mapped); the core is `colocate::explain`.

use super::error::SessionError;
use super::load::{Pair, Workload};
use crate::colocate::explain::{self, ExplainInput};
use crate::plan::cancel::Cancel;
use crate::plan::explain_colocation::TaskExplanation;

/// Explains task `task` (its id, from 0) of a co-location workload as every asked planner
/// (`None`: the workload's `[planners].run`) decided and ran it.
pub fn explain_task(
    pair: &Pair,
    planners: Option<Vec<String>>,
    seed: Option<u64>,
    task: u32,
    cancel: Cancel,
) -> Result<TaskExplanation, SessionError> {
    with_input(pair, planners.as_deref(), (seed, cancel), |input| {
        explain::explain_task(input, task)
    })
}

/// Runs `f` on the pair's co-location workload; a preemption workload is an input error.
fn with_input<T>(
    pair: &Pair,
    planners: Option<&[String]>,
    (seed, cancel): (Option<u64>, Cancel),
    f: impl FnOnce(&ExplainInput<'_>) -> Result<T, crate::plan::error::PlanningError>,
) -> Result<T, SessionError> {
    let Workload::Colocation { spec, trace } = &pair.workload else {
        return Err(SessionError::input(
            "`--task` explains a task of a co-location workload",
            Some("`--event N` explains the N-th preemptor of a preemption workload".into()),
        ));
    };
    let input = ExplainInput {
        cluster: &pair.cluster,
        spec,
        trace: trace.as_deref(),
        planners,
        seed,
        cancel,
    };
    f(&input).map_err(|e| pair.planning_error(e))
}
