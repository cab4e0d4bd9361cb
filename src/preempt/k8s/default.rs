//! `k8s-default`: Kubernetes/Gödel default preemption, topology-blind (DESIGN §5.2).
//! Per server: a zero-victim candidate when the pod fits by counts; else remove every
//! potential victim and reprieve them most important first while the pod still fits. The
//! server is chosen by the candidate chain.

use crate::preempt::planner::PreemptionPlanner;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::plan::error::PlanningError;
use crate::preempt::problem::{
    ChainKey, Decision, DecisionPoint, Problem, more_important, start_key,
};
use crate::preempt::victims::filter::fewest;
use crate::topology::state::{ClusterState, Resident};
use crate::topology::{CoreSet, GpuSet, PodId, Request, ServerId, ServerType};

/// The `k8s-default` planner: Kubernetes/Gödel default preemption, topology-blind (DESIGN §5.2).
pub struct K8sDefault;

/// Whether a request fits the free GPUs and cores by count alone, ignoring topology: its
/// devices are counted among those of its kind, and a claim's constraint is the scheduler's
/// own (its device allocator checks `matchAttribute`), so it holds here too.
pub fn fits_by_counts(t: &ServerType, g: GpuSet, c: CoreSet, req: Request) -> bool {
    c.len() >= req.cores && t.devices_fit(req, g) && t.cores_fit_claim(req, g, c)
}

impl PreemptionPlanner for K8sDefault {
    fn name(&self) -> &'static str {
        "k8s-default"
    }

    fn describe_search(&self, _decision: &Decision) -> String {
        "one dry run per server: evict every lower-priority pod, then reprieve".into()
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let req = at.preemptor.request;
        let cluster = at.problem.cluster;
        Ok(dry_run_preemption(at, &|s, g, c| {
            fits_by_counts(cluster.type_of(s), g, c, req)
        }))
    }
}

/// [`K8sDefault`]'s decision by the reference dry run of every server.
pub fn decide_reference(at: &DecisionPoint<'_>) -> Decision {
    let req = at.preemptor.request;
    let cluster = at.problem.cluster;
    dry_run_reference(at, &|s, g, c| fits_by_counts(cluster.type_of(s), g, c, req))
}

/// [`more_important`] on residents: names are looked up only on a tie of the numeric keys.
fn more_important_resident(state: &ClusterState, a: &Resident, b: &Resident) -> Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| start_key(a.start_time_s).total_cmp(&start_key(b.start_time_s)))
        .then_with(|| match (state.pod(a.id), state.pod(b.id)) {
            (Some(x), Some(y)) => more_important(x, y),
            _ => a.id.cmp(&b.id),
        })
}

/// The default preemption's dry run with a per-node fit test `fits(server, free GPUs, free
/// cores)`: per server, a zero-victim candidate when the pod fits as it is; else remove every
/// potential victim and, if the pod then fits, reprieve them most important first, keeping each
/// whose return still leaves a fit (the same test in both steps). The server is chosen by the
/// candidate chain. `fits` must hold for any superset of free resources it holds for, and
/// only where the pod fits by counts.
///
/// Every server gets a lower bound of its candidate's chain key first (the fewest victims that
/// could cover the shortfall by counts, the lowest priorities and latest starts they could
/// have); servers are dry-run best bound first, and a server whose bound is worse than the
/// best candidate found is not dry-run: it cannot win. The choice is the one a dry run of
/// every server makes.
pub fn dry_run_preemption(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
) -> Decision {
    let (problem, state) = (at.problem, at.state);
    let candidate = |server: ServerId| dry_run_server(at, fits, server);
    let bound_of = |scratch: &mut Scratch, server: ServerId| {
        chain_bound(at, fits, server, scratch).map(|key| (key, server))
    };
    let mut bounds: Vec<(ChainKey, ServerId)> = if problem.parallel() {
        // Chunks of servers per task, concatenated in server order.
        use rayon::prelude::*;
        const CHUNK: u32 = 512;
        let servers = problem.cluster.servers.len() as u32;
        let parts: Vec<Vec<(ChainKey, ServerId)>> = (0..servers.div_ceil(CHUNK))
            .into_par_iter()
            .map(|i| {
                let mut scratch = Scratch::default();
                (i * CHUNK..((i + 1) * CHUNK).min(servers))
                    .filter_map(|s| bound_of(&mut scratch, ServerId(s)))
                    .collect()
            })
            .collect();
        Problem::concat(parts)
    } else {
        let mut scratch = Scratch::default();
        let mut bounds = Vec::with_capacity(problem.cluster.servers.len());
        bounds.extend(
            problem
                .servers()
                .filter_map(|server| bound_of(&mut scratch, server)),
        );
        bounds
    };
    // The fit test of every server; the reprieve steps of the servers dry-run are added.
    let mut evaluated = problem.cluster.servers.len() as u64;
    // Server ranks differ, so no two bounds tie and the unstable selection is deterministic;
    // only a head is sorted, as most servers are skipped whatever their order.
    let head = (bounds.len() / 8).clamp(1, 64).min(bounds.len());
    let by_key = |a: &(ChainKey, ServerId), b: &(ChainKey, ServerId)| a.0.compare_numeric(&b.0);
    if head < bounds.len() {
        bounds.select_nth_unstable_by(head - 1, by_key);
    }
    bounds[..head].sort_unstable_by(by_key);
    let mut best: Option<(ChainKey, Decision)> = None;
    for (i, (bound, server)) in bounds.iter().enumerate() {
        if best
            .as_ref()
            .is_some_and(|(k, _)| bound.compare_numeric(k).is_gt())
        {
            // In the sorted head every later bound, and the whole rest, is no better.
            if i < head {
                break;
            }
            continue;
        }
        let (n, found) = candidate(*server);
        evaluated += n - 1;
        let Some((key, server, victims)) = found else {
            continue;
        };
        if best
            .as_ref()
            .is_none_or(|(k, _)| key.compare(k, state).is_lt())
        {
            best = Some((
                key,
                Decision {
                    server: Some(server),
                    victims,
                    ..Decision::default()
                },
            ));
        }
    }
    let mut decision = best.map(|(_, d)| d).unwrap_or_default();
    decision.subsets_evaluated = evaluated;
    decision
}

