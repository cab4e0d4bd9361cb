//! `mix-luf`: co-locate; each task goes to the node with the lowest GPU memory utilisation
//! (ties: lowest index).

use super::engine::{Assignment, Dispatcher, View};
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::Task;
use crate::plan::error::PlanningError;

#[derive(Debug, Default)]
pub struct MixLuf;

impl Dispatcher for MixLuf {
    fn assign(&mut self, view: &View<'_>, _task: &Task) -> Assignment {
        let best = (0..view.config.nodes)
            .min_by(|&a, &b| {
                view.memory_utilization(a)
                    .total_cmp(&view.memory_utilization(b))
                    .then(a.cmp(&b))
            })
            .unwrap_or(0);
        Assignment::Node(best)
    }
}

/// The `mix-luf` planner.
pub struct MixLufPlanner;

impl ColocationPlanner for MixLufPlanner {
    fn name(&self) -> &'static str {
        "mix-luf"
    }

    fn run(&self, setup: &Setup, _: f64) -> Result<PlannerRun, PlanningError> {
        Ok(run_dispatcher(setup, &mut MixLuf))
    }
}
