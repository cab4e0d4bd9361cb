//! The complete search, up to `ilp_exact_max_tasks` tasks: every offer to the end of the run,
//! each leaf a whole run scored on every task. Its only state beside the tree is the time
//! limit: `optimal` when the tree is exhausted within `ilp_time_limit_s`, else `time_limit`
//! with the incumbent.

use super::{Search, SearchOutcome, Tree};
use crate::colocate::bounds::TaskFloor;
use crate::colocate::engine::DiscreteEventEngine;
use crate::colocate::metrics::objective_term;
use crate::colocate::setup::Setup;
use crate::plan::PlanStatus;
use crate::plan::colocation::TaskId;
use crate::solver::Deadline;

struct ExactSearch<'s> {
    tree: Tree<'s>,
    deadline: Deadline,
    timed_out: bool,
}

impl<'s, 'a> Search<'s, 'a> for ExactSearch<'s> {
    const PLACED_ONLY: bool = false;

    fn tree(&mut self) -> &mut Tree<'s> {
        &mut self.tree
    }

    fn leaf_cost(
        &mut self,
        engine: &DiscreteEventEngine<'a>,
        offer: Option<TaskId>,
    ) -> Option<f64> {
        let t = &self.tree;
        offer.is_none().then(|| {
            engine
                .outcomes()
                .iter()
                .map(|o| objective_term(o, t.tau, &t.setup.spec.objective))
                .sum()
        })
    }

    /// After the first complete dive, the time limit stops the search.
    fn out_of_time(&mut self) -> bool {
        if !self.tree.best_path.is_empty() && self.deadline.expired() {
            self.timed_out = true;
            return true;
        }
        false
    }
}

/// Searches every assignment of the offers from `engine` (positioned at `first`).
pub(super) fn search(
    setup: &Setup,
    floors: &[TaskFloor],
    tau: f64,
    mut engine: DiscreteEventEngine<'_>,
    first: Option<TaskId>,
    deadline: Deadline,
) -> SearchOutcome {
    let mut search = ExactSearch {
        tree: Tree::new(setup, floors, tau),
        deadline,
        timed_out: false,
    };
    engine.quiet();
    search.explore(engine, first);
    SearchOutcome {
        choices: search.tree.best_path,
        objective: search.tree.best,
        status: if search.timed_out {
            PlanStatus::TimeLimit
        } else {
            PlanStatus::Optimal
        },
        expanded: search.tree.expanded,
    }
}