/// Buffers reused across the servers of one decision.
#[derive(Default)]
struct Scratch {
    /// Each potential victim's GPU count, core count, priority and start key.
    facts: Vec<(u32, u32, i64, f64)>,
    gains: Vec<u32>,
    /// Each potential victim's priority and start key.
    victims: Vec<(i64, f64)>,
}

/// A key no worse than `server`'s dry-run candidate in the chain, or `None` when the pod fits
/// there even with every potential victim evicted.
fn chain_bound(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
    server: ServerId,
    scratch: &mut Scratch,
) -> Option<ChainKey> {
    let Scratch {
        facts,
        gains,
        victims,
    } = scratch;
    let (problem, state, p) = (at.problem, at.state, at.preemptor);
    if !problem.eligible(server, p) {
        return None;
    }
    let a = &state.servers()[server.index()];
    if fits(server, a.free_gpus(), a.free_cores()) {
        // The exact key of a candidate without victims.
        return Some(ChainKey::best_possible(problem.cluster, server, 0, &mut []).0);
    }
    facts.clear();
    // Only devices of the preemptor's kind count towards its shortfall.
    let usable = problem.cluster.type_of(server).usable(p.request);
    let (mut g, mut c) = (a.free_gpus(), a.free_cores());
    for r in a.residents() {
        if problem.may_evict(p, r.priority, r.preemptible) {
            g = g.or(r.gpus);
            c = c.or(r.cores);
            facts.push((
                r.gpus.and(usable).len(),
                r.cores.len(),
                r.priority,
                start_key(r.start_time_s),
            ));
        }
    }
    if !fits(server, g, c) {
        return None;
    }
    // The victims left after the reprieve still make the pod fit, so by counts: at least as
    // many as the fewest whose GPUs (and, apart, cores) cover the shortfall, and at least one.
    let need_g = p
        .request
        .gpus
        .saturating_sub(a.free_gpus().and(usable).len());
    let need_c = p.request.cores.saturating_sub(a.free_cores().len());
    let gpus = fewest(need_g, facts.iter().map(|v| v.0), gains);
    let cores = fewest(need_c, facts.iter().map(|v| v.1), gains);
    let count = 1.max(gpus.unwrap_or(0)).max(cores.unwrap_or(0));
    victims.clear();
    victims.extend(facts.iter().map(|v| (v.2, v.3)));
    Some(ChainKey::best_possible(problem.cluster, server, count, victims).0)
}

