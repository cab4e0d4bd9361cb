//! Allocation state: which pod holds which GPUs and cores, and the initial state of a
//! preemption workload's `[[running]]` pods.

mod cluster_state;
mod memo;
mod pod;
mod running;

pub use cluster_state::{ClusterState, ServerAlloc, StateError};
pub use memo::ScanMemo;
pub use pod::{Pod, Resident};
pub use running::running_state;
