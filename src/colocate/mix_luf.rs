//! `mix-luf`: co-locate; each task goes to the node with the lowest GPU memory utilisation
//! (ties: lowest index).

use super::engine::{Assignment, Dispatcher, View};
use super::planner::OfferLog;
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::Task;
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{NodeUtilization, OfferAnswer, OfferRecord, OfferTerms};

/// The `mix-luf` dispatcher: lowest mean GPU memory utilisation first.
#[derive(Debug, Default)]
pub struct MixLuf {
    /// The offers recorded, when asked (`record_offers`).
    records: OfferLog,
}

impl Dispatcher for MixLuf {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let utilization: Vec<f64> = (0..view.config.nodes)
            .map(|n| view.memory_utilization(n))
            .collect();
        let best = (0..utilization.len())
            .min_by(|&a, &b| utilization[a].total_cmp(&utilization[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        self.records.push(|| OfferRecord {
            task: task.id.0,
            time_s: view.now,
            answer: OfferAnswer::Node(best),
            terms: OfferTerms::LeastUtilized {
                nodes: utilization
                    .iter()
                    .enumerate()
                    .map(|(node, &memory_utilization)| NodeUtilization {
                        node,
                        memory_utilization,
                    })
                    .collect(),
            },
        });
        Assignment::Node(best)
    }

    fn record_offers(&mut self) -> bool {
        self.records.start()
    }

    fn take_offer_records(&mut self) -> Vec<OfferRecord> {
        self.records.take()
    }
}

/// The `mix-luf` planner.
pub struct MixLufPlanner;

impl ColocationPlanner for MixLufPlanner {
    fn name(&self) -> &'static str {
        "mix-luf"
    }

    fn run(&self, setup: &Setup, _: f64) -> Result<PlannerRun, PlanningError> {
        Ok(run_dispatcher(setup, &mut MixLuf::default()))
    }

    fn dispatcher(&self, _setup: &Setup) -> Option<Box<dyn Dispatcher>> {
        Some(Box::new(MixLuf::default()))
    }
}
