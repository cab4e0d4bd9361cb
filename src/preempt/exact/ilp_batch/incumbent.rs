//! What a batch solution proves: optimal when it reaches a proven bound, else measured against
//! the best bound known; and which of two solutions is kept.

use super::lagrangian::reaches;
use super::model::BatchSolution;
use crate::plan::PlanStatus;
use crate::preempt::planner::BatchDecision;
use crate::preempt::problem::Decision;
use crate::solver::Deadline;

/// A solution proven optimal: its objective is its bound.
pub fn proven(solution: BatchSolution) -> BatchSolution {
    BatchSolution {
        status: PlanStatus::Optimal,
        bound: Some(solution.objective),
        ..solution
    }
}

/// A solution with the placement floor taken into account: optimal when it reaches the floor,
/// else its bound is the larger of the solver's and the floor.
pub fn with_floor(solution: BatchSolution, floor: f64) -> BatchSolution {
    if solution.status == PlanStatus::Optimal {
        return solution;
    }
    if reaches(solution.objective, floor) {
        return proven(solution);
    }
    BatchSolution {
        bound: Some(solution.bound.map_or(floor, |b| b.max(floor))),
        ..solution
    }
}

/// The better of a solve's solution and the incumbent it started from: a solve stopped early
/// keeps the incumbent's plan when that is cheaper (with the solve's bound, which still holds).
pub fn better_of(
    solved: Option<BatchSolution>,
    incumbent: Option<BatchSolution>,
) -> Option<BatchSolution> {
    match (solved, incumbent) {
        (Some(s), Some(i)) if s.status != PlanStatus::Optimal && i.objective < s.objective => {
            Some(BatchSolution {
                bound: s.bound,
                ..i
            })
        }
        (None, i) => i,
        (s, _) => s,
    }
}

/// A plan that is not the model's optimum, against the model's bound: `optimal` when it
/// reaches the bound (which is then its objective), else `time_limit` or `gap_limit`.
pub fn measured_against(
    decisions: Vec<Decision>,
    objective: f64,
    bound: Option<f64>,
    deadline: &Deadline,
) -> BatchDecision {
    let status = if bound.is_some_and(|b| reaches(objective, b)) {
        PlanStatus::Optimal
    } else if deadline.expired() {
        PlanStatus::TimeLimit
    } else {
        PlanStatus::GapLimit
    };
    BatchDecision {
        decisions,
        status,
        bound: if status == PlanStatus::Optimal {
            Some(objective)
        } else {
            bound
        },
        objective: Some(objective),
    }
}
