//! Co-location of LLM training and inference (DESIGN §6, LeMix): the discrete-event engine,
//! the planners behind one trait, and planning (run, verify, measure, gaps).

pub mod bounds;
pub mod capacity;
pub mod engine;
pub mod explain;
pub mod ilp;
pub mod latency;
pub mod lemix;
pub mod metrics;
pub mod mix_luf;
pub mod mix_rr;
pub mod planner;
pub mod planning;
pub mod registry;
pub mod separate;
pub mod setup;
pub mod trace;
#[cfg(test)]
mod verify_equivalence;
pub mod vidur;
pub mod workload;
