//! The one error type of the capacity search: every step (target, pool, range, simulation)
//! fails with it, so that the command maps a failure to its exit code in one place.

use crate::plan::error::PlanningError;

/// Why a capacity question cannot be answered (input errors, exit 2, unless `Plan`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapacityError {
    #[error("`--target {0}`: expected METRIC>=X or METRIC<=X (e.g. hit_rate>=0.99)")]
    TargetSyntax(String),
    #[error("`--target`: unknown metric `{metric}`; expected one of {valid}")]
    UnknownMetric { metric: String, valid: String },
    #[error("`--pool {arg}`: {reason}")]
    Pool { arg: String, reason: String },
    #[error("{0}")]
    Range(String),
    #[error("pool `{prefix}` at {size} servers: {reason}")]
    Resize {
        prefix: String,
        size: u32,
        reason: String,
    },
    #[error(transparent)]
    Plan(#[from] PlanningError),
}
