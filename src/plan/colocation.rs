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
    /// The task's position in the task set, for indexing per-task vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a task computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TaskKind {
    /// Prefill of `prompt_tokens`, then `output_tokens` decode iterations on the same node.
    Inference {
        /// Tokens of the prompt, processed by the prefill forward.
        prompt_tokens: u32,
        /// Tokens to generate: one decode iteration each.
        output_tokens: u32,
    },
    /// Forward through all stages, then backward from the last stage to the first.
    Training {
        /// Tokens per sequence.
        tokens: u32,
        /// Sequences per batch (C in Δ = η · C · ℓ²).
        batch: u32,
    },
}

/// One task of the task set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    /// The task's index in the task set.
    pub id: TaskId,
    /// Inference request or training task, with its size.
    pub kind: TaskKind,
    /// Submission: an inference request's arrival; a training task's submission (every
    /// training task is submitted at 0 and released by A-PP at run time).
    pub arrival_s: f64,
}

impl Task {
    /// Whether this is a training task (forward then backward) rather than an inference request.
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
    /// A forward (prefill) pass through one stage.
    Forward,
    /// A training backward pass through one stage.
    Backward,
    /// One decode iteration of the node's batch through one stage.
    Decode,
    /// Moving a forward's memory to the host before it runs (memory-wait timeout).
    Offload,
    /// Bringing offloaded memory back for the op that needs it (a backward, a decode
    /// iteration).
    Reload,
    /// A weight sync from training to serving nodes (SEPARATE).
    Sync,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 6] = [
        OpKind::Forward,
        OpKind::Backward,
        OpKind::Decode,
        OpKind::Offload,
        OpKind::Reload,
        OpKind::Sync,
    ];
}

/// One executed op: the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRecord {
    /// Node (co-location server) the op ran on, `0..nodes`.
    pub node: usize,
    /// Pipeline stage (the node's GPU) the op ran on, `0..stages`.
    pub stage: usize,
    /// What the op did.
    pub kind: OpKind,
    /// Tasks served: one for forward/backward/offload, the batch for decode, none for sync.
    pub tasks: TaskList,
    /// Start of the op, in seconds since the start of the run.
    pub start_s: f64,
    /// End of the op, in seconds since the start of the run (≥ `start_s`).
    pub end_s: f64,
}

/// The op log of a run, in the order the ops ended. A run logs millions of ops (a decode
/// iteration per token and stage), so each is held in 24 bytes: its times, its task when it
/// has one (else an index into a shared table of task lists, which the stage ops of one
/// decode iteration share), and node, stage and kind packed in 32 bits. Read it as [`Op`]s;
/// [`OpRecord`]s convert to and from it.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    entries: Vec<LogEntry>,
    /// The task lists of ops with several tasks: list b is `task_ids[ends[b - 1]..ends[b]]`.
    task_ids: Vec<TaskId>,
    ends: Vec<usize>,
    /// An op whose node, stage or list index did not fit its field: the log is incomplete,
    /// and the verifier rejects it.
    overflowed: bool,
}

#[derive(Debug, Clone, Copy)]
struct LogEntry {
    start_s: f64,
    end_s: f64,
    /// The task (`len == 1`) or the list index in `OpLog::ends` (`len == 2`).
    tasks: TaskId,
    /// `len` (2 bits), kind (3), stage (11), node (16), from the low bits up.
    packed: u32,
}

/// Every kind, in declaration order (a log entry stores the discriminant).
const KINDS: [OpKind; 6] = OpKind::ALL;

impl LogEntry {
    fn len(&self) -> u32 {
        self.packed & 0b11
    }

    fn kind(&self) -> OpKind {
        KINDS[((self.packed >> 2) & 0b111) as usize % KINDS.len()]
    }

    fn stage(&self) -> usize {
        ((self.packed >> 5) & 0x7ff) as usize
    }

    fn node(&self) -> usize {
        (self.packed >> 16) as usize
    }
}

/// The tasks of an op as the log holds them: none, one, or a shared list. Made by
/// [`OpLog::tasks`], so that the stage ops of a decode iteration store its batch once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedTasks {
    tasks: TaskId,
    len: u8,
}

