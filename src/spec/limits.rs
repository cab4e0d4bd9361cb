//! Limits on the sizes a spec or a command line may ask for, checked before anything is
//! allocated or handed to a solver, so that a typo (a count of 1e18, a time limit of 1e19 s)
//! is a located input error rather than an allocation failure or a panic. `docs/spec.md`
//! ("Limits") lists them.

/// Servers in one cluster, over all pools.
pub const MAX_SERVERS: i64 = 100_000;

/// Largest server the allocator's bit sets hold.
pub const MAX_GPUS_PER_SERVER: i64 = 64;
/// Most cores per server: the capacity of [`CoreSet`](crate::topology::CoreSet).
pub const MAX_CORES_PER_SERVER: i64 = 256;

/// Memory figures of a co-location model (MiB, MiB per token): a petabyte, far above any GPU,
/// far below where sums over a plan lose precision.
pub const MAX_MIB: f64 = 1e9;

/// Rates, factors and LeMix's score weights (`slo_factor` among them): far above any
/// meaningful value.
pub const MAX_FACTOR: f64 = 1e9;

/// `ilp_time_limit_s` of either workload kind: one week.
pub const MAX_TIME_LIMIT_S: f64 = 7.0 * 86_400.0;

/// Every weight of the canonical objective (both kinds): far above any meaningful ratio, far
/// below where a solver's arithmetic (or a sum over a plan) loses every other term.
pub const MAX_OBJECTIVE_WEIGHT: f64 = 1e9;

/// `[fill] churn_rounds`: every round evicts and refills the fill pods of the whole cluster
/// (about 0.2 ms on the 100-server paper cluster, linear in its pods), and the fill runs
/// before every plan and every simulated seed.
pub const MAX_CHURN_ROUNDS: i64 = 1_000;

/// `--seeds N` of `simulate`, `sweep` and `capacity`.
pub const MAX_SEEDS: u64 = 10_000;

/// `--cycles N` of `simulate`, `sweep` and `capacity`.
pub const MAX_CYCLES: u64 = 1_000_000;

/// Offers per window of the co-location `ilp` search (`[planners] ilp_window`). A window's
/// tree has up to nodes^K leaves: on `colocation-small` (4 nodes, 2 stages) the whole search
/// took 1.9 s at K = 2, 9.1 s at 4 and 41 s at 6 on 2 cores (the default time limit is 30 s),
/// so above 4 a window mostly buys a `time_limit` status.
pub const MAX_ILP_WINDOW: i64 = 4;

/// `[[running]]` pods of one preemption workload: room for a `kubectl get nodes,pods -A` of
/// 10,000 nodes (about 100,000 running pods at 20 pods a node). Each costs a few KB while its
/// file is parsed and checked: 40,000 pods on `mixed-10k`, 0.38 s and 107 MB (2.6 KB a pod);
/// 75,000 named pods with explicit ids from a 10,000-node import, 2.35 s and 522 MB peak with
/// the cluster (about 7 KB a pod), so the largest accepted list costs about 1.7 GB.
pub const MAX_RUNNING_PODS: usize = 250_000;

/// `[[disruption_budget]]` entries of one preemption workload: a budget per Deployment or
/// StatefulSet of a 10,000-node cluster, with room to spare.
pub const MAX_DISRUPTION_BUDGETS: usize = 50_000;

/// Preemptors of one preemption workload: the sum of its `[[preempt]] count`s.
pub const MAX_PREEMPTORS: i64 = 100_000;
/// Pods of one gang preemptor (`[[preempt]] pods`); the sum over the list of count × pods is
/// bounded by [`MAX_PREEMPTORS`] too.
pub const MAX_GANG_PODS: i64 = 4_096;

/// GPUs and cores one pod may request: the range of the allocator's request (a `u32`), which
/// the importers read Kubernetes and Alibaba requests into. A pod larger than every server is
/// valid and stays unplaced, as a scheduler would leave it pending; the limit only keeps sums
/// over pods far from overflow.
pub const MAX_POD_GPUS: i64 = u32::MAX as i64;
/// See [`MAX_POD_GPUS`].
pub const MAX_POD_CORES: i64 = u32::MAX as i64;

/// `[flextopo] max_subset_evaluations`: the exhaustive searches' budget per decision.
pub const MAX_SUBSET_EVALUATIONS: u64 = 100_000_000;

/// Inference requests of one co-location workload: `count`, explicit `requests`, or trace rows.
pub const MAX_REQUESTS: i64 = 200_000;

/// Training tasks of one co-location workload (`count · rate / (1 − rate)`).
pub const MAX_TRAINING_TASKS: i64 = 200_000;

/// Tokens of one request's prompt or output, or one training sample: 2^20, above every context
/// window of the models the latency profiles describe.
pub const MAX_TOKENS: i64 = 1 << 20;

/// `[training] batch_size` and `[lemix] batch_max`.
pub const MAX_BATCH: i64 = 4_096;

/// The longest single operation (a forward or backward pass of the largest batch of the
/// longest sequences, or a decode iteration of the largest context) the latency model may
/// price: about 11.6 days. Beyond it the times of a plan lose the sub-microsecond precision
/// the verifier checks them with.
pub const MAX_OPERATION_S: f64 = 1e6;

/// The shortest τ_R (`slo_factor` × the SLO base) the co-location objective may divide a
/// response time by: a nanosecond, a thousand times the verifier's tolerance on a response,
/// so the planner and the verifier count every SLO miss alike.
pub const MIN_SLO_S: f64 = 1e-9;

/// Seconds of a co-location workload (arrival times, `warmup_s`, `max_wait_s`,
/// `app_timeout_s`): ten years, where a plan's times still hold to the nanosecond its verifier
/// checks.
pub const MAX_SECONDS: f64 = 3.2e8;

/// Bytes of one spec file (TOML), checked before it is read: a valid spec costs about 30 to 40
/// times its size to parse and check (an imported 10,000-node cluster of 7.4 MB and its
/// workload of 48,935 running pods, 11.3 MB: 0.89 s and 567 MB together). Room for the
/// workload of `MAX_RUNNING_PODS` named pods with explicit ids (about 58 MB), so that an
/// import within that limit writes files every command reads back.
pub const MAX_SPEC_BYTES: u64 = 64 << 20;

/// Bytes of one data file (a trace, an export, a profile, a shard output).
pub const MAX_DATA_BYTES: u64 = 512 << 20;

/// A server type's penalties (`[server_type] penalty`): slowdowns of a placement across NUMA
/// nodes or sockets relative to one NUMA node. Measured ones lie between 1 and 3.2; a million
/// keeps a plan's slowdowns and their sums over 100,000 preemptors finite and exact to the
/// verifier's tolerance (at 9e307 two of them summed overflow to infinity).
pub const MAX_PENALTY: f64 = 1e6;

/// Scenarios of one `coplan sweep`: the product of its `--set` value counts.
pub const MAX_SCENARIOS: u64 = 100_000;

/// Seconds of a preemption workload's clock (`now_s`, `start_time_s`): they may be Unix times
/// (a Kubernetes import reads creation timestamps), so up to the year 2286.
pub const MAX_TIMESTAMP_S: f64 = 1e10;
