//! Co-location workload spec (DESIGN §6.2).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kind::SpecKind;

/// Planners of `kind = "colocation"`, in report order.
pub const COLOCATION_PLANNERS: [&str; 6] = [
    "separate",
    "mix-rr",
    "mix-luf",
    "lemix",
    "lemix-balanced",
    "ilp",
];

/// A co-location workload: model profile, inference and training streams, planner settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColocationSpec {
    /// Must be `"colocation"`.
    pub kind: SpecKind,
    /// Optional name for reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Number of nodes (pipeline replicas); absent = every server of the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<i64>,
    /// `[model]`: the latency and memory profile of one replica.
    pub model: ModelProfile,
    /// `[inference]`: the request stream.
    pub inference: InferenceSpec,
    /// `[training]`: the training task stream (absent = no training).
    #[serde(default)]
    pub training: TrainingSpec,
    /// `[lemix]`: LeMix policy settings, shared by every planner that uses them.
    #[serde(default)]
    pub lemix: LemixSettings,
    /// `[objective]`: weights of the canonical co-location cost.
    #[serde(default)]
    pub objective: ColocationObjective,
    /// `[planners]`: which planners run and their budgets.
    #[serde(default)]
    pub planners: ColocationPlanners,
}

/// Profiled latency and memory model of one pipeline-parallel replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelProfile {
    /// Model name for reports (e.g. `llama-8b`).
    pub name: String,
    /// Pipeline stages per node (stage s on GPU s), ≥ 1.
    pub stages: i64,
    /// η_F: Δ_F = delta_forward_s + beta_forward · batch · tokens + eta_forward · batch ·
    /// tokens² seconds per stage.
    pub eta_forward: f64,
    /// η_B: Δ_B = delta_backward_s + beta_backward · batch · tokens + eta_backward · batch ·
    /// tokens² seconds per stage.
    pub eta_backward: f64,
    /// δ_F: seconds per forward per stage, whatever its size (0 = the paper's model).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delta_forward_s: f64,
    /// β_F: seconds per (batch · token) of a forward per stage (0 = the paper's model).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beta_forward: f64,
    /// δ_B: seconds per backward per stage (0 = the paper's model).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delta_backward_s: f64,
    /// β_B: seconds per (batch · token) of a backward per stage (0 = the paper's model).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beta_backward: f64,
    /// δ_0: seconds per decode iteration per stage.
    pub decode_base_s: f64,
    /// δ_1: extra seconds per decode iteration per token of context.
    pub decode_per_token_s: f64,
    /// Weights per stage, MiB.
    pub weights_mib: f64,
    /// KV cache per token per stage, MiB.
    pub kv_mib_per_token: f64,
    /// Activations per token per stage of an in-flight training task, MiB.
    pub activation_mib_per_token: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The inference request stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InferenceSpec {
    /// Synthetic arrivals; exactly one of `arrival`, `trace` and `requests` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// A trace file (path relative to the workload file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Format of `trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<TraceFormat>,
    /// Explicit requests (what `coplan import` writes); replaces `arrival` and `trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Vec<RequestSpec>>,
    /// Prompt length distribution (synthetic arrivals).
    #[serde(default = "default_prompt")]
    pub prompt_tokens: TokenDist,
    /// Output length distribution (synthetic arrivals).
    #[serde(default = "default_output")]
    pub output_tokens: TokenDist,
    /// Number of requests (a trace: its rows, up to count).
    pub count: i64,
    /// τ_R = slo_factor × profiled full-pipeline prefill latency.
    #[serde(default = "default_slo_factor")]
    pub slo_factor: f64,
    /// Request metrics (SLO attainment, goodput, TTFT, TBT, staleness) count the requests
    /// arriving in the steady-state window: after this warm-up (seconds from the first
    /// arrival) and up to the last arrival.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_s: f64,
    /// The arrival rate as a fraction of SEPARATE's sustainable rate on this cluster (found by
    /// bisection on the simulator, `coplan capacity`); replaces `arrival.rate_rps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
}

impl InferenceSpec {
    /// A stream of explicit requests (what importers write), every other key at its default.
    pub fn from_requests(requests: Vec<RequestSpec>) -> Self {
        InferenceSpec {
            arrival: None,
            trace: None,
            format: None,
            count: requests.len() as i64,
            requests: Some(requests),
            prompt_tokens: default_prompt(),
            output_tokens: default_output(),
            slo_factor: default_slo_factor(),
            warmup_s: 0.0,
            load: None,
        }
    }
}

