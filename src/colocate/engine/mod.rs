//! The co-location discrete-event engine: a simulator of node timelines (DESIGN §6.1) on which
//! every co-location planner runs. Per node S pipeline stages (stage s on GPU s), each running
//! one op at a time:
//! forward (prefill), backward and decode iterations, plus weight syncs and KV offloads.
//!
//! - Pipeline order: a task's forward on stage s + 1 starts after its forward on stage s;
//!   training backward runs from the last stage to the first.
//! - Continuous batching (LeMix Algorithm 3): after its prefill, an inference request joins its
//!   node's decode batch (at most `batch_max`); an iteration passes through all stages; a batch
//!   that starts from empty waits up to T_w for company, and a training arrival ends the wait.
//! - Memory per stage: weights + activations of in-flight training tasks (freed by their
//!   backward) + KV of active requests (growing per decoded token). A forward that would exceed
//!   κ · GPU memory waits up to `max_wait_s`, then is offloaded (its memory moved to the host,
//!   extra time bytes / bandwidth) or dropped.
//! - Training is released A-PP: the next task when the previous one ends its stage-0 forward.
//!
//! A planner decides the node of each task when it arrives (or defers a training task).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use crate::colocate::latency::LatencyModel;
use crate::plan::colocation::{
    ColocationRun, LoggedTasks, OpKind, OpLog, RunBounds, Task, TaskId, TaskKind, TaskOutcome,
};
use crate::spec::colocation::{ColocationSpec, MemoryTimeout, QueueOrder};

/// Fixed parameters of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub nodes: usize,
    pub stages: usize,
    pub latency: LatencyModel,
    pub gpu_memory_mib: f64,
    /// κ · GPU memory.
    pub threshold_mib: f64,
    pub weights_mib: f64,
    pub kv_mib_per_token: f64,
    pub activation_mib_per_token: f64,
    pub max_wait_s: f64,
    pub on_timeout: MemoryTimeout,
    /// MiB per second of host offload (and of weight syncs).
    pub offload_mib_per_s: f64,
    pub batch_max: usize,
    /// T_w.
    pub batch_wait_s: f64,
    /// A-PP releases the next training task at the latest this long after the previous one.
    pub app_timeout_s: f64,
    /// Order of ready ops in a stage queue.
    pub queue_order: QueueOrder,
    /// Whether the ends of decode ops on nodes that run nothing else are handled outside the
    /// event heap (`DiscreteEventEngine::catch_up`). Off, every event passes through the
    /// heap: the reference the equivalence tests hold the faster path to.
    pub defer_decode_ends: bool,
}

impl EngineConfig {
    pub fn new(spec: &ColocationSpec, nodes: usize, gpu_memory_mib: f64, mean_prompt: f64) -> Self {
        let l = &spec.lemix;
        let latency = LatencyModel::from_profile(&spec.model);
        let stages = spec.model.stages.max(1) as usize;
        // T_w = factor × inference latency (a full-pipeline prefill of the mean prompt).
        let inference_latency = stages as f64 * latency.forward_s(1, mean_prompt.round() as u32);
        EngineConfig {
            nodes,
            stages,
            latency,
            gpu_memory_mib,
            threshold_mib: l.memory_threshold * gpu_memory_mib,
            weights_mib: spec.model.weights_mib,
            kv_mib_per_token: spec.model.kv_mib_per_token,
            activation_mib_per_token: spec.model.activation_mib_per_token,
            max_wait_s: l.max_wait_s,
            on_timeout: l.on_memory_timeout,
            offload_mib_per_s: l.offload_gbps * 1e9 / (1024.0 * 1024.0),
            batch_max: l.batch_max.max(1) as usize,
            batch_wait_s: l.batch_wait_factor * inference_latency,
            app_timeout_s: l.app_timeout_s,
            queue_order: l.queue_order,
            defer_decode_ends: true,
        }
    }

    /// The shape and memory model the run verifier checks a run against.
    pub fn bounds(&self) -> RunBounds {
        RunBounds {
            nodes: self.nodes,
            stages: self.stages,
            gpu_memory_mib: self.gpu_memory_mib,
            weights_mib: self.weights_mib,
            kv_mib_per_token: self.kv_mib_per_token,
            activation_mib_per_token: self.activation_mib_per_token,
        }
    }
}

/// A planner's answer for an arriving task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    Node(usize),
    /// Deprioritise a training task: offer it again at the next inference arrival.
    Defer,
}

/// What planners may read of the running simulation.
pub struct View<'a> {
    pub now: f64,
    pub config: &'a EngineConfig,
    pub tasks: &'a [Task],
    nodes: &'a [Node],
    pub next_inference_arrival: Option<f64>,
}

impl View<'_> {
    /// Mean memory utilisation of a node's GPUs (used / capacity).
    pub fn memory_utilization(&self, node: usize) -> f64 {
        let n = &self.nodes[node];
        n.stages.iter().map(|s| s.mem_mib).sum::<f64>()
            / (self.config.gpu_memory_mib * n.stages.len() as f64).max(1.0)
    }

    /// When each stage of a node will have finished everything assigned so far, estimated from
    /// its running op and queue (decode iterations not yet issued are not counted).
    pub fn stage_backlog_end(&self, node: usize) -> Vec<f64> {
        (0..self.nodes[node].stages.len())
            .map(|s| self.stage_backlog_end_at(node, s))
            .collect()
    }

    /// [`stage_backlog_end`](Self::stage_backlog_end) of one stage, without allocating.
    pub fn stage_backlog_end_at(&self, node: usize, stage: usize) -> f64 {
        let s = &self.nodes[node].stages[stage];
        s.busy_until.max(self.now) + s.queued_s.max(0.0)
    }

    /// Requests decoding or waiting to decode on a node.
    pub fn decoding(&self, node: usize) -> usize {
        let d = &self.nodes[node].decode;
        d.active() + d.waiting.len()
    }
}

/// A node planner (one per file: `separate`, `mix-rr`, `mix-luf`, `lemix`).
pub trait Dispatcher {
    /// The node of an arriving task.
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment;

    /// Called when a training task completes; returns the nodes whose serving replica is then
    /// synchronised (SEPARATE's weight sync), if any.
    fn on_training_done(&mut self, _completed: u64) -> Option<Vec<usize>> {
        None
    }

    /// A stage-queue rank for a task's ops (lower runs first among ready ops); `None` keeps
    /// the engine's order (readiness, then arrival in the queue). The ILP replay uses it to
    /// follow the MILP's order on each stage.
    fn rank(&self, _task: TaskId) -> Option<f64> {
        None
    }
}

/// Answers nothing: after arrivals close, no task is offered and no sync is asked for.
struct NoDispatch;

impl Dispatcher for NoDispatch {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Pending {
    Forward(TaskId),
    Backward(TaskId),
    /// Decode iteration `iter` of the node's batch.
    Decode(u64),
    Sync,
}

#[derive(Debug, Clone, PartialEq)]
struct Queued {
    op: Pending,
    ready_at: f64,
    /// The planner's rank of the op's task, when it gives one.
    rank: Option<f64>,
    /// The op's task id (a decode iteration: its batch's smallest; a sync: before all), for
    /// `queue_order = "task-id"`.
    task_key: i64,
    seq: u64,
    estimate_s: f64,
}

#[derive(Debug, Clone, PartialEq)]
struct Running {
    /// Also its tasks: a forward's or backward's one, a decode iteration's batch (its group
    /// holds it), a sync's none.
    op: Pending,
    kind: OpKind,
    start_s: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Stage {
    busy_until: f64,
    running: Option<Running>,
    queue: Vec<Queued>,
    /// Σ of the queued ops' estimates, kept with the queue (planners read it per decision).
    queued_s: f64,
    mem_mib: f64,
    /// KV reserved on this stage for the tokens admitted requests have still to decode, so
    /// that decode growth never takes a stage past κ · GPU memory.
    reserved_mib: f64,
}

/// The requests of one decode micro-batch: each of its iterations serves all of them (at
/// most `batch_max`), one iteration in flight at a time.
#[derive(Debug, Clone, Default)]
struct DecodeGroup {
    members: Vec<TaskId>,
    in_flight: Option<u64>,
    /// Of the iteration in flight, fixed at its launch (its members and their tokens do not
    /// change until it ends), so that each of its stage ops reads them instead of recomputing.
    /// Derived, and stale while no iteration is in flight: not part of a group's state.
    flight: Flight,
}

impl PartialEq for DecodeGroup {
    fn eq(&self, other: &Self) -> bool {
        self.members == other.members && self.in_flight == other.in_flight
    }
}

/// What every stage op of a decode iteration reads besides its batch (the group's members):
/// the batch's context tokens (the op's duration), its smallest task id (its `task-id` queue
/// key), and whether any member has KV on the host (then each op reloads it first).
#[derive(Debug, Clone, PartialEq, Default)]
struct Flight {
    context_tokens: u64,
    task_key: i64,
    reloads: bool,
    /// The batch as the op log stores it, once its first op is logged (the stage ops of the
    /// iteration share it).
    logged: Option<LoggedTasks>,
}

/// Continuous batching on a node: up to one group per pipeline stage, so that while one
/// group's iteration is on stage s another's can run on stage s − 1 (pipelined decode).
#[derive(Debug, Clone, PartialEq, Default)]
struct Decode {
    waiting: VecDeque<TaskId>,
    groups: Vec<DecodeGroup>,
    collect_until: Option<f64>,
}

impl Decode {
    fn active(&self) -> usize {
        self.groups.iter().map(|g| g.members.len()).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Node {
    stages: Vec<Stage>,
    decode: Decode,
    /// Training tasks reflected in this node's serving replica.
    reflected: u64,
    /// The earliest wake-up scheduled for this node, so that a blocked queue re-examined by
    /// every event schedules one wake-up, not one per examination.
    wake_at: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Arrive(TaskId),
    /// A-PP's timeout for the `offer`-th offer of a training task.
    AppTimeout {
        task: TaskId,
        offer: u32,
    },
    OpDone {
        node: usize,
        stage: usize,
    },
    Wake {
        node: usize,
    },
}

/// An event's place in the order of events, (time by `total_cmp`, sequence number), as two
/// integers: the time's bits mapped so that unsigned order is `total_cmp`'s. Sequence numbers
/// are unique, so no two events share a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey {
    time_bits: u64,
    seq: u64,
}

impl EventKey {
    const SIGN: u64 = 1 << 63;
    /// After every event.
    const LAST: EventKey = EventKey {
        time_bits: u64::MAX,
        seq: u64::MAX,
    };

