//! `ilp`: the best node assignment of every task under the engine's own rules (DESIGN §10.3).
//!
//! The engine is deterministic given the node of each task in the order it offers them, so
//! the schedules an assignment-only planner can produce are exactly the leaves of a tree with
//! one level per offered task and one branch per node. `ilp` searches that tree depth first,
//! cloning the engine at each offer (the walk, `Search::explore`, is shared):
//! - the first dive follows the least-backlog node, which gives the first incumbent;
//! - a subtree is cut when the floor of its partial run (finished tasks at their score, the
//!   others at their floor from now, `bounds::partial_floor`) reaches the incumbent;
//! - nodes whose state is identical (never used, or drained to the same state) are
//!   interchangeable: only the first of them is tried.
//!
//! Two searches walk it, each with its own state: `exact.rs` (up to `ilp_exact_max_tasks`
//! tasks; `optimal`, or `time_limit` with the incumbent) and `windowed.rs` (above; rolling
//! windows of `ilp_window` offers, status `windowed`).
//!
//! Its role: the optimum of the assignment space, beside the heuristics. Its row is a schedule
//! like theirs, with a gap against the proven lower bound; the bound itself comes from
//! `colocate::bounds`, never from `ilp` (an incumbent is not a bound). Deferral and
//! SEPARATE's weight syncs are not assignments, so `lemix` and `separate` (when it syncs) may
//! leave this space and beat it.

mod exact;
mod windowed;

use super::bounds::{TaskFloor, partial_floor, task_floors};
use super::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use super::metrics::objective_term;
use super::planner::{ColocationPlanner, PlannerRun};
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskId};
use crate::plan::error::PlanningError;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::Deadline;

/// Costs closer than this are ties.
const EPS: f64 = 1e-9;

/// The `ilp` planner.
pub struct Ilp;

impl ColocationPlanner for Ilp {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::AssignmentOptimum
    }

    fn run(&self, setup: &Setup, _horizon_s: f64) -> Result<PlannerRun, PlanningError> {
        let outcome = solve(setup);
        let mut replay = FixedNodes {
            nodes: outcome.choices,
            next: 0,
        };
        let run = DiscreteEventEngine::new(&setup.config, &setup.tasks).run(&mut replay);
        Ok(PlannerRun::Ran {
            run,
            status: outcome.status,
            bound: None,
        })
    }
}

/// What the search found: the node of each offer in order, and how sure it is.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    pub choices: Vec<usize>,
    /// The final objective of the chosen schedule.
    pub objective: f64,
    pub status: PlanStatus,
    /// Search nodes (engine states) expanded.
    pub expanded: u64,
}

/// The engine's offers replayed: the n-th offered task goes to the n-th node chosen.
struct FixedNodes {
    nodes: Vec<usize>,
    next: usize,
}

impl Dispatcher for FixedNodes {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let n = self
            .nodes
            .get(self.next)
            .copied()
            .unwrap_or_else(|| least_backlog(view, task)[0]);
        self.next += 1;
        Assignment::Node(n)
    }
}

/// The search places tasks itself; this only answers the engine's questions (no syncs).
struct NoSync;

impl Dispatcher for NoSync {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }
}

/// Nodes in the order the search tries them: the least busy first (latest stage backlog,
/// then memory, then index), one of each set of interchangeable nodes.
fn least_backlog(view: &View<'_>, _task: &Task) -> Vec<usize> {
    let mut nodes: Vec<(f64, f64, usize)> = (0..view.config.nodes)
        .map(|n| {
            let end = view
                .stage_backlog_end(n)
                .into_iter()
                .fold(view.now, f64::max);
            (end, view.memory_utilization(n), n)
        })
        .collect();
    nodes.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    nodes.into_iter().map(|(_, _, n)| n).collect()
}

fn branches(engine: &DiscreteEventEngine<'_>, task: &Task) -> Vec<usize> {
    let ordered = least_backlog(&engine.view(), task);
    let mut kept: Vec<usize> = Vec::new();
    for n in ordered {
        if !kept.iter().any(|&k| engine.interchangeable(k, n)) {
            kept.push(n);
        }
    }
    kept
}

/// What both searches share: the tree walk over the next offers of an engine, the
/// incumbent and the path to it. Depth first, one branch per node (`branches`), a subtree cut
/// when the floor of its partial run reaches the incumbent.
struct Tree<'s> {
    setup: &'s Setup,
    floors: &'s [TaskFloor],
    tau: f64,
    best: f64,
    best_path: Vec<usize>,
    path: Vec<usize>,
    /// Search nodes (engine states) expanded.
    expanded: u64,
}

impl<'s> Tree<'s> {
    fn new(setup: &'s Setup, floors: &'s [TaskFloor], tau: f64) -> Self {
        Tree {
            setup,
            floors,
            tau,
            best: f64::INFINITY,
            best_path: Vec::new(),
            path: Vec::new(),
            expanded: 0,
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
trait Search<'s, 'a> {
    /// Whether the floor counts only the tasks placed so far (a window's leaves drain those
    /// alone).
    const PLACED_ONLY: bool;

    fn tree(&mut self) -> &mut Tree<'s>;

    /// The cost of `engine` at `offer` when it is a leaf, else `None`. The end of the run
    /// (`offer` is `None`) must be a leaf: `explore` has nothing to branch on there.
    fn leaf_cost(&mut self, engine: &DiscreteEventEngine<'a>, offer: Option<TaskId>)
    -> Option<f64>;

    /// Whether the search must stop before expanding another state.
    fn out_of_time(&mut self) -> bool;

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
        let task = tree.setup.tasks[id.index()];
        for n in branches(&engine, &task) {
            let mut child = engine.clone();
            child.place(id, Assignment::Node(n), None);
            let next = child.advance(&mut NoSync);
            self.tree().path.push(n);
            self.enter(n, id, engine.now().to_bits());
            self.explore(child, next);
            self.leave();
            self.tree().path.pop();
        }
    }
}

/// Runs the exact search, or the windowed one above `ilp_exact_max_tasks`.
pub fn solve(setup: &Setup) -> SearchOutcome {
    let planners = &setup.spec.planners;
    let floors = task_floors(setup);
    let tau = (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12);
    // The time limit counts from here, the engine's set-up included.
    let deadline = Deadline::after(planners.ilp_time_limit_s);
    let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
    let first = engine.advance(&mut NoSync);
    if setup.tasks.len() <= planners.ilp_exact_max_tasks.max(0) as usize {
        return exact::search(setup, &floors, tau, engine, first, deadline);
    }
    windowed::search(setup, &floors, tau, engine, first, planners.window_offers())
}

/// The best objective over every node assignment, by enumerating them all (no pruning, no
/// symmetry): the oracle of the search on tiny instances.
pub fn brute_force(setup: &Setup) -> f64 {
    let tau = (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12);
    fn walk(
        setup: &Setup,
        tau: f64,
        mut engine: DiscreteEventEngine<'_>,
        offer: Option<TaskId>,
    ) -> f64 {
        let Some(id) = offer else {
            return engine
                .outcomes()
                .iter()
                .map(|o| objective_term(o, tau, &setup.spec.objective))
                .sum();
        };
        let _ = &mut engine;
        (0..setup.config.nodes)
            .map(|n| {
                let mut child = engine.clone();
                child.place(id, Assignment::Node(n), None);
                let next = child.advance(&mut NoSync);
                walk(setup, tau, child, next)
            })
            .fold(f64::INFINITY, f64::min)
    }
    let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
    let first = engine.advance(&mut NoSync);
    walk(setup, tau, engine, first)
}