impl Default for LoggedTasks {
    fn default() -> Self {
        LoggedTasks {
            tasks: TaskId(0),
            len: 0,
        }
    }
}

/// One op of an [`OpLog`], read in place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op<'a> {
    /// Node the op ran on, `0..nodes`.
    pub node: usize,
    /// Pipeline stage (GPU of the node) the op ran on, `0..stages`.
    pub stage: usize,
    /// What the op did.
    pub kind: OpKind,
    /// Tasks served: one for forward/backward/offload/reload, the batch for decode, none for sync.
    pub tasks: &'a [TaskId],
    /// Start of the op, in seconds since the start of the run.
    pub start_s: f64,
    /// End of the op, in seconds since the start of the run.
    pub end_s: f64,
}

impl Op<'_> {
    /// The op as an owned [`OpRecord`].
    pub fn to_record(&self) -> OpRecord {
        OpRecord {
            node: self.node,
            stage: self.stage,
            kind: self.kind,
            tasks: TaskList::from_slice(self.tasks),
            start_s: self.start_s,
            end_s: self.end_s,
        }
    }
}

impl OpLog {
    /// What one op takes in the log, besides a shared task list.
    pub const ENTRY_BYTES: usize = std::mem::size_of::<LogEntry>();
    /// Nodes and stages an op may name (16 and 11 bits of its entry).
    pub const MAX_NODES: usize = 1 << 16;
    /// Stages an op may name: indices below 2 048 (11 bits of its entry).
    pub const MAX_STAGES: usize = 1 << 11;

    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `ops` more ops, if the memory is there (else the log grows as it goes).
    pub fn reserve(&mut self, ops: usize) {
        let _ = self.entries.try_reserve_exact(ops);
    }

    /// Number of ops logged.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no op has been logged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether an op did not fit the log (more than 65 536 nodes, 2 048 stages or 2^32 task
    /// lists): what was logged is then not the whole run.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Stores the tasks of one or more ops (a list is stored once, however many ops use it).
    pub fn tasks(&mut self, ids: &[TaskId]) -> LoggedTasks {
        match ids {
            [] => LoggedTasks::default(),
            [id] => LoggedTasks { tasks: *id, len: 1 },
            _ => match u32::try_from(self.ends.len()) {
                Ok(b) => {
                    self.task_ids.extend_from_slice(ids);
                    self.ends.push(self.task_ids.len());
                    LoggedTasks {
                        tasks: TaskId(b),
                        len: 2,
                    }
                }
                Err(_) => {
                    self.overflowed = true;
                    LoggedTasks::default()
                }
            },
        }
    }

    /// Logs one op.
    pub fn push(
        &mut self,
        node: usize,
        stage: usize,
        kind: OpKind,
        tasks: LoggedTasks,
        start_s: f64,
        end_s: f64,
    ) {
        if node >= Self::MAX_NODES || stage >= Self::MAX_STAGES {
            self.overflowed = true;
            return;
        }
        // `KINDS` lists the kinds in declaration order: the discriminant is the index.
        let kind_bits = kind as u32;
        self.entries.push(LogEntry {
            start_s,
            end_s,
            tasks: tasks.tasks,
            packed: u32::from(tasks.len)
                | kind_bits << 2
                | (stage as u32) << 5
                | (node as u32) << 16,
        });
    }

    /// Logs one op given as a record (its task list stored as [`OpLog::tasks`] does).
    pub fn push_record(&mut self, op: &OpRecord) {
        let tasks = self.tasks(&op.tasks);
        self.push(op.node, op.stage, op.kind, tasks, op.start_s, op.end_s);
    }

