//! The exact references every heuristic is measured against: the per-event optimum (by branch
//! and bound in `event_exact`, by per-server MILPs in `ilp`, behind the `ilp` planner in
//! `per_event`), the optima a run is measured by (`optima`), and the optimum of the whole list
//! decided at once (`ilp_batch`).

pub mod event_exact;
pub mod ilp;
pub mod ilp_batch;
pub mod optima;
pub mod per_event;
