//! Why planning failed, for both workload kinds.

use crate::spec::source::Finding;

/// A planning failure. `Invalid` and `UnknownPlanner` are the user's input (exit 2); the rest
/// are failures of a planner, its solver or its plan (exit 1: a bug).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanningError {
    /// The workload does not fit the cluster (cross-file findings).
    #[error("the workload does not fit the cluster")]
    Invalid(Vec<Finding>),
    /// A planner name that is not in the registry of the workload's kind (exit 2).
    #[error("unknown planner `{0}`")]
    UnknownPlanner(String),
    /// A command-line value the workload cannot answer (an event or task that does not exist).
    #[error("{0}")]
    OutOfRange(String),
    /// A solver failed (not a time limit: that is a status).
    #[error("solver failed: {0}")]
    Solver(String),
    /// A model or bookkeeping error inside a planner.
    #[error("{0}")]
    Internal(String),
    /// One of the errors above, raised while a named planner ran.
    #[error("planner `{planner}` failed: {error}")]
    Planner {
        /// The planner that raised it.
        planner: String,
        /// What went wrong.
        error: Box<PlanningError>,
    },
    /// A stop was requested ([`super::cancel::Cancel`]) before the run finished.
    #[error("interrupted")]
    Interrupted,
    /// The independent verifier rejected a plan.
    #[error("the verifier rejected the plan of `{planner}` at {at}: {reason}")]
    Verification {
        /// The planner whose plan was rejected.
        planner: String,
        /// Where in the plan: a preemptor's name, `plan` or `metrics` for a preemption plan; `run`,
        /// `metrics`, `optimum` or a capacity probe for a co-location run.
        at: String,
        /// The rule the plan breaks.
        reason: String,
    },
}

impl PlanningError {
    /// Attributes an error to the planner that raised it.
    pub fn in_planner(self, planner: &str) -> PlanningError {
        match self {
            e @ (PlanningError::Planner { .. }
            | PlanningError::Verification { .. }
            | PlanningError::Interrupted) => e,
            error => PlanningError::Planner {
                planner: planner.to_string(),
                error: Box::new(error),
            },
        }
    }

    /// Whether the user's input caused it (exit 2) rather than a bug (exit 1).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            PlanningError::Invalid(_)
                | PlanningError::UnknownPlanner(_)
                | PlanningError::OutOfRange(_)
        )
    }
}

/// A list of planners to run names each once and names at least one: `--planners ilp,ilp`
/// would print two rows of one plan, and an empty list an empty table.
pub fn distinct_planners(names: &[String]) -> Result<(), PlanningError> {
    if names.is_empty() {
        return Err(PlanningError::OutOfRange(
            "no planner to run: the list of planners is empty".into(),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    match names.iter().find(|n| !seen.insert(n.as_str())) {
        Some(again) => Err(PlanningError::OutOfRange(format!(
            "planner `{again}` is named twice in the list of planners to run"
        ))),
        None => Ok(()),
    }
}