    /// The `k`-th op in logging order, if there is one.
    pub fn get(&self, k: usize) -> Option<Op<'_>> {
        self.entries.get(k).map(|e| self.view(e))
    }

    /// Every op in logging order (the order the ops ended).
    pub fn iter(&self) -> OpIter<'_> {
        OpIter {
            log: self,
            entries: self.entries.iter(),
        }
    }

    /// The ops at positions `range` (clamped to the log).
    pub fn iter_range(&self, range: std::ops::Range<usize>) -> OpIter<'_> {
        let end = range.end.min(self.entries.len());
        let start = range.start.min(end);
        OpIter {
            log: self,
            entries: self.entries[start..end].iter(),
        }
    }

    /// Every op as an owned record (for tests that edit a timeline).
    pub fn to_records(&self) -> Vec<OpRecord> {
        self.iter().map(|op| op.to_record()).collect()
    }

    /// Appends another log's ops after this one's.
    pub fn append(&mut self, later: &OpLog) {
        for op in later {
            self.push_record(&op.to_record());
        }
        self.overflowed |= later.overflowed;
    }

    #[inline]
    fn view<'a>(&'a self, e: &'a LogEntry) -> Op<'a> {
        let tasks: &[TaskId] = match e.len() {
            0 => &[],
            1 => std::slice::from_ref(&e.tasks),
            _ => {
                let b = e.tasks.index();
                let start = if b == 0 { 0 } else { self.ends[b - 1] };
                &self.task_ids[start..self.ends[b]]
            }
        };
        Op {
            node: e.node(),
            stage: e.stage(),
            kind: e.kind(),
            tasks,
            start_s: e.start_s,
            end_s: e.end_s,
        }
    }
}

impl From<Vec<OpRecord>> for OpLog {
    fn from(records: Vec<OpRecord>) -> Self {
        let mut log = OpLog::new();
        for op in &records {
            log.push_record(op);
        }
        log
    }
}

/// The ops of an [`OpLog`] in log order.
pub struct OpIter<'a> {
    log: &'a OpLog,
    entries: std::slice::Iter<'a, LogEntry>,
}

impl<'a> Iterator for OpIter<'a> {
    type Item = Op<'a>;

    #[inline]
    fn next(&mut self) -> Option<Op<'a>> {
        self.entries.next().map(|e| self.log.view(e))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for OpIter<'_> {}

impl<'a> DoubleEndedIterator for OpIter<'a> {
    fn next_back(&mut self) -> Option<Op<'a>> {
        self.entries.next_back().map(|e| self.log.view(e))
    }
}

impl<'a> IntoIterator for &'a OpLog {
    type Item = Op<'a>;
    type IntoIter = OpIter<'a>;

    fn into_iter(self) -> OpIter<'a> {
        self.iter()
    }
}

/// Two logs are equal when they hold the same ops in the same order, however their task
/// lists are shared.
impl PartialEq for OpLog {
    fn eq(&self, other: &Self) -> bool {
        self.overflowed == other.overflowed
            && self.len() == other.len()
            && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
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

    /// An empty list.
    pub fn new() -> Self {
        Self::from_slice(&[])
    }

    /// A list holding `ids`, inline when there are at most [`TaskList::INLINE`].
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

    /// The tasks, in the order given.
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
    /// The task this outcome is of.
    pub task: TaskId,
    /// Whether it is a training task (else an inference request).
    pub training: bool,
    /// Node the planner assigned it to; `None` if it was never placed.
    pub node: Option<usize>,
    /// When the task was submitted: a request's arrival, a training task's submission. The
    /// canonical objective counts every task's time from here.
    pub arrival_s: f64,
    /// When A-PP first offered a training task to the planners (at or after its submission);
    /// `None` for a request and for a training task never released.
    pub released_s: Option<f64>,
    /// Start of its first forward on stage 0 (seconds); `None` if it never started.
    pub start_s: Option<f64>,
    /// End of the last stage's forward (inference: the response time R is this − arrival).
    pub prefill_end_s: Option<f64>,
    /// Completion: an inference request's last decode iteration, a training task's stage-0
    /// backward; `None` if it did not complete.
    pub end_s: Option<f64>,
    /// Whether it was dropped after waiting `max_wait_s` for memory (`on_memory_timeout = "drop"`).
    pub dropped: bool,
    /// Whether its memory was moved to the host after waiting `max_wait_s` (`on_memory_timeout =
    /// "offload"`).
    pub offloaded: bool,
    /// Times of the decoded tokens.
    #[serde(skip)]
    pub token_times: Vec<f64>,
    /// Training tasks complete cluster-wide that the serving replica had not seen at prefill.
    pub staleness: Option<u64>,
    /// Times a training task was deprioritised (deferred to the next inference arrival) before it
    /// was placed.
    pub deferrals: u32,
}

/// The timeline of one planner's run on the discrete-event engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ColocationRun {
    /// Every op executed, in the order they ended.
    pub ops: OpLog,
    /// One outcome per task, indexed by `TaskId`.
    pub outcomes: Vec<TaskOutcome>,
}

