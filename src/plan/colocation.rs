//! Plan data of a co-location workload: the task set, the timeline a run produced (ops and
//! per-task outcomes), and each planner's measured plan (DESIGN §6.4, §7).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{PlanStatus, PlannerRole};

/// Index of a task in the task set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TaskId(pub u32);

impl TaskId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a task computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TaskKind {
    /// Prefill of `prompt_tokens`, then `output_tokens` decode iterations on the same node.
    Inference {
        prompt_tokens: u32,
        output_tokens: u32,
    },
    /// Forward through all stages, then backward from the last stage to the first.
    Training { tokens: u32, batch: u32 },
}

/// One task of the task set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    pub id: TaskId,
    pub kind: TaskKind,
    /// Arrival of an inference request; training tasks are released at run time (A-PP), so
    /// theirs is 0 here.
    pub arrival_s: f64,
}

impl Task {
    pub fn is_training(&self) -> bool {
        matches!(self.kind, TaskKind::Training { .. })
    }

    /// (batch, tokens) of the task's forward pass.
    pub fn forward_shape(&self) -> (u32, u32) {
        match self.kind {
            TaskKind::Inference { prompt_tokens, .. } => (1, prompt_tokens),
            TaskKind::Training { tokens, batch } => (batch, tokens),
        }
    }
}

/// What an op did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    Forward,
    Backward,
    Decode,
    /// Moving a forward's memory to the host before it runs (memory-wait timeout).
    Offload,
    /// Bringing offloaded memory back for the op that needs it (a backward, a decode
    /// iteration).
    Reload,
    /// A weight sync from training to serving nodes (SEPARATE).
    Sync,
}

/// One executed op: the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRecord {
    pub node: usize,
    pub stage: usize,
    pub kind: OpKind,
    /// Tasks served: one for forward/backward/offload, the batch for decode, none for sync.
    pub tasks: TaskList,
    pub start_s: f64,
    pub end_s: f64,
}

/// The tasks of one op, read as a slice. A run logs millions of ops (a decode iteration per
/// token and stage), nearly all of one or two tasks: up to `TaskList::INLINE` are held in the
/// record itself, so logging and dropping an op allocates nothing; longer lists are boxed.
#[derive(Clone)]
pub struct TaskList(TaskListRepr);

#[derive(Clone)]
enum TaskListRepr {
    Inline {
        len: u8,
        ids: [TaskId; TaskList::INLINE],
    },
    Boxed(Box<[TaskId]>),
}

impl TaskList {
    /// Tasks held without an allocation (the record stays 64 bytes).
    pub const INLINE: usize = 5;

    pub fn new() -> Self {
        Self::from_slice(&[])
    }

    pub fn from_slice(ids: &[TaskId]) -> Self {
        match u8::try_from(ids.len()) {
            Ok(len) if ids.len() <= Self::INLINE => {
                let mut inline = [TaskId(0); Self::INLINE];
                inline[..ids.len()].copy_from_slice(ids);
                TaskList(TaskListRepr::Inline { len, ids: inline })
            }
            _ => TaskList(TaskListRepr::Boxed(ids.into())),
        }
    }

    pub fn as_slice(&self) -> &[TaskId] {
        match &self.0 {
            TaskListRepr::Inline { len, ids } => &ids[..usize::from(*len)],
            TaskListRepr::Boxed(ids) => ids,
        }
    }
}

impl Default for TaskList {
    fn default() -> Self {
        Self::new()
    }
}

impl std::ops::Deref for TaskList {
    type Target = [TaskId];

