//! The Kubernetes baselines: the scheduler's default preemption (`k8s-default`) and the same
//! with the topology-aware node filter (`k8s-nrt`).

pub mod default;
pub mod nrt;
