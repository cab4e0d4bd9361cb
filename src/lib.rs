//! coplan: an offline planner for GPU clusters that run co-located LLM workloads.
//!
//! The library is the pure core: spec models and validation, the topology graph and node
//! allocator, the planners and the verifier. The `coplan` binary is a thin shell over it.

pub mod colocate;
pub mod preempt;
pub mod report;
pub mod rng;
pub mod sim;
pub mod solver;
pub mod spec;
pub mod topology;
pub mod verify;
