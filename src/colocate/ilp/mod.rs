//! `ilp`: the best schedule over every decision a planner can make under the engine's own
//! rules (DESIGN §10.3).
//!
//! The engine is deterministic given the answers to its questions, so the schedules any
//! planner can produce are exactly the leaves of a tree with one level per question:
//! - each offered task: its node, or for a training task while an inference arrival is still
//!   ahead, deferral to the next one (what `lemix` and `lemix-balanced` do);
//! - each weight-sync point (every `separate_sync_every` completed training tasks, when the
//!   workload has that many): sync SEPARATE's serving nodes or not (what `separate` does).
//!
//! `ilp` searches that tree depth first, cloning the engine at each question (the walk,
//! `Search::explore`, is shared):
//! - the first incumbent is the best of the candidate planners' schedules (each planner's
//!   answers recorded and replayed as a path of the tree, so it is a leaf like any other), or
//!   the first dive, which follows the least-backlog node, when none is better;
//! - a subtree is cut when the floor of its partial run (finished tasks at their score, the
//!   others at their floor from now, `bounds::partial_floor`) reaches the incumbent;
//! - nodes whose state is identical (never used, or drained to the same state) are
//!   interchangeable: only the first of them is tried.
//!
//! Two searches walk it, each with its own state: `exact.rs` (up to `ilp_exact_max_tasks`
//! tasks, every decision; `optimal`, or `time_limit` with the incumbent) and `windowed.rs`
//! (above; rolling windows of `ilp_window` offers over nodes only, status `windowed`, or
//! `time_limit` when `ilp_time_limit_s` cut a window short).
//!
//! Its role: the optimum of the planners' space, beside the heuristics. When it is proven
//! (`optimal`), no planner can score below it and every gap is measured against it; otherwise
//! its row is a schedule like theirs, with a gap against the proven lower bound of
//! `colocate::bounds` (an incumbent is not a bound).

mod exact;
mod windowed;

use super::bounds::{TaskFloor, memory_task_floors, partial_floor};
use super::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use super::lemix::{LemixPlanner, LemixScore};
use super::metrics::objective_term;
use super::mix_luf::MixLufPlanner;
use super::mix_rr::MixRrPlanner;
use super::planner::{ColocationPlanner, PlannerRun};
use super::separate::{Separate, SeparatePlanner};
use super::setup::Setup;
use crate::plan::cancel::Progress;
use crate::plan::colocation::{Task, TaskId, TaskOutcome};
use crate::plan::error::PlanningError;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::SolverSettings;

/// Costs closer than this are ties.
const EPS: f64 = 1e-9;

/// The `ilp` planner.
pub struct Ilp;

