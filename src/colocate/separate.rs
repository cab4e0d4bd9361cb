//! `separate`: training and inference on disjoint node sets, round-robin within each; the
//! serving replicas receive the trained weights every `separate_sync_every` training tasks (a
//! sync op of weights / bandwidth on every stage of every inference node).

use super::engine::{Assignment, Dispatcher, View};
use super::planner::OfferLog;
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::Task;
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{OfferAnswer, OfferRecord, OfferTerms, TaskRole};

/// The `separate` dispatcher: training on the first nodes, inference on the rest, round-robin
/// within each, with periodic weight syncs to the serving nodes.
#[derive(Debug)]
pub struct Separate {
    training_nodes: Vec<usize>,
    inference_nodes: Vec<usize>,
    next_training: usize,
    next_inference: usize,
    sync_every: u64,
    /// The offers recorded, when asked (`record_offers`).
    records: OfferLog,
}

impl Separate {
    /// n_train = max(1, round(N · split)), the first nodes; the rest serve (at least one node:
    /// with a single node both share it).
    pub fn new(nodes: usize, split: f64, sync_every: u64) -> Self {
        let nodes = nodes.max(1);
        let n_train = ((nodes as f64 * split).round() as usize).clamp(1, nodes);
        let training_nodes: Vec<usize> = (0..n_train).collect();
        let inference_nodes: Vec<usize> = if n_train < nodes {
            (n_train..nodes).collect()
        } else {
            vec![nodes - 1]
        };
        Separate {
            training_nodes,
            inference_nodes,
            next_training: 0,
            next_inference: 0,
            sync_every: sync_every.max(1),
            records: OfferLog::default(),
        }
    }
}

impl Separate {
    /// SEPARATE as the workload configures it.
    pub fn for_setup(setup: &Setup) -> Self {
        let spec = &setup.spec;
        Separate::new(
            setup.config.nodes,
            spec.planners.separate_split.unwrap_or(spec.training.rate),
            spec.planners.separate_sync_every.max(1) as u64,
        )
    }

    /// The serving nodes: those a weight sync reaches.
    pub fn serving_nodes(&self) -> &[usize] {
        &self.inference_nodes
    }

    /// Every how many completed training tasks a weight sync runs.
    pub fn sync_every(&self) -> u64 {
        self.sync_every
    }
}

impl Dispatcher for Separate {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let (set, next, role) = if task.is_training() {
            (
                &self.training_nodes,
                &mut self.next_training,
                TaskRole::Training,
            )
        } else {
            (
                &self.inference_nodes,
                &mut self.next_inference,
                TaskRole::Serving,
            )
        };
        let position = *next;
        let n = set[position % set.len()];
        *next += 1;
        self.records.push(|| OfferRecord {
            task: task.id.0,
            time_s: view.now,
            answer: OfferAnswer::Node(n),
            terms: OfferTerms::RoleSplit {
                role,
                training_nodes: self.training_nodes.clone(),
                serving_nodes: self.inference_nodes.clone(),
                position: position as u64,
            },
        });
        Assignment::Node(n)
    }

    fn record_offers(&mut self) -> bool {
        self.records.start()
    }

    fn take_offer_records(&mut self) -> Vec<OfferRecord> {
        self.records.take()
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        completed
            .is_multiple_of(self.sync_every)
            .then(|| self.inference_nodes.clone())
    }
}

/// The `separate` planner.
pub struct SeparatePlanner;

impl ColocationPlanner for SeparatePlanner {
    fn name(&self) -> &'static str {
        "separate"
    }

    fn run(&self, setup: &Setup, _: f64) -> Result<PlannerRun, PlanningError> {
        Ok(run_dispatcher(setup, &mut Separate::for_setup(setup)))
    }

    fn dispatcher(&self, setup: &Setup) -> Option<Box<dyn Dispatcher>> {
        Some(Box::new(Separate::for_setup(setup)))
    }
}
