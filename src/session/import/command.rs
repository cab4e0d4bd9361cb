//! `coplan import`'s subcommands, one a source.

use super::{alibaba, azure, k8s, vidur};

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
