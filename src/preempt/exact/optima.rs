//! The per-event optima every `decision_gap` (and `plan --worst`) is measured against, found on
//! the live state as each planner's run goes, so no state is kept. Each state's optimum is
//! solved once: a run whose decisions so far are the same as an earlier run's, decision for
//! decision, faces the same state (both start from the same initial state, and applying a
//! decision is deterministic), so it takes the earlier run's optimum; and `ilp`'s own
//! decisions are the optima of the states it faced (its decision carries the optimum's cost).

use super::ilp::EventOptimum;
use super::per_event;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::apply::{Applied, apply};
use crate::preempt::planner::AppliedDecision;
use crate::preempt::problem::{Decision, Problem};
use crate::topology::state::ClusterState;

/// An excess below this is float noise between two equal costs.
pub(crate) const EXCESS_EPS: f64 = 1e-9;

/// The decisions and optima of the runs so far.
#[derive(Default)]
pub(crate) struct SharedOptima {
    runs: Vec<(Vec<AppliedDecision>, Vec<EventOptimum>)>,
}

/// What one run measured against the per-event optimum at each of its events.
#[derive(Default)]
pub(crate) struct RunOptima {
    pub optima: Vec<EventOptimum>,
    /// The optimum's decision applied to the state the planner faced, for each event the
    /// planner lost (only when `plan --worst` asks).
    pub optimum_applied: Vec<Option<Applied>>,
}

/// One run's walk along the earlier runs: which of them it still agrees with.
pub(crate) struct Follower<'m> {
    shared: &'m SharedOptima,
    agreeing: Vec<bool>,
    keep_optimum_applied: bool,
    out: RunOptima,
}

impl SharedOptima {
    /// A new run starts, agreeing with every earlier run (no decision yet).
    pub fn follow(&self, keep_optimum_applied: bool) -> Follower<'_> {
        Follower {
            shared: self,
            agreeing: vec![true; self.runs.len()],
            keep_optimum_applied,
            out: RunOptima::default(),
        }
    }

    /// A run ended: later runs may share its optima.
    pub fn record(&mut self, decisions: Vec<AppliedDecision>, optima: &RunOptima) {
        self.runs.push((decisions, optima.optima.clone()));
    }
}

impl Follower<'_> {
    /// The optimum of event `i` known without solving: the run's own decision when that is
    /// the optimum, else an agreeing earlier run's.
    fn known_optimum(&self, i: usize, own: &Decision) -> Option<EventOptimum> {
        if let Some(cost) = own.optimum_cost {
            return Some(EventOptimum {
                cost,
                decision: own.clone(),
                proven: !own.unproven,
            });
        }
        self.shared
            .runs
            .iter()
            .zip(&self.agreeing)
            .filter(|(_, agrees)| **agrees)
            .find_map(|((_, optima), _)| optima.get(i).cloned())
    }

    /// The optimum of event `i` on `state` (the state the run faces before deciding it), known
    /// or else solved, and, when `--worst` keeps the optimum's decision
    /// applied and that decision is not the run's own, a copy of `state` to apply it to (where
    /// the two choose the same, the run costs the optimum and nothing is copied).
    pub fn measure(
        &self,
        problem: &Problem<'_>,
        state: &ClusterState,
        p: &Preemptor,
        i: usize,
        own: &Decision,
    ) -> Result<(EventOptimum, Option<ClusterState>), PlanningError> {
        let optimum = match self.known_optimum(i, own) {
            Some(o) => o,
            None => per_event::event_optimum(problem, state, p).map_err(|e| e.in_planner("ilp"))?,
        };
        let before = (self.keep_optimum_applied && !same_choice(own, &optimum.decision))
            .then(|| state.clone());
        Ok((optimum, before))
    }

    /// Records event `i`: its optimum, and the run's decision as applied (`before` is the state
    /// it faced, kept only when the optimum's decision must be applied for `--worst`).
    pub fn push(
        &mut self,
        problem: &Problem<'_>,
        p: &Preemptor,
        i: usize,
        optimum: EventOptimum,
        own: &Applied,
        before: Option<ClusterState>,
    ) -> Result<(), PlanningError> {
        for ((decisions, _), agrees) in self.shared.runs.iter().zip(self.agreeing.iter_mut()) {
            *agrees &= decisions.get(i) == Some(&own.ids);
        }
        let optimum_applied = match before {
            Some(mut state)
                if self.keep_optimum_applied && own.event.cost - optimum.cost > EXCESS_EPS =>
            {
                Some(
                    apply(problem, &mut state, p, &optimum.decision)
                        .map_err(|e| e.in_planner("ilp"))?,
                )
            }
            _ => None,
        };
        self.out.optima.push(optimum);
        self.out.optimum_applied.push(optimum_applied);
        Ok(())
    }

    pub fn finish(self) -> RunOptima {
        self.out
    }
}

/// Whether two decisions choose the same: server, victims (in any order), placement, refusal.
fn same_choice(a: &Decision, b: &Decision) -> bool {
    let sorted = |d: &Decision| {
        let mut v = d.victims.clone();
        v.sort_unstable();
        v
    };
    a.server == b.server
        && a.refuse == b.refuse
        && a.placement == b.placement
        && sorted(a) == sorted(b)
}
