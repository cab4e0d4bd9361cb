//! A batch too large to decompose exactly: the Lagrangian decomposition for a bound and a
//! plan, then the monolithic MILP warm-started from the best plan known.

use super::classes::Class;
use super::incumbent::{better_of, proven};
use super::lagrangian::{lagrangian, reaches};
use super::list::ListStructure;
use super::model::BatchSolution;
use super::monolithic::solve_monolithic;
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::state::ClusterState;

/// Share of the budget left when a large batch starts that its Lagrangian decomposition may
/// use; the monolithic MILP, warm-started from the best plan, gets the rest.
const LAGRANGIAN_SHARE: f64 = 0.5;

/// A batch too large to decompose exactly: the Lagrangian decomposition first (a bound and a
/// plan, on part of the budget), then the monolithic MILP warm-started from the best plan known,
/// unless the bound already proves it.
pub fn solve_large(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    list: &ListStructure,
    warm: Option<&BatchSolution>,
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let upper = warm.map(|w| w.objective);
    let stage = deadline.first_part(LAGRANGIAN_SHARE);
    let relaxed = lagrangian(
        problem,
        (initial, preemptors, classes),
        (&list.states, &list.floors),
        upper,
        &stage,
    )?;
    let bound = relaxed.bound.map_or(list.floor, |b| b.max(list.floor));
    // The decomposition's plan joins servers priced apart: under hard budgets it may take more
    // of a budget than it allows, and is then no incumbent.
    let within = |s: &BatchSolution| initial.budgets_allow(s.evicted.iter().copied());
    let incumbent = match (relaxed.incumbent.filter(within), warm.cloned()) {
        (Some(a), Some(b)) => Some(if a.objective < b.objective { a } else { b }),
        (a, b) => a.or(b),
    };
    if let Some(best) = &incumbent
        && reaches(best.objective, bound)
    {
        return Ok(Some(proven(best.clone())));
    }
    let solved = solve_monolithic(
        problem,
        initial,
        preemptors,
        classes,
        incumbent.as_ref(),
        deadline,
    )?;
    // The MILP stopped early keeps the better of its plan and the incumbent, and the better of
    // its bound and the decomposition's.
    let solved = better_of(solved, incumbent);
    Ok(solved.map(|s| match s.status {
        PlanStatus::Optimal => s,
        _ => BatchSolution {
            bound: Some(s.bound.map_or(bound, |b| b.max(bound))),
            ..s
        },
    }))
}
