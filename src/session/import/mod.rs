//! `coplan import`: turn what users run into specs. One file per source, and the checks every
//! importer shares (located errors, limits, generated specs validated before they are written).

pub mod alibaba;
pub mod azure;
pub mod checks;
pub mod k8s;
pub mod vidur;

pub use checks::{
    AlibabaArgs, ImportSummary, Imported, alibaba_options, check_generated, distinct_outputs,
    import_alibaba, import_azure, import_error, import_k8s,
};

/// `coplan import`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ImportCommand {
    /// A Kubernetes snapshot → a cluster and a preemption workload: Nodes (allocatable CPU and
    /// nvidia.com/gpu, GPU model label), NodeResourceTopology objects (NUMA zones, costs,
    /// Topology Manager policy), Pods (Running → [[running]], Pending → [[preempt]]).
    ///
    /// Reads `kubectl get nodes,pods -A -o yaml` or `-o json` (a List), multi-document YAML
    /// and `kubectl get noderesourcetopologies -o yaml`; any number of files.
    K8s(k8s::K8sArgs),
    /// The Alibaba GPU cluster trace 2023 ("openb") → a cluster and a preemption workload:
    /// the pods running at a moment are the initial state, the next pods the preemptors.
    AlibabaOpenb(alibaba::AlibabaOpenbArgs),
    /// The Azure LLM inference trace 2023 (`TIMESTAMP,ContextTokens,GeneratedTokens`) → a
    /// co-location workload with explicit requests (arrival, prompt and output tokens).
    AzureLlm(azure::AzureArgs),
    /// Vidur's measured per-layer operator latencies (mlp.csv) → the stage-latency samples CSV
    /// that `coplan profile fit` reads (the attention kernel derived from FLOPs, labelled).
    VidurProfile(vidur::VidurArgs),
}
