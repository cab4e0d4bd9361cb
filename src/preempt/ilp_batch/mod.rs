//! `ilp-batch`: the exact optimum of the whole `[[preempt]]` list decided at once — which
//! preemptors land where and which pods are evicted (each at most once) — minimising the summed
//! canonical cost. Its optimum bounds every sequential plan from below (DESIGN §5.4).
//!
//! Model. Identical preemptors (one workload class) are aggregated: an integer variable counts
//! the instances of a class placed in a domain of a server, a binary variable evicts a pod.
//! Capacities are laminar (NUMA ⊂ socket ⊂ server), so counting demand per domain is exact: ids
//! are then assigned bottom-up (NUMA-level placements first), which succeeds whenever the counts
//! fit.
//!
//! Solution. Servers interact only through the class counts, so when the count space is small
//! the problem is solved exactly by decomposition (`decomposed`): a MILP per server and count
//! vector, then a dynamic programme over servers; the MILPs are solved lazily, only where the
//! programme's best combination needs them, with lower bounds (`bounds`) standing in for the
//! rest. Otherwise one monolithic MILP is solved (`monolithic`), warm-started from the best
//! sequential plan (`warm_start`). Both are exact; one deadline applies to both.
//!
//! Replay (`assemble`). Victims are attributed to the preemptor whose ids they free (else the first
//! eligible preemptor on their server), so the plan replays event by event like any other.

pub mod assemble;
pub mod bounds;
pub mod decomposed;
pub mod model;
pub mod monolithic;
pub mod placement_floor;
pub mod warm_start;

use self::assemble::assemble;
use self::decomposed::{decomposition_size, solve_decomposed};
use self::model::{BatchSolution, classes};
use self::monolithic::solve_monolithic;
use self::placement_floor::placement_floor;
use self::warm_start::warm_solution;
use super::planner::{AppliedDecision, BatchDecision, PreemptionPlanner};
use super::problem::{Decision, DecisionPoint, Problem};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::plan::{PlanStatus, PlannerRole};
use crate::topology::state::ClusterState;

/// Relative difference under which an objective reaches the placement floor.
const FLOOR_EPS: f64 = 1e-9;

/// Whether `objective` is at (or, by rounding, below) the proven `floor`.
fn reaches(objective: f64, floor: f64) -> bool {
    objective <= floor + FLOOR_EPS * floor.abs().max(1.0)
}

/// A solution proven optimal: its objective is its bound.
fn proven(solution: BatchSolution) -> BatchSolution {
    BatchSolution {
        status: PlanStatus::Optimal,
        bound: Some(solution.objective),
        ..solution
    }
}

/// A solution with the placement floor taken into account: optimal when it reaches the floor,
/// else its bound is the larger of the solver's and the floor.
fn with_floor(solution: BatchSolution, floor: f64) -> BatchSolution {
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

/// The `ilp-batch` planner: one exact optimum of the whole preemptor list (the batch
/// reference every gap is measured against).
pub struct IlpBatch;

impl PreemptionPlanner for IlpBatch {
    fn name(&self) -> &'static str {
        "ilp-batch"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::BatchReference
    }

    fn joint(&self) -> bool {
        true
    }

    fn describe_search(&self, _decision: &Decision) -> String {
        "the whole list decided at once (batch optimum)".into()
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let one = std::slice::from_ref(at.preemptor);
        let batch = self.decide_batch(at.problem, at.state, one, None)?;
        Ok(batch.decisions.into_iter().next().unwrap_or_default())
    }

    fn decide_batch(
        &self,
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        warm_start: Option<&[AppliedDecision]>,
    ) -> Result<BatchDecision, PlanningError> {
        let classes = classes(preemptors);
        let deadline = super::ilp::deadline(problem);
        let floor = placement_floor(problem, initial, preemptors, &classes);
        let warm = warm_start.map(|a| warm_solution(problem, initial, (&classes, preemptors), a));
        // The best sequential plan already at the floor is optimal; a budget spent before a
        // model could be built leaves it the incumbent.
        let early = match &warm {
            Some(w) if reaches(w.objective, floor) => Some(proven(w.clone())),
            Some(w) if deadline.expired() => Some(w.clone()),
            _ => None,
        };
        let solution = match early {
            Some(s) => Some(s),
            None => match decomposition_size(problem, initial, preemptors, &classes) {
                Some(_) => solve_decomposed(problem, initial, preemptors, &classes, &deadline)?,
                None => solve_monolithic(
                    problem, initial, preemptors, &classes, warm_start, &deadline,
                )?,
            },
        };
        // A solve stopped by the budget may hold a worse plan than the warm start (a
        // decomposition whose subproblems ran out of time): the better one is the incumbent.
        let solution = match (solution, warm) {
            (Some(s), Some(w)) if s.status != PlanStatus::Optimal && w.objective < s.objective => {
                Some(BatchSolution {
                    bound: s.bound,
                    ..w
                })
            }
            (None, Some(w)) => Some(w),
            (s, _) => s,
        };
        let Some(solution) = solution.map(|s| with_floor(s, floor)) else {
            return Ok(BatchDecision {
                decisions: Vec::new(),
                status: PlanStatus::TimeLimit,
                bound: None,
                objective: None,
            });
        };
        let decisions = assemble(problem, initial, preemptors, &classes, &solution);
        Ok(BatchDecision {
            decisions,
            status: solution.status,
            bound: solution.bound,
            objective: Some(solution.objective),
        })
    }
}
