//! The one error type of the capacity search: every step (target, pool, range, simulation)
//! fails with it, so that the command maps a failure to its exit code in one place.

use crate::plan::error::PlanningError;

/// Why a capacity question cannot be answered (input errors, exit 2, unless `Plan`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapacityError {
    /// A `--target` argument that is not `METRIC>=X` or `METRIC<=X`.
    #[error("`--target {0}`: expected METRIC>=X or METRIC<=X (e.g. hit_rate>=0.99)")]
    TargetSyntax(String),
    /// A `--target` metric that is not one of the workload kind's metrics.
    #[error("`--target`: unknown metric `{metric}`; expected one of {valid}")]
    UnknownMetric {
        /// The metric named.
        metric: String,
        /// The metrics a target may name, comma-separated.
        valid: String,
    },
    /// A `--pool` argument that names no single pool of the cluster.
    #[error("`--pool {arg}`: {reason}")]
    Pool {
        /// The `--pool` argument as given; empty when none was given and the cluster has several.
        arg: String,
        /// Why it names no single pool, with the pools listed.
        reason: String,
    },
    /// A size range the search cannot use (`--min`/`--max` out of bounds, no seed or cycle to run).
    #[error("{0}")]
    Range(String),
    /// The cluster resized to a probed size fails validation.
    #[error("pool `{prefix}` at {size} servers: {reason}")]
    Resize {
        /// `name_prefix` of the resized pool.
        prefix: String,
        /// The size (servers) that was tried.
        size: u32,
        /// The first validation finding of the resized cluster.
        reason: String,
    },
    /// A planning or simulation failure at some size (exit 1, or 2 for an input error of the
    /// workload).
    #[error(transparent)]
    Plan(#[from] PlanningError),
}
