//! `kueue-tas`: Kueue's topology-aware scheduling of a gang (its `Topology` levels and podset
//! annotations), as documented and as its code does it.
//! - Capacity is counted per node by resource counts alone (Kueue does not see NUMA nodes),
//!   summed up the levels; a slice level rounds down to whole slices.
//! - Placement: from the preferred level (else the required one) outwards to the required
//!   level, the domain that fits with the least free capacity (BestFit); inside it, at each
//!   level down, the largest children first until one child can hold the rest, which goes to
//!   the smallest child that can.
//! - Preemption: with every pod of lower priority treated as gone, the placement above picks
//!   a domain; the candidates there are then kept back one at a time, most important first,
//!   as long as the gang still fits the domain. The victims are evicted; then each node's
//!   kubelet places its pods, and one that its Topology Manager refuses leaves the whole gang
//!   unplaced, its victims evicted for nothing (kueue #5243).

use std::collections::BTreeSet;

use super::decision::{GangDecision, GangPoint, PodPlacement};
use super::request::Gang;
use crate::plan::error::PlanningError;
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::{Decision, DecisionPoint, Problem, more_important};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Fabric, FabricLevel, GpuSet, PodId, ServerId, place};

/// Pods of `gang` one node holds by resource counts, with `removed` pods gone.
fn node_capacity(
    problem: &Problem<'_>,
    state: &ClusterState,
    gang: &Gang,
    server: ServerId,
    removed: &BTreeSet<PodId>,
) -> u32 {
    let t = problem.cluster.type_of(server);
    if !problem.eligible(server, &gang.any_pod()) || t.required_level(gang.request).is_none() {
        return 0;
    }
    let (gpus, cores) = free_with(state, server, removed);
    let gpus = gpus.and(t.usable(gang.request)).len();
    let by = |free: u32, need: u32| free.checked_div(need).unwrap_or(gang.pods);
    by(gpus, gang.request.gpus)
        .min(by(cores.len(), gang.request.cores))
        .min(gang.pods)
}

/// Free GPUs and cores of `server` with `removed` pods gone.
fn free_with(
    state: &ClusterState,
    server: ServerId,
    removed: &BTreeSet<PodId>,
) -> (GpuSet, CoreSet) {
    let a = &state.servers()[server.index()];
    a.residents()
        .iter()
        .filter(|r| removed.contains(&r.id))
        .fold((a.free_gpus(), a.free_cores()), |(g, c), r| {
            (g.or(r.gpus), c.or(r.cores))
        })
}

/// Capacities per level, host level first, up to the gang's required level.
struct Capacities {
    /// (level, capacity of each of its domains).
    levels: Vec<(FabricLevel, Vec<u32>)>,
}

impl Capacities {
    fn count(fabric: &Fabric, gang: &Gang, host: &[u32]) -> Capacities {
        let whole_slices = |level: FabricLevel, caps: Vec<u32>| match gang.slice {
            Some((size, at)) if at == level => caps.into_iter().map(|c| c / size * size).collect(),
            _ => caps,
        };
        let mut level = fabric.host();
        let mut levels = vec![(level, whole_slices(level, host.to_vec()))];
        while level > gang.required {
            let up = FabricLevel(level.0 - 1);
            let mut caps = vec![0u32; fabric.domains_at(up).len()];
            let below = &levels[levels.len() - 1].1;
            for (c, d) in fabric.domains_at(level).iter().enumerate() {
                if let Some(first) = d.servers.first() {
                    let parent = fabric.domain_of(up, *first) as usize;
                    caps[parent] = caps[parent].saturating_add(below[c]);
                }
            }
            levels.push((up, whole_slices(up, caps)));
            level = up;
        }
        Capacities { levels }
    }

    fn at(&self, level: FabricLevel) -> Option<(usize, &Vec<u32>)> {
        self.levels
            .iter()
            .position(|(l, _)| *l == level)
            .map(|i| (i, &self.levels[i].1))
    }

