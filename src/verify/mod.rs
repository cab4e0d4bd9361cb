//! The independent plan checkers, one per workload kind. They read plan data and the specs
//! only — never a planner's state, allocator or engine — and every plan of every planner
//! passes through them.

pub mod colocation;
mod devices;
pub mod preemption;