    fn new(at: f64, seq: u64) -> Self {
        let b = at.to_bits();
        let time_bits = if b & Self::SIGN != 0 {
            !b
        } else {
            b | Self::SIGN
        };
        EventKey { time_bits, seq }
    }

    fn time(&self) -> f64 {
        let b = self.time_bits;
        f64::from_bits(if b & Self::SIGN != 0 {
            b & !Self::SIGN
        } else {
            !b
        })
    }
}

/// Index of (task, stage) in the flat per-task vectors of `Held`.
fn slot(stages: usize, id: TaskId, stage: usize) -> usize {
    id.index() * stages + stage
}

/// Per task, per stage (flat, task-major: cloning an engine copies three vectors, not one
/// per task): memory held, KV reserved for the tokens a request has still to decode
/// (released as they come), and MiB moved to the host by an offload.
#[derive(Debug, Clone, Default)]
struct Held {
    mib: Vec<f64>,
    reserved: Vec<f64>,
    offloaded: Vec<f64>,
}

#[derive(Clone)]
pub struct DiscreteEventEngine<'a> {
    cfg: &'a EngineConfig,
    tasks: &'a [Task],
    nodes: Vec<Node>,
    /// Every event but the inference arrivals, by (time, sequence number).
    events: BinaryHeap<Reverse<(EventKey, Event)>>,
    /// The inference arrivals, known from the start, as (time, sequence number, task) sorted
    /// the way the heap would pop them; `next_arrival` is the first not yet popped. Keeping
    /// them out of the heap keeps it small (tens of events instead of every request of a
    /// trace), and they are shared by an engine's clones.
    arrivals: Arc<[(f64, u64, TaskId)]>,
    next_arrival: usize,
    /// How many arrivals lie before the first whose time is a positive NaN (those sort last
    /// and are never "after now"), so that the next arrival after a time is a binary search.
    arrivals_ordered: usize,
    seq: u64,
    now: f64,
    ops: OpLog,
    outcomes: Vec<TaskOutcome>,
    held: Held,
    /// Tokens decoded so far per inference task.
    generated: Vec<u32>,
    next_iteration: u64,
    fresh_training: VecDeque<TaskId>,
    deferred: VecDeque<TaskId>,
    training_done: u64,
    /// The planner's rank of each task, recorded when it is assigned.
    ranks: Vec<Option<f64>>,
    /// Per training task: offers so far, and whether the current offer still holds A-PP's
    /// slot (the next task is released when it closes).
    offers: Vec<u32>,
    slot_open: Vec<bool>,
    /// Set by `close_arrivals`: no task arrives any more (a search's look-ahead drains what
    /// was placed).
    arrivals_closed: bool,
    /// Whether ops and token times are recorded (a search's clones need outcomes only).
    recording: bool,
    /// Per GPU (node-major): the (time, sequence number) at which its running decode op ends,
    /// when that op's completion is kept out of the heap (see `catch_up`).
    pending_decode: Vec<Option<EventKey>>,
    /// The nodes with a completion in `pending_decode` (each once; a node may stay listed
    /// with none until the next catch-up).
    pending_nodes: Vec<usize>,
    pending_listed: Vec<bool>,
    /// Events pushed onto the heap so far (a catch-up re-reads the heap's first after one).
    pushes: u64,
}

/// See `DiscreteEventEngine::stage_load`.
#[derive(Debug, Clone, PartialEq)]
pub struct StageLoad {
    pub busy_until: f64,
    /// (task, is backward) of the op running.
    pub running: Option<(TaskId, bool)>,
    /// (task, is backward, duration) of each queued op.
    pub queued: Vec<(TaskId, bool, f64)>,
}

/// What a run has recorded so far and no decision depends on: the op log and the token
/// times. A search takes it out of an engine before cloning the engine many times.
#[derive(Debug, Default)]
pub struct History {
    ops: OpLog,
    token_times: Vec<Vec<f64>>,
}

impl<'a> DiscreteEventEngine<'a> {
    pub fn new(cfg: &'a EngineConfig, tasks: &'a [Task]) -> Self {
        let node = Node {
            stages: (0..cfg.stages)
                .map(|_| Stage {
                    mem_mib: cfg.weights_mib,
                    ..Stage::default()
                })
                .collect(),
            ..Node::default()
        };
        // Sequence numbers 1, 2, … in task order, as if each arrival were pushed in turn.
        let mut arrivals: Vec<(f64, u64, TaskId)> = tasks
            .iter()
            .filter(|t| !t.is_training())
            .zip(1u64..)
            .map(|(t, seq)| (t.arrival_s, seq, t.id))
            .collect();
        arrivals.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let arrivals_ordered =
            arrivals.partition_point(|a| !(a.0.is_nan() && a.0.is_sign_positive()));
        let pushed = arrivals.len() as u64;
        let mut engine = DiscreteEventEngine {
            cfg,
            tasks,
            nodes: vec![node; cfg.nodes],
            events: BinaryHeap::new(),
            arrivals: arrivals.into(),
            next_arrival: 0,
            arrivals_ordered,
            seq: pushed,
            now: 0.0,
            ops: OpLog::new(),
            outcomes: tasks
                .iter()
                .map(|t| TaskOutcome {
                    task: t.id,
                    training: t.is_training(),
                    node: None,
                    arrival_s: t.arrival_s,
                    start_s: None,
                    prefill_end_s: None,
                    end_s: None,
                    dropped: false,
                    offloaded: false,
                    token_times: Vec::new(),
                    staleness: None,
                    deferrals: 0,
                })
                .collect(),
            held: Held {
                mib: vec![0.0; tasks.len() * cfg.stages],
                reserved: vec![0.0; tasks.len() * cfg.stages],
                offloaded: vec![0.0; tasks.len() * cfg.stages],
            },
            generated: vec![0; tasks.len()],
            next_iteration: 0,
            fresh_training: tasks
                .iter()
                .filter(|t| t.is_training())
                .map(|t| t.id)
                .collect(),
            deferred: VecDeque::new(),
            training_done: 0,
            ranks: vec![None; tasks.len()],
            offers: vec![0; tasks.len()],
            slot_open: vec![false; tasks.len()],
            arrivals_closed: false,
            recording: true,
            pending_decode: vec![None; cfg.nodes * cfg.stages],
            pending_nodes: Vec::new(),
            pending_listed: vec![false; cfg.nodes],
            pushes: 0,
        };
        // The log holds about one op per decoded token and stage plus each task's forwards
        // and backwards: allocated once, it is not copied as it grows.
        let expected_ops: u64 = tasks
            .iter()
            .map(|t| match t.kind {
                TaskKind::Inference { output_tokens, .. } => u64::from(output_tokens) + 1,
                TaskKind::Training { .. } => 2,
            })
            .sum::<u64>()
            .saturating_mul(cfg.stages as u64);
        engine
            .ops
            .reserve(usize::try_from(expected_ops).unwrap_or(0));
        engine.release_training(0.0);
        engine
    }

    /// Schedules a wake-up of `node` at `at`, unless an earlier or equal one is scheduled.
    fn wake(&mut self, node: usize, at: f64) {
        let n = &mut self.nodes[node];
        if n.wake_at.is_none_or(|w| at < w) {
            n.wake_at = Some(at);
            self.push(at, Event::Wake { node });
        }
    }

    fn record(
        &mut self,
        node: usize,
        stage: usize,
        kind: OpKind,
        tasks: &[TaskId],
        start_s: f64,
        end_s: f64,
    ) {
        if self.recording {
            let tasks = self.ops.tasks(tasks);
            self.ops.push(node, stage, kind, tasks, start_s, end_s);
        }
    }

    /// Logs a stage op of decode iteration `iter`, storing its batch once per iteration.
    fn record_decode(&mut self, node: usize, stage: usize, iter: u64, start_s: f64, end_s: f64) {
        if !self.recording {
            return;
        }
        let group = self
            .group_of(node, iter)
            .map(|g| &mut self.nodes[node].decode.groups[g]);
        // The op's tasks are its iteration's batch (none when the iteration has no group).
        let tasks = match group {
            Some(g) => match g.flight.logged {
                Some(t) => t,
                None => {
                    let t = self.ops.tasks(&g.members);
                    g.flight.logged = Some(t);
                    t
                }
            },
            None => self.ops.tasks(&[]),
        };
        self.ops
            .push(node, stage, OpKind::Decode, tasks, start_s, end_s);
    }

