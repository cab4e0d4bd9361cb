//! The complete search, up to `ilp_exact_max_tasks` tasks: every question of the engine to
//! the end of the run (nodes, deferrals, sync points), each leaf a whole run scored on every
//! task. Its only state beside the tree is the time
//! limit: `optimal` when the tree is exhausted within `ilp_time_limit_s`, else `time_limit`
//! with the incumbent.

use super::answers::{SearchOutcome, Step, SyncPoints};
use super::tree::{Search, Tree, run_cost};
use crate::colocate::bounds::TaskFloor;
use crate::colocate::engine::DiscreteEventEngine;
use crate::colocate::setup::Setup;
use crate::plan::PlanStatus;
use crate::plan::colocation::TaskId;
use crate::solver::Deadline;

/// Every question to the end of the run: no state beside the tree.
struct ExactSearch;

impl<'a> Search<'a> for ExactSearch {
    const PLACED_ONLY: bool = false;
    const DEFERS: bool = true;

    /// The end of the run.
    fn is_leaf(&self, _tree: &Tree<'_>, offer: Option<TaskId>) -> bool {
        offer.is_none()
    }

    /// Every task's term.
    fn leaf_cost(&mut self, tree: &Tree<'_>, engine: &DiscreteEventEngine<'a>) -> f64 {
        run_cost(tree.setup, tree.tau, engine.outcomes())
    }
}

/// Searches every answer to the engine's questions from `engine` (positioned at `first`).
pub(super) fn search(
    setup: &Setup,
    floors: &[TaskFloor],
    tau: f64,
    mut engine: DiscreteEventEngine<'_>,
    first: Option<TaskId>,
    deadline: Deadline,
    incumbent: Option<(f64, Vec<Step>)>,
) -> SearchOutcome {
    let points = SyncPoints::of(setup);
    let mut tree = Tree::new(setup, floors, tau, deadline);
    tree.syncs = points.as_ref();
    if let Some((cost, path)) = incumbent {
        tree.best = cost;
        tree.best_path = path;
    }
    engine.quiet();
    tree.explore(&mut ExactSearch, engine, first);
    SearchOutcome {
        choices: tree.best_path,
        objective: tree.best,
        status: if tree.timed_out {
            PlanStatus::TimeLimit
        } else {
            PlanStatus::Optimal
        },
        expanded: tree.expanded,
    }
}
