//! The search's entry points: the per-event optimum, replayed with the node allocator, and
//! the tied set on one server the MILP reference takes its choice from.

use super::search::{Search, SearchStats};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::exact::ilp::{self, COST_EPS, EventOptimum};
use crate::preempt::problem::Decision;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{PodId, ServerId};

/// Search nodes one server may use before its MILP decides it instead.
pub const NODE_BUDGET: u64 = 200_000;

/// The per-event optimum by branch and bound.
pub fn exact_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
) -> Result<EventOptimum, PlanningError> {
    exact_optimum_with_stats(problem, state, p, NODE_BUDGET).map(|(o, _)| o)
}

/// [`exact_optimum`] with a per-server node budget, and what the search did.
pub fn exact_optimum_with_stats(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    budget: u64,
) -> Result<(EventOptimum, SearchStats), PlanningError> {
    let mut search = Search::new(problem, state, p, budget, problem.cost.weights.unplaced);
    let mut order = search.bounds(p);
    order.sort_by(|a, b| {
        a.cost
            .total_cmp(&b.cost)
            .then_with(|| a.chain.compare_numeric(&b.chain))
    });
    for bound in &order {
        if !search.best.may_improve(bound.cost, &bound.chain) {
            if bound.cost > search.best.cost + COST_EPS {
                // Sorted by cost: every later server is dearer still.
                break;
            }
            continue;
        }
        search.server(bound.server, p)?;
    }
    let Search {
        best,
        stats,
        proven,
        ..
    } = search;
    let (cost, decision) = match best.leader {
        Some(leader) => {
            let mut victims = leader.victims;
            victims.sort_unstable();
            let replayed = ilp::replay_cost(problem, state, leader.server, p, &victims)
                .ok_or_else(|| {
                    PlanningError::Internal(format!(
                        "the exact search chose victims on {} that do not admit a placement",
                        problem.cluster.server(leader.server).name
                    ))
                })?;
            // A search cost the replay does not reproduce means a wrong model: fail loudly
            // rather than report a false optimum.
            if (replayed - best.cost).abs() > 1e-6 {
                return Err(PlanningError::Internal(format!(
                    "the exact search's cost on {} ({}) disagrees with its replay ({replayed})",
                    problem.cluster.server(leader.server).name,
                    best.cost
                )));
            }
            let decision = Decision {
                server: Some(leader.server),
                victims,
                ..Decision::default()
            };
            (replayed, decision)
        }
        None => (best.cost, Decision::default()),
    };
    Ok((
        EventOptimum {
            cost,
            decision: Decision {
                subsets_evaluated: stats.nodes,
                ..decision
            },
            proven,
        },
        stats,
    ))
}

/// The victim set first in the total order of decisions (cost, then the candidate chain) among
/// those on `server` that cost at most `cost` (within [`COST_EPS`]), with its replayed cost:
/// the MILP reference proves a server's optimum cost and takes its set from here, so both
/// per-event solvers make the same choice on every tie. `None` when no set on the server
/// reaches `cost`. A server too large to enumerate is decided by its MILP, as in the search.
pub fn best_tied_on_server(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    server: ServerId,
    cost: f64,
) -> Result<Option<(f64, Vec<PodId>)>, PlanningError> {
    let mut search = Search::new(problem, state, p, NODE_BUDGET, cost);
    search.server(server, p)?;
    let Some(leader) = search.best.leader else {
        return Ok(None);
    };
    let mut victims = leader.victims;
    victims.sort_unstable();
    Ok(ilp::replay_cost(problem, state, server, p, &victims).map(|c| (c, victims)))
}