    /// Forgets the log's shared batches held by iterations in flight: the log they are in has
    /// been taken out or rebuilt.
    fn forget_logged_batches(&mut self) {
        for n in &mut self.nodes {
            for g in &mut n.decode.groups {
                g.flight.logged = None;
            }
        }
    }

    fn push(&mut self, at: f64, e: Event) {
        self.seq += 1;
        self.pushes += 1;
        self.events.push(Reverse((EventKey::new(at, self.seq), e)));
    }

    /// The key of the next inference arrival.
    fn arrival_key(&self) -> Option<EventKey> {
        self.arrivals
            .get(self.next_arrival)
            .map(|&(at, seq, _)| EventKey::new(at, seq))
    }

    /// The key of the next event of the heap and the arrivals (`EventKey::LAST` if none).
    fn next_key(&self) -> EventKey {
        let heap = self.events.peek().map(|Reverse((k, _))| *k);
        heap.into_iter()
            .chain(self.arrival_key())
            .min()
            .unwrap_or(EventKey::LAST)
    }

    /// Whether decode op `(node, stage)`, starting now, may end outside the heap: its node
    /// runs decode iterations only (none of them reloads), nothing waits to join its batches
    /// and nothing else is queued. Handling the end of such an op changes its own node only;
    /// the one event it can schedule is that node's wake-up.
    fn decode_only(&self, node: usize) -> bool {
        let n = &self.nodes[node];
        let decode = |op: Pending| matches!(op, Pending::Decode(_));
        n.decode.waiting.is_empty()
            && n.decode.collect_until.is_none()
            && n.decode.groups.iter().all(|g| !g.flight.reloads)
            && n.stages.iter().all(|st| {
                st.running.as_ref().is_none_or(|r| decode(r.op))
                    && st.queue.iter().all(|q| decode(q.op))
            })
    }

    /// Keeps the end of decode op `(node, stage)` out of the heap, with the key its heap entry
    /// would have had.
    fn defer_decode_end(&mut self, node: usize, stage: usize, at: f64) {
        self.seq += 1;
        self.pending_decode[node * self.cfg.stages + stage] = Some(EventKey::new(at, self.seq));
        if !self.pending_listed[node] {
            self.pending_listed[node] = true;
            self.pending_nodes.push(node);
        }
    }

    /// Puts a node's kept decode-op ends back into the heap, with their keys: something other
    /// than its own decode iterations is about to change the node.
    fn restore_decode_ends(&mut self, node: usize) {
        if !self.pending_listed[node] {
            return;
        }
        for stage in 0..self.cfg.stages {
            if let Some(key) = self.pending_decode[node * self.cfg.stages + stage].take() {
                self.pushes += 1;
                self.events
                    .push(Reverse((key, Event::OpDone { node, stage })));
            }
        }
    }

