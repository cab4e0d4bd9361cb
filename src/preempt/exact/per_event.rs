//! `ilp`: the exact per-event optimum of the canonical cost (DESIGN §5.2), decided for each
//! preemptor on the state it faces, and the optimum every `decision_gap` is measured against.
//! `[planners] event_solver` picks how it is found: the combinatorial branch and bound
//! ([`super::event_exact`], the default) or one MILP per server ([`super::ilp`], the
//! reference). Both are exact on the same objective and follow one total order on decisions
//! (cost, then the candidate chain): the MILP proves each server's optimum cost and takes the
//! set of that cost first in the chain from the search's enumeration, so their plans are
//! identical.

use super::event_exact::{best_tied_on_server, exact_optimum};
use super::ilp::{EventOptimum, milp_optimum};
use crate::plan::PlannerRole;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::{Decision, DecisionPoint, Problem};
use crate::spec::preemption::EventSolver;
use crate::topology::state::ClusterState;

/// The `ilp` planner: for each preemptor in turn, the exact minimum of the canonical cost on
/// the state it faces (the per-event reference; search or MILP per `[planners] event_solver`).
pub struct IlpPerEvent;

impl PreemptionPlanner for IlpPerEvent {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::PerEventReference
    }

    fn decide_gang(
        &self,
        at: &crate::preempt::gang::GangPoint<'_>,
    ) -> Result<crate::preempt::gang::GangDecision, PlanningError> {
        Ok(crate::preempt::gang::exact::decide(at).0)
    }

    fn gang_aware(&self) -> bool {
        true
    }

    fn describe_search(&self, decision: &Decision) -> String {
        if decision.unproven {
            "stopped at the time limit: not proven".into()
        } else {
            "proven optimum of this event".into()
        }
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        event_optimum(at.problem, at.state, at.preemptor).map(|o| Decision {
            unproven: !o.proven,
            optimum_cost: Some(o.cost),
            ..o.decision
        })
    }
}

/// The per-event optimum on one state, by the spec's `event_solver`.
pub fn event_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
) -> Result<EventOptimum, PlanningError> {
    match problem.spec.planners.event_solver {
        EventSolver::Exact => exact_optimum(problem, state, p),
        EventSolver::Milp => milp_event_optimum(problem, state, p),
    }
}

/// The per-event optimum by the MILP reference, its ties ranked as the search ranks them.
pub fn milp_event_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
) -> Result<EventOptimum, PlanningError> {
    let best_tied = |server, cost| best_tied_on_server(problem, state, p, server, cost);
    milp_optimum(problem, state, p, &best_tied)
}
