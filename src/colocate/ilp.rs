//! `ilp`: the best node assignment of every task under the engine's own rules (DESIGN §10.3).
//!
//! The engine is deterministic given the node of each task in the order it offers them, so
//! the schedules an assignment-only planner can produce are exactly the leaves of a tree with
//! one level per offered task and one branch per node. `ilp` searches that tree depth first,
//! cloning the engine at each offer:
//! - the first dive follows the least-backlog node, which gives the first incumbent;
//! - a subtree is cut when the floor of its partial run (finished tasks at their score, the
//!   others at their floor from now, `bounds::partial_floor`) reaches the incumbent;
//! - nodes whose state is identical (never used, or drained to the same state) are
//!   interchangeable: only the first of them is tried.
//!
//! Up to `ilp_exact_max_tasks` tasks the search is complete and the result is `optimal` when
//! it ends within `ilp_time_limit_s` (else `time_limit`, with the incumbent). Above, it runs
//! rolling windows: from the engine's state, the next K offers are searched exactly, each leaf
//! scored by draining the placed tasks with no further arrivals, and the first ⌈K / 2⌉
//! choices are kept (status `windowed`; no time limit applies, so the schedule does not depend
//! on the machine). Deferral and SEPARATE's weight syncs are not
//! assignments, so `lemix` and `separate` (when it syncs) may leave this space.

use std::collections::HashMap;

use super::bounds::{TaskFloor, partial_floor, task_floors};
use super::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use super::metrics::objective_term;
use super::planner::{ColocationPlanner, PlannerRun};
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskId};
use crate::plan::error::PlanningError;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::Deadline;

/// Drained cost of a node by (node, version, window placements on it).
type NodeCosts = HashMap<(usize, u64, Vec<(TaskId, u64)>), f64>;

/// Costs closer than this are ties.
const EPS: f64 = 1e-9;

/// The `ilp` planner.
pub struct Ilp;

impl ColocationPlanner for Ilp {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::BoundReference
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

/// Depth-first branch and bound over the next offers of `engine` (positioned at the offer of
/// `task`). `depth_left = None` searches to the end of the run; `Some(k)` stops after k offers
/// and scores the leaf by draining the placed tasks.
struct Search<'s, 'a> {
    setup: &'s Setup,
    floors: &'s [TaskFloor],
    tau: f64,
    deadline: Deadline,
    best: f64,
    best_path: Vec<usize>,
    path: Vec<usize>,
    expanded: u64,
    timed_out: bool,
    window: Option<usize>,
    /// In a window: (node, task, offer time) of each placement on the current path.
    placed: Vec<(usize, TaskId, u64)>,
    /// A window leaf's cost per node, by the node's version (placements committed on it so
    /// far) and what the window placed on it: a node's drain depends on nothing else once
    /// arrivals close. Kept across windows.
    node_costs: NodeCosts,
    /// Per node, the number of rounds that committed a placement on it.
    versions: Vec<u64>,
    _engine: std::marker::PhantomData<DiscreteEventEngine<'a>>,
}

impl<'s, 'a> Search<'s, 'a> {
    fn new(
        setup: &'s Setup,
        floors: &'s [TaskFloor],
        tau: f64,
        window: Option<usize>,
        deadline: Deadline,
    ) -> Self {
        Search {
            setup,
            floors,
            tau,
            deadline,
            best: f64::INFINITY,
            best_path: Vec::new(),
            path: Vec::new(),
            expanded: 0,
            timed_out: false,
            window,
            placed: Vec::new(),
            node_costs: HashMap::new(),
            versions: vec![0; setup.config.nodes],
            _engine: std::marker::PhantomData,
        }
    }

    fn score(&self, engine: &DiscreteEventEngine<'a>, placed_only: bool) -> f64 {
        engine
            .outcomes()
            .iter()
            .filter(|o| !placed_only || o.node.is_some() || o.dropped)
            .map(|o| objective_term(o, self.tau, &self.setup.spec.objective))
            .sum()
    }

    fn leaf(&mut self, cost: f64) {
        if cost < self.best - EPS {
            self.best = cost;
            self.best_path = self.path.clone();
        }
    }

    fn explore(&mut self, engine: DiscreteEventEngine<'a>, offer: Option<TaskId>) {
        let placed_only = self.window.is_some();
        let Some(id) = offer else {
            let cost = if placed_only {
                self.window_leaf(&engine)
            } else {
                self.score(&engine, false)
            };
            self.leaf(cost);
            return;
        };
        if self.window.is_some_and(|k| self.path.len() >= k) {
            let cost = self.window_leaf(&engine);
            self.leaf(cost);
            return;
        }
        let floor = partial_floor(self.setup, self.floors, &engine, placed_only);
        if floor >= self.best - EPS {
            return;
        }
        // After the first complete dive, the time limit stops the search.
        if !self.best_path.is_empty() && self.deadline.expired() {
            self.timed_out = true;
            return;
        }
        self.expanded += 1;
        let task = self.setup.tasks[id.index()];
        for n in branches(&engine, &task) {
            let mut child = engine.clone();
            child.place(id, Assignment::Node(n), None);
            let next = child.advance(&mut NoSync);
            self.path.push(n);
            self.placed.push((n, id, engine.now().to_bits()));
            self.explore(child, next);
            self.placed.pop();
            self.path.pop();
        }
    }