    /// Handles every kept decode-op end that comes before the next event of the heap and the
    /// arrivals, so that the next event finds every node as it would have found it.
    ///
    /// Decode-op ends are most of a run's events. Those of a node that runs only decode
    /// iterations (`decode_only`) change that node alone, so they are handled here node by
    /// node, each node's in time order, without passing through the heap: the state each
    /// node reaches is the same as in time order across nodes. Only the log's interleaving of
    /// different nodes' ops differs. The one event such an end can schedule is its node's
    /// wake-up; the next event is then re-read, so that no node is handled past it.
    fn catch_up(&mut self) {
        if self.pending_nodes.is_empty() {
            return;
        }
        let stages = self.cfg.stages;
        let mut bound = self.next_key();
        let mut i = 0;
        while i < self.pending_nodes.len() {
            let node = self.pending_nodes[i];
            loop {
                let slots = &self.pending_decode[node * stages..(node + 1) * stages];
                let Some((stage, key)) = slots
                    .iter()
                    .enumerate()
                    .filter_map(|(s, k)| k.map(|k| (s, k)))
                    .min_by_key(|&(_, k)| k)
                else {
                    break;
                };
                if key >= bound {
                    break;
                }
                self.pending_decode[node * stages + stage] = None;
                let pushes = self.pushes;
                self.now = key.time();
                if !self.pass_decode_on(node, stage) && !self.end_iteration_in_place(node, stage) {
                    self.op_done(node, stage, &mut NoDispatch);
                }
                if self.pushes != pushes {
                    bound = self.next_key();
                }
            }
            if self.pending_decode[node * stages..(node + 1) * stages]
                .iter()
                .all(Option::is_none)
            {
                self.pending_listed[node] = false;
                self.pending_nodes.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// `op_done` of a kept decode-op end that hands its iteration to the next stage, done in
    /// place: the op is logged and enters stage + 1 (started at once when that stage is idle,
    /// as `enqueue` would, and its end kept again; else queued there), and the freed stage
    /// takes its next queued op. False, with nothing done, when the op ends its iteration or
    /// reloads (`op_done` then handles it). It repeats `enqueue`'s two paths without the
    /// checks the op has passed already (its node runs decode iterations only): calling
    /// `enqueue` instead measured 3 % slower on the Azure hour.
    fn pass_decode_on(&mut self, node: usize, stage: usize) -> bool {
        let now = self.now;
        let next = stage + 1;
        if next >= self.cfg.stages {
            return false;
        }
        let Some(r) = &self.nodes[node].stages[stage].running else {
            return false;
        };
        let (Pending::Decode(iter), start_s) = (r.op, r.start_s) else {
            return false;
        };
        let Some((duration, task_key)) = self
            .flight(node, iter)
            .filter(|f| !f.reloads)
            .map(|f| (self.cfg.latency.decode_s(f.context_tokens), f.task_key))
        else {
            return false;
        };
        self.record_decode(node, stage, iter, start_s, now);
        self.nodes[node].stages[stage].running = None;
        let estimate = self.cfg.latency.decode_s(0);
        // `enqueue`: its sequence number, then the op starts on an idle stage with nothing
        // queued (the queued time added and taken off as it would be), or waits in its queue.
        self.seq += 1;
        let nxt = &mut self.nodes[node].stages[next];
        if nxt.running.is_none() && nxt.queue.is_empty() {
            nxt.queued_s += estimate;
            nxt.queued_s -= estimate;
            nxt.busy_until = now + duration;
            nxt.running = Some(Running {
                op: Pending::Decode(iter),
                kind: OpKind::Decode,
                start_s: now,
            });
            // The node still runs decode iterations only: the end is kept again.
            self.defer_decode_end(node, next, now + duration);
        } else {
            nxt.queued_s += estimate;
            nxt.queue.push(Queued {
                op: Pending::Decode(iter),
                ready_at: now,
                rank: None,
                task_key,
                seq: self.seq,
                estimate_s: estimate,
            });
            self.try_start(node, next);
        }
        // `op_done`'s last step: the freed stage takes its next queued op.
        self.try_start(node, stage);
        true
    }

    /// The next event: the earlier of the heap's first and the next inference arrival, by
    /// (time, sequence number) — the order one heap holding both would pop them in — after
    /// the kept decode-op ends before it (`catch_up`).
    fn pop_event(&mut self) -> Option<(f64, Event)> {
        self.catch_up();
        if let (Some(&(at, _, id)), Some(key)) =
            (self.arrivals.get(self.next_arrival), self.arrival_key())
        {
            let first = match self.events.peek() {
                Some(Reverse((k, _))) => key < *k,
                None => true,
            };
            if first {
                self.next_arrival += 1;
                return Some((at, Event::Arrive(id)));
            }
        }
        self.events.pop().map(|Reverse((k, e))| (k.time(), e))
    }

    /// Runs every task to completion or drop.
    pub fn run(mut self, planner: &mut dyn Dispatcher) -> ColocationRun {
        while let Some(id) = self.advance(planner) {
            let task = self.tasks[id.index()];
            let choice = planner.assign(&self.view(), &task);
            let rank = planner.rank(id);
            self.place(id, choice, rank);
        }
        self.finish()
    }

    /// The run so far (every task done or dropped once `advance` has returned `None`).
    pub fn finish(self) -> ColocationRun {
        ColocationRun {
            ops: self.ops,
            outcomes: self.outcomes,
        }
    }

    /// Processes events up to the next task that needs a node and returns it (its arrival is
    /// now), or `None` when the run is over. `planner` hears of completed training tasks.
    pub fn advance(&mut self, planner: &mut dyn Dispatcher) -> Option<TaskId> {
        while let Some((t, e)) = self.pop_event() {
            self.now = t;
            if let Event::Arrive(id) = e
                && !self.arrivals_closed
            {
                return Some(id);
            }
            self.handle(e, planner);
        }
        None
    }

    /// Processes one event other than an open arrival.
    fn handle(&mut self, e: Event, planner: &mut dyn Dispatcher) {
        {
            let t = self.now;
            match e {
                Event::Arrive(_) => {}
                Event::AppTimeout { task, offer } => {
                    if self.offers[task.index()] == offer {
                        self.close_slot(task);
                    }
                }
                Event::OpDone { node, stage } => self.op_done(node, stage, planner),
                Event::Wake { node } => {
                    self.restore_decode_ends(node);
                    if self.nodes[node].wake_at == Some(t) {
                        self.nodes[node].wake_at = None;
                    }
                    self.try_decode(node);
                    for s in 0..self.cfg.stages {
                        self.try_start(node, s);
                    }
                }
            }
        }
    }

    /// From now on no task arrives: the tasks placed so far run to their end. A search's
    /// look-ahead uses it to score the tasks it has placed.
    pub fn close_arrivals(&mut self) {
        self.arrivals_closed = true;
        self.fresh_training.clear();
        self.deferred.clear();
    }

    /// Stops recording ops and token times: a search's clone needs the outcomes only.
    pub fn quiet(&mut self) {
        self.recording = false;
    }

    /// With no further arrivals, runs node `node` until its placed tasks are done or dropped,
    /// leaving the other nodes as they are (nodes share nothing once arrivals are closed).
    pub fn drain_node(&mut self, node: usize) {
        self.close_arrivals();
        // Every node's ends back in the heap, where the others' are skipped as before.
        for n in 0..self.cfg.nodes {
            self.restore_decode_ends(n);
        }
        let mut noop = NoDispatch;
        while let Some((t, e)) = self.pop_event() {
            let other = match e {
                Event::OpDone { node: n, .. } | Event::Wake { node: n } => n != node,
                Event::Arrive(_) | Event::AppTimeout { .. } => false,
            };
            if other {
                continue;
            }
            self.now = t;
            self.handle(e, &mut noop);
        }
    }

    /// Takes the op log and token times out (see `History`); `restore_history` puts them back.
    pub fn take_history(&mut self) -> History {
        self.forget_logged_batches();
        History {
            ops: std::mem::take(&mut self.ops),
            token_times: self
                .outcomes
                .iter_mut()
                .map(|o| std::mem::take(&mut o.token_times))
                .collect(),
        }
    }

    /// Puts back what `take_history` took, before anything recorded since.
    pub fn restore_history(&mut self, history: History) {
        let later = std::mem::replace(&mut self.ops, history.ops);
        self.ops.append(&later);
        self.forget_logged_batches();
        for (o, mut earlier) in self.outcomes.iter_mut().zip(history.token_times) {
            earlier.append(&mut o.token_times);
            o.token_times = earlier;
        }
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    /// Every task's outcome so far.
    pub fn outcomes(&self) -> &[TaskOutcome] {
        &self.outcomes
    }

    /// Tokens a request has decoded so far.
    pub fn generated(&self, id: TaskId) -> u32 {
        self.generated[id.index()]
    }

    /// Whether A-PP has released a training task (its `arrival_s` is then its release).
    pub fn released(&self, id: TaskId) -> bool {
        self.offers[id.index()] > 0
    }

    /// What one stage must still run of the ops that reached it: until when it is busy, the
    /// task op running (if any, a forward or backward), and each queued forward or backward
    /// with its task and duration (decode iterations and syncs are left out).
    pub fn stage_load(&self, node: usize, stage: usize) -> StageLoad {
        let st = &self.nodes[node].stages[stage];
        let task_op = |op: Pending| match op {
            Pending::Forward(id) => Some((id, false)),
            Pending::Backward(id) => Some((id, true)),
            Pending::Decode(_) | Pending::Sync => None,
        };
        StageLoad {
            busy_until: st.busy_until.max(self.now),
            running: st.running.as_ref().and_then(|r| task_op(r.op)),
            queued: st
                .queue
                .iter()
                .filter_map(|q| task_op(q.op).map(|(id, b)| (id, b, q.estimate_s)))
                .collect(),
        }
    }

    /// Whether two nodes are in the same state, so that placing a task on either leads to the
    /// same run up to the nodes' names.
    pub fn interchangeable(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        x.stages == y.stages && x.decode == y.decode && x.wake_at == y.wake_at
    }

    /// What planners may read of the running simulation.
    pub fn view(&self) -> View<'_> {
        let now = self.now;
        View {
            now,
            config: self.cfg,
            tasks: self.tasks,
            nodes: &self.nodes,
            next_inference_arrival: self.next_inference_arrival(now),
        }
    }

    /// The first inference arrival after `now`. The arrivals are sorted by `total_cmp` with
    /// the positive NaNs (never after anything) cut off, and "after now" holds from some point
    /// on in that order, so a binary search finds the first, as a scan would.
    fn next_inference_arrival(&self, now: f64) -> Option<f64> {
        let ordered = &self.arrivals[..self.arrivals_ordered];
        let i = ordered.partition_point(|a| a.0.partial_cmp(&now) != Some(Ordering::Greater));
        ordered.get(i).map(|a| a.0)
    }

    /// The requests of decode iteration `iter` on `node`: the members of its group, which do
    /// not change while it is in flight (none if it has no group).
    fn batch(&self, node: usize, iter: u64) -> &[TaskId] {
        self.group_of(node, iter).map_or(&[], |g| {
            self.nodes[node].decode.groups[g].members.as_slice()
        })
    }

    /// The launch-time facts of decode iteration `iter` on `node`, while it is in flight.
    fn flight(&self, node: usize, iter: u64) -> Option<&Flight> {
        self.group_of(node, iter)
            .map(|g| &self.nodes[node].decode.groups[g].flight)
    }

    /// The index of the group whose iteration `iter` is in flight on `node`.
    fn group_of(&self, node: usize, iter: u64) -> Option<usize> {
        self.nodes[node]
            .decode
            .groups
            .iter()
            .position(|g| g.in_flight == Some(iter))
    }

    /// Fixes what the stage ops of an iteration of `members` read (see `Flight`).
    fn launch_flight(&self, members: &[TaskId]) -> Flight {
        let context_tokens = members
            .iter()
            .map(|t| match self.tasks[t.index()].kind {
                TaskKind::Inference { prompt_tokens, .. } => {
                    (prompt_tokens + self.generated[t.index()]) as u64
                }
                TaskKind::Training { .. } => 0,
            })
            .sum();
        let stages = self.cfg.stages;
        Flight {
            context_tokens,
            task_key: members
                .iter()
                .map(|t| i64::from(t.0))
                .min()
                .unwrap_or(i64::MAX),
            reloads: members
                .iter()
                .any(|t| (0..stages).any(|s| self.held.offloaded[slot(stages, *t, s)] > 0.0)),
            logged: None,
        }
    }

    /// Ends the A-PP slot of a training task's current offer, once: its stage-0 forward ended,
    /// it was dropped before running, or A-PP's timeout fired. The next task is released.
    fn close_slot(&mut self, id: TaskId) {
        if std::mem::take(&mut self.slot_open[id.index()]) {
            let now = self.now;
            self.release_training(now);
        }
    }

    /// A-PP: release the next training task (deferred ones first: the smallest id).
    fn release_training(&mut self, at: f64) {
        let next = match (self.deferred.front(), self.fresh_training.front()) {
            (Some(d), Some(f)) if d < f => self.deferred.pop_front(),
            (Some(_), None) => self.deferred.pop_front(),
            _ => self.fresh_training.pop_front(),
        };
        if let Some(id) = next {
            if self.outcomes[id.index()].deferrals == 0 {
                self.outcomes[id.index()].arrival_s = at;
            }
            self.open_slot(id, at);
        }
    }

    /// A-PP offers a training task: it holds A-PP's slot until its stage-0 forward ends, it is
    /// deferred or dropped, or `app_timeout_s` passes.
    fn open_slot(&mut self, id: TaskId, at: f64) {
        self.offers[id.index()] += 1;
        self.slot_open[id.index()] = true;
        let offer = self.offers[id.index()];
        self.push(at, Event::Arrive(id));
        self.push(
            at + self.cfg.app_timeout_s,
            Event::AppTimeout { task: id, offer },
        );
    }

    /// Releases the next fresh (never offered) training task.
    fn release_fresh(&mut self, at: f64) {
        if let Some(id) = self.fresh_training.pop_front() {
            self.outcomes[id.index()].arrival_s = at;
            self.open_slot(id, at);
        }
    }

    /// Carries out the decision for the task `advance` returned: its node (or a training
    /// task's deferral) and its stage-queue rank.
    pub fn place(&mut self, id: TaskId, choice: Assignment, rank: Option<f64>) {
        let task = self.tasks[id.index()];
        let node = match choice {
            Assignment::Node(n) if n < self.cfg.nodes => n,
            Assignment::Defer if task.is_training() => {
                self.outcomes[id.index()].deferrals += 1;
                // Deprioritised: it waits in the deferred queue, offered again one per
                // inference arrival. Every deferral hands A-PP's slot to the next fresh task,
                // so training never stalls behind a deferred one.
                self.deferred.push_back(id);
                if std::mem::take(&mut self.slot_open[id.index()]) {
                    self.release_fresh(self.now);
                }
                return;
            }
            // A planner answering out of range or deferring inference: node 0, by rule.
            _ => 0,
        };
        self.outcomes[id.index()].node = Some(node);
        self.ranks[id.index()] = rank;
        if !task.is_training() && !self.deferred.is_empty() {
            // Each inference arrival offers one deferred training task again; the last one
            // offers them all (nothing is left to protect).
            let more_arrivals = self.view().next_inference_arrival.is_some();
            let n = if more_arrivals {
                1
            } else {
                self.deferred.len()
            };
            for _ in 0..n {
                if let Some(t) = self.deferred.pop_front() {
                    self.push(self.now, Event::Arrive(t));
                }
            }
        }
        // A training arrival ends a decode batch's wait for company.
        if task.is_training() && self.nodes[node].decode.collect_until.is_some() {
            self.nodes[node].decode.collect_until = Some(self.now);
            self.try_decode(node);
        }
        let (b, l) = task.forward_shape();
        let estimate = self.cfg.latency.forward_s(b, l);
        self.enqueue(node, 0, Pending::Forward(id), estimate);
    }

    fn enqueue(&mut self, node: usize, stage: usize, op: Pending, estimate_s: f64) {
        if !matches!(op, Pending::Decode(_)) {
            self.restore_decode_ends(node);
        }
        self.seq += 1;
        if let Pending::Decode(iter) = op {
            let st = &self.nodes[node].stages[stage];
            if st.running.is_none()
                && st.queue.is_empty()
                && self.flight(node, iter).is_some_and(|f| !f.reloads)
            {
                // What queueing it and `try_start` would do: the op is the only one, and a
                // decode iteration without reloads always starts. The queued time is added
                // and taken off as it would be, so that it stays the same to the last bit.
                let st = &mut self.nodes[node].stages[stage];
                st.queued_s += estimate_s;
                st.queued_s -= estimate_s;
                self.start(node, stage, op, false);
                return;
            }
        }
        let rank = match op {
            Pending::Forward(id) | Pending::Backward(id) => self.ranks[id.index()],
            Pending::Decode(_) | Pending::Sync => None,
        };
        let task_key = match op {
            Pending::Forward(id) | Pending::Backward(id) => i64::from(id.0),
            Pending::Decode(iter) => self.flight(node, iter).map_or(i64::MAX, |f| f.task_key),
            Pending::Sync => -1,
        };
        let q = Queued {
            op,
            ready_at: self.now,
            rank,
            task_key,
            seq: self.seq,
            estimate_s,
        };
        let st = &mut self.nodes[node].stages[stage];
        st.queued_s += q.estimate_s;
        st.queue.push(q);
        self.try_start(node, stage);
    }

    fn forward_need_mib(&self, id: TaskId) -> f64 {
        match self.tasks[id.index()].kind {
            TaskKind::Inference { prompt_tokens, .. } => {
                self.cfg.kv_mib_per_token * prompt_tokens as f64
            }
            TaskKind::Training { tokens, batch } => {
                self.cfg.activation_mib_per_token * (tokens as f64) * batch as f64
            }
        }
    }

    /// KV a request's decoding will add on each stage (0 for training).
    fn growth_mib(&self, id: TaskId) -> f64 {
        match self.tasks[id.index()].kind {
            TaskKind::Inference { output_tokens, .. } => {
                self.cfg.kv_mib_per_token * output_tokens as f64
            }
            TaskKind::Training { .. } => 0.0,
        }
    }

    /// Returns a request's unused reservation on every stage of its node.
    fn release_reservation(&mut self, node: usize, id: TaskId) {
        for s in 0..self.cfg.stages {
            let r = std::mem::take(&mut self.held.reserved[slot(self.cfg.stages, id, s)]);
            self.nodes[node].stages[s].reserved_mib -= r;
        }
    }

    /// What `try_start` would do with a queued op, were it first in queue order: start it
    /// (`Some((offload, drop))`: as is, offloaded, or drop its task), or wait for memory until
    /// the deadline (`Err`).
    fn startable(&self, node: usize, stage: usize, q: &Queued) -> Result<(bool, bool), f64> {
        if let Pending::Forward(id) = q.op {
            if self.outcomes[id.index()].dropped {
                return Ok((false, true));
            }
            let need = self.forward_need_mib(id) + self.growth_mib(id);
            let st = &self.nodes[node].stages[stage];
            let used = st.mem_mib + st.reserved_mib;
            if used + need > self.cfg.threshold_mib {
                let deadline = q.ready_at + self.cfg.max_wait_s;
                if self.now + 1e-12 >= deadline {
                    return Ok(match self.cfg.on_timeout {
                        MemoryTimeout::Offload => (true, false),
                        MemoryTimeout::Drop => (false, true),
                    });
                }
                return Err(deadline);
            }
        }
        Ok((false, false))
    }

    /// The first startable op of a stage queue in queue order, found in one pass: whether an
    /// op can start does not depend on the others, so the first startable one in the sorted
    /// queue is the least startable one. `None` when none can start, or when the queue order
    /// is not a plain lexicographic key (task-id order with planner ranks compares ids only
    /// between unranked ops), where `try_start` sorts as it always did.
    fn first_startable(&self, node: usize, stage: usize) -> Option<(usize, bool, bool)> {
        let queue = &self.nodes[node].stages[stage].queue;
        let by_task_id = self.cfg.queue_order == QueueOrder::TaskId;
        if by_task_id && queue.iter().any(|q| q.rank.is_some()) {
            return None;
        }
        // The sort key of `try_start`'s order, lexicographic here.
        let before = |x: &Queued, y: &Queued| {
            let ids = if by_task_id {
                x.task_key.cmp(&y.task_key)
            } else {
                std::cmp::Ordering::Equal
            };
            let (rx, ry) = (x.rank.unwrap_or(x.ready_at), y.rank.unwrap_or(y.ready_at));
            ids.then(rx.total_cmp(&ry))
                .then(x.ready_at.total_cmp(&y.ready_at))
                .then(x.seq.cmp(&y.seq))
                == std::cmp::Ordering::Less
        };
        let mut best: Option<(usize, bool, bool)> = None;
        for (i, q) in queue.iter().enumerate() {
            if best.is_some_and(|(b, _, _)| !before(q, &queue[b])) {
                continue;
            }
            if let Ok((offload, drop)) = self.startable(node, stage, q) {
                best = Some((i, offload, drop));
            }
        }
        best
    }

    /// Starts the first startable queued op of an idle stage.
    fn try_start(&mut self, node: usize, stage: usize) {
        loop {
            let st = &self.nodes[node].stages[stage];
            if st.running.is_some() || st.queue.is_empty() {
                return;
            }
            if let Some(chosen) = self.first_startable(node, stage) {
                if self.take_queued(node, stage, chosen) {
                    return;
                }
                continue;
            }
            // Nothing can start (or an order that needs the sort): the queue in sorted order,
            // the wake-up at the earliest memory deadline.
            let st = &self.nodes[node].stages[stage];
            let mut order: Vec<usize> = (0..st.queue.len()).collect();
            let by_task_id = self.cfg.queue_order == QueueOrder::TaskId;
            order.sort_by(|&a, &b| {
                let (x, y) = (&st.queue[a], &st.queue[b]);
                let (rx, ry) = (x.rank.unwrap_or(x.ready_at), y.rank.unwrap_or(y.ready_at));
                let ids = if by_task_id && x.rank.is_none() && y.rank.is_none() {
                    x.task_key.cmp(&y.task_key)
                } else {
                    std::cmp::Ordering::Equal
                };
                ids.then(rx.total_cmp(&ry))
                    .then(x.ready_at.total_cmp(&y.ready_at))
                    .then(x.seq.cmp(&y.seq))
            });
            let mut chosen = None;
            let mut wake_at: Option<f64> = None;
            for i in order {
                let q = &self.nodes[node].stages[stage].queue[i];
                match self.startable(node, stage, q) {
                    Ok((offload, drop)) => {
                        chosen = Some((i, offload, drop));
                        break;
                    }
                    Err(deadline) => {
                        wake_at = Some(wake_at.map_or(deadline, |w: f64| w.min(deadline)));
                    }
                }
            }
            let Some(chosen) = chosen else {
                if let Some(at) = wake_at {
                    self.wake(node, at);
                }
                return;
            };
            if self.take_queued(node, stage, chosen) {
                return;
            }
        }
    }

    /// Takes queued op `i` off the stage's queue and starts it (offloaded or not), or drops
    /// its task; true when an op started.
    fn take_queued(
        &mut self,
        node: usize,
        stage: usize,
        (i, offload, drop): (usize, bool, bool),
    ) -> bool {
        let q = self.nodes[node].stages[stage].queue.remove(i);
        self.nodes[node].stages[stage].queued_s -= q.estimate_s;
        if drop {
            if let Pending::Forward(id) = q.op {
                self.drop_task(id);
            }
            return false;
        }
        self.start(node, stage, q.op, offload);
        true
    }

    fn drop_task(&mut self, id: TaskId) {
        let o = &mut self.outcomes[id.index()];
        if o.dropped {
            return;
        }
        o.dropped = true;
        let node = o.node;
        if let Some(n) = node {
            self.release_reservation(n, id);
            for s in 0..self.cfg.stages {
                let mib = std::mem::take(&mut self.held.mib[slot(self.cfg.stages, id, s)]);
                self.nodes[n].stages[s].mem_mib -= mib;
                self.nodes[n].stages[s].queue.retain(
                    |q| !matches!(q.op, Pending::Forward(t) | Pending::Backward(t) if t == id),
                );
            }
        }
        if self.tasks[id.index()].is_training() && self.outcomes[id.index()].start_s.is_none() {
            // It never reached its stage-0 forward: A-PP must not wait for it.
            self.close_slot(id);
        }
    }

    fn start(&mut self, node: usize, stage: usize, op: Pending, offload: bool) {
        let now = self.now;
        if let Pending::Decode(iter) = op
            && let Some(f) = self.flight(node, iter)
            && !f.reloads
        {
            // The rest of this function, for a decode iteration that reloads nothing.
            let duration = self.cfg.latency.decode_s(f.context_tokens);
            let st = &mut self.nodes[node].stages[stage];
            st.busy_until = now + duration;
            st.running = Some(Running {
                op,
                kind: OpKind::Decode,
                start_s: now,
            });
            self.schedule_decode_end(node, stage, now + duration);
            return;
        }
        let (kind, mut duration) = match op {
            Pending::Forward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                (OpKind::Forward, self.cfg.latency.forward_s(b, l))
            }
            Pending::Backward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                (OpKind::Backward, self.cfg.latency.backward_s(b, l))
            }
            Pending::Decode(iter) => (
                OpKind::Decode,
                self.cfg
                    .latency
                    .decode_s(self.flight(node, iter).map_or(0, |f| f.context_tokens)),
            ),
            Pending::Sync => (
                OpKind::Sync,
                self.cfg.weights_mib / self.cfg.offload_mib_per_s,
            ),
        };
        if let Pending::Forward(id) = op {
            let need = self.forward_need_mib(id);
            let o = &mut self.outcomes[id.index()];
            if o.start_s.is_none() {
                o.start_s = Some(now);
            }
            if offload {
                o.offloaded = true;
                self.held.offloaded[slot(self.cfg.stages, id, stage)] = need;
                let move_s = need / self.cfg.offload_mib_per_s;
                self.record(node, stage, OpKind::Offload, &[id], now, now + move_s);
                duration += move_s;
            } else {
                let growth = self.growth_mib(id);
                self.held.mib[slot(self.cfg.stages, id, stage)] += need;
                self.held.reserved[slot(self.cfg.stages, id, stage)] += growth;
                let st = &mut self.nodes[node].stages[stage];
                st.mem_mib += need;
                st.reserved_mib += growth;
            }
        }
        let mut start_s = if offload {
            now + (duration - self.duration_without_offload(op))
        } else {
            now
        };
        // Offloaded data the op needs comes back first: a training task's activations for its
        // backward (then freed), the KV of offloaded requests for every decode iteration (it
        // streams in and stays on the host).
        let may_reload = match op {
            Pending::Backward(_) => true,
            Pending::Decode(iter) => self.flight(node, iter).is_some_and(|f| f.reloads),
            _ => false,
        };
        let backward = [match op {
            Pending::Backward(id) => id,
            _ => TaskId(0),
        }];
        let needs: &[TaskId] = match op {
            Pending::Decode(iter) => self.batch(node, iter),
            Pending::Backward(_) => &backward,
            _ => &[],
        };
        let reloaded: Vec<TaskId> = match op {
            Pending::Backward(_) | Pending::Decode(_) if may_reload => needs
                .iter()
                .copied()
                .filter(|t| self.held.offloaded[slot(self.cfg.stages, *t, stage)] > 0.0)
                .collect(),
            _ => Vec::new(),
        };
        let reload_mib: f64 = reloaded
            .iter()
            .map(|t| self.held.offloaded[slot(self.cfg.stages, *t, stage)])
            .sum();
        if let Pending::Backward(id) = op {
            self.held.offloaded[slot(self.cfg.stages, id, stage)] = 0.0;
        }
        if reload_mib > 0.0 {
            let reload_s = reload_mib / self.cfg.offload_mib_per_s;
            self.record(node, stage, OpKind::Reload, &reloaded, now, now + reload_s);
            duration += reload_s;
            start_s = now + reload_s;
        }
        let st = &mut self.nodes[node].stages[stage];
        st.busy_until = now + duration;
        st.running = Some(Running { op, kind, start_s });
        if matches!(op, Pending::Decode(_)) {
            self.schedule_decode_end(node, stage, now + duration);
        } else {
            self.push(now + duration, Event::OpDone { node, stage });
        }
    }

    /// Schedules the end of decode op `(node, stage)`: kept out of the heap when its node runs
    /// decode iterations only (`decode_only`), else in it.
    fn schedule_decode_end(&mut self, node: usize, stage: usize, at: f64) {
        if self.cfg.defer_decode_ends && self.decode_only(node) {
            self.defer_decode_end(node, stage, at);
        } else {
            self.push(at, Event::OpDone { node, stage });
        }
    }

    fn duration_without_offload(&self, op: Pending) -> f64 {
        match op {
            Pending::Forward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                self.cfg.latency.forward_s(b, l)
            }
            _ => 0.0,
        }
    }

