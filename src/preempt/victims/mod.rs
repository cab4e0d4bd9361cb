//! The victims a preemptor may take, shared by every planner that chooses them: the filter
//! (which servers could admit the pod, and the fewest victims each needs), the candidate
//! sourcing over victim subsets, and the subsets themselves.

pub mod candidates;
pub mod filter;
pub mod subsets;

pub use self::filter::VictimFacts;
pub use self::subsets::{for_each_subset, for_each_union};