    /// BestFit from the preferred level outwards: the fitting domain with the least capacity.
    fn best_fit(&self, gang: &Gang) -> Option<(FabricLevel, u32)> {
        let start = gang.preferred.unwrap_or(gang.required).max(gang.required);
        let mut level = start;
        loop {
            if let Some((_, caps)) = self.at(level) {
                let best = caps
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c >= gang.pods)
                    .min_by_key(|(i, c)| (**c, *i));
                if let Some((d, _)) = best {
                    return Some((level, d as u32));
                }
            }
            if level <= gang.required {
                return None;
            }
            level = FabricLevel(level.0 - 1);
        }
    }

    /// Pods per node of `k` pods in `domain` at level index `at`: the largest children first
    /// until one can hold the rest, which goes to the smallest that can.
    fn descend(
        &self,
        fabric: &Fabric,
        at: usize,
        domain: u32,
        k: u32,
        out: &mut Vec<(ServerId, u32)>,
    ) {
        let (level, _) = self.levels[at];
        if k == 0 {
            return;
        }
        if at == 0 {
            if let Some(s) = fabric.domains_at(level)[domain as usize].servers.first() {
                out.push((*s, k));
            }
            return;
        }
        let (below_level, below) = &self.levels[at - 1];
        let mut children: Vec<(u32, u32)> = fabric
            .domains_at(*below_level)
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.servers
                    .first()
                    .is_some_and(|s| fabric.domain_of(level, *s) == domain)
            })
            .map(|(c, _)| (c as u32, below[c]))
            .collect();
        children.sort_by_key(|&(c, cap)| (std::cmp::Reverse(cap), c));
        let mut left = k;
        let mut used = vec![false; children.len()];
        while left > 0 {
            let fits = (0..children.len())
                .filter(|&i| !used[i] && children[i].1 >= left)
                .min_by_key(|&i| (children[i].1, children[i].0));
            if let Some(i) = fits {
                self.descend(fabric, at - 1, children[i].0, left, out);
                return;
            }
            let Some(i) = (0..children.len()).find(|&i| !used[i] && children[i].1 > 0) else {
                return;
            };
            used[i] = true;
            self.descend(fabric, at - 1, children[i].0, children[i].1, out);
            left -= children[i].1;
        }
    }
}

/// A domain: its level and its index there.
type DomainRef = (FabricLevel, u32);

/// Kueue's placement of `gang` with `removed` pods gone, limited to `within` (a domain) when
/// given: the domain and the pods per node.
fn fit(
    at: &GangPoint<'_>,
    removed: &BTreeSet<PodId>,
    within: Option<(FabricLevel, u32)>,
) -> Option<(DomainRef, Vec<(ServerId, u32)>)> {
    let fabric = &at.problem.cluster.fabric;
    let servers: Vec<ServerId> = match within {
        Some((l, d)) => fabric.domains_at(l)[d as usize].servers.clone(),
        None => at.problem.servers().collect(),
    };
    let mut host = vec![0u32; at.problem.cluster.servers.len()];
    for s in servers {
        host[s.index()] = node_capacity(at.problem, at.state, at.gang, s, removed);
    }
    let caps = Capacities::count(fabric, at.gang, &host);
    let chosen = match within {
        Some((l, d)) => caps
            .at(l)
            .filter(|(_, c)| c[d as usize] >= at.gang.pods)
            .map(|_| (l, d))?,
        None => caps.best_fit(at.gang)?,
    };
    let (index, _) = caps.at(chosen.0)?;
    let mut per_node = Vec::new();
    caps.descend(fabric, index, chosen.1, at.gang.pods, &mut per_node);
    per_node.sort_by_key(|(s, _)| *s);
    Some((chosen, per_node))
}

