//! Planners against their oracles on random and named instances: preemption plans verified and
//! bounded, the fast searches equal to the reference enumerations, co-location runs and lower
//! bounds, the planner lists and both solver backends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

#[path = "../common/mod.rs"]
mod common;

mod colocation;
mod equivalence;
mod gangs;
mod memory_bound;
mod planners;
mod plans;
mod preemption;
mod solvers;
