//! Command-line definitions: every flag lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "coplan",
    version,
    about = "Offline planner for GPU clusters running co-located LLM workloads",
    long_about = "coplan reads TOML specs of a cluster and a workload, builds the hardware topology \
                  graph, and plans topology-aware preemption and training/inference co-location \
                  with greedy heuristics and an exact ILP.\n\nExit codes: 0 success, 1 internal \
                  error, 2 invalid input, 3 infeasible plan under an enforced requirement."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and validate spec files; print a one-line summary of each valid file.
    ///
    /// Cross-file references (a running pod's node, a co-location's stages against the servers'
    /// GPUs) are checked when exactly one cluster is among the files.
    Validate {
        /// Spec files (clusters and workloads, in any order).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of a spec kind (the same as schemas/<kind>.schema.json).
    Schema {
        #[arg(value_enum)]
        kind: SchemaKind,
    },
    /// Plan a workload on a cluster with every planner and compare them with the optimum.
    Plan {
        cluster: PathBuf,
        workload: PathBuf,
        #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
        format: PlanFormat,
        /// Planners to run, comma-separated (default: the workload's [planners].run).
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        /// Seed of the run: overrides [fill].seed (the initial fill) of a preemption workload
        /// and [planners].seed of a co-location workload.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the output to FILE (atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Exit with code 3 when no planner places every preemptor.
        #[arg(long)]
        require_all_placed: bool,
        /// After the table, per planner: preemption, the K decisions with the largest excess
        /// over the per-event optimum on the state it faced (event, server, excess, the
        /// deciding cost term), the events to give `coplan explain --event`; co-location, the
        /// K tasks whose response differs most from `ilp`'s schedule (for `explain --task`).
        #[arg(long, value_name = "K")]
        worst: Option<usize>,
        /// MILP/LP backend of every solve (overrides [planners].solver); `highs` needs a
        /// binary built with `--features highs`.
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// Preemption: how `ilp` and every decision gap find the per-event optimum (overrides
        /// [planners].event_solver): `exact` (branch and bound, the default) or `milp` (one
        /// MILP per server on --solver, the reference).
        #[arg(long, value_enum)]
        event_solver: Option<EventSolverArg>,
        /// Preemption tables: which event lines to print per planner: `none`, `worst` (the
        /// costliest events), `all`. Default: all up to 50 events, else the worst with a note.
        #[arg(long, value_enum)]
        events: Option<EventsArg>,
        /// The run's time budget in seconds: one deadline shared by every solve, bound and
        /// search (the exact side then reports its best plan and proven bound so far).
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
        time_limit: f64,
    },
    /// Explain one decision: every planner's choice beside the per-event optimum on the same
    /// state, with every term of the canonical cost and the term that decides the difference.
    ///
    /// Preemption workloads: `--event N`, the N-th preemptor of the `[[preempt]]` list (from 1).
    /// Co-location workloads: `--task ID`, a task (request or training task) by its id in the
    /// plan's events (from 0): each planner's node choice with the node scores it compared,
    /// its deferrals and why, the task's response, TTFT and TBT as run, and where `ilp` put it.
    Explain {
        cluster: PathBuf,
        workload: PathBuf,
        /// Preemption: the preemptor to explain, its position in the `[[preempt]]` list, from 1.
        #[arg(long, value_name = "N")]
        event: Option<usize>,
        /// Co-location: the task to explain, its id in the plan's events, from 0.
        #[arg(long, value_name = "ID")]
        task: Option<u32>,
        /// Planners to compare, comma-separated (default: the workload's [planners].run).
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        /// Overrides [fill].seed (the initial fill) of a preemption workload.
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long, value_enum, default_value_t = ExplainFormat::Table)]
        format: ExplainFormat,
        /// Write the output to FILE (atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// MILP/LP backend of every solve (overrides [planners].solver).
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// How the per-event optimum is found (overrides [planners].event_solver).
        #[arg(long, value_enum)]
        event_solver: Option<EventSolverArg>,
        /// The run's time budget in seconds, shared by every solve, bound and search.
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
        time_limit: f64,
    },
    /// Run the paper's protocol: per seed, fill by seeded churn; per cycle, plan the preemptor
    /// list with every planner from the same state; report mean, 95 % CI, min, max and totals.
    Simulate {
        cluster: PathBuf,
        workload: PathBuf,
        /// Seeds 1..=N (default: the workload's [simulation].seeds; at most 10 000).
        #[arg(long, value_parser = seeds_arg())]
        seeds: Option<u64>,
        /// Cycles per seed (default: [simulation].cycles; at most 1 000 000).
        #[arg(long, value_parser = cycles_arg())]
        cycles: Option<u64>,
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
        format: PlanFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also draw the headline metrics (bars with 95 % CI whiskers) as SVG to this file.
        #[arg(long, value_name = "F.svg")]
        plot: Option<PathBuf>,
        /// MILP/LP backend of every solve (overrides [planners].solver); `highs` needs a
        /// binary built with `--features highs`.
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// Preemption: how `ilp` and every decision gap find the per-event optimum (overrides
        /// [planners].event_solver): `exact` (branch and bound, the default) or `milp` (one
        /// MILP per server on --solver, the reference).
        #[arg(long, value_enum)]
        event_solver: Option<EventSolverArg>,
        /// The time budget of each planned cycle (each seed of a co-location run), seconds:
        /// one deadline shared by its solves, bounds and searches.
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
        time_limit: f64,
    },
    /// Simulate the Cartesian product of spec values; write long-format rows.
    ///
    /// KEY is a dotted path into the workload (`flextopo.alpha`, `fill.target_gpu_utilization`)
    /// or, for `pool.…`, `server_type.…` and `cluster.…`, into the cluster; numbers index arrays
    /// (`pool.0.server_type`). Scenario k runs in shard k mod N: `--shard I/N`, or
    /// JOB_COMPLETION_INDEX with `--shards N` (Kubernetes Indexed Job), or
    /// SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (Slurm array).
    Sweep {
        cluster: PathBuf,
        workload: PathBuf,
        /// KEY=V1,V2,… (repeatable).
        #[arg(long = "set", value_name = "KEY=V1,V2,…", required = true)]
        sets: Vec<String>,
        #[arg(long, value_parser = seeds_arg())]
        seeds: Option<u64>,
        #[arg(long, value_parser = cycles_arg())]
        cycles: Option<u64>,
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        /// Run only scenarios k with k mod N = I.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Shard count for a Kubernetes Indexed Job (index from JOB_COMPLETION_INDEX).
        #[arg(long, value_name = "N")]
        shards: Option<usize>,
        #[arg(long, value_enum, default_value_t = LongFormat::Csv)]
        format: LongFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also draw a line per planner with 95 % CI bands over the swept value, a panel per metric as SVG to this file.
        #[arg(long, value_name = "F.svg")]
        plot: Option<PathBuf>,
        /// MILP/LP backend of every solve (overrides [planners].solver); `highs` needs a
        /// binary built with `--features highs`.
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// Preemption: how `ilp` and every decision gap find the per-event optimum (overrides
        /// [planners].event_solver): `exact` (branch and bound, the default) or `milp` (one
        /// MILP per server on --solver, the reference).
        #[arg(long, value_enum)]
        event_solver: Option<EventSolverArg>,
        /// The time budget of each planned cycle (each seed of a co-location run), seconds:
        /// one deadline shared by its solves, bounds and searches.
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
        time_limit: f64,
    },
    /// Join sweep shard outputs (CSV or JSON Lines); reject overlaps and missing scenarios.
    Merge {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = MergeFormat::Table)]
        format: MergeFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also draw a line per planner with 95 % CI bands over the swept value, a panel per metric as SVG to this file.
        #[arg(long, value_name = "F.svg")]
        plot: Option<PathBuf>,
    },
    /// How much cluster a workload needs.
    ///
    /// Preemption workloads: the fewest servers in one pool (the other pools fixed) at which
    /// `--target` holds for each planner, by bisection over simulated outcomes (mean and 95 %
    /// CI over seeds at every size tried; a bracket where the CI straddles the target).
    /// Co-location workloads: each planner's sustainable request rate, the highest Poisson rate
    /// at which its serving backlog stays bounded, by bisection on the simulator.
    Capacity {
        cluster: PathBuf,
        workload: PathBuf,
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        /// Co-location: the seed of the probe runs.
        #[arg(long)]
        seed: Option<u64>,
        /// Preemption: `METRIC>=X` or `METRIC<=X`, e.g. `hit_rate>=0.99`, `unplaced<=0`,
        /// `victims_per_preemption<=2`.
        #[arg(long, value_name = "METRIC>=X")]
        target: Option<String>,
        /// Preemption: the pool to resize, by index or `name_prefix` (needed with several pools).
        #[arg(long, value_name = "INDEX|PREFIX")]
        pool: Option<String>,
        /// Preemption: the smallest size to try (default: 1; below the spec's count the emptiest servers go and their `[[running]]` pods are re-placed).
        #[arg(long, value_name = "N")]
        min: Option<u32>,
        /// Preemption: the largest size to try (default: twice the spec's count).
        #[arg(long, value_name = "N")]
        max: Option<u32>,
        /// Preemption: seeds 1..=K (default: the workload's [simulation].seeds).
        #[arg(long, value_name = "K", value_parser = seeds_arg())]
        seeds: Option<u64>,
        /// Preemption: cycles per seed (default: [simulation].cycles).
        #[arg(long, value_parser = cycles_arg())]
        cycles: Option<u64>,
        /// Preemption: what stays fixed as the pool changes: the pods the fill places on the
        /// spec's cluster (`pods`), or the GPU utilisation the fill reaches (`utilization`).
        #[arg(long, value_enum, default_value_t = HoldArg::Pods)]
        hold: HoldArg,
        #[arg(long, value_enum, default_value_t = CapacityFormat::Table)]
        format: CapacityFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also draw the metric against the size (or the probes against the rate) as SVG.
        #[arg(long, value_name = "F.svg")]
        plot: Option<PathBuf>,
        /// MILP/LP backend of every solve (overrides [planners].solver); `highs` needs a
        /// binary built with `--features highs`.
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// Preemption: how `ilp` and every decision gap find the per-event optimum (overrides
        /// [planners].event_solver): `exact` (branch and bound, the default) or `milp` (one
        /// MILP per server on --solver, the reference).
        #[arg(long, value_enum)]
        event_solver: Option<EventSolverArg>,
        /// The time budget of each planned cycle (each seed of a co-location run), seconds:
        /// one deadline shared by its solves, bounds and searches.
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
        time_limit: f64,
    },
    /// Write a co-location plan's node timelines as Chrome Trace Event JSON (open in Perfetto):
    /// pid = node, tid = stage; forward, backward, decode, offload and sync ops as events. Or,
    /// with `--format svg`, a static Gantt chart of the node stages.
    Timeline {
        cluster: PathBuf,
        workload: PathBuf,
        #[arg(long)]
        planner: String,
        #[arg(long)]
        seed: Option<u64>,
        /// Chrome Trace Event JSON (Perfetto), or a static SVG Gantt of the node stages.
        #[arg(long, value_enum, default_value_t = TimelineFormat::ChromeTrace)]
        format: TimelineFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Turn what you run into specs: a Kubernetes snapshot, the Alibaba GPU trace, the Azure LLM
    /// trace, Vidur's profiles.
    Import {
        #[command(subcommand)]
        command: ImportCommand,
    },
    /// Latency profiles of the co-location model.
    Profile {
        #[command(subcommand)]
        command: ProfileCommand,
    },
    /// Compare two `coplan simulate --format json` outputs of the same planners and seeds:
    /// per planner and metric, A's and B's means, B − A and the 95 % confidence interval of
    /// the paired per-seed differences, with whether it excludes 0 (better / worse).
    Diff {
        /// The baseline simulate output (JSON).
        a: PathBuf,
        /// The simulate output to compare with it (JSON).
        b: PathBuf,
        #[arg(long, value_enum, default_value_t = DiffFormat::Table)]
        format: DiffFormat,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Exit with code 3 (after writing the output) when the interval of any planner
        /// excludes 0 on the worse side for one of these metrics.
        #[arg(long, value_name = "METRIC[,METRIC]", value_delimiter = ',')]
        fail_on_regression: Vec<String>,
    },
    /// Print the topology graph of a cluster, with used-by marks from a workload's running pods.
    Topology {
        cluster: PathBuf,
        workload: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = TopologyFormat::Table)]
        format: TopologyFormat,
        /// With `--format svg`: draw this one server large, with core and GPU ids.
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
    },
}

