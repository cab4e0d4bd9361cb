//! `coplan capacity`, one question per workload kind, one answer shape:
//! - preemption: the fewest servers in one pool (the other pools fixed) at which a target on a
//!   simulated metric (`hit_rate>=0.99`, `unplaced<=0`) holds, per planner, by bisection over
//!   the size, with the mean and 95 % CI at every size tried;
//! - co-location: each planner's sustainable request rate (`colocate::capacity`), in the same
//!   shape.
//!
//! A size "holds" when the whole 95 % CI of the metric's mean over seeds meets the target and
//! "fails" when the whole CI misses it; in between the CI straddles the target, and the answer is
//! the bracket of sizes the seeds cannot tell apart rather than one number. The bisection
//! assumes more servers never hurt; every pair of sizes tried is checked for the opposite, and
//! a reversal is reported where it was seen.

mod bisection;
mod classify;
mod error;
mod pool;
mod rates;
mod report;
mod search;
mod sizes;
mod target;

pub use classify::{classify, reversals};
pub use error::CapacityError;
pub use pool::{NODE_CRITICAL_PRIORITY, Shrink, resize, select_pool, shape, shrink};
pub use rates::from_rates;
pub use report::{
    CapacityProbe, CapacityReport, Hold, PlannerCapacity, PoolRef, ProbeStatus, Reversal, Verdict,
};
pub use search::{MAX_POOL_SERVERS, PoolSearch, pool_capacity};
pub use sizes::Progress;
pub use target::{COUNT_METRICS, TARGET_METRICS, Target, TargetOp, parse_target};

#[cfg(test)]
mod test_support;
