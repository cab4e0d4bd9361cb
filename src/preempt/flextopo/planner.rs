//! FlexTopo (DESIGN §5.2): filter, candidate sourcing over victim subsets and Eq. 1 scoring.
//! One planner, two sourcing settings: `flextopo-imp` (Incremental Minimal Preemption: stop at
//! the first subset size that yields any candidate across the cluster) and
//! `flextopo-exhaustive` (every size, the paper's overhead baseline). Each setting has a fast
//! search ([`super::imp_pruned`], [`super::exhaustive_classes`]) that chooses exactly what
//! the reference enumeration ([`decide_reference`]) chooses, and falls back to it where its
//! preconditions fail.

use super::reference::decide_by_enumeration;
use super::{exhaustive_classes, imp_pruned};
use crate::plan::error::PlanningError;
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::{Decision, DecisionPoint};

/// How FlexTopo sources its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sourcing {
    /// Stop at the first subset size that yields any candidate (IMP).
    IncrementalMinimal,
    /// Every subset size.
    Exhaustive,
}

/// The FlexTopo planner with one sourcing setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flextopo {
    sourcing: Sourcing,
}

impl Flextopo {
    /// FlexTopo with the given sourcing (`flextopo-imp` or `flextopo-exhaustive`).
    pub fn new(sourcing: Sourcing) -> Self {
        Flextopo { sourcing }
    }
}

impl PreemptionPlanner for Flextopo {
    fn name(&self) -> &'static str {
        match self.sourcing {
            Sourcing::IncrementalMinimal => "flextopo-imp",
            Sourcing::Exhaustive => "flextopo-exhaustive",
        }
    }

    fn decide_gang(
        &self,
        at: &crate::preempt::gang::GangPoint<'_>,
    ) -> Result<crate::preempt::gang::GangDecision, PlanningError> {
        Ok(crate::preempt::gang::levels::decide(
            at,
            self.sourcing == Sourcing::Exhaustive,
        ))
    }

    fn gang_aware(&self) -> bool {
        true
    }

    fn describe_search(&self, decision: &Decision) -> String {
        match (self.sourcing, decision.server) {
            (Sourcing::IncrementalMinimal, None) => "no subset size yields a candidate".into(),
            // IMP stops at the first size with a candidate; the chosen one has that size.
            (Sourcing::IncrementalMinimal, Some(_)) => format!(
                "first subset size with a candidate: {}",
                decision.victims.len()
            ),
            (Sourcing::Exhaustive, _) => "every subset size".into(),
        }
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let (problem, state, p) = (at.problem, at.state, at.preemptor);
        // Hard budgets that can refuse a subset: the reference enumeration, which checks
        // each, decides (the fast searches count victims, not budgets).
        if problem.budgets_bind(state, p) {
            let early_stop =
                self.sourcing == Sourcing::IncrementalMinimal || problem.cancel.out_of_time();
            return Ok(decide_by_enumeration(problem, state, p, early_stop));
        }
        Ok(match self.sourcing {
            Sourcing::IncrementalMinimal => imp_pruned::decide(problem, state, p)
                .unwrap_or_else(|| decide_by_enumeration(problem, state, p, true)),
            // Once the run's budget is spent, the remaining events are sourced as IMP sources
            // them (the smallest victim sets, a subset of the exhaustive candidates) and say
            // so: `truncated`.
            Sourcing::Exhaustive if problem.cancel.out_of_time() => Decision {
                truncated: true,
                ..imp_pruned::decide(problem, state, p)
                    .unwrap_or_else(|| decide_by_enumeration(problem, state, p, true))
            },
            Sourcing::Exhaustive => exhaustive_classes::decide(problem, state, p)
                .unwrap_or_else(|| decide_by_enumeration(problem, state, p, false)),
        })
    }
}

/// The reference search: every subset of every qualifying server, size by size; `early_stop`
/// = Incremental Minimal Preemption. The fast paths must choose exactly what this chooses.
pub fn decide_reference(at: &DecisionPoint<'_>, sourcing: Sourcing) -> Decision {
    decide_by_enumeration(
        at.problem,
        at.state,
        at.preemptor,
        sourcing == Sourcing::IncrementalMinimal,
    )
}
