//! What one server can offer a gang: for each number of its pods, the cheapest victim set
//! that makes room for them there (by the canonical cost, for the optimum) and the smallest
//! one (fewest victims, then the lowest priority sum, for FlexTopo's incremental search).
//! Servers do not interact within one decision, so these menus decide a gang exactly once
//! they are combined over the servers of a domain (`table`).

use super::fit::{caps, most, split};
use super::request::Gang;
use crate::preempt::problem::Problem;
use crate::spec::preemption::{Admission, TopologyQos};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId};

/// Above this many potential victims on one server, only the cheapest this many are
/// enumerated and the menu is not exhaustive (a decision built on it is not proven).
pub const MAX_ENUMERATED_VICTIMS: usize = 16;

/// One way to hold `j` pods on a server.
#[derive(Debug, Clone, PartialEq)]
pub struct HostOption {
    /// Pods evicted, ascending id.
    pub victims: Vec<PodId>,
    /// Σ canonical cost of the victims.
    pub victim_cost: f64,
    /// Σ priority of the victims.
    pub priority_sum: i64,
    /// Σ canonical placement cost of the pods (their NUMA / socket / cross-socket levels).
    pub placement_cost: f64,
}

impl HostOption {
    /// Victims and placements together.
    pub fn cost(&self) -> f64 {
        self.victim_cost + self.placement_cost
    }

    /// FlexTopo's order: fewest victims, then the least important, then the best levels.
    pub fn imp_key(&self) -> (usize, i64, f64) {
        (self.victims.len(), self.priority_sum, self.placement_cost)
    }
}

/// What one server offers a gang.
#[derive(Debug, Clone, PartialEq)]
pub struct HostMenu {
    /// The server.
    pub server: ServerId,
    /// Index `j`: the cheapest way to hold `j` pods (`[0]` evicts nothing); `None` where `j`
    /// pods cannot fit whatever is evicted.
    pub cheapest: Vec<Option<HostOption>>,
    /// Index `j`: the fewest victims that make room for `j` pods.
    pub smallest: Vec<Option<HostOption>>,
    /// Victim subsets enumerated.
    pub subsets_evaluated: u64,
    /// Every victim subset was enumerated (the menu is exact).
    pub exhaustive: bool,
}

impl HostMenu {
    /// The most pods the server can hold.
    pub fn most(&self) -> u32 {
        self.cheapest.iter().rposition(Option::is_some).unwrap_or(0) as u32
    }
}

/// The worst level at which a pod of `gang` is admitted on `server` (`None`: nowhere there):
/// a guaranteed pod on a node that enforces alignment needs its required level under
/// `kubelet` admission; every other pod is admitted anywhere.
pub fn worst_level(problem: &Problem<'_>, gang: &Gang, server: ServerId) -> Option<Level> {
    let t = problem.cluster.type_of(server);
    if gang.qos == TopologyQos::Guaranteed
        && t.enforces_alignment()
        && problem.spec.simulation.admission == Admission::Kubelet
    {
        t.required_level(gang.request)
    } else {
        t.required_level(gang.request).map(|_| Level::CrossSocket)
    }
}

/// The menu of `server` for up to `max_pods` pods of `gang` on `state`.
pub fn host_menu(
    problem: &Problem<'_>,
    state: &ClusterState,
    gang: &Gang,
    server: ServerId,
    max_pods: u32,
) -> HostMenu {
    let mut menu = HostMenu {
        server,
        cheapest: vec![Some(empty_option())],
        smallest: vec![Some(empty_option())],
        subsets_evaluated: 0,
        exhaustive: true,
    };
    let pod = gang.any_pod();
    let Some(worst) = worst_level(problem, gang, server) else {
        return menu;
    };
    if !problem.eligible(server, &pod) || max_pods == 0 {
        return menu;
    }
    let t = problem.cluster.type_of(server);
    let alloc = &state.servers()[server.index()];
    let mut candidates: Vec<_> = alloc
        .residents()
        .iter()
        .filter(|r| problem.may_evict(&pod, r.priority, r.preemptible))
        .map(|r| (problem.cost.victim_cost(r.priority), *r))
        .collect();
    if candidates.len() > MAX_ENUMERATED_VICTIMS {
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)));
        candidates.truncate(MAX_ENUMERATED_VICTIMS);
        menu.exhaustive = false;
    }
    candidates.sort_by_key(|c| c.1.id);
    let level_cost = Level::ALL.map(|l| problem.cost.placement_cost(t, l));
    let n = candidates.len();
    let subsets = 1usize << n;
    menu.cheapest.resize(max_pods as usize + 1, None);
    menu.smallest.resize(max_pods as usize + 1, None);
    // Freed resources, cost and priority sum of each subset, built from the subset without
    // its lowest member.
    let mut freed: Vec<(GpuSet, CoreSet, f64, i64)> = Vec::with_capacity(subsets);
    freed.push((alloc.free_gpus(), alloc.free_cores(), 0.0, 0));
    for mask in 1..subsets {
        let low = mask.trailing_zeros() as usize;
        let (g, c, cost, prio) = freed[mask & (mask - 1)];
        let (vc, r) = candidates[low];
        freed.push((g.or(r.gpus), c.or(r.cores), cost + vc, prio + r.priority));
    }
    for (mask, &(g, c, victim_cost, priority_sum)) in freed.iter().enumerate() {
        let caps = caps(t, gang.request, g, c);
        let top = most(caps, worst).min(max_pods);
        for j in 1..=top {
            let Some(counts) = split(caps, j, worst) else {
                continue;
            };
            let placement_cost: f64 = counts
                .iter()
                .zip(level_cost)
                .map(|(&k, cost)| k as f64 * cost)
                .sum();
            let better_cost = menu.cheapest[j as usize].as_ref().is_none_or(|o| {
                (victim_cost + placement_cost, mask.count_ones() as usize)
                    < (o.cost(), o.victims.len())
            });
            let option = || HostOption {
                victims: (0..n)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| candidates[i].1.id)
                    .collect(),
                victim_cost,
                priority_sum,
                placement_cost,
            };
            let key = (mask.count_ones() as usize, priority_sum, placement_cost);
            let better_imp = menu.smallest[j as usize]
                .as_ref()
                .is_none_or(|o| key < o.imp_key());
            if better_cost {
                menu.cheapest[j as usize] = Some(option());
            }
            if better_imp {
                menu.smallest[j as usize] = Some(option());
            }
        }
    }
    menu.subsets_evaluated = subsets as u64;
    menu
}

fn empty_option() -> HostOption {
    HostOption {
        victims: Vec::new(),
        victim_cost: 0.0,
        priority_sum: 0,
        placement_cost: 0.0,
    }
}