    fn op_done(&mut self, node: usize, stage: usize, planner: &mut dyn Dispatcher) {
        let now = self.now;
        // Read in place rather than moved out: the op is copied nowhere on the hot path.
        let (op, start_s) = match &self.nodes[node].stages[stage].running {
            Some(r) => (r.op, r.start_s),
            None => return,
        };
        if let Pending::Decode(iter) = op {
            self.record_decode(node, stage, iter, start_s, now);
            self.nodes[node].stages[stage].running = None;
        } else if let Some(r) = self.nodes[node].stages[stage].running.take() {
            let task = match r.op {
                Pending::Forward(id) | Pending::Backward(id) => Some(id),
                Pending::Decode(_) | Pending::Sync => None,
            };
            self.record(node, stage, r.kind, task.as_slice(), r.start_s, now);
        }
        let last = self.cfg.stages - 1;
        match op {
            Pending::Forward(id) => {
                let task = self.tasks[id.index()];
                if task.is_training() && stage == 0 {
                    self.close_slot(id);
                }
                if stage < last {
                    let (b, l) = task.forward_shape();
                    let est = self.cfg.latency.forward_s(b, l);
                    self.enqueue(node, stage + 1, Pending::Forward(id), est);
                } else if task.is_training() {
                    let (b, l) = task.forward_shape();
                    let est = self.cfg.latency.backward_s(b, l);
                    self.enqueue(node, last, Pending::Backward(id), est);
                } else {
                    self.prefill_done(node, id);
                }
            }
            Pending::Backward(id) => {
                let mib = std::mem::take(&mut self.held.mib[slot(self.cfg.stages, id, stage)]);
                self.nodes[node].stages[stage].mem_mib -= mib;
                if stage > 0 {
                    let (b, l) = self.tasks[id.index()].forward_shape();
                    let est = self.cfg.latency.backward_s(b, l);
                    self.enqueue(node, stage - 1, Pending::Backward(id), est);
                } else {
                    self.outcomes[id.index()].end_s = Some(now);
                    self.training_done += 1;
                    self.nodes[node].reflected += 1;
                    if let Some(synced) = planner.on_training_done(self.training_done) {
                        for n in synced {
                            if n < self.cfg.nodes {
                                self.nodes[n].reflected = self.training_done;
                                for s in 0..self.cfg.stages {
                                    let est = self.cfg.weights_mib / self.cfg.offload_mib_per_s;
                                    self.enqueue(n, s, Pending::Sync, est);
                                }
                            }
                        }
                    }
                }
                // Freed memory may unblock waiting forwards on this node.
                self.wake(node, now);
            }
            Pending::Decode(iter) => {
                if stage < last {
                    let est = self.cfg.latency.decode_s(0);
                    self.enqueue(node, stage + 1, Pending::Decode(iter), est);
                } else {
                    self.iteration_done(node, iter);
                }
            }
            Pending::Sync => {}
        }
        self.try_start(node, stage);
    }

