//! The tree walk both searches share: the incumbent, the path to it, and the depth-first
//! exploration with its cuts.

use super::answers::{NoSync, ScriptedSyncs, Step, SyncPoints};
use super::order::branches;
use crate::colocate::bounds::{TaskFloor, partial_floor};
use crate::colocate::engine::{Assignment, DiscreteEventEngine};
use crate::colocate::metrics::objective_term;
use crate::colocate::setup::Setup;
use crate::plan::cancel::Progress;
use crate::plan::colocation::{TaskId, TaskOutcome};
use crate::solver::Deadline;

/// Costs closer than this are ties.
pub(super) const EPS: f64 = 1e-9;

/// The sum of the objective terms of a run's tasks: what a leaf of the tree costs.
pub(super) fn run_cost(setup: &Setup, tau: f64, outcomes: &[TaskOutcome]) -> f64 {
    outcomes
        .iter()
        .map(|o| objective_term(o, tau, &setup.spec.objective))
        .sum()
}

/// What both searches share: the tree walk over the next offers of an engine, the
/// incumbent and the path to it. Depth first, one branch per node (`branches`), a subtree cut
/// when the floor of its partial run reaches the incumbent.
pub(super) struct Tree<'s> {
    pub(super) setup: &'s Setup,
    pub(super) floors: &'s [TaskFloor],
    pub(super) tau: f64,
    /// Sync points searched (the exact search, when the workload has them).
    pub(super) syncs: Option<&'s SyncPoints>,
    pub(super) best: f64,
    pub(super) best_path: Vec<Step>,
    pub(super) path: Vec<Step>,
    /// Search nodes (engine states) expanded.
    pub(super) expanded: u64,
    /// When the search stops expanding, once it has a complete dive.
    deadline: Deadline,
    /// Whether the deadline cut the search.
    pub(super) timed_out: bool,
}

/// Search nodes between two progress reports.
const PROGRESS_EVERY: u64 = 4096;

impl<'s> Tree<'s> {
    pub(super) fn new(
        setup: &'s Setup,
        floors: &'s [TaskFloor],
        tau: f64,
        deadline: Deadline,
    ) -> Self {
        Tree {
            setup,
            floors,
            tau,
            syncs: None,
            best: f64::INFINITY,
            best_path: Vec::new(),
            path: Vec::new(),
            expanded: 0,
            deadline,
            timed_out: false,
        }
    }

    /// Whether the search must stop before expanding another state: after its first
    /// complete dive (or the incumbent it started with), at the deadline.
    fn out_of_time(&mut self) -> bool {
        if !self.best_path.is_empty() && self.deadline.expired() {
            self.timed_out = true;
            return true;
        }
        false
    }

    fn leaf(&mut self, cost: f64) {
        if cost < self.best - EPS {
            self.best = cost;
            self.best_path = self.path.clone();
        }
    }
    /// Walks the tree below `engine` (positioned at `offer`) the way `search` tells leaves
    /// apart and scores them.
    pub(super) fn explore<'a, S: Search<'a>>(
        &mut self,
        search: &mut S,
        engine: DiscreteEventEngine<'a>,
        offer: Option<TaskId>,
    ) {
        if search.is_leaf(self, offer) {
            let cost = search.leaf_cost(self, &engine);
            self.leaf(cost);
            return;
        }
        // Not reached: the end of the run is a leaf (`is_leaf`).
        let Some(id) = offer else { return };
        let floor = partial_floor(self.setup, self.floors, &engine, S::PLACED_ONLY);
        if floor >= self.best - EPS {
            return;
        }
        if self.out_of_time() {
            return;
        }
        self.expanded += 1;
        if self.expanded.is_multiple_of(PROGRESS_EVERY) {
            self.setup.cancel.report(&Progress {
                planner: "ilp",
                done: self.expanded,
                total: 0,
                best: self.best.is_finite().then_some(self.best),
                bound: None,
            });
        }
        let task = self.setup.tasks[id.index()];
        let at = engine.now().to_bits();
        for answer in branches(&engine, &task, S::DEFERS) {
            let mut placed = engine.clone();
            placed.place(id, answer, None);
            self.path.push(Step::Offer(answer));
            if let Assignment::Node(n) = answer {
                search.enter(n, id, at);
            }
            match self.syncs {
                Some(points) => self.expand_syncs(search, &placed, points, &[]),
                None => {
                    let next = placed.advance(&mut NoSync);
                    self.explore(search, placed, next);
                }
            }
            if let Assignment::Node(_) = answer {
                search.leave();
            }
            self.path.pop();
        }
    }

    /// Runs `placed` to its next offer once per answer at each sync point on the way: the
    /// run with every sync point past `script` answered "no", then, for each of those
    /// points, the runs that answer "yes" there (each searched the same way). Every string
    /// of answers is run once.
    fn expand_syncs<'a, S: Search<'a>>(
        &mut self,
        search: &mut S,
        placed: &DiscreteEventEngine<'a>,
        points: &SyncPoints,
        script: &[bool],
    ) {
        let mut child = placed.clone();
        let mut syncs = ScriptedSyncs {
            points,
            script,
            given: Vec::new(),
        };
        let next = child.advance(&mut syncs);
        let given = syncs.given;
        for &b in &given {
            self.path.push(Step::Sync(b));
        }
        self.explore(search, child, next);
        for _ in &given {
            self.path.pop();
        }
        for j in script.len()..given.len() {
            let mut flipped = given[..j].to_vec();
            flipped.push(true);
            self.expand_syncs(search, placed, points, &flipped);
        }
    }
}

/// What tells the exact search and a window apart: which states are leaves and what they
/// cost, which tasks the floor counts, and what is tracked along the path. Each search keeps
/// its own state beside the tree; the walk (`Tree::explore`) is the same.
pub(super) trait Search<'a> {
    /// Whether the floor counts only the tasks placed so far (a window's leaves drain those
    /// alone).
    const PLACED_ONLY: bool;

    /// Whether deferral is searched (a window scores placed tasks only, so it would defer
    /// for free).
    const DEFERS: bool;

    /// Whether the state at `offer` is a leaf of `tree`. The end of the run (`offer` is
    /// `None`) must be one: `explore` has nothing to branch on there.
    fn is_leaf(&self, tree: &Tree<'_>, offer: Option<TaskId>) -> bool;

    /// What the leaf `engine` costs.
    fn leaf_cost(&mut self, tree: &Tree<'_>, engine: &DiscreteEventEngine<'a>) -> f64;

    /// Task `id` goes to node `n` on the current path (offered at `at`, as bits).
    fn enter(&mut self, _n: usize, _id: TaskId, _at: u64) {}

    /// Undoes the last `enter`.
    fn leave(&mut self) {}
}
