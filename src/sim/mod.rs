//! Simulation over seeds for both workload kinds, sweeps over spec values (with shards) and
//! the merge of shard outputs.

pub mod colocation;
pub mod merge;
pub mod preemption;
pub mod stats;
pub mod sweep;
