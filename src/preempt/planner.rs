//! The preemption planner trait: a sequential planner decides one preemptor on the current
//! state; a joint planner decides the whole list at once.

pub use super::apply::AppliedDecision;
use super::gang::{Gang, GangDecision, GangPoint};
use super::problem::{Decision, DecisionPoint, Problem};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::plan::{PlanStatus, PlannerRole};
use crate::topology::state::ClusterState;

/// What a batch planner returns: one decision per preemptor, plus its solver status and bound.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchDecision {
    /// One decision per preemptor, in list order.
    pub decisions: Vec<Decision>,
    /// The solver's status: `optimal` only when proven.
    pub status: PlanStatus,
    /// Best proven lower bound of the summed objective, when one exists.
    pub bound: Option<f64>,
    /// Objective the solver reported, for the verifier to compare with the replay.
    pub objective: Option<f64>,
}

/// What a joint planner returns for a list of gangs: one decision per gang, plus its solver
/// status and bound.
#[derive(Debug, Clone, PartialEq)]
pub struct GangBatch {
    /// One decision per gang, in list order; enacted in [`crate::plan::preemption::enactment_order`].
    pub decisions: Vec<GangDecision>,
    /// The solver's status: `optimal` only when proven.
    pub status: PlanStatus,
    /// Best proven lower bound of the summed objective, when one exists.
    pub bound: Option<f64>,
}

/// A preemption planner. Sequential planners implement [`decide`](Self::decide); a planner that
/// decides the whole list at once overrides [`decide_batch`](Self::decide_batch).
pub trait PreemptionPlanner: Sync {
    /// The planner's name in specs, `--planners` and reports (e.g. `flextopo-imp`).
    fn name(&self) -> &'static str;

    /// What the plan is used for: a candidate, or a reference the others are measured by.
    fn role(&self) -> PlannerRole {
        PlannerRole::Candidate
    }

    /// `heuristic`, or `optimal` for the references, which are exact (a joint planner reports
    /// its solver's status in its batch decision instead).
    fn status(&self) -> PlanStatus {
        match self.role() {
            PlannerRole::Candidate => PlanStatus::Heuristic,
            _ => PlanStatus::Optimal,
        }
    }

    /// Decides one preemptor on the current state.
    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError>;

    /// Decides one gang on the current state (DESIGN §12.3). The default is gang-blind: the
    /// pods one at a time with [`decide`](Self::decide), as kube-scheduler preempts for them.
    fn decide_gang(&self, at: &GangPoint<'_>) -> Result<GangDecision, PlanningError> {
        super::gang::pod_by_pod::decide(at, &|p| self.decide(p))
    }

    /// Whether [`decide_gang`](Self::decide_gang) places every gang whole inside one domain of
    /// its required level or not at all (the verifier holds it to that).
    fn gang_aware(&self) -> bool {
        false
    }

    /// Decides a whole list of gangs at once (joint planners). `warm_start` is the best
    /// sequential plan's decisions, when one exists.
    fn decide_gang_batch(
        &self,
        _problem: &Problem<'_>,
        _initial: &ClusterState,
        _gangs: &[Gang],
        _warm_start: Option<&[GangDecision]>,
    ) -> Result<GangBatch, PlanningError> {
        Err(PlanningError::Internal(format!(
            "{} does not decide gangs jointly",
            self.name()
        )))
    }

    /// Where this planner's search stopped for `decision`, in words (`coplan explain`).
    fn describe_search(&self, _decision: &Decision) -> String {
        String::new()
    }

    /// Whether the planner decides the whole list at once ([`decide_batch`](Self::decide_batch)).
    fn joint(&self) -> bool {
        false
    }

    /// Decides the whole list at once. `warm_start` is the best sequential plan found so far,
    /// when one exists.
    fn decide_batch(
        &self,
        _problem: &Problem<'_>,
        _initial: &ClusterState,
        _preemptors: &[Preemptor],
        _warm_start: Option<&[AppliedDecision]>,
    ) -> Result<BatchDecision, PlanningError> {
        Err(PlanningError::Internal(format!(
            "{} is not a joint planner",
            self.name()
        )))
    }
}
