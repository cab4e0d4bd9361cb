//! How a planner's run ended, and what its plan is used for besides itself.

use schemars::JsonSchema;
use serde::Serialize;

/// Status of a planner's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// A heuristic planner's plan: feasible (verified), with no claim of optimality.
    Heuristic,
    /// The solver proved the plan optimal.
    Optimal,
    /// The solver stopped at its time limit: its best plan and best bound, no proof of optimality.
    TimeLimit,
    /// A feasible plan and a proven bound, no proof of optimality: a solve stopped within the
    /// MIP gap the spec allows (`ilp_mip_gap` > 0), or `ilp-batch`'s model optimum evicts pods
    /// no preemptor needs and the plan is the best the cluster would enact, above it, or that
    /// optimum takes more of a hard PodDisruptionBudget than it allows.
    GapLimit,
    /// The exact co-location search run over rolling windows of tasks: a strong feasible
    /// schedule, not an optimum.
    Windowed,
    /// The planner did not run on this instance (e.g. too large for the exact model).
    Skipped,
    /// A solver stopped before it had any solution (no objective, no events).
    NoSolution,
}

/// What a planner's plan is used for besides itself. Gaps and bounds are computed against the
/// reference planners, so the role is a property of the planner, never a name compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannerRole {
    /// A plan to be measured against the references.
    Candidate,
    /// The exact optimum of each decision on the state a planner faced (`decision_gap`).
    PerEventReference,
    /// The exact optimum of the whole list decided at once (`gap` of preemption plans).
    BatchReference,
    /// The best schedule over every decision the candidates can make (the co-location `ilp`):
    /// when proven (`optimal`), its objective is the reference of every gap and its own bound;
    /// otherwise a schedule measured like theirs against the proven bound of
    /// `colocate::bounds`.
    ScheduleOptimum,
}

impl PlannerRole {
    /// Reference planners run after the candidates: they take the candidates' plans as warm
    /// starts, and the co-location bound's horizon is the candidates' latest end alone.
    pub fn runs_last(self) -> bool {
        matches!(
            self,
            PlannerRole::BatchReference | PlannerRole::ScheduleOptimum
        )
    }
}
