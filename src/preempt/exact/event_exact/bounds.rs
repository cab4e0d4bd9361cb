//! What the search knows of a server before searching it: the domains the pod may be placed
//! in, its potential victims, and the lower bounds (cost and chain key) that order and prune
//! the servers and domains.

use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{ChainKey, Problem};
use crate::preempt::victims::filter::fewest;
use crate::topology::{CoreSet, GpuSet, Level, PodId, Request, ServerId};

/// A domain the pod may be placed in on servers of one type: admitted by the node and large
/// enough for the request.
#[derive(Debug, Clone)]
pub(super) struct Admitted {
    pub(super) cost: f64,
    pub(super) gpus: GpuSet,
    pub(super) cores: CoreSet,
}

/// Per server type, its admitted domains, finest level first (as the allocator tries them).
/// The node's admission depends on the server only through its type (the scheduler's filter,
/// per server, is asked in [`Search::bounds`]).
pub(super) fn admitted_domains(problem: &Problem<'_>, p: &Preemptor) -> Vec<Vec<Admitted>> {
    let mut per_type: Vec<Option<Vec<Admitted>>> = vec![None; problem.cluster.types.len()];
    for server in problem.servers() {
        let type_id = problem.cluster.server(server).type_id.index();
        if per_type[type_id].is_some() {
            continue;
        }
        let t = problem.cluster.type_of(server);
        let mut domains = Vec::new();
        for level in Level::ALL {
            if !problem.node_admits(server, p, level) {
                continue;
            }
            for d in t.domains_for(p.request, level) {
                if d.gpus.len() >= p.request.gpus && d.cores.len() >= p.request.cores {
                    domains.push(Admitted {
                        cost: problem.cost.placement_cost(t, level),
                        gpus: d.gpus,
                        cores: d.cores,
                    });
                }
            }
        }
        per_type[type_id] = Some(domains);
    }
    per_type
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

/// A potential victim as the search reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Victim {
    pub(super) id: PodId,
    pub(super) priority: i64,
    pub(super) weight: f64,
    /// [`start_key`] of its start time.
    pub(super) start: f64,
    pub(super) gpus: GpuSet,
    pub(super) cores: CoreSet,
    /// A hard PodDisruptionBudget covers it: a set taking it is checked against the budgets.
    pub(super) guarded: bool,
}

/// A server's (or a domain's) lower bound: the least cost any of its candidates could have,
/// and the best chain key they could have.
pub(super) struct Bound {
    pub(super) cost: f64,
    pub(super) chain: ChainKey,
    pub(super) server: ServerId,
}

/// Buffers reused by every server and domain of one event.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) gains: Vec<u32>,
    pub(super) facts: Vec<(i64, f64)>,
}

/// The lower bound of one admitted domain of a server with these victims (cheapest first)
/// and free GPUs and cores: (cost bound, counting bound k), or `None` when evicting every
/// victim still leaves the domain short.
pub(super) fn domain_bound(
    victims: &[Victim],
    request: Request,
    free: (GpuSet, CoreSet),
    d: &Admitted,
    scratch: &mut Scratch,
) -> Option<(f64, usize)> {
    let need_g = request.gpus.saturating_sub(free.0.and(d.gpus).len());
    let need_c = request.cores.saturating_sub(free.1.and(d.cores).len());
    let gains = &mut scratch.gains;
    let kg = fewest(
        need_g,
        victims.iter().map(|v| v.gpus.and(d.gpus).len()),
        gains,
    )?;
    let kc = fewest(
        need_c,
        victims.iter().map(|v| v.cores.and(d.cores).len()),
        gains,
    )?;
    let k = kg.max(kc);
    // Any cover holds at least k victims with GPUs or cores inside the domain; the cheapest k
    // of those bound its weight.
    let weight: f64 = victims
        .iter()
        .filter(|v| v.gpus.intersects(&d.gpus) || v.cores.intersects(&d.cores))
        .take(k)
        .map(|v| v.weight)
        .sum();
    Some((d.cost + weight, k))
}

/// The best chain key any candidate with at least `k` of a server's victims could have.
pub(super) fn chain_bound(
    problem: &Problem<'_>,
    server: ServerId,
    victims: &[Victim],
    k: usize,
    scratch: &mut Scratch,
) -> ChainKey {
    let facts = &mut scratch.facts;
    facts.clear();
    facts.extend(victims.iter().map(|v| (v.priority, v.start)));
    ChainKey::best_possible(problem.cluster, server, k, facts).0
}
