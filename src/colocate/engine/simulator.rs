//! The engine's state and the API planners and searches drive (`run`, `advance`, `place`,
//! `view`, `drain_node`, …; `quiet` and the history in `recording.rs`). It handles `Arrive`:
//! `advance` hands the arriving task out, and `place` carries out the planner's answer.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use super::config::EngineConfig;
use super::dispatch::{Assignment, Dispatcher, NoDispatch, View};
use super::event::{Event, EventKey};
use super::state::{Held, Node, Pending, Stage};
use crate::plan::colocation::{ColocationRun, OpLog, Task, TaskId, TaskKind, TaskOutcome};

/// The discrete-event simulator of one co-location run: node timelines, memory, decode batches and
/// A-PP training release, driven by a planner's answers (see the module documentation).
#[derive(Clone)]
pub struct DiscreteEventEngine<'a> {
    pub(super) cfg: &'a EngineConfig,
    pub(super) tasks: &'a [Task],
    pub(super) nodes: Vec<Node>,
    /// Every event but the inference arrivals, by (time, sequence number).
    pub(super) events: BinaryHeap<Reverse<(EventKey, Event)>>,
    /// The inference arrivals, known from the start, as (time, sequence number, task) sorted
    /// the way the heap would pop them; `next_arrival` is the first not yet popped. Keeping
    /// them out of the heap keeps it small (tens of events instead of every request of a
    /// trace), and they are shared by an engine's clones.
    pub(super) arrivals: Arc<[(f64, u64, TaskId)]>,
    pub(super) next_arrival: usize,
    /// How many arrivals lie before the first whose time is a positive NaN (those sort last
    /// and are never "after now"), so that the next arrival after a time is a binary search.
    pub(super) arrivals_ordered: usize,
    pub(super) seq: u64,
    pub(super) now: f64,
    pub(super) ops: OpLog,
    pub(super) outcomes: Vec<TaskOutcome>,
    pub(super) held: Held,
    /// Tokens decoded so far per inference task.
    pub(super) generated: Vec<u32>,
    pub(super) next_iteration: u64,
    pub(super) fresh_training: VecDeque<TaskId>,
    pub(super) deferred: VecDeque<TaskId>,
    pub(super) training_done: u64,
    /// The planner's rank of each task, recorded when it is assigned.
    pub(super) ranks: Vec<Option<f64>>,
    /// Per training task: offers so far, and whether the current offer still holds A-PP's
    /// slot (the next task is released when it closes).
    pub(super) offers: Vec<u32>,
    pub(super) slot_open: Vec<bool>,
    /// Set by `close_arrivals`: no task arrives any more (a search's look-ahead drains what
    /// was placed).
    pub(super) arrivals_closed: bool,
    /// Whether ops and token times are recorded (a search's clones need outcomes only).
    pub(super) recording: bool,
    /// Per GPU (node-major): the (time, sequence number) at which its running decode op ends,
    /// when that op's completion is kept out of the heap (see `catch_up`).
    pub(super) pending_decode: Vec<Option<EventKey>>,
    /// The nodes with a completion in `pending_decode` (each once; a node may stay listed
    /// with none until the next catch-up).
    pub(super) pending_nodes: Vec<usize>,
    pub(super) pending_listed: Vec<bool>,
    /// Events pushed onto the heap so far (a catch-up re-reads the heap's first after one).
    pub(super) pushes: u64,
}

/// See `DiscreteEventEngine::stage_load`.
#[derive(Debug, Clone, PartialEq)]
pub struct StageLoad {
    /// Time (s) at which the stage's running op ends; `now` when it is idle.
    pub busy_until: f64,
    /// (task, is backward) of the op running.
    pub running: Option<(TaskId, bool)>,
    /// (task, is backward, duration) of each queued op.
    pub queued: Vec<(TaskId, bool, f64)>,
}

impl<'a> DiscreteEventEngine<'a> {
    /// An engine at time 0 with every stage holding only the model weights and no task yet arrived.
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
                    released_s: None,
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

    /// From now on no task arrives: the tasks placed so far run to their end. A search's
    /// look-ahead uses it to score the tasks it has placed.
    pub fn close_arrivals(&mut self) {
        self.arrivals_closed = true;
        self.fresh_training.clear();
        self.deferred.clear();
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

    /// Current simulated time, in seconds since the start of the run.
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

    /// The members of each decode group of a node. A group's members stay in it until they
    /// finish (or are dropped), and each of its iterations serves all of them at once.
    pub fn decode_groups(&self, node: usize) -> impl Iterator<Item = &[TaskId]> {
        self.nodes[node]
            .decode
            .groups
            .iter()
            .map(|g| g.members.as_slice())
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

    /// Carries out the decision for the task `advance` returned: its node (or a training
    /// task's deferral) and its stage-queue rank.
    pub fn place(&mut self, id: TaskId, choice: Assignment, rank: Option<f64>) {
        let task = self.tasks[id.index()];
        let node = match choice {
            Assignment::Node(n) if n < self.cfg.nodes => n,
            // A deferred task is offered again at a later inference arrival, so deferral
            // needs one ahead: otherwise the task would never run.
            Assignment::Defer
                if task.is_training() && self.next_inference_arrival(self.now).is_some() =>
            {
                self.defer(id);
                return;
            }
            // A planner answering out of range, deferring inference, or deferring training
            // with no inference arrival ahead: node 0, by rule.
            _ => 0,
        };
        self.outcomes[id.index()].node = Some(node);
        self.ranks[id.index()] = rank;
        if task.is_training() {
            self.end_batch_wait(node);
        } else {
            self.offer_deferred();
        }
        let (b, l) = task.forward_shape();
        let estimate = self.cfg.latency.forward_s(b, l);
        self.enqueue(node, 0, Pending::Forward(id), estimate);
    }
}