/// `--hold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HoldArg {
    Pods,
    Utilization,
}

impl From<HoldArg> for coplan::sim::capacity::Hold {
    fn from(h: HoldArg) -> Self {
        match h {
            HoldArg::Pods => coplan::sim::capacity::Hold::Pods,
            HoldArg::Utilization => coplan::sim::capacity::Hold::Utilization,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CapacityFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Table,
    Json,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Table,
    Json,
    Csv,
    /// Per preemptor, its node and the pods evicted for it, by name (JSON; preemption only).
    Evictions,
}

/// `--cpu-manager`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CpuManagerArg {
    Static,
    None,
}

/// The format of the import summary: text on stderr, or JSON on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    Text,
    Json,
}

/// Where an import writes its cluster and workload, and how it prints its summary.
#[derive(Debug, clap::Args)]
pub struct SpecOutputs {
    #[arg(long, value_name = "C.toml")]
    pub out_cluster: PathBuf,
    #[arg(long, value_name = "W.toml")]
    pub out_workload: PathBuf,
    /// The summary: text on stderr, or JSON on stdout.
    #[arg(long, value_enum, default_value_t = ImportFormat::Text)]
    pub format: ImportFormat,
}

/// `--gpu-shares`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuSharesArg {
    /// A share takes one whole GPU.
    Whole,
    /// Pods with a GPU share are left out.
    Drop,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// A Kubernetes snapshot → a cluster and a preemption workload: Nodes (allocatable CPU and
    /// nvidia.com/gpu, GPU model label), NodeResourceTopology objects (NUMA zones, costs,
    /// Topology Manager policy), Pods (Running → [[running]], Pending → [[preempt]]).
    ///
    /// Reads `kubectl get nodes,pods -A -o yaml` or `-o json` (a List), multi-document YAML
    /// and `kubectl get noderesourcetopologies -o yaml`; any number of files.
    K8s {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The kubelets' CPU manager policy: `static` gives Guaranteed pods with whole CPUs
        /// exclusive cores and puts every other pod in the node's shared pool; `none` shares
        /// every core.
        #[arg(long, value_enum, default_value_t = CpuManagerArg::Static)]
        cpu_manager: CpuManagerArg,
        /// Drop running pods that do not fit their node (with a warning) instead of failing.
        #[arg(long)]
        allow_misfit: bool,
        /// Read this extended resource as whole devices of a kind of its own (repeatable),
        /// beside nvidia.com/gpu, amd.com/gpu and the nvidia.com/mig-* profiles, e.g.
        /// habana.ai/gaudi.
        #[arg(long = "gpu-resource", value_name = "NAME")]
        gpu_resources: Vec<String>,
        /// Group servers into pools named by this node label's value (one pool per value and
        /// server type), e.g. karpenter.sh/nodepool; `capacity --pool` picks one by name.
        #[arg(long, value_name = "KEY")]
        pool_label: Option<String>,
        #[command(flatten)]
        outputs: SpecOutputs,
    },
    /// The Alibaba GPU cluster trace 2023 ("openb") → a cluster and a preemption workload:
    /// the pods running at a moment are the initial state, the next pods the preemptors.
    AlibabaOpenb {
        /// The node list `sn,cpu_milli,memory_mib,gpu,model`.
        nodes: PathBuf,
        /// A pod list: the full one (with qos and times) or a sampled one (5 columns).
        pods: PathBuf,
        /// The moment (trace seconds) whose running pods form the initial state, or `peak`:
        /// the earliest moment the most whole GPUs are held (the default). Ignored, with a
        /// warning, for sampled lists.
        #[arg(long, value_name = "T|peak")]
        at: Option<String>,
        /// The N pods created after the moment (or after the fill) become the preemptors.
        #[arg(long, default_value_t = 200)]
        next: usize,
        /// Sampled lists: place pods in file order until this share of GPUs is taken.
        #[arg(long, default_value_t = 0.9)]
        fill: f64,
        /// Map a GPU model to a built-in server type (repeatable), e.g. G2=gpu-2s4n8g;
        /// unmapped models get the default layout.
        #[arg(long = "server-type", value_name = "MODEL=TYPE")]
        server_types: Vec<String>,
        /// Override a row of the QoS table (repeatable), e.g. Burstable=300:none:preemptible.
        #[arg(long, value_name = "CLASS=PRIORITY:TOPOLOGY[:preemptible]")]
        qos: Vec<String>,
        /// What a GPU share (gpu_milli < 1000) becomes.
        #[arg(long, value_enum, default_value_t = GpuSharesArg::Whole)]
        gpu_shares: GpuSharesArg,
        /// Sampled lists (no qos column): the QoS classes of the fill pods and of the
        /// preemptors.
        #[arg(long, value_name = "FILL,NEXT", default_value = "BE,LS")]
        sampled_qos: String,
        /// Read a full (timed) list as an arrival sequence, as FGD's simulator does: pods in
        /// creation order fill the cluster to --fill, the next ones preempt; --at is ignored.
        #[arg(long)]
        as_sequence: bool,
        #[command(flatten)]
        outputs: SpecOutputs,
    },
    /// The Azure LLM inference trace 2023 (`TIMESTAMP,ContextTokens,GeneratedTokens`) → a
    /// co-location workload with explicit requests (arrival, prompt and output tokens).
    AzureLlm {
        file: PathBuf,
        /// A co-location workload whose arrivals the trace's requests replace; its model,
        /// training, LeMix and planner settings are kept.
        #[arg(long, value_name = "W.toml")]
        base: Option<PathBuf>,
        /// The summary: text on stderr, or JSON on stdout (needs --out).
        #[arg(long, value_enum, default_value_t = ImportFormat::Text)]
        format: ImportFormat,
        /// Divide inter-arrival times by X (2 = twice the request rate).
        #[arg(long, default_value_t = 1.0)]
        rate_scale: f64,
        /// At most N requests (the first N rows).
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Vidur's measured per-layer operator latencies (mlp.csv) → the stage-latency samples CSV
    /// that `coplan profile fit` reads (the attention kernel derived from FLOPs, labelled).
    VidurProfile {
        /// Vidur's `mlp.csv` of one model on one GPU.
        file: PathBuf,
        /// Transformer layers per pipeline stage.
        #[arg(long)]
        layers_per_stage: u32,
        /// Tensor-parallel workers per stage (Vidur measured 1, 2, 4 and 8).
        #[arg(long, default_value_t = 1)]
        tp: u32,
        /// Fraction of the A100's peak FLOP/s and HBM bandwidth the attention kernel reaches.
        #[arg(long, default_value_t = 0.5)]
        attention_efficiency: f64,
        /// Longest prefill (tokens) to keep.
        #[arg(long, default_value_t = 4096)]
        max_tokens: u32,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Fit η_F, η_B (and δ_0, δ_1) from measured stage latencies `kind,batch,tokens,stage_s`
    /// (kind = forward | backward | decode; for decode, tokens = context over the batch); print
    /// R² and residual statistics and the `[model]` section.
    Fit {
        samples: PathBuf,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LongFormat {
    Csv,
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    Table,
    Csv,
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    Cluster,
    Preemption,
    Colocation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopologyFormat {
    Dot,
    Json,
    Table,
    /// A server map: sockets, NUMA nodes, cores and GPUs coloured by the pod holding them.
    Svg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimelineFormat {
    ChromeTrace,
    Svg,
}

/// `--solver`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SolverArg {
    Microlp,
    Highs,
}

impl From<SolverArg> for coplan::spec::SolverBackend {
    fn from(a: SolverArg) -> Self {
        match a {
            SolverArg::Microlp => coplan::spec::SolverBackend::Microlp,
            SolverArg::Highs => coplan::spec::SolverBackend::Highs,
        }
    }
}

/// `--event-solver`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EventSolverArg {
    /// Branch and bound over servers and victim sets (proven optimal).
    Exact,
    /// One MILP per server on the `--solver` backend (the reference).
    Milp,
}

impl From<EventSolverArg> for coplan::spec::preemption::EventSolver {
    fn from(a: EventSolverArg) -> Self {
        match a {
            EventSolverArg::Exact => coplan::spec::preemption::EventSolver::Exact,
            EventSolverArg::Milp => coplan::spec::preemption::EventSolver::Milp,
        }
    }
}

/// `--seeds N`: 1 ..= `MAX_SEEDS` (docs/spec.md, "Limits").
fn seeds_arg() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=coplan::spec::limits::MAX_SEEDS)
}

/// `--cycles N`: 1 ..= `MAX_CYCLES` (docs/spec.md, "Limits").
fn cycles_arg() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=coplan::spec::limits::MAX_CYCLES)
}

/// `--events`: which event lines a preemption table prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsArg {
    /// No event lines.
    None,
    /// The costliest events of each planner.
    Worst,
    /// Every event.
    All,
}

/// The default of `--time-limit`, seconds.
pub const DEFAULT_TIME_LIMIT_S: f64 = 10.0;

/// `--time-limit S`: a finite number of seconds above 0 and at most a day.
fn time_limit_arg(text: &str) -> Result<f64, String> {
    let s: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if s.is_finite() && s > 0.0 && s <= 86_400.0 {
        Ok(s)
    } else {
        Err(format!("`{text}`: expected seconds in (0, 86400]"))
    }
}
