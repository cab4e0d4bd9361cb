//! Exact solution of the batch as one MILP over every server, warm-started from the best plan
//! known (used when the class-count space is too large to decompose).

use super::classes::{Class, Counts};
use super::model::{BatchSolution, build_until, solve_model};
use super::warm_start::warm_values;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::ServerId;
use crate::topology::state::ClusterState;

/// Solves the batch as one MILP over every server, warm-started from `warm` (a feasible plan).
pub fn solve_monolithic(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    warm: Option<&BatchSolution>,
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let expired = || deadline.expired();
    let built = build_until(
        problem,
        (initial, preemptors, classes),
        &servers,
        Counts::AtMost,
        &expired,
    );
    let Some(model) = built else {
        // The budget ended while the model was built: the warm start is the incumbent.
        return Ok(warm.cloned());
    };
    let values = warm.map(|w| warm_values(&model, w));
    solve_model(model, deadline, values)
}
