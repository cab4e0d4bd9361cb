//! The `ilp-batch` planner: the exact optimum of the whole list (see the module header of
//! [`super`]), solved by decomposition when the count space is small, else by the large-batch
//! route, then enacted within the rules the model relaxes.

use super::classes::classes;
use super::decomposed::{decomposition_size, solve_decomposed};
use super::enact::{as_enacted, keeps_device_rules, keeps_hard_budgets, sequential_instead};
use super::incumbent::{better_of, proven, with_floor};
use super::lagrangian::reaches;
use super::large::solve_large;
use super::list::ListStructure;
use super::warm_start::warm_solution;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::plan::{PlanStatus, PlannerRole};
use crate::preempt::exact::ilp;
use crate::preempt::planner::{AppliedDecision, BatchDecision, PreemptionPlanner};
use crate::preempt::problem::{Decision, DecisionPoint, Problem};
use crate::topology::state::ClusterState;

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

    fn gang_aware(&self) -> bool {
        true
    }

    fn decide_gang_batch(
        &self,
        problem: &Problem<'_>,
        initial: &ClusterState,
        gangs: &[crate::preempt::gang::Gang],
        warm_start: Option<&[crate::preempt::gang::GangDecision]>,
    ) -> Result<crate::preempt::planner::GangBatch, PlanningError> {
        crate::preempt::gang::batch::decide_batch(problem, initial, gangs, warm_start)
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
        let deadline = ilp::deadline(problem);
        let list = ListStructure::new(problem, initial, preemptors, &classes);
        let floor = list.floor;
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
                Some(_) => solve_decomposed(problem, (initial, preemptors, &classes), &deadline)?,
                None => solve_large(
                    problem,
                    (initial, preemptors, &classes),
                    &list,
                    warm.as_ref(),
                    &deadline,
                )?,
            },
        };
        // A solve stopped by the budget may hold a worse plan than the warm start (a
        // decomposition whose subproblems ran out of time): the better one is the incumbent.
        let solution = better_of(solution, warm.clone());
        let Some(solution) = solution.map(|s| with_floor(s, floor)) else {
            return Ok(BatchDecision {
                decisions: Vec::new(),
                status: PlanStatus::TimeLimit,
                bound: None,
                objective: None,
            });
        };
        let list = (initial, preemptors, classes.as_slice());
        let instead =
            |d: &BatchDecision| sequential_instead(problem, list, d, warm.clone(), &deadline);
        let decision = as_enacted(problem, list, &solution, warm.clone(), &deadline);
        let decision = if keeps_device_rules(problem, preemptors, &decision) {
            decision
        } else {
            instead(&decision)
        };
        Ok(if keeps_hard_budgets(initial, &decision) {
            decision
        } else {
            instead(&decision)
        })
    }
}
