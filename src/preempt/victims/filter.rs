//! FlexTopo's filter, apart from the searches that use it: which servers could admit the pod
//! at all, and the counting bounds that let every search skip subsets too small to fit. Its
//! results are kept in each server's scan memo, so the next decision for a preemptor of the
//! same class reuses them while the server is unchanged.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{ChainKey, Problem, QosTest, start_key};
use crate::spec::preemption::TopologyQos;
use crate::topology::state::{ClusterState, Resident, ServerAlloc};
use crate::topology::{Cluster, CoreSet, Domain, GpuSet, Level, Request, ServerId};

/// What sourcing and scoring need of a potential victim: its server's copy of its facts.
pub type VictimFacts = Resident;

pub(crate) struct Qualifying<'s> {
    pub(crate) server: ServerId,
    /// The server's potential victims, ascending pod id: its residents, or the memo's list of
    /// those that are potential victims.
    pub(super) facts: Cow<'s, [VictimFacts]>,
    /// The memo's screen the facts come from (`None` when the memo was full).
    screen: Option<&'s Screen>,
    pub(crate) victims: usize,
    /// The lowest and highest priority of the potential victims (`None`: there are none).
    pub(crate) priorities: Option<(i64, i64)>,
    /// No victim set smaller than this can admit the pod (a counting bound per domain).
    pub(crate) min_victims: usize,
    /// The same bound per level (indexed as [`Level::ALL`]): no set smaller than
    /// `level_bounds[l]` reaches level `l`; `None` when none can (or the QoS forbids it).
    pub(crate) level_bounds: [Option<usize>; 3],
    /// Subsets tried on this server (the budget is per server).
    pub(crate) used: u64,
    /// The server has yielded its candidates (IMP with `imp_scope = "node"`).
    pub(crate) done: bool,
}

/// The filter's result for one server and one preemptor class, kept in the server's scan
/// memo: the next decision for a preemptor of the same class reuses it while the server is
/// unchanged. `key` is everything the filter reads besides the server.
struct Screen {
    key: ScreenKey,
    /// The server's potential victims, ascending pod id, unless they are all its residents
    /// (`None`, the common case: nothing is copied).
    facts: Option<Vec<VictimFacts>>,
    /// `None`: the server does not qualify.
    level_bounds: Option<[Option<usize>; 3]>,
    priorities: Option<(i64, i64)>,
    /// [`Qualifying::tightest_span`]'s counts, once asked.
    span_capacity: OnceLock<[Option<usize>; 2]>,
    /// [`Qualifying::best_chain`] at the first size asked.
    best_chain: OnceLock<(usize, BestChain)>,
}

/// What the best `k`-subset of a server's victims could be: the best chain key any could have
/// and the lowest priority sum of `k` victims, and whether the victims share one priority.
#[derive(Clone)]
pub(crate) struct BestChain {
    pub(crate) chain: ChainKey,
    pub(crate) lowest_sum: i64,
    pub(crate) one_priority: bool,
}

#[derive(Clone, Copy, PartialEq)]
struct ScreenKey {
    priority: i64,
    request: Request,
    qos: TopologyQos,
}