/// Kueue's decision for `gang`.
pub fn decide(at: &GangPoint<'_>) -> GangDecision {
    let problem = at.problem;
    let fabric = &problem.cluster.fabric;
    let mut trials = 1u64;
    let none = BTreeSet::new();
    if let Some((domain, per_node)) = fit(at, &none, None) {
        let mut d = bind(at, &none, &per_node);
        d.subsets_evaluated = trials;
        d.search = format!("fits {} without preemption", name(fabric, domain));
        return d;
    }
    let pod = at.gang.any_pod();
    let candidates: Vec<PodId> = at
        .state
        .pods()
        .filter(|(_, p)| problem.may_evict(&pod, p.priority, p.preemptible))
        .filter(|(_, p)| problem.eligible(p.server, &pod))
        .map(|(id, _)| id)
        .collect();
    let everything: BTreeSet<PodId> = candidates.iter().copied().collect();
    trials += 1;
    let Some((domain, _)) = fit(at, &everything, None) else {
        let mut d = GangDecision::none(
            "no domain fits even with every lower-priority pod treated as gone",
            trials,
        );
        d.subsets_evaluated = trials;
        return d;
    };
    let in_domain: BTreeSet<ServerId> = fabric.domains_at(domain.0)[domain.1 as usize]
        .servers
        .iter()
        .copied()
        .collect();
    let mut removed: BTreeSet<PodId> = candidates
        .iter()
        .copied()
        .filter(|id| {
            at.state
                .pod(*id)
                .is_some_and(|p| in_domain.contains(&p.server))
        })
        .collect();
    let mut order: Vec<PodId> = removed.iter().copied().collect();
    order.sort_by(|a, b| match (at.state.pod(*a), at.state.pod(*b)) {
        (Some(x), Some(y)) => more_important(x, y),
        _ => a.cmp(b),
    });
    for id in order {
        removed.remove(&id);
        trials += 1;
        if fit(at, &removed, Some(domain)).is_none() {
            removed.insert(id);
        }
    }
    let Some((_, per_node)) = fit(at, &removed, Some(domain)) else {
        return GangDecision::none("the domain no longer fits (internal)", trials);
    };
    let mut d = bind(at, &removed, &per_node);
    d.subsets_evaluated = trials;
    d.search = format!(
        "preempts in {} ({} victims kept after trying to keep each back)",
        name(fabric, domain),
        d.victims.len()
    );
    d
}

fn name(fabric: &Fabric, (level, domain): (FabricLevel, u32)) -> String {
    format!(
        "{} `{}`",
        fabric.level_name(level),
        fabric.domains_at(level)[domain as usize].name
    )
}

/// The victims evicted, then each node's kubelet placing its pods (the node allocator); a pod
/// it refuses leaves the gang unplaced.
fn bind(
    at: &GangPoint<'_>,
    removed: &BTreeSet<PodId>,
    per_node: &[(ServerId, u32)],
) -> GangDecision {
    let problem = at.problem;
    let mut d = GangDecision {
        victims: removed.iter().copied().collect(),
        ..GangDecision::default()
    };
    let mut k = 0;
    for &(server, j) in per_node {
        let t = problem.cluster.type_of(server);
        let (mut gpus, mut cores) = free_with(at.state, server, removed);
        for _ in 0..j {
            let pod = at.gang.pod(k);
            k += 1;
            match place(t, gpus, cores, at.gang.request) {
                Some(p) if problem.admits(server, &pod, p.level) => {
                    gpus = gpus.minus(p.gpus);
                    cores = cores.minus(p.cores);
                    d.pods.push(PodPlacement {
                        server,
                        gpus: p.gpus,
                        cores: p.cores,
                    });
                }
                _ => {
                    d.refused = true;
                    d.refused_at = Some(server);
                    d.pods.clear();
                    return d;
                }
            }
        }
    }
    d
}

/// The `kueue-tas` planner.
pub struct KueueTas;

impl PreemptionPlanner for KueueTas {
    fn name(&self) -> &'static str {
        "kueue-tas"
    }

    fn describe_search(&self, _decision: &Decision) -> String {
        "Kueue TAS: best-fit domain by counts; preemption treats the domain as empty, then keeps victims back one at a time".into()
    }

    /// A single pod is a gang of one that any node may hold.
    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let p = at.preemptor;
        let gang = Gang {
            name: p.name.clone(),
            workload: p.workload,
            priority: p.priority,
            request: p.request,
            qos: p.qos,
            pods: 1,
            required: FabricLevel::CLUSTER,
            preferred: None,
            slice: None,
        };
        let d = decide(&GangPoint {
            problem: at.problem,
            state: at.state,
            gang: &gang,
        });
        let placed = d.pods.first();
        Ok(Decision {
            server: placed.map(|p| p.server).or(d.refused_at),
            victims: d.victims.clone(),
            subsets_evaluated: d.subsets_evaluated,
            placement: placed.map(|p| (p.gpus, p.cores)),
            refuse: d.refused,
            ..Decision::default()
        })
    }

    fn decide_gang(&self, at: &GangPoint<'_>) -> Result<GangDecision, PlanningError> {
        Ok(decide(at))
    }

    fn gang_aware(&self) -> bool {
        true
    }
}
