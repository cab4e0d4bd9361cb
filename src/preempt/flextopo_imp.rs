//! `flextopo-imp`: FlexTopo with Incremental Minimal Preemption — enumerate victim subsets by
//! size and stop at the first size that yields any candidate across the cluster.

use super::{Decision, PlanError, PreemptionPlanner, Preemptor, Problem, flextopo};
use crate::topology::state::ClusterState;

pub struct FlextopoImp;

impl PreemptionPlanner for FlextopoImp {
    fn name(&self) -> &'static str {
        "flextopo-imp"
    }

    fn decide(
        &self,
        problem: &Problem<'_>,
        state: &ClusterState,
        p: &Preemptor,
    ) -> Result<Decision, PlanError> {
        Ok(flextopo::decide(problem, state, p, true))
    }
}