fn default_prompt() -> TokenDist {
    TokenDist::lognormal(600.0, 400.0, 4096)
}
fn default_output() -> TokenDist {
    TokenDist::lognormal(200.0, 150.0, 1024)
}
fn default_slo_factor() -> f64 {
    5.0
}

/// One explicit inference request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// Arrival time in seconds from the start of the run.
    pub arrival_s: f64,
    /// Prompt length in tokens (prefill).
    pub prompt_tokens: i64,
    /// Tokens to generate (decode iterations).
    pub output_tokens: i64,
}

/// An arrival process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arrival {
    /// How inter-arrival times are drawn.
    pub process: ArrivalProcess,
    /// Mean arrival rate, requests per second (> 0).
    pub rate_rps: f64,
}

/// Shape of the synthetic inter-arrival times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ArrivalProcess {
    /// Exponential inter-arrival times.
    Poisson,
    /// Fixed inter-arrival time 1 / rate.
    Uniform,
}

/// File format of an inference trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// Azure LLM inference trace 2023 (`TIMESTAMP,ContextTokens,GeneratedTokens`).
    AzureLlm,
}

/// A token-count distribution, clipped to [min, max].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenDist {
    /// Shape of the distribution.
    pub dist: DistKind,
    /// Mean, in tokens.
    pub mean: f64,
    /// Standard deviation, in tokens (ignored by `constant`; default 0).
    #[serde(default)]
    pub sd: f64,
    /// Lowest count after rounding (default 1; never below 1).
    #[serde(default = "one_token")]
    pub min: i64,
    /// Highest count after rounding.
    pub max: i64,
}

fn one_token() -> i64 {
    1
}

impl TokenDist {
    /// A lognormal with this mean and standard deviation (tokens), clipped to [1, max].
    pub fn lognormal(mean: f64, sd: f64, max: i64) -> Self {
        Self {
            dist: DistKind::Lognormal,
            mean,
            sd,
            min: 1,
            max,
        }
    }
}

/// Shape of a token-count distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DistKind {
    /// Lognormal with the given mean and standard deviation.
    Lognormal,
    /// Always `mean`.
    Constant,
    /// Uniform with the given mean and standard deviation (half-width sd·√3).
    Uniform,
}

/// Number of training tasks for a share `rate` of all tasks.
pub fn training_count(inference: usize, rate: f64) -> usize {
    if rate <= 0.0 {
        0
    } else {
        (inference as f64 * rate / (1.0 - rate)).round() as usize
    }
}

/// The training task stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrainingSpec {
    /// Training share of all tasks in [0, 1): n_train = round(count · rate / (1 − rate)).
    pub rate: f64,
    /// Sequences per training task (C in the latency model, ≥ 1).
    pub batch_size: i64,
    /// Tokens per sequence of a training task (ℓ in the latency model).
    pub tokens: TokenDist,
}

impl Default for TrainingSpec {
    fn default() -> Self {
        Self {
            rate: 0.0,
            batch_size: 1,
            tokens: TokenDist::lognormal(500.0, 300.0, 2048),
        }
    }
}

/// LeMix settings (research notes B3–B7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LemixSettings {
    /// λ1: weight of the predicted response time R in the LeMix node score.
    pub lambda1: f64,
    /// λ2: weight of the length consistency LC in the LeMix node score.
    pub lambda2: f64,
    /// τ: the floor of the idleness term, IP = −max(II/S − gap, τ).
    pub tau: f64,
    /// false = released-code quirk (stages planned independently).
    pub chain_stages: bool,
    /// How training is deferred while inference arrivals remain.
    pub deprioritize: Deprioritize,
    /// κ: share of GPU memory usable before tasks wait.
    pub memory_threshold: f64,
    /// T_max: wait this long for memory, then offload or drop.
    pub max_wait_s: f64,
    /// What a task does once it has waited `max_wait_s` for memory.
    pub on_memory_timeout: MemoryTimeout,
    /// Bandwidth of offloading to host memory, GB/s (10⁹ bytes per second).
    pub offload_gbps: f64,
    /// Continuous batching: at most this many requests per batch.
    pub batch_max: i64,
    /// T_w = factor × inference latency.
    pub batch_wait_factor: f64,
    /// false = paper's prefill-only planning model.
    pub decode_occupancy: bool,
    /// A-PP releases the next training task at the latest this long after the previous one
    /// (the released code's 10 s), even if that one has not finished its stage-0 forward.
    pub app_timeout_s: f64,
    /// Order of ready ops in a stage queue: `ready` (first ready, first run) or `task-id` (the
    /// released code's per-stage priority queue, FIFO by task id).
    pub queue_order: QueueOrder,
}

