//! `mix-rr` (NAIVEMIX): co-locate everything; tasks go round-robin over the nodes.

use super::engine::{Assignment, Dispatcher, View};
use super::planner::OfferLog;
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::Task;
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{OfferAnswer, OfferRecord, OfferTerms};

/// The `mix-rr` dispatcher: the next node round-robin, whatever the task.
#[derive(Debug, Default)]
pub struct MixRr {
    next: usize,
    /// The offers recorded, when asked (`record_offers`).
    records: OfferLog,
}

impl Dispatcher for MixRr {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let nodes = view.config.nodes.max(1);
        let n = self.next % nodes;
        self.records.push(|| OfferRecord {
            task: task.id.0,
            time_s: view.now,
            answer: OfferAnswer::Node(n),
            terms: OfferTerms::RoundRobin {
                position: self.next as u64,
                nodes,
            },
        });
        self.next += 1;
        Assignment::Node(n)
    }

    fn record_offers(&mut self) -> bool {
        self.records.start()
    }

    fn take_offer_records(&mut self) -> Vec<OfferRecord> {
        self.records.take()
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

    fn dispatcher(&self, _setup: &Setup) -> Option<Box<dyn Dispatcher>> {
        Some(Box::new(MixRr::default()))
    }
}
