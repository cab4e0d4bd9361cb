//! Plan data of both workload kinds: what planners produce, verifiers check and printers
//! render. It depends on the spec and topology vocabulary only, never on a planner.

pub mod cancel;
pub mod colocation;
pub mod error;
pub mod estimate;
pub mod explain;
pub mod explain_colocation;
pub mod gang;
pub mod preemption;
pub mod status;

pub use self::status::{PlanStatus, PlannerRole};
