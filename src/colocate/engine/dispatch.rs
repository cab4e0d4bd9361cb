//! The boundary between the engine and the planners: what a planner may read of the running
//! simulation (`View`) and what it answers (`Assignment`). Planners see no engine internals,
//! so a planner file depends on this file and `EngineConfig` (`view.config`) alone. Handles no event: the planner answers the
//! `Arrive` that `advance` hands out.

use super::config::EngineConfig;
use super::state::Node;
use crate::plan::colocation::{Task, TaskId};
use crate::plan::explain_colocation::OfferRecord;

/// A planner's answer for an arriving task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    /// Run the task on this node (index in `0..nodes`).
    Node(usize),
    /// Deprioritise a training task: offer it again at the next inference arrival.
    Defer,
}

/// What planners may read of the running simulation.
pub struct View<'a> {
    /// Simulated time of the decision, in seconds since the start of the run.
    pub now: f64,
    /// The run's fixed parameters.
    pub config: &'a EngineConfig,
    /// Every task of the run, indexed by `TaskId`.
    pub tasks: &'a [Task],
    pub(super) nodes: &'a [Node],
    /// Arrival time (s) of the next inference request after `now`, if any is still to come; a
    /// training task may only be deferred while one is.
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

    /// From now on, keeps a record of every offer: what the planner compared and what it
    /// answered (`coplan explain --task`). Off by default, so that a plain run keeps nothing;
    /// recording changes no answer. Returns whether this dispatcher keeps records.
    fn record_offers(&mut self) -> bool {
        false
    }

    /// The offer records kept since `record_offers`, in offer order (emptied).
    fn take_offer_records(&mut self) -> Vec<OfferRecord> {
        Vec::new()
    }
}

/// Answers nothing: after arrivals close, no task is offered and no sync is asked for.
pub(super) struct NoDispatch;

impl Dispatcher for NoDispatch {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }
}
