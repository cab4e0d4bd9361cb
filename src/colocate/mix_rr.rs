//! `mix-rr` (NAIVEMIX): co-locate everything; tasks go round-robin over the nodes.

use super::engine::{Assignment, Dispatcher, View};
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::Task;
use crate::plan::error::PlanningError;

#[derive(Debug, Default)]
pub struct MixRr {
    next: usize,
}

impl Dispatcher for MixRr {
    fn assign(&mut self, view: &View<'_>, _task: &Task) -> Assignment {
        let n = self.next % view.config.nodes.max(1);
        self.next += 1;
        Assignment::Node(n)
    }
}

/// The `mix-rr` planner.
pub struct MixRrPlanner;

impl ColocationPlanner for MixRrPlanner {
    fn name(&self) -> &'static str {
        "mix-rr"
    }

    fn run(&self, setup: &Setup, _: f64) -> Result<PlannerRun, PlanningError> {
        Ok(run_dispatcher(setup, &mut MixRr::default()))
    }
}
