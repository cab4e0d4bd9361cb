//! Each planner's measured co-location plan and the plan's bounds, as `plan` outputs them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::plan::status::{PlanStatus, PlannerRole};

/// Metrics of one planner's run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationMetrics {
    /// Tasks in the run (inference requests and training tasks, completed or not).
    pub tasks: u64,
    /// Inference requests in the run (all of them, not only the steady-state window's).
    pub inference_requests: u64,
    /// Completed (not dropped) tasks per second of makespan.
    pub throughput_tasks_per_s: f64,
    /// Prefill and decode tokens of inference requests per second.
    pub throughput_tokens_per_s: f64,
    /// Requests of the window meeting the SLO (R ≤ τ_R) per second from the window's start to
    /// the last response of its requests.
    pub goodput_rps: f64,
    /// Share of the window's requests with R ≤ k · SLO base, for k = 1, 5, 10 and the spec's
    /// `slo_factor` (τ_R), keyed `"{k}x"` (dropped = missed).
    pub slo_attainment: BTreeMap<String, f64>,
    /// Median time to first token over the window's served requests: R, arrival to the end of the
    /// last stage's prefill forward, in seconds.
    pub ttft_p50_s: Option<f64>,
    /// 99th percentile of the time to first token, in seconds.
    pub ttft_p99_s: Option<f64>,
    /// Median time between tokens over the window's served requests (the first token's gap counted
    /// from the prefill's end), in seconds.
    pub tbt_p50_s: Option<f64>,
    /// 99th percentile of the time between tokens, in seconds.
    pub tbt_p99_s: Option<f64>,
    /// Compute busy time (forward, backward, decode) of all GPUs / (nodes · stages ·
    /// makespan).
    pub gpu_utilization: f64,
    /// Transfer busy time (offloads, reloads, weight syncs) of all GPUs / (nodes · stages ·
    /// makespan).
    pub transfer_utilization: f64,
    /// The released code's throughput: completed tasks / Σ over the used nodes of their active
    /// span (first op start to last op end).
    pub throughput_active: f64,
    /// The paper's utilisation: compute busy time of the used nodes' GPUs / their active spans.
    pub utilization_active: f64,
    /// The steady-state window the request metrics count: arrivals in [start, end].
    pub window_start_s: f64,
    /// See `window_start_s`.
    pub window_end_s: f64,
    /// Idle gaps between consecutive ops of a GPU / that GPU's span, summed over GPUs.
    pub bubble_rate: f64,
    /// First arrival to the last op or task end, in seconds.
    pub makespan_s: f64,
    /// Nodes to which at least one task was assigned.
    pub nodes_used: u64,
    /// Tasks dropped after waiting for memory.
    pub dropped: u64,
    /// Tasks whose memory was offloaded to the host.
    pub offloaded: u64,
    /// Training tasks completed (not dropped).
    pub training_tasks_done: u64,
    /// A proxy for the paper's inference loss: training tasks complete cluster-wide that the
    /// serving replica had not received when the request was served, averaged over requests.
    pub staleness_mean: Option<f64>,
    /// Canonical co-location objective of the run (DESIGN §6.4), lower is better: Σ slo_miss·[R >
    /// τ_R] + Σ dropped + Σ (completion − arrival)/τ_R.
    pub objective: f64,
}

/// One task's outcome, in the JSON contract's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskEvent {
    /// Index of the task in the task set.
    pub task: u32,
    /// `"inference"` or `"training"`.
    pub kind: &'static str,
    /// Node the task was assigned to; `null` if it never was.
    pub node: Option<usize>,
    /// Submission: a request's arrival, a training task's submission (the objective counts
    /// from here).
    pub arrival_s: f64,
    /// A training task's first A-PP release (absent for requests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_s: Option<f64>,
    /// Start of its first forward on stage 0, in seconds; `null` if it never started.
    pub start_s: Option<f64>,
    /// Completion (last decode iteration, or stage-0 backward), in seconds; `null` if it did not
    /// complete.
    pub end_s: Option<f64>,
    /// Inference: R ≤ τ_R; null for training.
    pub slo_met: Option<bool>,
    /// Dropped for lack of memory (omitted when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dropped: bool,
    /// Offloaded to the host for lack of memory (omitted when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offloaded: bool,
}

/// One planner's co-location plan, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationPlannerReport {
    /// Registry name of the planner.
    pub name: String,
    /// What the plan is used for (not in the JSON contract: the name says it).
    #[serde(skip)]
    pub role: PlannerRole,
    /// `heuristic` for a candidate; for `ilp`, whether its search proved the optimum.
    pub status: PlanStatus,
    /// The run's canonical objective; `None` when the planner did not run.
    pub objective: Option<f64>,
    /// (objective − bound) / max(1, |bound|) against the plan's `bound`; `None` when the planner
    /// did not run.
    pub gap: Option<f64>,
    /// Whether `gap` is an upper bound on the distance to the optimum (the plan's bound is a lower
    /// bound, not a proven optimum).
    pub gap_is_bound: bool,
    /// The planner's own proven lower bound on the objective, when it has one (`ilp` when optimal).
    pub bound: Option<f64>,
    /// Wall time of the planner's run, in milliseconds (redacted in snapshots).
    pub runtime_ms: f64,
    /// Why the planner did not run on this instance (absent when it ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Metrics of the run; `None` when the planner did not run.
    pub metrics: Option<ColocationMetrics>,
    /// Every task's outcome in task order; empty when the planner did not run.
    pub events: Vec<TaskEvent>,
}

/// The `plan` output of a co-location workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationPlan {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"colocation"`: tells this plan apart from a preemption plan.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of the task generation and of every run.
    pub seed: u64,
    /// Co-location nodes: the spec's `nodes`, else every server of the cluster.
    pub nodes: usize,
    /// Pipeline stages per node.
    pub stages: usize,
    /// τ_R in seconds.
    pub slo_s: f64,
    /// τ_R as a multiple of the SLO base (`[inference].slo_factor`): the `slo_attainment` key
    /// the table shows.
    pub slo_factor: f64,
    /// What every gap is against: the proven optimum when `ilp` proved one, else the best
    /// proven lower bound of the canonical objective.
    pub bound: Option<f64>,
    /// Where it comes from: `ilp` (a proven optimum: the gaps are exact), or the best of
    /// `bounds` (`request floors`, `stage relaxation`, `interval lp`, …: the gaps are upper
    /// bounds on the distance to the optimum).
    pub bound_source: &'static str,
    /// Every lower bound computed, the best of which is `bound`.
    pub bounds: Vec<BoundReport>,
    /// One report per planner, in the order they were named.
    pub planners: Vec<ColocationPlannerReport>,
    /// `plan --worst K`: per candidate, the tasks whose response differs most from `ilp`'s
    /// schedule (absent without `--worst`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<crate::plan::explain_colocation::WorstTasks>,
}

/// One lower bound of a co-location plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundReport {
    /// Which bound (`request floors`, `stage relaxation`, `interval lp`, `memory floors`, `memory
    /// stage relaxation`, `memory lp`).
    pub name: &'static str,
    /// `null` when it was not computed on this instance (`reason` says why).
    pub value: Option<f64>,
    /// Why it was not computed on this instance (absent when it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Redacted in snapshots.
    pub runtime_ms: f64,
}
