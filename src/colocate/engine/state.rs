//! The state of a node's stages and decode batch, and what each task holds there: the types
//! the engine's files share.

use std::collections::VecDeque;

use crate::plan::colocation::{LoggedTasks, OpKind, TaskId};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Pending {
    Forward(TaskId),
    Backward(TaskId),
    /// Decode iteration `iter` of the node's batch.
    Decode(u64),
    Sync,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Queued {
    pub(super) op: Pending,
    pub(super) ready_at: f64,
    /// The planner's rank of the op's task, when it gives one.
    pub(super) rank: Option<f64>,
    /// The op's task id (a decode iteration: its batch's smallest; a sync: before all), for
    /// `queue_order = "task-id"`.
    pub(super) task_key: i64,
    pub(super) seq: u64,
    pub(super) estimate_s: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Running {
    /// Also its tasks: a forward's or backward's one, a decode iteration's batch (its group
    /// holds it), a sync's none.
    pub(super) op: Pending,
    pub(super) kind: OpKind,
    pub(super) start_s: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Stage {
    pub(super) busy_until: f64,
    pub(super) running: Option<Running>,
    pub(super) queue: Vec<Queued>,
    /// Σ of the queued ops' estimates, kept with the queue (planners read it per decision).
    pub(super) queued_s: f64,
    pub(super) mem_mib: f64,
    /// KV reserved on this stage for the tokens admitted requests have still to decode, so
    /// that decode growth never takes a stage past κ · GPU memory.
    pub(super) reserved_mib: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Node {
    pub(super) stages: Vec<Stage>,
    pub(super) decode: Decode,
    /// Training tasks reflected in this node's serving replica.
    pub(super) reflected: u64,
    /// The earliest wake-up scheduled for this node, so that a blocked queue re-examined by
    /// every event schedules one wake-up, not one per examination.
    pub(super) wake_at: Option<f64>,
}

/// The requests of one decode micro-batch: each of its iterations serves all of them (at
/// most `batch_max`), one iteration in flight at a time.
#[derive(Debug, Clone, Default)]
pub(super) struct DecodeGroup {
    pub(super) members: Vec<TaskId>,
    pub(super) in_flight: Option<u64>,
    /// Of the iteration in flight, fixed at its launch (its members and their tokens do not
    /// change until it ends), so that each of its stage ops reads them instead of recomputing.
    /// Derived, and stale while no iteration is in flight: not part of a group's state.
    pub(super) flight: Flight,
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
pub(super) struct Flight {
    pub(super) context_tokens: u64,
    pub(super) task_key: i64,
    pub(super) reloads: bool,
    /// The batch as the op log stores it, once its first op is logged (the stage ops of the
    /// iteration share it).
    pub(super) logged: Option<LoggedTasks>,
}

/// Continuous batching on a node: up to one group per pipeline stage, so that while one
/// group's iteration is on stage s another's can run on stage s − 1 (pipelined decode).
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Decode {
    pub(super) waiting: VecDeque<TaskId>,
    pub(super) groups: Vec<DecodeGroup>,
    pub(super) collect_until: Option<f64>,
}

impl Decode {
    pub(super) fn active(&self) -> usize {
        self.groups.iter().map(|g| g.members.len()).sum()
    }
}

/// Index of (task, stage) in the flat per-task vectors of `Held`.
pub(super) fn slot(stages: usize, id: TaskId, stage: usize) -> usize {
    id.index() * stages + stage
}

/// Per task, per stage (flat, task-major: cloning an engine copies three vectors, not one
/// per task): memory held, KV reserved for the tokens a request has still to decode
/// (released as they come), and MiB moved to the host by an offload.
#[derive(Debug, Clone, Default)]
pub(super) struct Held {
    pub(super) mib: Vec<f64>,
    pub(super) reserved: Vec<f64>,
    pub(super) offloaded: Vec<f64>,
}