/// What the run verifier needs of the engine's configuration: the cluster's shape and the
/// memory model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBounds {
    /// Co-location nodes the run may use.
    pub nodes: usize,
    /// Pipeline stages per node (one GPU each).
    pub stages: usize,
    /// Memory of one GPU, in MiB.
    pub gpu_memory_mib: f64,
    /// Model weights held on every stage, in MiB.
    pub weights_mib: f64,
    /// KV cache per token in context of an active request, per stage, in MiB.
    pub kv_mib_per_token: f64,
    /// Activations per token of an in-flight training task, per stage, in MiB.
    pub activation_mib_per_token: f64,
}

/// The `slo_attainment` key of R ≤ k · SLO base: `5x`, `2.5x`.
pub fn slo_key(k: f64) -> String {
    format!("{k}x")
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(node: usize, stage: usize, kind: OpKind, ids: &[u32], start_s: f64) -> OpRecord {
        OpRecord {
            node,
            stage,
            kind,
            tasks: ids.iter().map(|&i| TaskId(i)).collect::<Vec<_>>().into(),
            start_s,
            end_s: start_s + 1.0,
        }
    }

    #[test]
    fn the_log_reads_back_what_was_logged_in_order() {
        let records = vec![
            record(3, 1, OpKind::Forward, &[7], 0.0),
            record(0, 0, OpKind::Decode, &[1, 2, 9], 1.0),
            record(2, 0, OpKind::Sync, &[], 2.0),
            record(0, 1, OpKind::Reload, &[4, 5], 3.0),
        ];
        let log = OpLog::from(records.clone());
        assert_eq!(log.len(), 4);
        assert_eq!(log.to_records(), records);
        assert_eq!(
            log.get(1).map(|o| o.tasks.to_vec()),
            Some(vec![TaskId(1), TaskId(2), TaskId(9)])
        );
        assert!(log.get(4).is_none());
        assert_eq!(log.iter().next_back().map(|o| o.kind), Some(OpKind::Reload));
    }

    #[test]
    fn kinds_are_stored_by_their_discriminant() {
        for (i, kind) in KINDS.iter().enumerate() {
            assert_eq!(*kind as usize, i);
            let mut log = OpLog::new();
            log.push(3, 2, *kind, LoggedTasks::default(), 0.0, 1.0);
            assert_eq!(
                log.get(0).map(|o| (o.kind, o.node, o.stage)),
                Some((*kind, 3, 2))
            );
        }
    }

    #[test]
    fn ops_share_one_stored_list() {
        let mut log = OpLog::new();
        let batch = log.tasks(&[TaskId(1), TaskId(2)]);
        log.push(0, 0, OpKind::Decode, batch, 0.0, 1.0);
        log.push(0, 1, OpKind::Decode, batch, 1.0, 2.0);
        let other = log.tasks(&[TaskId(3), TaskId(4), TaskId(5)]);
        log.push(1, 0, OpKind::Decode, other, 0.0, 1.0);
        assert_eq!(log.task_ids.len(), 5);
        let tasks: Vec<Vec<u32>> = log
            .iter()
            .map(|o| o.tasks.iter().map(|t| t.0).collect())
            .collect();
        assert_eq!(tasks, vec![vec![1, 2], vec![1, 2], vec![3, 4, 5]]);
        // Appending re-stores the later log's lists after this one's.
        let mut first = OpLog::from(vec![record(0, 0, OpKind::Reload, &[8, 9], 0.0)]);
        first.append(&log);
        assert_eq!(first.len(), 4);
        assert_eq!(first.to_records()[1..], log.to_records()[..]);
    }

    #[test]
    fn an_op_that_does_not_fit_marks_the_log_overflowed() {
        let mut log = OpLog::new();
        log.push_record(&record(0, 3_000, OpKind::Decode, &[1], 0.0));
        assert!(log.overflowed());
        assert!(log.is_empty());
        assert_ne!(log, OpLog::new());
    }
}
