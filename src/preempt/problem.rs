//! The fixed context of a preemption plan and the candidate rules every planner shares:
//! potential victims, admission, pod importance and the Kubernetes candidate chain.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::plan::cancel::Cancel;
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::{Admission, PreemptionSpec, TopologyQos};
use crate::topology::eligibility::Eligibility;
use crate::topology::state::{ClusterState, Pod};
use crate::topology::{Cluster, CoreSet, Domain, GpuSet, Level, PodId, Request, ServerId};

use super::objective::CostModel;

/// Above this many servers, the dry-run planners' per-server bounds run on rayon's threads in
/// chunks of servers; below it the overhead would outweigh the gain. (FlexTopo's passes stay
/// sequential: with the scan memos they are bound by memory.)
pub const PARALLEL_MIN_SERVERS: usize = 1024;

/// The fixed context of one plan: cluster, spec and cost model.
#[derive(Debug, Clone)]
pub struct Problem<'a> {
    /// The resolved cluster.
    pub cluster: &'a Cluster,
    /// The preemption workload being planned.
    pub spec: &'a PreemptionSpec,
    /// The canonical objective (DESIGN §5.4) every decision is priced by.
    pub cost: CostModel,
    /// Clusters of at least this many servers spread the per-server work of a decision over
    /// rayon's threads ([`PARALLEL_MIN_SERVERS`]; tests move it to compare both paths).
    pub parallel_min_servers: usize,
    /// Read between events and inside the exact searches: a stop request ends a run early.
    pub cancel: Cancel,
    /// Which servers each class may land on and whether it may evict: the one filter every
    /// planner asks ([`crate::topology::eligibility`]).
    pub eligibility: Arc<Eligibility>,
}

impl<'a> Problem<'a> {
    /// The context of a plan of `spec` on `cluster`, with default parallelism and no stop request.
    pub fn new(cluster: &'a Cluster, spec: &'a PreemptionSpec) -> Self {
        Problem {
            cluster,
            spec,
            cost: CostModel::new(spec),
            parallel_min_servers: PARALLEL_MIN_SERVERS,
            cancel: Cancel::never(),
            eligibility: Arc::new(Eligibility::new(cluster, spec)),
        }
    }

    /// Whether the scheduler's filter lets `p` onto `server` (labels, taints, cordon,
    /// readiness).
    pub fn eligible(&self, server: ServerId, p: &Preemptor) -> bool {
        self.eligibility.allows(p.workload, server)
    }

    /// Whether `p` may evict (its class's `preemption_policy` is not `never`).
    pub fn evicts(&self, p: &Preemptor) -> bool {
        self.eligibility.evicts(p.workload)
    }

    /// The priority below which `p` may evict: its own, or the lowest there is when its
    /// class's `preemption_policy` is `never` (nothing is below it).
    pub fn eviction_reach(&self, p: &Preemptor) -> i64 {
        if self.evicts(p) { p.priority } else { i64::MIN }
    }

    /// Whether a pod of `priority` that is `preemptible` is a potential victim of `p`: it is
    /// preemptible, of strictly lower priority, and `p` may evict at all.
    pub fn may_evict(&self, p: &Preemptor, priority: i64, preemptible: bool) -> bool {
        preemptible && priority < self.eviction_reach(p)
    }

    /// Whether hard budgets (`respect_pdb`) can refuse a victim set of `p` on some server:
    /// a budget with something left covers more of `p`'s potential victims on one server than
    /// it allows. (A spent budget's pods are not preemptible at all.) When not, every victim
    /// set is within the budgets, and the fast searches decide as they do without them.
    pub fn budgets_bind(&self, state: &ClusterState, p: &Preemptor) -> bool {
        let ledger = state.budgets();
        if !ledger.hard() || ledger.is_empty() {
            return false;
        }
        let mut per_server: std::collections::BTreeMap<ServerId, i64> = Default::default();
        ledger.left().iter().enumerate().any(|(b, &left)| {
            per_server.clear();
            ledger.members(b as u32).iter().any(|&id| {
                let Some(pod) = state.pod(id) else {
                    return false;
                };
                if !self.may_evict(p, pod.priority, pod.preemptible) {
                    return false;
                }
                let n = per_server.entry(pod.server).or_default();
                *n += 1;
                *n > left
            })
        })
    }

    /// The per-chunk results of a parallel pass over the servers, in chunk order, moved into
    /// one vector allocated once (a growing one would copy a large cluster's results again
    /// and again).
    pub fn concat<T>(parts: Vec<Vec<T>>) -> Vec<T> {
        let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        for part in parts {
            all.extend(part);
        }
        all
    }

    /// Whether per-server work runs in parallel on this cluster.
    pub fn parallel(&self) -> bool {
        self.cluster.servers.len() >= self.parallel_min_servers
    }