    fn prefill_done(&mut self, node: usize, id: TaskId) {
        let now = self.now;
        let total = self.training_done;
        let reflected = self.nodes[node].reflected;
        let o = &mut self.outcomes[id.index()];
        o.prefill_end_s = Some(now);
        o.staleness = Some(total.saturating_sub(reflected));
        let output = match self.tasks[id.index()].kind {
            TaskKind::Inference { output_tokens, .. } => output_tokens,
            TaskKind::Training { .. } => 0,
        };
        if output == 0 {
            self.finish_request(node, id);
        } else {
            if self.recording {
                // One time per token to come: no regrowth while it decodes.
                o.token_times.reserve_exact(output as usize);
            }
            self.nodes[node].decode.waiting.push_back(id);
            self.try_decode(node);
        }
    }

    fn finish_request(&mut self, node: usize, id: TaskId) {
        self.outcomes[id.index()].end_s = Some(self.now);
        self.release_reservation(node, id);
        for s in 0..self.cfg.stages {
            let mib = std::mem::take(&mut self.held.mib[slot(self.cfg.stages, id, s)]);
            self.nodes[node].stages[s].mem_mib -= mib;
        }
        self.wake(node, self.now);
    }

    /// Starts a decode iteration for every idle group of the node: waiting requests first top
    /// up the idle groups, then open new groups (up to one per stage) while every group is in
    /// flight. A node whose decoding starts from nothing waits up to T_w for company.
    fn try_decode(&mut self, node: usize) {
        let now = self.now;
        let max = self.cfg.batch_max;
        let stages = self.cfg.stages;
        let d = &mut self.nodes[node].decode;
        let was_empty = d.active() == 0;
        for g in d.groups.iter_mut().filter(|g| g.in_flight.is_none()) {
            while g.members.len() < max {
                match d.waiting.pop_front() {
                    Some(id) => g.members.push(id),
                    None => break,
                }
            }
        }
        while !d.waiting.is_empty() && d.groups.len() < stages {
            let members: Vec<TaskId> = (0..max).map_while(|_| d.waiting.pop_front()).collect();
            d.groups.push(DecodeGroup {
                members,
                in_flight: None,
                flight: Flight::default(),
            });
        }
        d.groups
            .retain(|g| g.in_flight.is_some() || !g.members.is_empty());
        if d.active() == 0 {
            d.collect_until = None;
            return;
        }
        if d.active() < max && self.cfg.batch_wait_s > 0.0 {
            match d.collect_until {
                None if was_empty => {
                    let until = now + self.cfg.batch_wait_s;
                    d.collect_until = Some(until);
                    self.wake(node, until);
                    return;
                }
                Some(until) if now + 1e-12 < until => {
                    // Still collecting: keep the wake-up at the end of the wait.
                    self.wake(node, until);
                    return;
                }
                _ => {}
            }
        }
        d.collect_until = None;
        for g in 0..d.groups.len() {
            let group = &self.nodes[node].decode.groups[g];
            if group.in_flight.is_some() || group.members.is_empty() {
                continue;
            }
            self.launch(node, g);
        }
    }

