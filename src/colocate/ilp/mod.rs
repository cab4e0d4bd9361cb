//! `ilp`: the best schedule over every decision a planner can make under the engine's own
//! rules (DESIGN §10.3).
//!
//! The engine is deterministic given the answers to its questions, so the schedules any
//! planner can produce are exactly the leaves of a tree with one level per question:
//! - each offered task: its node, or for a training task while an inference arrival is still
//!   ahead, deferral to the next one (what `lemix` and `lemix-balanced` do);
//! - each weight-sync point (every `separate_sync_every` completed training tasks, when the
//!   workload has that many): sync SEPARATE's serving nodes or not (what `separate` does).
//!
//! `ilp` searches that tree depth first, cloning the engine at each question (the walk,
//! `Tree::explore` in `tree.rs`, is shared):
//! - the first incumbent is the best of the candidate planners' schedules (each planner's
//!   answers recorded and replayed as a path of the tree, so it is a leaf like any other), or
//!   the first dive, which follows the least-backlog node, when none is better;
//! - a subtree is cut when the floor of its partial run (finished tasks at their score, the
//!   others at their floor from now, `bounds::partial_floor`) reaches the incumbent;
//! - nodes whose state is identical (never used, or drained to the same state) are
//!   interchangeable: only the first of them is tried.
//!
//! Two searches walk it, each with its own state: `exact.rs` (up to `ilp_exact_max_tasks`
//! tasks, every decision; `optimal`, or `time_limit` with the incumbent) and `windowed.rs`
//! (above; rolling windows of `ilp_window` offers over nodes only, status `windowed`, or
//! `time_limit` when `ilp_time_limit_s` cut a window short).
//!
//! Its role: the optimum of the planners' space, beside the heuristics. When it is proven
//! (`optimal`), no planner can score below it and every gap is measured against it; otherwise
//! its row is a schedule like theirs, with a gap against the proven lower bound of
//! `colocate::bounds` (an incumbent is not a bound).

mod answers;
mod candidates;
mod exact;
mod order;
mod planner;
mod tree;
mod windowed;

pub use self::answers::{SearchOutcome, Step, SyncPoints};
pub use self::planner::{Ilp, solve};