    /// The potential victims of `p` on `server`: preemptible pods of strictly lower priority,
    /// ascending pod id.
    pub fn potential_victims(
        &self,
        state: &ClusterState,
        server: ServerId,
        p: &Preemptor,
    ) -> Vec<PodId> {
        state.servers()[server.index()]
            .residents()
            .iter()
            .filter(|pod| self.may_evict(p, pod.priority, pod.preemptible))
            .map(|pod| pod.id)
            .collect()
    }

    /// The level `p` must reach on `server` (its required level on that server type).
    pub fn required_level(&self, server: ServerId, p: &Preemptor) -> Option<Level> {
        self.cluster.type_of(server).required_level(p.request)
    }

    /// Whether a placement at `level` meets `p`'s topology QoS on `server`: a guaranteed pod
    /// must reach its required level; the other classes meet it anywhere. Topology-aware
    /// filters (FlexTopo's, `k8s-nrt`'s) test this whatever the admission mode.
    pub fn meets_qos(&self, server: ServerId, p: &Preemptor, level: Level) -> bool {
        p.qos != TopologyQos::Guaranteed
            || !self.cluster.type_of(server).enforces_alignment()
            || self.required_level(server, p).is_some_and(|r| level <= r)
    }

    /// `p`'s QoS requirement, computed once per decision for the hot loops of the
    /// topology-aware planners: per server type, the domains a placement meeting it could use
    /// (the required level comes from running the allocator on an empty server).
    pub fn qos_test(&self, p: &Preemptor) -> QosTest {
        let domains = self
            .cluster
            .types
            .iter()
            .map(|t| {
                let guaranteed = p.qos == TopologyQos::Guaranteed && t.enforces_alignment();
                let required = t.required_level(p.request);
                Level::ALL
                    .into_iter()
                    .filter(|&level| !guaranteed || required.is_some_and(|r| level <= r))
                    .flat_map(|level| {
                        t.domains_for(p.request, level)
                            .iter()
                            .map(move |d| (level, *d))
                    })
                    .filter(|(_, d)| {
                        d.gpus.len() >= p.request.gpus && d.cores.len() >= p.request.cores
                    })
                    .collect()
            })
            .collect();
        QosTest {
            request: p.request,
            domains,
            allowed: self.eligibility.flags(p.workload),
        }
    }

    /// Whether `p` may be placed on `server` at `level`: the scheduler's filter lets it onto
    /// the node, and the node admits it (under `kubelet` admission the QoS must be met; under
    /// `bind` every placement is admitted).
    pub fn admits(&self, server: ServerId, p: &Preemptor, level: Level) -> bool {
        self.eligible(server, p) && self.node_admits(server, p, level)
    }

    /// The node's (kubelet's) half of [`Problem::admits`]: it depends on the server only
    /// through its type, so per-type tables may cache it; the filter's half is per server.
    pub fn node_admits(&self, server: ServerId, p: &Preemptor, level: Level) -> bool {
        self.spec.simulation.admission == Admission::Bind || self.meets_qos(server, p, level)
    }

    /// Every server id, ascending.
    pub fn servers(&self) -> impl Iterator<Item = ServerId> + use<> {
        (0..self.cluster.servers.len() as u32).map(ServerId)
    }
}

/// [`Problem::meets_qos`] for one preemptor, as the domains it leaves usable.
#[derive(Debug, Clone)]
pub struct QosTest {
    request: Request,
    /// Per server type: the domains of the levels the QoS allows that are large enough for
    /// the request, best level first.
    domains: Vec<Vec<(Level, Domain)>>,
    /// The servers the scheduler's filter lets the preemptor onto (`None`: all).
    allowed: Option<Arc<[bool]>>,
}

impl QosTest {
    /// The domains a placement meeting the QoS could use on `server`, best level first.
    pub fn domains(&self, cluster: &Cluster, server: ServerId) -> &[(Level, Domain)] {
        if let Some(allowed) = &self.allowed
            && !allowed.get(server.index()).copied().unwrap_or(true)
        {
            return &[];
        }
        &self.domains[cluster.server(server).type_id.index()]
    }

    /// The level the node allocator ([`place`](crate::topology::place)) reaches on `server`
    /// with these free GPUs and cores when it meets the QoS, else `None`: counting only, in
    /// the domains that could qualify.
    pub fn placed_level(
        &self,
        cluster: &Cluster,
        server: ServerId,
        gpus: GpuSet,
        cores: CoreSet,
    ) -> Option<Level> {
        let req = self.request;
        if gpus.len() < req.gpus || cores.len() < req.cores {
            return None;
        }
        self.domains(cluster, server)
            .iter()
            .find(|(_, d)| {
                gpus.and(d.gpus).len() >= req.gpus && cores.and(d.cores).len() >= req.cores
            })
            .map(|(level, _)| *level)
    }
}