impl Qualifying<'_> {
    /// The server's potential victims, ascending pod id.
    pub(crate) fn facts(&self) -> &[VictimFacts] {
        &self.facts
    }

    /// The finest level the victims of a `k`-subset can span (under `score_basis =
    /// "victims"` the subset's level): a subset lies within one domain only if all its
    /// victims do.
    pub(crate) fn tightest_span(&self, cluster: &Cluster, k: usize) -> Level {
        // Per level below the whole server (NUMA, socket): the most potential victims lying
        // wholly inside one domain of that level (`None`: the type has no such domain).
        let count = || {
            let t = cluster.type_of(self.server);
            [Level::Numa, Level::Socket].map(|level| {
                let inside = |d: &Domain| {
                    self.facts
                        .iter()
                        .filter(|v| v.gpus.is_subset(&d.gpus) && v.cores.is_subset(&d.cores))
                        .count()
                };
                t.domains(level).iter().map(inside).max()
            })
        };
        let capacity = match self.screen {
            Some(screen) => *screen.span_capacity.get_or_init(count),
            None => count(),
        };
        [Level::Numa, Level::Socket]
            .into_iter()
            .zip(capacity)
            .find(|(_, most)| most.is_some_and(|m| m >= k))
            .map_or(Level::CrossSocket, |(level, _)| level)
    }

    /// [`BestChain`] of the server's `k`-subsets, kept with its screen for the first `k`
    /// asked (a sequence of decisions for one class asks the same size again and again).
    pub(crate) fn best_chain(
        &self,
        cluster: &Cluster,
        k: usize,
        scratch: &mut Vec<(i64, f64)>,
    ) -> BestChain {
        let compute = |scratch: &mut Vec<(i64, f64)>| {
            scratch.clear();
            scratch.extend(
                self.facts
                    .iter()
                    .map(|f| (f.priority, start_key(f.start_time_s))),
            );
            let one_priority = scratch.iter().all(|v| v.0 == scratch[0].0);
            let (chain, lowest_sum) = ChainKey::best_possible(cluster, self.server, k, scratch);
            BestChain {
                chain,
                lowest_sum,
                one_priority,
            }
        };
        match self.screen {
            Some(screen) => {
                let (at, kept) = screen.best_chain.get_or_init(|| (k, compute(scratch)));
                if *at == k {
                    kept.clone()
                } else {
                    compute(scratch)
                }
            }
            None => compute(scratch),
        }
    }
}

/// The filter's result: the qualifying servers in server order.
#[derive(Default)]
pub(crate) struct Filtered<'s> {
    pub(crate) servers: Vec<Qualifying<'s>>,
}

impl<'s> Filtered<'s> {
    /// FlexTopo's filter over the whole cluster, each server's result taken from its scan
    /// memo when the server is unchanged since a preemptor of the same class was filtered.
    /// One pass in server order: with the results kept, it is bound by memory, and rayon's
    /// threads made it slower, on cold memos too (their results are allocated per server).
    pub(crate) fn new(
        problem: &Problem<'_>,
        qos: &QosTest,
        state: &'s ClusterState,
        p: &Preemptor,
    ) -> Self {
        let key = ScreenKey {
            priority: p.priority,
            request: p.request,
            qos: p.qos,
        };
        let mut gains = Vec::new();
        let mut servers = Vec::with_capacity(problem.cluster.servers.len());
        for server in problem.servers() {
            let a = &state.servers()[server.index()];
            let kept = state.memo(server).get_or_insert(
                |s: &Screen| s.key == key,
                || screen(problem, qos, a, (p, key), server, &mut gains),
            );
            let (level_bounds, priorities, facts, kept) = match kept {
                Ok(s) => (
                    s.level_bounds,
                    s.priorities,
                    s.facts
                        .as_deref()
                        .map_or(Cow::Borrowed(a.residents()), Cow::Borrowed),
                    Some(s),
                ),
                // The memo is full: this decision keeps its own copy.
                Err(s) => (
                    s.level_bounds,
                    s.priorities,
                    Cow::Owned(s.facts.clone().unwrap_or_else(|| a.residents().to_vec())),
                    None,
                ),
            };
            if let Some(level_bounds) = level_bounds {
                servers.push(Qualifying {
                    server,
                    victims: facts.len(),
                    priorities,
                    min_victims: level_bounds.iter().flatten().copied().min().unwrap_or(0),
                    level_bounds,
                    facts,
                    screen: kept,
                    used: 0,
                    done: false,
                });
            }
        }
        Filtered { servers }
    }
}

