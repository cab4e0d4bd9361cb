//! The independent plan checker. It replays a plan's events on the initial state (in the order
//! they are enacted: list order, or highest priority first for a joint plan) with its own
//! bookkeeping (names and id sets, not the planners' state or allocator) and checks every rule
//! of DESIGN §5: victims exist, are preemptible, have strictly lower priority and are evicted
//! once; the preemptor's GPUs and cores are free after eviction and on one server; level, hit
//! and admission match the placement; costs, metrics and the objective recompute.

mod gangs;
mod ledger;
mod replay;

pub use self::gangs::verify_gang_plan;
pub use self::ledger::Rejection;
pub use self::replay::verify_plan;