/// One preemptor to decide, on the state it faces.
#[derive(Debug, Clone, Copy)]
pub struct DecisionPoint<'a> {
    /// The plan's fixed context.
    pub problem: &'a Problem<'a>,
    /// The allocation state the preemptor faces (earlier decisions applied).
    pub state: &'a ClusterState,
    /// The pod to place.
    pub preemptor: &'a Preemptor,
}

/// A planner's choice for one preemptor: a server and the victims to evict there, or none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// The chosen server; `None` leaves the preemptor unplaced.
    pub server: Option<ServerId>,
    /// Pods to evict on that server, ascending id (empty when it fits without eviction).
    pub victims: Vec<PodId>,
    /// Subsets of victims tried (a deterministic cost unit).
    pub subsets_evaluated: u64,
    /// The enumeration budget cut the search short.
    pub truncated: bool,
    /// An exact planner's solve stopped at its time limit: the decision is not proven optimal.
    pub unproven: bool,
    /// GPUs and cores chosen by the planner itself (joint planners); otherwise the node
    /// allocator places the pod after the eviction.
    pub placement: Option<(GpuSet, CoreSet)>,
    /// Evict the victims but leave the pod unplaced (a joint plan that evicts for a preemptor
    /// it cannot place, as the default does when admission fails).
    pub refuse: bool,
    /// FlexTopo's Eq. 1 terms of the chosen candidate, as its search ranked it.
    pub score: Option<ScoreTerms>,
    /// This decision is the per-event optimum of its state (`ilp`), of this cost: planners
    /// that faced the same state take it as theirs instead of solving it again.
    pub optimum_cost: Option<f64>,
}

/// FlexTopo's Eq. 1 of one candidate: S = α·P + (1 − α)·T.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreTerms {
    /// α ∈ [0, 1]: weight of P against T (`[flextopo] alpha`).
    pub alpha: f64,
    /// P ∈ [0, 1]: fewer, less important victims score higher (`priority_norm`).
    pub priority_term: f64,
    /// T ∈ [0, 1] of `scored_level` (`topology_score`).
    pub topology_term: f64,
    /// The level T was scored at (`score_basis`: the placement's, or the victims' union's).
    pub scored_level: Level,
    /// S = α·P + (1 − α)·T; the highest wins.
    pub score: f64,
}

/// Pod importance (the reprieve order): higher priority first, then the earlier start (absent
/// = latest), then the lexicographically larger name.
pub fn more_important(a: &Pod, b: &Pod) -> Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| start_key(a.start_time_s).total_cmp(&start_key(b.start_time_s)))
        .then_with(|| b.name.cmp(&a.name))
}

/// A start time as the chain compares it: absent = latest.
pub fn start_key(t: Option<f64>) -> f64 {
    t.unwrap_or(f64::INFINITY)
}

/// The Kubernetes candidate chain key of a (server, victims) candidate; smaller is better.
/// Numeric keys first; the victim names (the last key) are compared only on a full tie, so
/// ranking many candidates allocates nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainKey {
    has_victims: bool,
    /// Victims whose eviction violates a PodDisruptionBudget (kube-scheduler's first
    /// criterion; 0 for every planner but the default's dry run).
    pdb_violations: usize,
    highest_priority: i64,
    adjusted_sum: i128,
    victim_count: usize,
    /// Earliest start among the highest-priority victims; later is better.
    earliest_start_of_highest: f64,
    /// Rank of the server's name in ascending name order.
    server_rank: usize,
    victims: Vec<PodId>,
}

impl ChainKey {
    /// The key of evicting `victims` (looked up in `state`) on `server`.
    pub fn new(
        cluster: &Cluster,
        state: &ClusterState,
        server: ServerId,
        victims: &[PodId],
    ) -> Self {
        let facts = victims
            .iter()
            .filter_map(|id| state.pod(*id))
            .map(|p| (p.priority, p.start_time_s));
        Self::from_facts(cluster, server, victims.to_vec(), facts)
    }

    /// From each victim's priority and start time, already at hand.
    pub fn from_facts(
        cluster: &Cluster,
        server: ServerId,
        victims: Vec<PodId>,
        facts: impl Iterator<Item = (i64, Option<f64>)>,
    ) -> Self {
        let mut highest = i64::MIN;
        let mut adjusted_sum = 0i128;
        let mut earliest = f64::INFINITY;
        let mut count = 0;
        for (priority, start) in facts {
            count += 1;
            adjusted_sum += priority as i128 + (1i128 << 31);
            let start = start_key(start);
            if priority > highest {
                highest = priority;
                earliest = start;
            } else if priority == highest {
                earliest = earliest.min(start);
            }
        }
        ChainKey {
            has_victims: count > 0,
            pdb_violations: 0,
            highest_priority: highest,
            adjusted_sum,
            victim_count: count,
            earliest_start_of_highest: earliest,
            server_rank: cluster.name_rank(server),
            victims,
        }
    }