    /// Launches the next iteration of idle group `g`: it enters stage 0's queue.
    fn launch(&mut self, node: usize, g: usize) {
        let iter = self.next_iteration;
        self.next_iteration += 1;
        let group = &mut self.nodes[node].decode.groups[g];
        group.in_flight = Some(iter);
        let members = std::mem::take(&mut group.members);
        let flight = self.launch_flight(&members);
        let group = &mut self.nodes[node].decode.groups[g];
        group.members = members;
        group.flight = flight;
        let est = self.cfg.latency.decode_s(0);
        self.enqueue(node, 0, Pending::Decode(iter), est);
    }

    fn iteration_done(&mut self, node: usize, iter: u64) {
        let now = self.now;
        // The iteration's batch: its group's members, which do not change while the
        // iteration is in flight (taken out while the loop below updates the engine).
        let group = self.group_of(node, iter);
        let batch = match group {
            Some(g) => std::mem::take(&mut self.nodes[node].decode.groups[g].members),
            None => Vec::new(),
        };
        let mut finished = Vec::new();
        for &id in &batch {
            if self.outcomes[id.index()].dropped {
                continue;
            }
            self.add_token(node, id, now);
            if self.output_done(id, 0) {
                finished.push(id);
            }
        }
        if let Some(g) = group {
            let g = &mut self.nodes[node].decode.groups[g];
            g.members = batch;
            g.members.retain(|t| !finished.contains(t));
            g.in_flight = None;
        }
        for id in finished {
            self.finish_request(node, id);
        }
        self.try_decode(node);
    }

    /// Whether a request has decoded all its output after `more` further tokens.
    fn output_done(&self, id: TaskId, more: u32) -> bool {
        matches!(self.tasks[id.index()].kind,
            TaskKind::Inference { output_tokens, .. }
                if self.generated[id.index()].saturating_add(more) >= output_tokens)
    }

    /// A request's next token, decoded at `now`: counted, timed, and its KV taken out of its
    /// reservation on every stage (or grown on the host where its cache was offloaded).
    fn add_token(&mut self, node: usize, id: TaskId, now: f64) {
        self.generated[id.index()] += 1;
        if self.recording {
            self.outcomes[id.index()].token_times.push(now);
        }
        let kv = self.cfg.kv_mib_per_token;
        let stages = self.cfg.stages;
        for s in 0..stages {
            let k = slot(stages, id, s);
            if self.held.offloaded[k] > 0.0 {
                self.held.offloaded[k] += kv;
                continue;
            }
            let held = &mut self.held;
            let from_reserve = held.reserved[k].min(kv);
            held.reserved[k] -= from_reserve;
            held.mib[k] += kv;
            let st = &mut self.nodes[node].stages[s];
            st.reserved_mib -= from_reserve;
            st.mem_mib += kv;
        }
    }

    /// `op_done` of a kept decode-op end that ends its iteration, done in place when no member
    /// finishes: the op is logged, every member takes its token, and the group's next
    /// iteration is launched (as `try_decode` would). False, with nothing done, otherwise
    /// (`op_done` then handles it).
    fn end_iteration_in_place(&mut self, node: usize, stage: usize) -> bool {
        let now = self.now;
        let last = self.cfg.stages - 1;
        if stage != last {
            return false;
        }
        let n = &self.nodes[node];
        let Some(r) = &n.stages[stage].running else {
            return false;
        };
        let (Pending::Decode(iter), start_s) = (r.op, r.start_s) else {
            return false;
        };
        let Some(g) = self.group_of(node, iter) else {
            return false;
        };
        // `try_decode` would launch this group alone: nothing waits or collects, every other
        // group is in flight.
        let alone = n.decode.waiting.is_empty()
            && n.decode.collect_until.is_none()
            && n.decode
                .groups
                .iter()
                .enumerate()
                .all(|(h, other)| h == g || other.in_flight.is_some());
        let members = &n.decode.groups[g].members;
        if !alone
            || members.is_empty()
            || members
                .iter()
                .any(|&id| self.outcomes[id.index()].dropped || self.output_done(id, 1))
        {
            return false;
        }
        self.record_decode(node, stage, iter, start_s, now);
        self.nodes[node].stages[stage].running = None;
        let members = std::mem::take(&mut self.nodes[node].decode.groups[g].members);
        for &id in &members {
            self.add_token(node, id, now);
        }
        let group = &mut self.nodes[node].decode.groups[g];
        group.members = members;
        group.in_flight = None;
        // What `try_decode` does here: nothing waits and every other group is in flight, so
        // it launches this group's next iteration and nothing else.
        self.launch(node, g);
        // `op_done`'s last step: the freed stage takes its next queued op.
        self.try_start(node, stage);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::colocate::latency::PassCost;
    use crate::verify::colocation::verify_run;

    /// One node of two stages; a 1000-token forward takes 1 s per stage, its backward 0.5 s, a
    /// decode iteration 0.1 s per stage.
    fn config() -> EngineConfig {
        EngineConfig {
            nodes: 1,
            stages: 2,
            latency: LatencyModel {
                forward: PassCost::quadratic(1e-6),
                backward: PassCost::quadratic(0.5e-6),
                decode_base_s: 0.1,
                decode_per_token_s: 0.0,
            },
            gpu_memory_mib: 1e9,
            threshold_mib: 1e9,
            weights_mib: 0.0,
            kv_mib_per_token: 1.0,
            activation_mib_per_token: 1.0,
            max_wait_s: 10.0,
            on_timeout: MemoryTimeout::Offload,
            offload_mib_per_s: 1000.0,
            batch_max: 8,
            batch_wait_s: 0.0,
            app_timeout_s: 100.0,
            queue_order: QueueOrder::Ready,
            defer_decode_ends: true,
        }
    }

    fn inference(id: u32, arrival_s: f64, output_tokens: u32) -> Task {
        Task {
            id: TaskId(id),
            kind: TaskKind::Inference {
                prompt_tokens: 1000,
                output_tokens,
            },
            arrival_s,
        }
    }

    fn training(id: u32) -> Task {
        Task {
            id: TaskId(id),
            kind: TaskKind::Training {
                tokens: 1000,
                batch: 1,
            },
            arrival_s: 0.0,
        }
    }

    struct AllOnZero;
    impl Dispatcher for AllOnZero {
        fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
            Assignment::Node(0)
        }
    }

    fn run(cfg: &EngineConfig, tasks: &[Task]) -> ColocationRun {
        let r = DiscreteEventEngine::new(cfg, tasks).run(&mut AllOnZero);
        verify_run(&cfg.bounds(), tasks, &r).expect("the verifier accepts the run");
        r
    }

    fn ops_of(r: &ColocationRun, kind: OpKind) -> Vec<(usize, f64, f64)> {
        let mut v: Vec<(usize, f64, f64)> = r
            .ops
            .iter()
            .filter(|o| o.kind == kind)
            .map(|o| (o.stage, o.start_s, o.end_s))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        v
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn event_keys_order_by_total_cmp_then_sequence() {
        let times = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            0.25,
            0.25 + f64::EPSILON,
            7.0,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &a in &times {
            assert_eq!(EventKey::new(a, 1).time().to_bits(), a.to_bits());
            for &b in &times {
                for (x, y) in [(1, 2), (2, 1), (3, 3)] {
                    let heap = a.total_cmp(&b).then(x.cmp(&y));
                    assert_eq!(
                        EventKey::new(a, x).cmp(&EventKey::new(b, y)),
                        heap,
                        "{a} {b}"
                    );
                }
            }
            assert!(EventKey::new(a, u64::MAX - 1) < EventKey::LAST);
        }
    }

    #[test]
    fn prefill_then_decode_iterations_through_the_pipeline() {
        let cfg = config();
        let r = run(&cfg, &[inference(0, 0.0, 2)]);
        let f = ops_of(&r, OpKind::Forward);
        assert_eq!(f.len(), 2);
        assert!(
            close(f[0].1, 0.0) && close(f[0].2, 1.0) && close(f[1].1, 1.0) && close(f[1].2, 2.0)
        );
        let o = &r.outcomes[0];
        assert!(close(o.prefill_end_s.unwrap_or(0.0), 2.0));
        // Two iterations × two stages × 0.1 s.
        assert_eq!(ops_of(&r, OpKind::Decode).len(), 4);
        assert!(close(o.token_times[0], 2.2) && close(o.token_times[1], 2.4));
        assert!(close(o.end_s.unwrap_or(0.0), 2.4));
    }

    #[test]
    fn far_dependency_waits_for_a_pending_backward() {
        let cfg = config();
        // Training forward: [0,1] on stage 0, [1,2] on stage 1; backward [2,2.5] on stage 1,
        // [2.5,3] on stage 0. A request arriving at 1.2 runs stage 0 in [1.2,2.2] but must wait
        // for the backward on stage 1: [2.5,3.5].
        let tasks = [inference(0, 1.2, 0), training(1)];
        let r = run(&cfg, &tasks);
        let req = &r.outcomes[0];
        assert!(
            close(req.prefill_end_s.unwrap_or(0.0), 3.5),
            "{:?}",
            req.prefill_end_s
        );
        let b = ops_of(&r, OpKind::Backward);
        assert!(close(b[0].1, 2.0) && close(b[0].2, 2.5) && b[0].0 == 1);
        assert!(close(b[1].1, 2.5) && close(b[1].2, 3.0) && b[1].0 == 0);
        assert!(close(r.outcomes[1].end_s.unwrap_or(0.0), 3.0));
    }

    #[test]
    fn training_is_released_when_the_previous_one_ends_its_first_forward() {
        let cfg = config();
        let r = run(&cfg, &[training(0), training(1)]);
        assert!(close(r.outcomes[0].arrival_s, 0.0));
        assert!(
            close(r.outcomes[1].arrival_s, 1.0),
            "A-PP release at the end of the stage-0 forward"
        );
    }

    #[test]
    fn memory_wait_then_run_when_freed() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        // The first request holds 1000 MiB per stage until it completes at 2.0.
        let second = &r.outcomes[1];
        assert!(
            close(second.start_s.unwrap_or(0.0), 2.0),
            "{:?}",
            second.start_s
        );
        assert!(!second.offloaded && !second.dropped);
    }

