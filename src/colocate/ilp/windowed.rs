//! The rolling-window search, above `ilp_exact_max_tasks`: from the engine's state the next
//! K = `ilp_window` offers are searched exactly, each leaf scored by draining the tasks placed
//! so far with no further arrival, and the first ⌈K / 2⌉ choices are kept (status
//! `windowed`). Its state is its own: the placements on the current path and the drained
//! cost of each node, kept across windows. Within `ilp_time_limit_s` its schedule is the
//! same on every machine; when the limit fires, each window from then on keeps its first
//! dive (the least-backlog nodes) and the status is `time_limit`, so a run never takes much
//! longer than the limit whatever the window and the tasks.

use crate::plan::cancel::Progress;
use std::collections::HashMap;

use super::answers::{NoSync, SearchOutcome, Step};
use super::order::least_backlog;
use super::tree::{Search, Tree};
use crate::colocate::bounds::TaskFloor;
use crate::colocate::engine::{Assignment, DiscreteEventEngine};
use crate::colocate::metrics::objective_term;
use crate::colocate::setup::Setup;
use crate::plan::PlanStatus;
use crate::plan::colocation::TaskId;
use crate::solver::Deadline;

/// Drained cost of a node by (node, version, window placements on it).
type NodeCosts = HashMap<(usize, u64, Vec<(TaskId, u64)>), f64>;

/// One window's search, beside its tree.
struct WindowSearch {
    /// K: offers per window.
    offers: usize,
    /// (node, task, offer time) of each placement on the current path.
    placed: Vec<(usize, TaskId, u64)>,
    /// A leaf's cost per node, by the node's version (placements committed on it so far) and
    /// what the window placed on it: a node's drain depends on nothing else once arrivals
    /// close. Kept across windows.
    node_costs: NodeCosts,
    /// Per node, the number of rounds that committed a placement on it.
    versions: Vec<u64>,
}

impl WindowSearch {
    /// The cost of the placed tasks when nothing more arrives: node by node, each node
    /// drained once per distinct set of window placements on it.
    fn drained_cost(&mut self, tree: &Tree<'_>, engine: &DiscreteEventEngine<'_>) -> f64 {
        let mut cost = 0.0;
        for n in 0..tree.setup.config.nodes {
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
                        .map(|o| objective_term(o, tree.tau, &tree.setup.spec.objective))
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

impl<'a> Search<'a> for WindowSearch {
    const PLACED_ONLY: bool = true;
    const DEFERS: bool = false;

    /// The end of the run or of the window.
    fn is_leaf(&self, tree: &Tree<'_>, offer: Option<TaskId>) -> bool {
        offer.is_none() || tree.path.len() >= self.offers
    }

    /// The placed tasks' terms once their nodes drain.
    fn leaf_cost(&mut self, tree: &Tree<'_>, engine: &DiscreteEventEngine<'a>) -> f64 {
        self.drained_cost(tree, engine)
    }

    fn enter(&mut self, n: usize, id: TaskId, at: u64) {
        self.placed.push((n, id, at));
    }

    fn leave(&mut self) {
        self.placed.pop();
    }
}

/// The rolling-window search from `engine` (positioned at `first`), windows of `k` offers,
/// until `deadline`.
pub(super) fn search<'a>(
    setup: &Setup,
    floors: &[TaskFloor],
    tau: f64,
    mut engine: DiscreteEventEngine<'a>,
    first: Option<TaskId>,
    k: usize,
    deadline: Deadline,
) -> SearchOutcome {
    let keep = k.div_ceil(2);
    let mut choices = Vec::with_capacity(setup.tasks.len());
    let mut expanded = 0;
    let mut offer = first;
    let mut node_costs = NodeCosts::new();
    let mut versions = vec![0u64; setup.config.nodes];
    let mut timed_out = false;
    while let Some(id) = offer {
        setup.cancel.report(&Progress {
            planner: "ilp",
            done: choices.len() as u64,
            total: setup.tasks.len() as u64,
            best: None,
            bound: None,
        });
        if timed_out {
            // Out of time: every later window would still dive once, draining the run at each
            // leaf (quadratic in the tasks on a long trace), so the rest of the run is placed
            // greedily, least backlog first, and the status says `time_limit`.
            let n = least_backlog(&engine.view(), &setup.tasks[id.index()])[0];
            engine.place(id, Assignment::Node(n), None);
            choices.push(Step::Offer(Assignment::Node(n)));
            offer = engine.advance(&mut NoSync);
            continue;
        }
        // A window's tree has up to nodes^K leaves: the clock, checked at every expansion,
        // is what bounds it on large windows and many nodes.
        let window = k;
        let history = engine.take_history();
        let mut tree = Tree::new(setup, floors, tau, deadline);
        let mut search = WindowSearch {
            offers: window,
            placed: Vec::new(),
            node_costs: std::mem::take(&mut node_costs),
            versions: versions.clone(),
        };
        let mut root = engine.clone();
        root.quiet();
        tree.explore(&mut search, root, Some(id));
        engine.restore_history(history);
        expanded += tree.expanded;
        timed_out |= tree.timed_out;
        let path = tree.best_path;
        node_costs = search.node_costs;
        let mut next = Some(id);
        let mut committed: Vec<Vec<(TaskId, u64)>> = vec![Vec::new(); setup.config.nodes];
        let nodes = path.iter().filter_map(|s| match s {
            Step::Offer(Assignment::Node(n)) => Some(*n),
            _ => None,
        });
        for n in nodes.take(keep.min(window).max(1)) {
            let Some(id) = next else { break };
            committed[n].push((id, engine.now().to_bits()));
            engine.place(id, Assignment::Node(n), None);
            choices.push(Step::Offer(Assignment::Node(n)));
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
            choices.push(Step::Offer(Assignment::Node(n)));
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
        status: if timed_out {
            PlanStatus::TimeLimit
        } else {
            PlanStatus::Windowed
        },
        expanded,
    }
}