    /// The cost of the placed tasks when nothing more arrives: node by node, each node
    /// drained once per distinct set of window placements on it.
    fn window_leaf(&mut self, engine: &DiscreteEventEngine<'a>) -> f64 {
        let mut cost = 0.0;
        for n in 0..self.setup.config.nodes {
            let key: Vec<(TaskId, u64)> = self
                .placed
                .iter()
                .filter(|p| p.0 == n)
                .map(|p| (p.1, p.2))
                .collect();
            let key = (n, self.versions[n], key);
            let node_cost = match self.node_costs.get(&key) {
                Some(c) => *c,
                None => {
                    let mut drained = engine.clone();
                    drained.drain_node(n);
                    let c = drained
                        .outcomes()
                        .iter()
                        .filter(|o| o.node == Some(n))
                        .map(|o| objective_term(o, self.tau, &self.setup.spec.objective))
                        .sum();
                    self.node_costs.insert(key, c);
                    c
                }
            };
            cost += node_cost;
        }
        cost
    }
}

/// Runs the exact search, or the windowed one above `ilp_exact_max_tasks`.
pub fn solve(setup: &Setup) -> SearchOutcome {
    let planners = &setup.spec.planners;
    let floors = task_floors(setup);
    let tau = (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12);
    let deadline = Deadline::after(planners.ilp_time_limit_s);
    let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
    let first = engine.advance(&mut NoSync);
    if setup.tasks.len() <= planners.ilp_exact_max_tasks.max(0) as usize {
        let mut search = Search::new(setup, &floors, tau, None, deadline);
        engine.quiet();
        search.explore(engine, first);
        return SearchOutcome {
            choices: search.best_path,
            objective: search.best,
            status: if search.timed_out {
                PlanStatus::TimeLimit
            } else {
                PlanStatus::Optimal
            },
            expanded: search.expanded,
        };
    }
    let k = planners.ilp_window.clamp(1, 12) as usize;
    windowed(setup, &floors, tau, engine, first, k)
}

/// The rolling-window search from `engine` (positioned at `first`), windows of `k` offers.
fn windowed<'a>(
    setup: &Setup,
    floors: &[TaskFloor],
    tau: f64,
    mut engine: DiscreteEventEngine<'a>,
    first: Option<TaskId>,
    k: usize,
) -> SearchOutcome {
    let keep = k.div_ceil(2);
    let mut choices = Vec::with_capacity(setup.tasks.len());
    let mut expanded = 0;
    let mut offer = first;
    let mut node_costs = NodeCosts::new();
    let mut versions = vec![0u64; setup.config.nodes];
    while let Some(id) = offer {
        // No clock here: every window is searched to the end, so the schedule is the same on
        // every machine (the cost is linear in the tasks).
        let window = k;
        let history = engine.take_history();
        let mut search = Search::new(
            setup,
            floors,
            tau,
            Some(window),
            Deadline::after(f64::INFINITY),
        );
        search.node_costs = std::mem::take(&mut node_costs);
        search.versions = versions.clone();
        let mut root = engine.clone();
        root.quiet();
        search.explore(root, Some(id));
        engine.restore_history(history);
        expanded += search.expanded;
        let path = search.best_path;
        node_costs = search.node_costs;
        let mut next = Some(id);
        let mut committed: Vec<Vec<(TaskId, u64)>> = vec![Vec::new(); setup.config.nodes];
        for &n in path.iter().take(keep.min(window).max(1)) {
            let Some(id) = next else { break };
            committed[n].push((id, engine.now().to_bits()));
            engine.place(id, Assignment::Node(n), None);
            choices.push(n);
            next = engine.advance(&mut NoSync);
        }
        // A node's drain after this round's placements is the one the search scored for
        // them: it becomes the node's next version with nothing placed yet.
        for (n, placed) in committed.into_iter().enumerate() {
            if placed.is_empty() {
                continue;
            }
            let scored = node_costs.get(&(n, versions[n], placed)).copied();
            versions[n] += 1;
            if let Some(c) = scored {
                node_costs.insert((n, versions[n], Vec::new()), c);
            }
        }
        node_costs.retain(|(n, v, _), _| versions[*n] == *v);
        if path.is_empty() {
            // Nothing scored (cannot happen: every window has a leaf); place greedily.
            let n = least_backlog(&engine.view(), &setup.tasks[id.index()])[0];
            engine.place(id, Assignment::Node(n), None);
            choices.push(n);
            next = engine.advance(&mut NoSync);
        }
        offer = next;
    }
    let objective = engine
        .outcomes()
        .iter()
        .map(|o| objective_term(o, tau, &setup.spec.objective))
        .sum();
    SearchOutcome {
        choices,
        objective,
        status: PlanStatus::Windowed,
        expanded,
    }
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
