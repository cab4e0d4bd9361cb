//! Co-location of LLM training and inference (DESIGN §6, LeMix).

pub mod engine;
pub mod ilp;
pub mod latency;
pub mod lemix;
pub mod metrics;
pub mod mix_luf;
pub mod mix_rr;
pub mod plan;
pub mod separate;
pub mod sim;
pub mod trace;
pub mod verify;
pub mod workload;