    fn deref(&self) -> &[TaskId] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a TaskList {
    type Item = &'a TaskId;
    type IntoIter = std::slice::Iter<'a, TaskId>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<TaskId>> for TaskList {
    fn from(ids: Vec<TaskId>) -> Self {
        if ids.len() <= Self::INLINE {
            Self::from_slice(&ids)
        } else {
            TaskList(TaskListRepr::Boxed(ids.into_boxed_slice()))
        }
    }
}

impl PartialEq for TaskList {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// As a list (`[TaskId(3)]`), like the `Vec` it replaces.
impl std::fmt::Debug for TaskList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// As a sequence, like the `Vec` it replaces.
impl Serialize for TaskList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

/// What happened to one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskOutcome {
    pub task: TaskId,
    pub training: bool,
    pub node: Option<usize>,
    /// Arrival (inference) or release (training).
    pub arrival_s: f64,
    pub start_s: Option<f64>,
    /// End of the last stage's forward (inference: the response time R is this − arrival).
    pub prefill_end_s: Option<f64>,
    pub end_s: Option<f64>,
    pub dropped: bool,
    pub offloaded: bool,
    /// Times of the decoded tokens.
    #[serde(skip)]
    pub token_times: Vec<f64>,
    /// Training tasks complete cluster-wide that the serving replica had not seen at prefill.
    pub staleness: Option<u64>,
    pub deferrals: u32,
}

/// The timeline of one planner's run on the discrete-event engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ColocationRun {
    pub ops: Vec<OpRecord>,
    pub outcomes: Vec<TaskOutcome>,
}

/// What the run verifier needs of the engine's configuration: the cluster's shape and the
/// memory model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBounds {
    pub nodes: usize,
    pub stages: usize,
    pub gpu_memory_mib: f64,
    pub weights_mib: f64,
    pub kv_mib_per_token: f64,
    pub activation_mib_per_token: f64,
}

/// Metrics of one planner's run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationMetrics {
    pub tasks: u64,
    pub inference_requests: u64,
    pub throughput_tasks_per_s: f64,
    /// Prefill and decode tokens of inference requests per second.
    pub throughput_tokens_per_s: f64,
    /// Requests of the window meeting the SLO (R ≤ τ_R) per second of the window.
    pub goodput_rps: f64,
    /// Share of the window's requests with R ≤ k · SLO base, for k = 1, 5, 10 (dropped =
    /// missed).
    pub slo_attainment: BTreeMap<String, f64>,
    pub ttft_p50_s: Option<f64>,
    pub ttft_p99_s: Option<f64>,
    pub tbt_p50_s: Option<f64>,
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
    pub window_end_s: f64,
    /// Idle gaps between consecutive ops of a GPU / that GPU's span, summed over GPUs.
    pub bubble_rate: f64,
    pub makespan_s: f64,
    pub nodes_used: u64,
    pub dropped: u64,
    pub offloaded: u64,
    pub training_tasks_done: u64,
    /// A proxy for the paper's inference loss: training tasks complete cluster-wide that the
    /// serving replica had not received when the request was served, averaged over requests.
    pub staleness_mean: Option<f64>,
    pub objective: f64,
}

/// One task's outcome, in the JSON contract's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskEvent {
    pub task: u32,
    pub kind: &'static str,
    pub node: Option<usize>,
    pub arrival_s: f64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// Inference: R ≤ τ_R; null for training.
    pub slo_met: Option<bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dropped: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offloaded: bool,
}

/// One planner's co-location plan, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationPlannerReport {
    pub name: String,
    /// What the plan is used for (not in the JSON contract: the name says it).
    #[serde(skip)]
    pub role: PlannerRole,
    pub status: PlanStatus,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub gap_is_bound: bool,
    pub bound: Option<f64>,
    pub runtime_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub metrics: Option<ColocationMetrics>,
    pub events: Vec<TaskEvent>,
}

/// The `plan` output of a co-location workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationPlan {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: u64,
    pub nodes: usize,
    pub stages: usize,
    /// τ_R in seconds.
    pub slo_s: f64,
    /// The best proven lower bound of the canonical objective, which every gap is against.
    pub bound: Option<f64>,
    /// Where it comes from: `request floors`, `stage relaxation` or `interval lp`.
    pub bound_source: &'static str,
    /// Every lower bound computed, the best of which is `bound`.
    pub bounds: Vec<BoundReport>,
    pub planners: Vec<ColocationPlannerReport>,
}

/// One lower bound of a co-location plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundReport {
    pub name: &'static str,
    /// `null` when it was not computed on this instance (`reason` says why).
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Redacted in snapshots.
    pub runtime_ms: f64,
}
