//! Co-location of LLM training and inference (DESIGN §6, LeMix).

pub mod latency;
pub mod trace;
pub mod workload;
