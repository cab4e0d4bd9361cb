//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod decisions;
pub mod fixtures;
pub mod process;
pub mod random;
pub mod snapshot;

// Each test binary uses its own share of these.
#[allow(unused_imports)]
pub use fixtures::{header, load_cluster, load_preemption, plan};
#[allow(unused_imports)]
pub use process::{root, run_coplan};
#[allow(unused_imports)]
pub use random::{
    cases, fill_allocator, preempt_entries, proptest_config, server_type, topology_qos, two_pools,
};
