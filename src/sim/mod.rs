//! Simulation over seeds for both workload kinds, sweeps over spec values (with shards) and
//! the merge of shard outputs.

pub mod capacity;
pub mod colocation;
pub mod diff;
pub mod fingerprint;
pub mod merge;
pub mod preemption;
pub mod stats;
pub mod sweep;