impl ColocationPlanner for Ilp {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::ScheduleOptimum
    }

    fn run(&self, setup: &Setup, _horizon_s: f64) -> Result<PlannerRun, PlanningError> {
        let outcome = solve(setup);
        let mut replay = Replay {
            steps: outcome.choices.into(),
            syncs: SyncPoints::of(setup),
        };
        let run = DiscreteEventEngine::new(&setup.config, &setup.tasks).run(&mut replay);
        // A proven optimum is its own lower bound.
        let bound = (outcome.status == PlanStatus::Optimal).then_some(outcome.objective);
        Ok(PlannerRun::Ran {
            run,
            status: outcome.status,
            bound,
        })
    }
}

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
struct Replay {
    steps: std::collections::VecDeque<Step>,
    syncs: Option<SyncPoints>,
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
struct ScriptedSyncs<'p> {
    points: &'p SyncPoints,
    script: &'p [bool],
    given: Vec<bool>,
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
struct Recorder<'d> {
    inner: &'d mut dyn Dispatcher,
    syncs: Option<&'d SyncPoints>,
    steps: Vec<Step>,
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

/// The sum of the objective terms of a run's tasks: what a leaf of the tree costs.
fn run_cost(setup: &Setup, tau: f64, outcomes: &[TaskOutcome]) -> f64 {
    outcomes
        .iter()
        .map(|o| objective_term(o, tau, &setup.spec.objective))
        .sum()
}

/// The cheapest of the candidate planners' schedules as a path of the tree, with its cost.
/// Each planner's answers are recorded, then replayed the way `ilp` replays its own (`Replay`),
/// and the replay is what is scored: the path is a leaf of the tree by construction, whatever
/// the planner answered (a sync on other nodes than SEPARATE's serving ones would not be).
fn best_candidate(setup: &Setup, tau: f64) -> Option<(f64, Vec<Step>)> {
    let points = SyncPoints::of(setup);
    // The registry's candidates, listed here because the registry builds `ilp` (importing it
    // would close a cycle); a planner added there and not here only leaves the seed weaker.
    let candidates: [&dyn ColocationPlanner; 5] = [
        &SeparatePlanner,
        &MixRrPlanner,
        &MixLufPlanner,
        &LemixPlanner::new(LemixScore::Faithful),
        &LemixPlanner::new(LemixScore::Balanced),
    ];
    let mut best: Option<(f64, Vec<Step>)> = None;
    for planner in candidates {
        let Some(mut inner) = planner.dispatcher(setup) else {
            continue;
        };
        let mut recorder = Recorder {
            inner: inner.as_mut(),
            syncs: points.as_ref(),
            steps: Vec::new(),
        };
        let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
        engine.quiet();
        let _ = engine.run(&mut recorder);
        let steps = recorder.steps;
        let mut replay = Replay {
            steps: steps.clone().into(),
            syncs: points.clone(),
        };
        let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
        engine.quiet();
        let run = engine.run(&mut replay);
        let cost = run_cost(setup, tau, &run.outcomes);
        if best.as_ref().is_none_or(|(b, _)| cost < *b - EPS) {
            best = Some((cost, steps));
        }
    }
    best
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

/// The answers tried for an offered task: one node of each set of interchangeable nodes,
/// least busy first, and with `defer`, deferral of a training task while an inference
/// arrival is ahead (the engine refuses it otherwise).
fn branches(engine: &DiscreteEventEngine<'_>, task: &Task, defer: bool) -> Vec<Assignment> {
    let view = engine.view();
    let ordered = least_backlog(&view, task);
    let mut kept: Vec<usize> = Vec::new();
    for n in ordered {
        if !kept.iter().any(|&k| engine.interchangeable(k, n)) {
            kept.push(n);
        }
    }
    let mut answers: Vec<Assignment> = kept.into_iter().map(Assignment::Node).collect();
    if defer && task.is_training() && view.next_inference_arrival.is_some() {
        answers.push(Assignment::Defer);
    }
    answers
}

/// What both searches share: the tree walk over the next offers of an engine, the
/// incumbent and the path to it. Depth first, one branch per node (`branches`), a subtree cut
/// when the floor of its partial run reaches the incumbent.
/// Search nodes between two progress reports.
const PROGRESS_EVERY: u64 = 4096;

struct Tree<'s> {
    setup: &'s Setup,
    floors: &'s [TaskFloor],
    tau: f64,
    /// Sync points searched (the exact search, when the workload has them).
    syncs: Option<&'s SyncPoints>,
    best: f64,
    best_path: Vec<Step>,
    path: Vec<Step>,
    /// Search nodes (engine states) expanded.
    expanded: u64,
}

impl<'s> Tree<'s> {
    fn new(setup: &'s Setup, floors: &'s [TaskFloor], tau: f64) -> Self {
        Tree {
            setup,
            floors,
            tau,
            syncs: None,
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

    /// Whether deferral is searched (a window scores placed tasks only, so it would defer
    /// for free).
    const DEFERS: bool;

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

/// Runs the exact search, or the windowed one above `ilp_exact_max_tasks`.
pub fn solve(setup: &Setup) -> SearchOutcome {
    let planners = &setup.spec.planners;
    // The memory floors: a task that never fits pays its waits and transfers at every node.
    let floors = memory_task_floors(setup);
    let tau = setup.objective_unit_s();
    // The time limit counts from here, the engine's set-up included.
    let deadline = setup.deadline(SolverSettings {
        backend: planners.solver,
        mip_gap: planners.ilp_mip_gap,
    });
    let mut engine = DiscreteEventEngine::new(&setup.config, &setup.tasks);
    let first = engine.advance(&mut NoSync);
    if setup.tasks.len() <= planners.ilp_exact_max_tasks.max(0) as usize {
        let incumbent = best_candidate(setup, tau);
        return exact::search(setup, &floors, tau, engine, first, deadline, incumbent);
    }
    windowed::search(
        setup,
        &floors,
        tau,
        engine,
        first,
        planners.window_offers(),
        deadline,
    )
}
