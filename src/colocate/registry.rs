//! Every co-location planner, built by name. The names and their report order are the spec's
//! list (`COLOCATION_PLANNERS`), which validation checks `[planners].run` against; adding a
//! planner = one file + its name in that list + one line here.

use super::ilp::Ilp;
use super::lemix::{LemixPlanner, LemixScore};
use super::mix_luf::MixLufPlanner;
use super::mix_rr::MixRrPlanner;
use super::planner::ColocationPlanner;
use super::separate::SeparatePlanner;
use crate::plan::error::PlanningError;
use crate::spec::colocation::COLOCATION_PLANNERS;

/// The planner of a name, or `None` for a name that is not a planner.
pub fn planner(name: &str) -> Option<Box<dyn ColocationPlanner>> {
    let planner: Box<dyn ColocationPlanner> = match name {
        "separate" => Box::new(SeparatePlanner),
        "mix-rr" => Box::new(MixRrPlanner),
        "mix-luf" => Box::new(MixLufPlanner),
        "lemix" => Box::new(LemixPlanner::new(LemixScore::Faithful)),
        "lemix-balanced" => Box::new(LemixPlanner::new(LemixScore::Balanced)),
        "ilp" => Box::new(Ilp),
        _ => return None,
    };
    Some(planner)
}

/// Every planner, in report order.
pub fn registry() -> Vec<Box<dyn ColocationPlanner>> {
    COLOCATION_PLANNERS
        .iter()
        .filter_map(|n| planner(n))
        .collect()
}

/// The named planners in the order given; the first unknown or repeated name is an error.
pub fn resolve(names: &[String]) -> Result<Vec<Box<dyn ColocationPlanner>>, PlanningError> {
    crate::plan::error::distinct_planners(names)?;
    names
        .iter()
        .map(|n| planner(n).ok_or_else(|| PlanningError::UnknownPlanner(n.clone())))
        .collect()
}
