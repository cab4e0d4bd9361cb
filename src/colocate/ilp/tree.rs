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

    fn leaf(&mut self, cost: f64) {
        if cost < self.best - EPS {
            self.best = cost;
            self.best_path = self.path.clone();
        }
    }
}

/// What tells the exact search and a window apart: which states are leaves and what they
/// cost, which tasks the floor counts, and what is tracked along the path. Each search keeps
/// its own state; the walk (`explore`) is the same.
pub(super) trait Search<'s, 'a> {
    /// Whether the floor counts only the tasks placed so far (a window's leaves drain those
    /// alone).
    const PLACED_ONLY: bool;

    /// Whether deferral is searched (a window scores placed tasks only, so it would defer
    /// for free).
    const DEFERS: bool;

    fn tree(&mut self) -> &mut Tree<'s>;

    /// The cost of `engine` at `offer` when it is a leaf, else `None`. The end of the run
    /// (`offer` is `None`) must be a leaf: `explore` has nothing to branch on there.
    fn leaf_cost(&mut self, engine: &DiscreteEventEngine<'a>, offer: Option<TaskId>)
    -> Option<f64>;

    /// Whether the search must stop before expanding another state: after its first
    /// complete dive (or the incumbent it started with), at the deadline.
    fn out_of_time(&mut self) -> bool {
        let tree = self.tree();
        if !tree.best_path.is_empty() && tree.deadline.expired() {
            tree.timed_out = true;
            return true;
        }
        false
    }

    /// Task `id` goes to node `n` on the current path (offered at `at`, as bits).
    fn enter(&mut self, _n: usize, _id: TaskId, _at: u64) {}

    /// Undoes the last `enter`.
    fn leave(&mut self) {}

    fn explore(&mut self, engine: DiscreteEventEngine<'a>, offer: Option<TaskId>) {
        if let Some(cost) = self.leaf_cost(&engine, offer) {
            self.tree().leaf(cost);
            return;
        }
        // Not reached: the end of the run is a leaf (`leaf_cost`).
        let Some(id) = offer else { return };
        let tree = self.tree();
        let floor = partial_floor(tree.setup, tree.floors, &engine, Self::PLACED_ONLY);
        if floor >= tree.best - EPS {
            return;
        }
        if self.out_of_time() {
            return;
        }
        let tree = self.tree();
        tree.expanded += 1;
        if tree.expanded % PROGRESS_EVERY == 0 {
            tree.setup.cancel.report(&Progress {
                planner: "ilp",
                done: tree.expanded,
                total: 0,
                best: tree.best.is_finite().then_some(tree.best),
                bound: None,
            });
        }
        let task = tree.setup.tasks[id.index()];
        let at = engine.now().to_bits();
        for answer in branches(&engine, &task, Self::DEFERS) {
            let mut placed = engine.clone();
            placed.place(id, answer, None);
            self.tree().path.push(Step::Offer(answer));
            if let Assignment::Node(n) = answer {
                self.enter(n, id, at);
            }
            match self.tree().syncs {
                Some(points) => self.expand_syncs(&placed, points, &[]),
                None => {
                    let next = placed.advance(&mut NoSync);
                    self.explore(placed, next);
                }
            }
            if let Assignment::Node(_) = answer {
                self.leave();
            }
            self.tree().path.pop();
        }
    }

    /// Runs `placed` to its next offer once per answer at each sync point on the way: the
    /// run with every sync point past `script` answered "no", then, for each of those
    /// points, the runs that answer "yes" there (each searched the same way). Every string
    /// of answers is run once.
    fn expand_syncs(
        &mut self,
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
            self.tree().path.push(Step::Sync(b));
        }
        self.explore(child, next);
        for _ in &given {
            self.tree().path.pop();
        }
        for j in script.len()..given.len() {
            let mut flipped = given[..j].to_vec();
            flipped.push(true);
            self.expand_syncs(placed, points, &flipped);
        }
    }
}