/// One server's dry run: the fit tests made, and its candidate (chain key, server, victims),
/// if the pod fits there once every potential victim is evicted.
#[allow(clippy::type_complexity)]
fn dry_run_server(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
    server: ServerId,
) -> (u64, Option<(ChainKey, ServerId, Vec<PodId>)>) {
    let (problem, state, p) = (at.problem, at.state, at.preemptor);
    let a = &state.servers()[server.index()];
    let mut evaluated = 1u64;
    if !problem.eligible(server, p) {
        return (evaluated, None);
    }
    let mut pdb_violations = 0;
    let victims: Vec<Resident> = if fits(server, a.free_gpus(), a.free_cores()) {
        Vec::new()
    } else {
        // The server's own copy of its pods' facts: no lookups in the cluster's pod table
        // except for names, on a tie of priority and start.
        let mut potential: Vec<Resident> = a
            .residents()
            .iter()
            .filter(|r| problem.may_evict(p, r.priority, r.preemptible))
            .copied()
            .collect();
        let guarded = potential.iter().any(|r| r.guarded);
        if guarded && state.budgets().hard() {
            hard_budget_filter(state, &mut potential);
        }
        let (mut g, mut c) = potential
            .iter()
            .fold((a.free_gpus(), a.free_cores()), |(g, c), r| {
                (g.or(r.gpus), c.or(r.cores))
            });
        if !fits(server, g, c) {
            return (evaluated, None);
        }
        potential.sort_by(|x, y| more_important_resident(state, x, y));
        // The reprieve tries the pods whose eviction would violate a budget first, so that
        // they are the ones kept (kube-scheduler's order); with none, one group.
        let violating = if guarded && !state.budgets().hard() {
            violating_pods(state, &potential)
        } else {
            vec![false; potential.len()]
        };
        let order = (0..potential.len())
            .filter(|&i| violating[i])
            .chain((0..potential.len()).filter(|&i| !violating[i]));
        let mut victims = Vec::new();
        for i in order {
            let pod = potential[i];
            evaluated += 1;
            let (g2, c2) = (g.minus(pod.gpus), c.minus(pod.cores));
            if fits(server, g2, c2) {
                (g, c) = (g2, c2);
            } else {
                pdb_violations += usize::from(violating[i]);
                victims.push(pod);
            }
        }
        // The victims most important first again, as the chain reads them.
        victims.sort_by(|x, y| more_important_resident(state, x, y));
        victims
    };
    let key = ChainKey::from_facts(
        problem.cluster,
        server,
        victims.iter().map(|r| r.id).collect(),
        victims.iter().map(|r| (r.priority, r.start_time_s)),
    )
    .with_pdb_violations(pdb_violations);
    let ids = victims.iter().map(|r| r.id).collect();
    (evaluated, Some((key, server, ids)))
}

/// Under hard budgets (Gödel's PDB checker): the potential victims walked least important
/// first; a pod whose budget has nothing left on this server is no potential victim, any
/// other takes one from each of its budgets.
fn hard_budget_filter(state: &ClusterState, potential: &mut Vec<Resident>) {
    potential.sort_by(|x, y| more_important_resident(state, y, x));
    let mut left: BTreeMap<u32, i64> = BTreeMap::new();
    let ledger = state.budgets();
    potential.retain(|r| {
        if !r.guarded {
            return true;
        }
        let budgets = state.pod(r.id).map_or(&[][..], |p| &p.budgets);
        let here = |b: u32, left: &BTreeMap<u32, i64>| {
            left.get(&b)
                .copied()
                .unwrap_or_else(|| ledger.left()[b as usize])
        };
        if budgets.iter().any(|&b| here(b, &left) <= 0) {
            return false;
        }
        for &b in budgets {
            let n = here(b, &left);
            left.insert(b, n - 1);
        }
        true
    });
}

/// kube-scheduler's `filterPodsWithPDBViolation`: walking the potential victims most
/// important first, each takes one from its budgets' allowance; a pod that leaves any of them
/// below zero is violating. So the least important pods of a budget are the violating ones.
fn violating_pods(state: &ClusterState, potential: &[Resident]) -> Vec<bool> {
    let mut left: BTreeMap<u32, i64> = BTreeMap::new();
    let ledger = state.budgets();
    potential
        .iter()
        .map(|r| {
            if !r.guarded {
                return false;
            }
            let budgets = state.pod(r.id).map_or(&[][..], |p| &p.budgets);
            let mut violating = false;
            for &b in budgets {
                let n = left.entry(b).or_insert_with(|| ledger.left()[b as usize]);
                *n -= 1;
                violating |= *n < 0;
            }
            violating
        })
        .collect()
}

/// The reference for [`dry_run_preemption`]: every server dry-run, the best candidate by the
/// chain.
pub fn dry_run_reference(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
) -> Decision {
    let mut best: Option<(ChainKey, ServerId, Vec<PodId>)> = None;
    let mut evaluated = 0;
    for server in at.problem.servers() {
        let (n, found) = dry_run_server(at, fits, server);
        evaluated += n;
        if let Some(c) = found
            && best
                .as_ref()
                .is_none_or(|b| c.0.compare(&b.0, at.state).is_lt())
        {
            best = Some(c);
        }
    }
    Decision {
        server: best.as_ref().map(|b| b.1),
        victims: best.map(|b| b.2).unwrap_or_default(),
        subsets_evaluated: evaluated,
        ..Decision::default()
    }
}
