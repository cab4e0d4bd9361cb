//! How `coplan import k8s` reads a snapshot: the options its command line sets.

/// The CPU manager policy of the kubelets (`--cpu-manager`): who holds exclusive cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuManager {
    /// Guaranteed pods with whole CPUs get exclusive cores; the rest share a pool.
    #[default]
    Static,
    /// Every pod shares the node's pool.
    None,
}

/// How to read a snapshot.
#[derive(Debug, Clone, Default)]
pub struct K8sOptions {
    /// The kubelets' CPU manager policy.
    pub cpu_manager: CpuManager,
    /// Drop (with a warning) running pods that do not fit their node instead of failing.
    pub allow_misfit: bool,
    /// Extended resources read as whole devices of their own kind, beside `nvidia.com/gpu`,
    /// `amd.com/gpu` and the MIG profiles (`--gpu-resource`).
    pub gpu_resources: Vec<String>,
    /// The node label whose value groups servers into named pools (`--pool-label`).
    pub pool_label: Option<String>,
}
