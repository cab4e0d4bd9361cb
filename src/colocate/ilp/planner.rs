//! The `ilp` planner: the search run, then its answers replayed on the engine.

use super::answers::{NoSync, SearchOutcome};
use super::answers::{Replay, SyncPoints};
use super::candidates::best_candidate;
use super::{exact, windowed};
use crate::colocate::bounds::memory_task_floors;
use crate::colocate::engine::DiscreteEventEngine;
use crate::colocate::planner::{ColocationPlanner, PlannerRun};
use crate::colocate::setup::Setup;
use crate::plan::error::PlanningError;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::SolverSettings;

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
