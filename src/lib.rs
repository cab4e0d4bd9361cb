//! coplan: an offline planner for GPU clusters that run co-located LLM workloads.
//!
//! The library is the pure core — spec models and validation, the topology graph and node
//! allocator, the planners, the plan data and the verifiers — plus the session layer the
//! `coplan` binary calls and the printers it renders with. `docs/architecture.md` draws the
//! parts and what each may import.

pub mod calendar;
pub mod colocate;
pub mod import;
pub mod plan;
pub mod preempt;
pub mod report;
pub mod rng;
pub mod session;
pub mod sim;
pub mod solver;
pub mod spec;
pub mod topology;
pub mod verify;
