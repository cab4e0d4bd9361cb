//! The search's first incumbent: the cheapest of the candidate planners' schedules.

use super::answers::{Recorder, Replay, Step, SyncPoints};
use super::tree::{EPS, run_cost};
use crate::colocate::engine::DiscreteEventEngine;
use crate::colocate::lemix::{LemixPlanner, LemixScore};
use crate::colocate::mix_luf::MixLufPlanner;
use crate::colocate::mix_rr::MixRrPlanner;
use crate::colocate::planner::ColocationPlanner;
use crate::colocate::separate::SeparatePlanner;
use crate::colocate::setup::Setup;

/// The cheapest of the candidate planners' schedules as a path of the tree, with its cost.
/// Each planner's answers are recorded, then replayed the way `ilp` replays its own (`Replay`),
/// and the replay is what is scored: the path is a leaf of the tree by construction, whatever
/// the planner answered (a sync on other nodes than SEPARATE's serving ones would not be).
pub(super) fn best_candidate(setup: &Setup, tau: f64) -> Option<(f64, Vec<Step>)> {
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