/// The filter for one server: it qualifies when draining every potential victim admits a
/// placement that meets the QoS.
fn screen(
    problem: &Problem<'_>,
    qos: &QosTest,
    a: &ServerAlloc,
    (p, key): (&Preemptor, ScreenKey),
    server: ServerId,
    gains: &mut Vec<u32>,
) -> Screen {
    let is_victim = |pod: &VictimFacts| problem.may_evict(p, pod.priority, pod.preemptible);
    let (mut g, mut c) = (a.free_gpus(), a.free_cores());
    for pod in a.residents().iter().filter(|pod| is_victim(pod)) {
        g = g.or(pod.gpus);
        c = c.or(pod.cores);
    }
    // The counting test gives the level `place` would reach, without choosing ids.
    if qos.placed_level(problem.cluster, server, g, c).is_none() {
        return Screen {
            key,
            facts: None,
            level_bounds: None,
            priorities: None,
            span_capacity: OnceLock::new(),
            best_chain: OnceLock::new(),
        };
    }
    let facts = (!a.residents().iter().all(is_victim))
        .then(|| a.residents().iter().copied().filter(is_victim).collect());
    let victims = facts.as_deref().unwrap_or(a.residents());
    let priorities = victims
        .iter()
        .map(|v| v.priority)
        .fold(None, |span: Option<(i64, i64)>, x| {
            Some(span.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))))
        });
    let level_bounds = victims_needed_per_level(
        problem,
        qos,
        server,
        p,
        (a.free_gpus(), a.free_cores()),
        victims,
        gains,
    );
    Screen {
        key,
        facts,
        level_bounds: Some(level_bounds),
        priorities,
        span_capacity: OnceLock::new(),
        best_chain: OnceLock::new(),
    }
}

/// A lower bound of the victims needed on a server to reach each level: for each admissible
/// domain of the level, the fewest victims whose GPUs (and, separately, cores) inside it
/// could cover the shortfall.
fn victims_needed_per_level(
    problem: &Problem<'_>,
    qos: &QosTest,
    server: ServerId,
    p: &Preemptor,
    (free_gpus, free_cores): (GpuSet, CoreSet),
    facts: &[VictimFacts],
    gains: &mut Vec<u32>,
) -> [Option<usize>; 3] {
    // `gains` is one scratch buffer for every domain and server of a decision.
    let mut bounds = [None; 3];
    // Only the domains that could hold the request within the QoS can bound anything.
    for (level, d) in qos.domains(problem.cluster, server) {
        let need_g = p.request.gpus.saturating_sub(free_gpus.and(d.gpus).len());
        let need_c = p
            .request
            .cores
            .saturating_sub(free_cores.and(d.cores).len());
        let Some(kg) = fewest(
            need_g,
            facts.iter().map(|v| v.gpus.and(d.gpus).len()),
            gains,
        ) else {
            continue;
        };
        let Some(kc) = fewest(
            need_c,
            facts.iter().map(|v| v.cores.and(d.cores).len()),
            gains,
        ) else {
            continue;
        };
        let slot: &mut Option<usize> = &mut bounds[*level as usize];
        *slot = Some(slot.map_or(kg.max(kc), |b| b.min(kg.max(kc))));
    }
    bounds
}

/// The fewest of `gains` whose sum reaches `need` (`None`: all of them fall short).
pub(crate) fn fewest(
    need: u32,
    gains: impl Iterator<Item = u32>,
    scratch: &mut Vec<u32>,
) -> Option<usize> {
    if need == 0 {
        return Some(0);
    }
    scratch.clear();
    let (mut total, mut largest) = (0, 0);
    for g in gains.filter(|&g| g > 0) {
        total += g;
        largest = largest.max(g);
        scratch.push(g);
    }
    if total < need {
        return None;
    }
    // Unit gains (one GPU per pod) need no sorting.
    if largest >= need {
        return Some(1);
    }
    if largest == 1 {
        return Some(need as usize);
    }
    scratch.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0;
    scratch
        .iter()
        .position(|g| {
            sum += g;
            sum >= need
        })
        .map(|i| i + 1)
}