impl Default for LemixSettings {
    fn default() -> Self {
        Self {
            lambda1: 0.15,
            lambda2: 0.05,
            tau: 0.2,
            chain_stages: true,
            deprioritize: Deprioritize::Lookahead,
            memory_threshold: 0.8,
            max_wait_s: 10.0,
            on_memory_timeout: MemoryTimeout::Offload,
            offload_gbps: 25.0,
            batch_max: 8,
            batch_wait_factor: 0.5,
            decode_occupancy: true,
            app_timeout_s: 10.0,
            queue_order: QueueOrder::Ready,
        }
    }
}

/// When LeMix defers a training task behind inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Deprioritize {
    /// Defer when the next inference request would miss τ_R behind this task (the paper).
    Lookahead,
    /// Defer when the task's own predicted response exceeds τ_R (the released code).
    Threshold,
    /// Never defer.
    Off,
}

/// Order in which a stage runs its ready operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum QueueOrder {
    /// First ready, first run.
    Ready,
    /// Smallest task id first (the released code).
    TaskId,
}

/// What a task waiting for memory does after `max_wait_s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryTimeout {
    /// Move the data to host memory and charge the transfer back in when it is needed.
    Offload,
    /// Drop the task (cost `[objective].dropped`).
    Drop,
}

/// Weights of the canonical co-location cost (DESIGN §6.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ColocationObjective {
    /// Cost per inference request whose prefill response time exceeds τ_R.
    pub slo_miss: f64,
    /// Cost per dropped task (inference or training).
    pub dropped: f64,
}

impl Default for ColocationObjective {
    fn default() -> Self {
        Self {
            slo_miss: 10.0,
            dropped: 20.0,
        }
    }
}

/// Planner selection and settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ColocationPlanners {
    /// Planners to run, in report order.
    #[schemars(schema_with = "colocation_planner_names")]
    pub run: Vec<String>,
    /// Share of nodes for training in SEPARATE; absent = the training rate (the released
    /// code's rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separate_split: Option<f64>,
    /// Weight sync interval of SEPARATE, in training tasks.
    pub separate_sync_every: i64,
    /// Time budget of the `ilp` search (exact or windowed) and of the LP bound, in seconds.
    pub ilp_time_limit_s: f64,
    /// Relative MIP gap at which a solve may stop (0: prove optimality).
    pub ilp_mip_gap: f64,
    /// The MILP/LP backend (`--solver` overrides it).
    pub solver: super::kind::SolverBackend,
    /// Up to this many tasks `ilp` searches every node assignment (branch and bound); above
    /// it, rolling windows.
    pub ilp_exact_max_tasks: i64,
    /// Tasks per window of the windowed search (K).
    pub ilp_window: i64,
    /// The interval-indexed LP bound runs up to this many variables.
    pub bound_lp_max_variables: i64,
    /// Accepted for specs written for the earlier time-indexed model; not used.
    pub ilp_slot_s: f64,
    /// Accepted for specs written for the earlier time-indexed model; not used.
    pub ilp_max_binaries: i64,
    /// Seed of the synthetic arrivals and token lengths (`--seed` overrides it).
    pub seed: u64,
}

impl ColocationPlanners {
    /// The least and the most offers a window of the `ilp` search may hold: one is the
    /// fastest; the most is the documented limit (a window's tree has nodes^K leaves).
    pub const ILP_WINDOW_RANGE: (i64, i64) = (1, super::limits::MAX_ILP_WINDOW);

    /// K, the offers per window of the `ilp` search: `ilp_window` within
    /// [`ILP_WINDOW_RANGE`](Self::ILP_WINDOW_RANGE) (validation refuses any other value; the
    /// clamp keeps an unvalidated spec from asking for an empty or unbounded window).
    pub fn window_offers(&self) -> usize {
        let (least, most) = Self::ILP_WINDOW_RANGE;
        self.ilp_window.clamp(least, most) as usize
    }
}

impl Default for ColocationPlanners {
    fn default() -> Self {
        Self {
            run: COLOCATION_PLANNERS.iter().map(|s| s.to_string()).collect(),
            separate_split: None,
            separate_sync_every: 100,
            ilp_time_limit_s: 30.0,
            ilp_mip_gap: 0.0,
            solver: super::kind::SolverBackend::Microlp,
            ilp_exact_max_tasks: 24,
            ilp_window: 2,
            bound_lp_max_variables: 60_000,
            ilp_slot_s: 0.05,
            ilp_max_binaries: 20_000,
            seed: 1,
        }
    }
}

/// `[planners].run` in the JSON Schema: a list of the known planner names.
fn colocation_planner_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::kind::planner_list_schema(&COLOCATION_PLANNERS)
}
