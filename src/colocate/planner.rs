//! The co-location planner trait. A candidate planner decides the node of each task as the
//! discrete-event engine offers it (a `Dispatcher`); the exact planner solves first and then
//! replays its solution on the same engine, so every plan is an engine run.

use super::engine::{DiscreteEventEngine, Dispatcher};
use super::setup::Setup;
use crate::plan::colocation::ColocationRun;
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::OfferRecord;
use crate::plan::{PlanStatus, PlannerRole};

/// What a planner's run produced.
#[derive(Debug, Clone, PartialEq)]
pub enum PlannerRun {
    /// The planner produced a schedule, as an engine run.
    Ran {
        /// The engine run of its schedule (verified by the caller, not here).
        run: ColocationRun,
        /// `heuristic` for a candidate; for `ilp`, whether its search proved the optimum.
        status: PlanStatus,
        /// A proven lower bound of the canonical objective of every schedule.
        bound: Option<f64>,
    },
    /// The planner did not run on this instance, and why.
    Skipped {
        /// Why it was skipped (e.g. the instance is too large for the exact model).
        reason: String,
    },
    /// The solver stopped before it had any solution.
    NoSolution {
        /// The solver's status or error.
        reason: String,
    },
}

/// A co-location planner.
pub trait ColocationPlanner: Sync {
    /// Registry name of the planner, as in `[planners].run` (e.g. `mix-luf`).
    fn name(&self) -> &'static str;

    /// Whether the planner is a candidate (a dispatcher users can deploy) or a reference (the
    /// optimum it is measured against); candidate unless overridden.
    fn role(&self) -> PlannerRole {
        PlannerRole::Candidate
    }

    /// Plans the setup's tasks (`setup.spec` holds the workload). `horizon_s` is the latest op end of the candidate planners'
    /// runs (references run after them); candidates ignore it.
    fn run(&self, setup: &Setup, horizon_s: f64) -> Result<PlannerRun, PlanningError>;

    /// A candidate's dispatcher for one run, as `run` builds it (`None`: a planner that is
    /// not a dispatcher on the engine, such as `ilp`). `coplan explain --task` runs it with
    /// its offer records on.
    fn dispatcher(&self, _setup: &Setup) -> Option<Box<dyn Dispatcher>> {
        None
    }
}

/// Runs a dispatcher on the engine: the whole `run` of a candidate planner.
pub fn run_dispatcher(setup: &Setup, dispatcher: &mut dyn Dispatcher) -> PlannerRun {
    PlannerRun::Ran {
        run: DiscreteEventEngine::new(&setup.config, &setup.tasks).run(dispatcher),
        status: PlanStatus::Heuristic,
        bound: None,
    }
}

/// The offers a dispatcher records when asked (`Dispatcher::record_offers`): off unless
/// started, so that a normal run builds no record.
#[derive(Debug, Default, Clone)]
pub struct OfferLog(Option<Vec<OfferRecord>>);

impl OfferLog {
    /// Starts recording; `true`: this dispatcher records its offers.
    pub fn start(&mut self) -> bool {
        self.0.get_or_insert_with(Vec::new);
        true
    }

    /// Whether offers are being recorded.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Records one offer, built only when recording is on.
    pub fn push(&mut self, record: impl FnOnce() -> OfferRecord) {
        if let Some(records) = &mut self.0 {
            records.push(record());
        }
    }

    /// The offers recorded so far, handed over.
    pub fn take(&mut self) -> Vec<OfferRecord> {
        self.0.as_mut().map(std::mem::take).unwrap_or_default()
    }
}