    #[test]
    fn memory_timeout_offloads_or_drops() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        cfg.max_wait_s = 0.5;
        // Offload: after the wait (stage 0 is free at 1.0), 1000 MiB at 1000 MiB/s = 1 s of
        // transfer, then the forward.
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        let second = &r.outcomes[1];
        assert!(second.offloaded);
        let off = ops_of(&r, OpKind::Offload);
        assert!(close(off[0].1, 1.0) && close(off[0].2, 2.0));
        cfg.on_timeout = MemoryTimeout::Drop;
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        assert!(r.outcomes[1].dropped && r.outcomes[1].end_s.is_none());
        assert!(r.outcomes[0].end_s.is_some());
    }

    #[test]
    fn requests_share_decode_iterations() {
        let mut cfg = config();
        cfg.stages = 1;
        cfg.batch_wait_s = 0.5;
        // One stage, so one decode group: request 0's prefill ends at 1.0 and it waits for
        // company until 1.5; its first iteration queues behind request 1's prefill (stage busy
        // until 2.0) and runs [2.0, 2.1]; request 1 joins the group at the boundary, and both
        // share the next two iterations.
        let r = run(&cfg, &[inference(0, 0.0, 3), inference(1, 0.0, 3)]);
        let batches: Vec<usize> = r
            .ops
            .iter()
            .filter(|o| o.kind == OpKind::Decode)
            .map(|o| o.tasks.len())
            .collect();
        assert_eq!(batches, [1, 2, 2, 1]);
        assert!(close(r.outcomes[0].token_times[0], 2.1));
        assert!(close(r.outcomes[1].end_s.unwrap_or(0.0), 2.4));
    }

    #[test]
    fn decode_groups_are_pipelined_across_stages() {
        let cfg = config();
        // Prefills: request 0 on [0,1] then [1,2], request 1 on [1,2] then [2,3]. Request 0's
        // group decodes from 2.0 (stage 1 waits for request 1's prefill until 3.0); request 1
        // opens a second group at 3.0 while the first is in flight, and the two groups
        // alternate on the two stages, 0.1 s each.
        let r = run(&cfg, &[inference(0, 0.0, 3), inference(1, 0.0, 3)]);
        let times = |i: usize| r.outcomes[i].token_times.clone();
        let expect = |got: Vec<f64>, want: [f64; 3]| {
            got.len() == 3 && got.iter().zip(want).all(|(a, b)| close(*a, b))
        };
        assert!(expect(times(0), [3.1, 3.3, 3.5]), "{:?}", times(0));
        assert!(expect(times(1), [3.2, 3.4, 3.6]), "{:?}", times(1));
        assert!(
            r.ops
                .iter()
                .filter(|o| o.kind == OpKind::Decode)
                .all(|o| o.tasks.len() == 1),
            "two groups, never merged"
        );
    }

    /// Defers a training task on its first `times` offers, then runs everything on node 0.
    struct DeferFirst {
        task: TaskId,
        times: u32,
    }
    impl Dispatcher for DeferFirst {
        fn assign(&mut self, _: &View<'_>, task: &Task) -> Assignment {
            if task.id == self.task && self.times > 0 {
                self.times -= 1;
                Assignment::Defer
            } else {
                Assignment::Node(0)
            }
        }
    }

    #[test]
    fn every_deferral_releases_the_next_training_task() {
        let cfg = config();
        // Training 0 is deferred at 0: A-PP's slot passes to training 1, which runs [0,1] on
        // stage 0. At 1.0 A-PP offers the smallest id again, training 0, which is deferred a
        // second time: that deferral too passes the slot on, to training 2 (released at 1.0,
        // stage 0 [1,2]). At 2.0 training 0 is offered a third time and runs. Without the
        // second hand-over nothing would run until request 3's arrival at 5.
        let tasks = [training(0), training(1), training(2), inference(3, 5.0, 0)];
        let mut planner = DeferFirst {
            task: TaskId(0),
            times: 2,
        };
        let r = DiscreteEventEngine::new(&cfg, &tasks).run(&mut planner);
        verify_run(&cfg.bounds(), &tasks, &r).expect("the verifier accepts the run");
        assert!(close(r.outcomes[1].arrival_s, 0.0));
        assert!(close(r.outcomes[2].arrival_s, 1.0), "{:?}", r.outcomes[2]);
        let t0 = &r.outcomes[0];
        assert_eq!(t0.deferrals, 2);
        assert!(close(t0.start_s.unwrap_or(0.0), 2.0), "{t0:?}");
        assert!(r.outcomes.iter().all(|o| o.end_s.is_some()));
    }

    #[test]
    fn app_timeout_releases_the_next_training_task() {
        let mut cfg = config();
        cfg.app_timeout_s = 0.25;
        // A request holds stage 0 in [0,1]; training 0 (released at 0) cannot start its
        // forward before 1.0, so A-PP's timeout releases training 1 at 0.25.
        let tasks = [inference(0, 0.0, 0), training(1), training(2)];
        let r = run(&cfg, &tasks);
        assert!(close(r.outcomes[1].arrival_s, 0.0));
        assert!(
            close(r.outcomes[2].arrival_s, 0.25),
            "{:?}",
            r.outcomes[2].arrival_s
        );
    }

    #[test]
    fn stage_queues_in_ready_or_task_id_order() {
        // Request 0 holds stage 0 in [0,1]; request 2 is ready at 0.1, request 1 at 0.5.
        let tasks = [
            inference(0, 0.0, 0),
            inference(1, 0.5, 0),
            inference(2, 0.1, 0),
        ];
        let mut cfg = config();
        let r = run(&cfg, &tasks);
        // Ready order: 2 runs [1,2] on stage 0, then 1 runs [2,3].
        assert!(close(r.outcomes[2].start_s.unwrap_or(0.0), 1.0));
        assert!(close(r.outcomes[1].start_s.unwrap_or(0.0), 2.0));
        cfg.queue_order = QueueOrder::TaskId;
        let r = run(&cfg, &tasks);
        assert!(close(r.outcomes[1].start_s.unwrap_or(0.0), 1.0));
        assert!(close(r.outcomes[2].start_s.unwrap_or(0.0), 2.0));
    }

    #[test]
    fn an_offloaded_request_reloads_its_kv_for_every_decode_iteration() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        cfg.max_wait_s = 0.5;
        // Request 1 is offloaded on stage 0 at 1.0 (1000 MiB of prompt KV, 1 s at 1000 MiB/s),
        // its forward runs [2,3] there; request 0 has freed stage 1 by then, so stage 1 holds
        // the KV ([3,4]). Each decode iteration first brings the 1000 MiB back on stage 0: 1 s,
        // then 0.1 s of compute per stage.
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 2)]);
        let second = &r.outcomes[1];
        assert!(second.offloaded);
        assert!(
            close(second.prefill_end_s.unwrap_or(0.0), 4.0),
            "{second:?}"
        );
        let reloads = ops_of(&r, OpKind::Reload);
        assert_eq!(reloads.len(), 2, "two iterations, stage 0 only");
        assert!(reloads.iter().all(|r| r.0 == 0));
        assert!(close(reloads[0].1, 4.0) && close(reloads[0].2, 5.0));
        // Iteration 1: stage 0 [4,5.1], stage 1 [5.1,5.2]; the first token's KV (1 MiB) grows
        // on the host too, so iteration 2 reloads 1001 MiB: [5.2,6.301], then [6.301,6.401].
        assert!(
            close(second.token_times[0], 5.2),
            "{:?}",
            second.token_times
        );
        assert!(close(second.end_s.unwrap_or(0.0), 6.401), "{second:?}");
    }
}
