//! Semantic checks of a parsed spec. Each check returns located findings; all are reported.
//!
//! One file per spec kind: each kind's rules follow its own model and none reads another's.
//! The collector they all report through (`findings`) sits apart so that every kind words a
//! range, duplicate or planner-name error the same way.

mod budgets;
mod cluster;
mod colocation;
mod eligibility;
mod fabric;
mod findings;
mod gangs;
mod preemption;
mod ranges;

pub use self::cluster::cluster;
pub use self::colocation::{colocation, colocation_with_trace};
pub use self::gangs::gang_levels;
pub use self::preemption::preemption;
pub use crate::spec::limits::{MAX_CORES_PER_SERVER, MAX_GPUS_PER_SERVER};
