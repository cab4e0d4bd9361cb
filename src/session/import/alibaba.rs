//! `coplan import alibaba-openb`: the Alibaba GPU trace as a cluster and a preemption workload.

use std::path::PathBuf;

use super::checks::{AlibabaArgs, Imported, distinct_outputs, import_alibaba};
use super::k8s::SpecOutputs;
use crate::session::error::SessionError;

/// `--gpu-shares`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuSharesArg {
    /// A share takes one whole GPU.
    Whole,
    /// Pods with a GPU share are left out.
    Drop,
}

/// `coplan import alibaba-openb`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct AlibabaOpenbArgs {
    /// The node list `sn,cpu_milli,memory_mib,gpu,model`.
    pub nodes: PathBuf,
    /// A pod list: the full one (with qos and times) or a sampled one (5 columns).
    pub pods: PathBuf,
    /// The moment (trace seconds) whose running pods form the initial state, or `peak`:
    /// the earliest moment the most whole GPUs are held (the default). Ignored, with a
    /// warning, for sampled lists.
    #[arg(long, value_name = "T|peak")]
    pub at: Option<String>,
    /// The N pods created after the moment (or after the fill) become the preemptors.
    #[arg(long, default_value_t = 200)]
    pub next: usize,
    /// Sampled lists: place pods in file order until this share of GPUs is taken.
    #[arg(long, default_value_t = 0.9)]
    pub fill: f64,
    /// Map a GPU model to a built-in server type (repeatable), e.g. G2=gpu-2s4n8g;
    /// unmapped models get the default layout.
    #[arg(long = "server-type", value_name = "MODEL=TYPE")]
    pub server_types: Vec<String>,
    /// Override a row of the QoS table (repeatable), e.g. Burstable=300:none:preemptible.
    #[arg(long, value_name = "CLASS=PRIORITY:TOPOLOGY[:preemptible]")]
    pub qos: Vec<String>,
    /// What a GPU share (gpu_milli < 1000) becomes.
    #[arg(long, value_enum, default_value_t = GpuSharesArg::Whole)]
    pub gpu_shares: GpuSharesArg,
    /// Sampled lists (no qos column): the QoS classes of the fill pods and of the
    /// preemptors.
    #[arg(long, value_name = "FILL,NEXT", default_value = "BE,LS")]
    pub sampled_qos: String,
    /// Read a full (timed) list as an arrival sequence, as FGD's simulator does: pods in
    /// creation order fill the cluster to --fill, the next ones preempt; --at is ignored.
    #[arg(long)]
    pub as_sequence: bool,
    /// Where the specs and the summary go.
    #[command(flatten)]
    pub outputs: SpecOutputs,
}

/// Imports the trace, once its outputs are known to be two files apart from the inputs.
pub fn run(args: &AlibabaOpenbArgs) -> Result<Imported, SessionError> {
    let options = AlibabaArgs {
        at: args.at.clone(),
        next: args.next,
        fill: args.fill,
        server_types: args.server_types.clone(),
        qos: args.qos.clone(),
        drop_gpu_shares: args.gpu_shares == GpuSharesArg::Drop,
        sampled_qos: args.sampled_qos.clone(),
        as_sequence: args.as_sequence,
    };
    let outputs = &args.outputs;
    distinct_outputs(
        &outputs.out_cluster,
        &outputs.out_workload,
        &[args.nodes.clone(), args.pods.clone()],
    )?;
    import_alibaba(&args.nodes, &args.pods, &options)
}
