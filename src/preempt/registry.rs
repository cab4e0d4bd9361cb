//! Every preemption planner, built by name. The names and their report order are the spec's
//! list (`PREEMPTION_PLANNERS`), which validation checks `[planners].run` against; adding a
//! planner = one file + its name in that list + one line here.

use super::exact::ilp_batch::IlpBatch;
use super::exact::per_event::IlpPerEvent;
use super::flextopo::planner::{Flextopo, Sourcing};
use super::gang::kueue_tas::KueueTas;
use super::k8s::default::K8sDefault;
use super::k8s::nrt::K8sNrt;
use super::planner::PreemptionPlanner;
use crate::plan::error::PlanningError;
use crate::spec::preemption::PREEMPTION_PLANNERS;

/// The planner of a name, or `None` for a name that is not a planner.
pub fn planner(name: &str) -> Option<Box<dyn PreemptionPlanner>> {
    let planner: Box<dyn PreemptionPlanner> = match name {
        "k8s-default" => Box::new(K8sDefault),
        "k8s-nrt" => Box::new(K8sNrt),
        "kueue-tas" => Box::new(KueueTas),
        "flextopo-imp" => Box::new(Flextopo::new(Sourcing::IncrementalMinimal)),
        "flextopo-exhaustive" => Box::new(Flextopo::new(Sourcing::Exhaustive)),
        "ilp" => Box::new(IlpPerEvent),
        "ilp-batch" => Box::new(IlpBatch),
        _ => return None,
    };
    Some(planner)
}

/// Every planner, in report order.
pub fn registry() -> Vec<Box<dyn PreemptionPlanner>> {
    PREEMPTION_PLANNERS
        .iter()
        .filter_map(|n| planner(n))
        .collect()
}

/// The named planners in the order given; the first unknown or repeated name is an error.
pub fn resolve(names: &[String]) -> Result<Vec<Box<dyn PreemptionPlanner>>, PlanningError> {
    crate::plan::error::distinct_planners(names)?;
    names
        .iter()
        .map(|n| planner(n).ok_or_else(|| PlanningError::UnknownPlanner(n.clone())))
        .collect()
}
