//! `coplan import k8s`: a Kubernetes snapshot as a cluster and a preemption workload.

use std::path::PathBuf;

use super::checks::{Imported, distinct_outputs, import_k8s};
use crate::import::k8s::{CpuManager, K8sOptions};
use crate::session::args::ImportFormat;
use crate::session::error::SessionError;

/// Where an import writes its cluster and workload, and how it prints its summary.
#[derive(Debug, Clone, clap::Args)]
pub struct SpecOutputs {
    /// The cluster spec to write.
    #[arg(long, value_name = "C.toml")]
    pub out_cluster: PathBuf,
    /// The preemption workload to write.
    #[arg(long, value_name = "W.toml")]
    pub out_workload: PathBuf,
    /// The summary: text on stderr, or JSON on stdout.
    #[arg(long, value_enum, default_value_t = ImportFormat::Text)]
    pub format: ImportFormat,
}

/// `--cpu-manager`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CpuManagerArg {
    /// Guaranteed pods with whole CPUs get exclusive cores; the rest share a pool.
    Static,
    /// Every pod shares the node's pool.
    None,
}

/// `coplan import k8s`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct K8sArgs {
    /// Exports: `kubectl get … -o yaml` or `-o json`, multi-document YAML.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The kubelets' CPU manager policy: `static` gives Guaranteed pods with whole CPUs
    /// exclusive cores and puts every other pod in the node's shared pool; `none` shares
    /// every core.
    #[arg(long, value_enum, default_value_t = CpuManagerArg::Static)]
    pub cpu_manager: CpuManagerArg,
    /// Drop running pods that do not fit their node (with a warning) instead of failing.
    #[arg(long)]
    pub allow_misfit: bool,
    /// Read this extended resource as whole devices of a kind of its own (repeatable),
    /// beside nvidia.com/gpu, amd.com/gpu and the nvidia.com/mig-* profiles, e.g.
    /// habana.ai/gaudi.
    #[arg(long = "gpu-resource", value_name = "NAME")]
    pub gpu_resources: Vec<String>,
    /// Group servers into pools named by this node label's value (one pool per value and
    /// server type), e.g. karpenter.sh/nodepool; `capacity --pool` picks one by name.
    #[arg(long, value_name = "KEY")]
    pub pool_label: Option<String>,
    /// Where the specs and the summary go.
    #[command(flatten)]
    pub outputs: SpecOutputs,
}

/// Imports the snapshot, once its outputs are known to be two files apart from the inputs.
pub fn run(args: &K8sArgs) -> Result<Imported, SessionError> {
    let options = K8sOptions {
        cpu_manager: match args.cpu_manager {
            CpuManagerArg::Static => CpuManager::Static,
            CpuManagerArg::None => CpuManager::None,
        },
        allow_misfit: args.allow_misfit,
        gpu_resources: args.gpu_resources.clone(),
        pool_label: args.pool_label.clone(),
    };
    let outputs = &args.outputs;
    distinct_outputs(&outputs.out_cluster, &outputs.out_workload, &args.files)?;
    import_k8s(&args.files, options)
}
