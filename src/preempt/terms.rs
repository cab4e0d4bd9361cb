//! The canonical cost of one applied decision term by term, and the term that decides the
//! difference between two decisions: what `explain` shows and `plan --worst` lists.

use super::apply::Applied;
use super::exact::optima::EXCESS_EPS;
use super::problem::Problem;
use crate::plan::explain::{CostTerms, TermDifference};

/// The canonical cost of an applied decision, term by term (its `total` is the event's cost).
pub fn terms_of(problem: &Problem<'_>, applied: &Applied) -> CostTerms {
    let e = &applied.event;
    if let Some(g) = &e.gang {
        // A gang: its victims as any event's; the rest of its cost is its pods' placements
        // and spread when placed whole, else every pod unplaced.
        let prios: Vec<i64> = applied.victims.iter().map(|v| v.priority).collect();
        let victims = problem.cost.event_terms(None, &prios);
        let rest = e.cost - victims.victims - victims.priority;
        return CostTerms {
            topology: if e.placed { rest } else { 0.0 },
            unplaced: if e.placed {
                0.0
            } else {
                g.pods as f64 * problem.cost.weights.unplaced
            },
            total: e.cost,
            ..victims
        };
    }
    let placed = match (applied.ids.server, e.level) {
        (Some(server), Some(level)) if e.placed => Some((problem.cluster.type_of(server), level)),
        _ => None,
    };
    let prios: Vec<i64> = applied.victims.iter().map(|v| v.priority).collect();
    problem.cost.event_terms(placed, &prios)
}

/// A planner's terms against the optimum's: the excess and the term that decides it.
pub fn difference(planner: &str, own: &CostTerms, optimum: &CostTerms) -> TermDifference {
    let delta = CostTerms {
        victims: own.victims - optimum.victims,
        priority: own.priority - optimum.priority,
        topology: own.topology - optimum.topology,
        unplaced: own.unplaced - optimum.unplaced,
        total: own.total - optimum.total,
    };
    // The largest positive difference; the first in table order on a tie.
    let deciding_term = delta
        .named()
        .into_iter()
        .filter(|(_, d)| *d > EXCESS_EPS)
        .fold(
            None,
            |best: Option<(&'static str, f64)>, (n, d)| match best {
                Some((_, b)) if b >= d => best,
                _ => Some((n, d)),
            },
        )
        .map(|(n, _)| n);
    TermDifference {
        planner: planner.to_string(),
        excess: delta.total,
        delta,
        deciding_term: if delta.total > EXCESS_EPS {
            deciding_term
        } else {
            None
        },
    }
}