    /// The numeric key (victim names aside) of a candidate on `server` with `count` victims,
    /// the highest priority `highest_priority`, priority sum `priority_sum` and earliest start
    /// among the highest-priority victims `latest_earliest_start` (a [`start_key`]).
    pub fn numeric_bound(
        cluster: &Cluster,
        server: ServerId,
        count: usize,
        highest_priority: i64,
        priority_sum: i64,
        latest_earliest_start: f64,
    ) -> Self {
        ChainKey {
            has_victims: count > 0,
            pdb_violations: 0,
            highest_priority: if count > 0 {
                highest_priority
            } else {
                i64::MIN
            },
            adjusted_sum: priority_sum as i128 + count as i128 * (1i128 << 31),
            victim_count: count,
            earliest_start_of_highest: if count > 0 {
                latest_earliest_start
            } else {
                f64::INFINITY
            },
            server_rank: cluster.name_rank(server),
            victims: Vec::new(),
        }
    }

    /// A key no worse than that of any candidate on `server` with at least `count` victims
    /// drawn from `victims` (each a priority and a [`start_key`]), and the lowest priority sum
    /// of `count` of them: what pruning compares whole servers by. The highest priority is at
    /// least the count-th lowest; the priorities shifted by 2^31 (never negative) sum to at
    /// least those of the `count` lowest; the earliest start among the highest-priority
    /// victims is at most the count-th latest when all share one priority (all are then among
    /// the highest), else at most the latest (one victim may be alone at the top). Reorders
    /// `victims`.
    pub fn best_possible(
        cluster: &Cluster,
        server: ServerId,
        count: usize,
        victims: &mut [(i64, f64)],
    ) -> (Self, i64) {
        let count = count.min(victims.len());
        let first = victims.first().map_or(0, |v| v.0);
        // One priority (the common case) needs no sort by priority.
        let one_priority = victims.iter().all(|v| v.0 == first);
        if !one_priority {
            victims.sort_unstable_by_key(|v| v.0);
        }
        let lowest_sum: i64 = victims[..count].iter().map(|v| v.0).sum();
        let (highest, latest_earliest) = match count {
            0 => (i64::MIN, f64::INFINITY),
            _ if one_priority => {
                let (_, kth_latest, _) =
                    victims.select_nth_unstable_by(count - 1, |a, b| b.1.total_cmp(&a.1));
                (first, kth_latest.1)
            }
            _ => (
                victims[count - 1].0,
                victims
                    .iter()
                    .map(|v| v.1)
                    .fold(f64::NEG_INFINITY, f64::max),
            ),
        };
        let key = Self::numeric_bound(cluster, server, count, highest, lowest_sum, latest_earliest);
        (key, lowest_sum)
    }

    /// The key with `n` victims that violate a PodDisruptionBudget.
    pub fn with_pdb_violations(self, n: usize) -> Self {
        ChainKey {
            pdb_violations: n,
            ..self
        }
    }

    /// The full chain: the numeric keys, then the sorted lists of victim names, ascending.
    pub fn compare(&self, other: &ChainKey, state: &ClusterState) -> Ordering {
        self.compare_numeric(other).then_with(|| {
            victim_names(state, &self.victims).cmp(&victim_names(state, &other.victims))
        })
    }

    /// Every key but the victim names.
    pub fn compare_numeric(&self, other: &ChainKey) -> Ordering {
        self.has_victims
            .cmp(&other.has_victims)
            .then(self.pdb_violations.cmp(&other.pdb_violations))
            .then(self.highest_priority.cmp(&other.highest_priority))
            .then(self.adjusted_sum.cmp(&other.adjusted_sum))
            .then(self.victim_count.cmp(&other.victim_count))
            .then(
                other
                    .earliest_start_of_highest
                    .total_cmp(&self.earliest_start_of_highest),
            )
            .then(self.server_rank.cmp(&other.server_rank))
    }
}

fn victim_names<'s>(state: &'s ClusterState, victims: &[PodId]) -> Vec<&'s str> {
    let mut names: Vec<&str> = victims
        .iter()
        .filter_map(|id| state.pod(*id).map(|p| p.name.as_str()))
        .collect();
    names.sort_unstable();
    names
}

/// Free GPUs and cores of `server` after evicting `victims`.
pub fn freed(state: &ClusterState, server: ServerId, victims: &[PodId]) -> (GpuSet, CoreSet) {
    let a = &state.servers()[server.index()];
    victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .fold((a.free_gpus(), a.free_cores()), |(g, c), p| {
            (g.or(p.gpus), c.or(p.cores))
        })
}
