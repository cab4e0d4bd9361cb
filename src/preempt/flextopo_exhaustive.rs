//! `flextopo-exhaustive`: FlexTopo scoring over every victim subset of every size — the
//! overhead baseline of the paper.

use super::{Decision, PlanError, PreemptionPlanner, Preemptor, Problem, flextopo};
use crate::topology::state::ClusterState;

pub struct FlextopoExhaustive;

impl PreemptionPlanner for FlextopoExhaustive {
    fn name(&self) -> &'static str {
        "flextopo-exhaustive"
    }

    fn decide(
        &self,
        problem: &Problem<'_>,
        state: &ClusterState,
        p: &Preemptor,
    ) -> Result<Decision, PlanError> {
        Ok(flextopo::decide(problem, state, p, false))
    }
}
