//! The answers to the engine's questions as the search records and replays them, and the
//! dispatchers that give them.

use std::collections::VecDeque;

use super::order::least_backlog;
use crate::colocate::engine::{Assignment, Dispatcher, View};
use crate::colocate::separate::Separate;
use crate::colocate::setup::Setup;
use crate::plan::PlanStatus;
use crate::plan::colocation::Task;

/// One answer to the engine, in the order it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The offered task's node, or its deferral.
    Offer(Assignment),
    /// At a weight-sync point: whether the serving nodes are synced.
    Sync(bool),
}

/// Where weight syncs may run: every `every` completed training tasks, on `serving`.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncPoints {
    /// Completed training tasks between two sync points (`separate_sync_every`, ≥ 1 in use).
    pub every: u64,
    /// SEPARATE's serving (inference) nodes, which a sync updates.
    pub serving: Vec<usize>,
}

impl SyncPoints {
    /// SEPARATE's sync points, when the workload has enough training tasks to reach one.
    pub fn of(setup: &Setup) -> Option<SyncPoints> {
        let separate = Separate::for_setup(setup);
        let training = setup.tasks.iter().filter(|t| t.is_training()).count() as u64;
        (training >= separate.sync_every()).then(|| SyncPoints {
            every: separate.sync_every(),
            serving: separate.serving_nodes().to_vec(),
        })
    }

    /// Whether the `completed`-th completion is a sync point.
    pub fn at(&self, completed: u64) -> bool {
        completed.is_multiple_of(self.every.max(1))
    }
}

/// What the search found: every answer to the engine in order, and how sure it is.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// One answer per question the engine asked, in order; replayed, they rebuild the schedule.
    pub choices: Vec<Step>,
    /// The final objective of the chosen schedule.
    pub objective: f64,
    /// `optimal` when the whole tree was searched, `time_limit` when stopped with the incumbent,
    /// `windowed` for the rolling-window search.
    pub status: PlanStatus,
    /// Search nodes (engine states) expanded.
    pub expanded: u64,
}

/// The search's answers replayed in order (past their end: the least-backlog node, no sync).
pub(super) struct Replay {
    pub(super) steps: VecDeque<Step>,
    pub(super) syncs: Option<SyncPoints>,
}

impl Dispatcher for Replay {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        match self.steps.front() {
            Some(Step::Offer(a)) => {
                let a = *a;
                self.steps.pop_front();
                a
            }
            _ => Assignment::Node(least_backlog(view, task)[0]),
        }
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        let points = self.syncs.as_ref()?;
        if !points.at(completed) {
            return None;
        }
        match self.steps.front() {
            Some(Step::Sync(b)) => {
                let b = *b;
                self.steps.pop_front();
                b.then(|| points.serving.clone())
            }
            _ => None,
        }
    }
}

/// Answers the sync points of one `advance` from a script (past its end: no sync), and
/// records every answer it gave.
pub(super) struct ScriptedSyncs<'p> {
    pub(super) points: &'p SyncPoints,
    pub(super) script: &'p [bool],
    pub(super) given: Vec<bool>,
}

impl Dispatcher for ScriptedSyncs<'_> {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        if !self.points.at(completed) {
            return None;
        }
        let sync = self.script.get(self.given.len()).copied().unwrap_or(false);
        self.given.push(sync);
        sync.then(|| self.points.serving.clone())
    }
}

/// A candidate's dispatcher whose answers are kept as a path of the tree: every offer's
/// answer, and at each sync point whether it synced.
pub(super) struct Recorder<'d> {
    pub(super) inner: &'d mut dyn Dispatcher,
    pub(super) syncs: Option<&'d SyncPoints>,
    pub(super) steps: Vec<Step>,
}

impl Dispatcher for Recorder<'_> {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let answer = self.inner.assign(view, task);
        self.steps.push(Step::Offer(answer));
        answer
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        let answer = self.inner.on_training_done(completed);
        if self.syncs.is_some_and(|p| p.at(completed)) {
            self.steps.push(Step::Sync(answer.is_some()));
        }
        answer
    }
}

/// The search places tasks itself; this only answers the engine's questions (no syncs).
pub(super) struct NoSync;

impl Dispatcher for NoSync {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }
}
