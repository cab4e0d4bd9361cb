//! FlexTopo's filter, candidate sourcing over victim subsets and Eq. 1 scoring, shared by
//! its searches, and the reference search that enumerates every subset size by size.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::problem::{ChainKey, Decision, Problem, QosTest, start_key};
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::{ImpScope, PriorityNorm, ScoreBasis, TopologyQos};
use crate::topology::state::{ClusterState, Resident, ServerAlloc};
use crate::topology::{Cluster, CoreSet, Domain, GpuSet, Level, Request, ServerId};

pub(super) const SCORE_EPS: f64 = 1e-12;

/// What sourcing and scoring need of a potential victim: its server's copy of its facts.
pub type VictimFacts = Resident;

pub(super) struct Qualifying<'s> {
    pub(super) server: ServerId,
    /// The server's potential victims, ascending pod id: its residents, or the memo's list of
    /// those that are potential victims.
    facts: Cow<'s, [VictimFacts]>,
    /// The memo's screen the facts come from (`None` when the memo was full).
    screen: Option<&'s Screen>,
    pub(super) victims: usize,
    /// The lowest and highest priority of the potential victims (`None`: there are none).
    pub(super) priorities: Option<(i64, i64)>,
    /// No victim set smaller than this can admit the pod (a counting bound per domain).
    pub(super) min_victims: usize,
    /// The same bound per level (indexed as [`Level::ALL`]): no set smaller than
    /// `level_bounds[l]` reaches level `l`; `None` when none can (or the QoS forbids it).
    pub(super) level_bounds: [Option<usize>; 3],
    /// Subsets tried on this server (the budget is per server).
    pub(super) used: u64,
    /// The server has yielded its candidates (IMP with `imp_scope = "node"`).
    done: bool,
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
pub(super) struct BestChain {
    pub(super) chain: ChainKey,
    pub(super) lowest_sum: i64,
    pub(super) one_priority: bool,
}

#[derive(Clone, Copy, PartialEq)]
struct ScreenKey {
    priority: i64,
    request: Request,
    qos: TopologyQos,
}

impl Qualifying<'_> {
    /// The server's potential victims, ascending pod id.
    pub(super) fn facts(&self) -> &[VictimFacts] {
        &self.facts
    }

    /// The finest level the victims of a `k`-subset can span (under `score_basis =
    /// "victims"` the subset's level): a subset lies within one domain only if all its
    /// victims do.
    pub(super) fn tightest_span(&self, cluster: &Cluster, k: usize) -> Level {
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
    pub(super) fn best_chain(
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
pub(super) struct Filtered<'s> {
    pub(super) servers: Vec<Qualifying<'s>>,
}

impl<'s> Filtered<'s> {
    /// FlexTopo's filter over the whole cluster, each server's result taken from its scan
    /// memo when the server is unchanged since a preemptor of the same class was filtered.
    /// One pass in server order: with the results kept, it is bound by memory, and rayon's
    /// threads made it slower, on cold memos too (their results are allocated per server).
    pub(super) fn new(
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

    /// Sources the `k`-subsets of qualifying server `qi` into `sink` ([`source_subsets`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn source(
        &mut self,
        problem: &Problem<'_>,
        qos: &QosTest,
        state: &ClusterState,
        qi: usize,
        k: usize,
        budget: u64,
        sink: &mut Sink,
    ) -> (u64, bool) {
        let Qualifying {
            server,
            facts,
            used,
            ..
        } = &mut self.servers[qi];
        source_subsets(
            problem,
            qos,
            state,
            (qi, *server, used, facts),
            k,
            budget,
            sink,
        )
    }
}

/// A candidate: a subset of one qualifying server's victims, stored as a range of indices in
/// a shared arena (sourcing may produce thousands; none allocates).
pub(super) struct Candidate {
    pub(super) qualifying: usize,
    start: usize,
    pub(super) len: usize,
    level: Level,
    pub(super) priority_sum: i64,
}

/// Plans one preemptor by enumerating subsets; `early_stop` = Incremental Minimal Preemption.
pub(super) fn decide_by_enumeration(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    early_stop: bool,
) -> Decision {
    let settings = &problem.spec.flextopo;
    let budget = settings.max_subset_evaluations;
    // FlexTopo's guaranteed filter is the scheduler's own test, whatever the node admits.
    let qos = problem.qos_test(p);
    // Filter: a server qualifies when draining every potential victim admits a placement.
    let mut filtered = Filtered::new(problem, &qos, state, p);
    let max_k = filtered
        .servers
        .iter()
        .map(|q| q.victims)
        .max()
        .unwrap_or(0);
    let mut sink = Sink::default();
    let mut evaluated = 0u64;
    let mut truncated = false;
    for k in 0..=max_k {
        for qi in 0..filtered.servers.len() {
            let q = &filtered.servers[qi];
            // No subset smaller than the server's lower bound can fit: skip without trying.
            if q.done || q.victims < k || k < q.min_victims || q.used >= budget {
                continue;
            }
            let found_before = sink.candidates.len();
            let (n, stopped) = filtered.source(problem, &qos, state, qi, k, budget, &mut sink);
            evaluated += n;
            truncated |= stopped;
            filtered.servers[qi].done = early_stop
                && settings.imp_scope == ImpScope::Node
                && sink.candidates.len() > found_before;
        }
        if early_stop && settings.imp_scope == ImpScope::Cluster && !sink.candidates.is_empty() {
            break;
        }
    }
    decision(problem, state, &filtered, &sink, evaluated, truncated)
}

/// The decision for the best of `sink`'s candidates.
pub(super) fn decision(
    problem: &Problem<'_>,
    state: &ClusterState,
    filtered: &Filtered,
    sink: &Sink,
    evaluated: u64,
    truncated: bool,
) -> Decision {
    decision_of(
        filtered,
        sink,
        best_candidate(problem, state, filtered, sink),
        evaluated,
        truncated,
    )
}

/// The decision for `chosen`, one of `sink`'s candidates (or none).
pub(super) fn decision_of(
    filtered: &Filtered,
    sink: &Sink,
    chosen: Option<&Candidate>,
    evaluated: u64,
    truncated: bool,
) -> Decision {
    let (server, victims) = match chosen {
        Some(c) => {
            let q = &filtered.servers[c.qualifying];
            let facts = q.facts();
            let ids = sink.members(c).iter().map(|&i| facts[i].id).collect();
            (Some(q.server), ids)
        }
        None => (None, Vec::new()),
    };
    Decision {
        server,
        victims,
        subsets_evaluated: evaluated,
        truncated,
        ..Decision::default()
    }
}

/// Candidates found so far and the victim indices they point into.
#[derive(Default)]
pub(super) struct Sink {
    pub(super) candidates: Vec<Candidate>,
    arena: Vec<usize>,
}

impl Sink {
    /// Records a candidate of qualifying server `qi`: `members` index its `facts`, ascending.
    pub(super) fn push(
        &mut self,
        qi: usize,
        members: &[usize],
        level: Level,
        facts: &[VictimFacts],
    ) {
        self.candidates.push(Candidate {
            qualifying: qi,
            start: self.arena.len(),
            len: members.len(),
            level,
            priority_sum: members.iter().map(|&i| facts[i].priority).sum(),
        });
        self.arena.extend_from_slice(members);
    }

    /// The victim indices (into its server's `victims`) of a candidate.
    pub(super) fn members(&self, c: &Candidate) -> &[usize] {
        &self.arena[c.start..c.start + c.len]
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
    let is_victim = |pod: &VictimFacts| pod.preemptible && pod.priority < p.priority;
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

/// Tries every k-subset of one qualifying server's victims (within its budget) and records the
/// ones that admit a placement meeting the QoS. Returns the subsets tried and whether the
/// budget stopped the enumeration.
#[allow(clippy::too_many_arguments)]
fn source_subsets(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    (qi, server, used, facts): (usize, ServerId, &mut u64, &[VictimFacts]),
    k: usize,
    budget: u64,
    sink: &mut Sink,
) -> (u64, bool) {
    let base = &state.servers()[server.index()];
    let mut stopped = false;
    let mut evaluated = 0u64;
    for_each_union(
        facts,
        k,
        (base.free_gpus(), base.free_cores()),
        &mut |idx, g, c| {
            if *used >= budget {
                stopped = true;
                return false;
            }
            *used += 1;
            evaluated += 1;
            if let Some(level) = qos.placed_level(problem.cluster, server, g, c) {
                sink.push(qi, idx, level, facts);
            }
            true
        },
    );
    (evaluated, stopped)
}

/// Subsets of sizes `from..=to` of `n` victims: what the reference tries on a server.
pub(super) fn subsets_up_to(n: usize, from: usize, to: usize) -> u64 {
    (from..=to.min(n))
        .map(|k| binomial(n, k))
        .fold(0, u64::saturating_add)
}

fn binomial(n: usize, k: usize) -> u64 {
    let k = k.min(n - k) as u64;
    let n = n as u64;
    // acc · (n − i) / (i + 1) stays an integer at every step.
    (0..k)
        .try_fold(1u64, |acc, i| Some(acc.checked_mul(n - i)? / (i + 1)))
        .unwrap_or(u64::MAX)
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
pub(super) fn fewest(
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

/// Eq. 1: S = α·P + (1 − α)·T of one candidate; `sums` = the lowest and highest
/// victim-priority sum among the event's candidates (for `priority_norm = "candidates"`).
pub(super) fn candidate_score(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    c: &Candidate,
    sums: (i64, i64),
) -> f64 {
    let settings = &problem.spec.flextopo;
    let pterm = priority_term(
        settings.priority_norm,
        c.len,
        c.priority_sum,
        sums,
        preemptible_priority_range(problem),
    );
    let q = &filtered.servers[c.qualifying];
    let t = problem.cluster.type_of(q.server);
    let level = match settings.score_basis {
        ScoreBasis::Placement => c.level,
        ScoreBasis::Victims => {
            let facts = q.facts();
            let (g, x) = sink
                .members(c)
                .iter()
                .map(|&i| facts[i])
                .fold((GpuSet::empty(), CoreSet::empty()), |(g, x), v| {
                    (g.or(v.gpus), x.or(v.cores))
                });
            t.level_of(g, x)
        }
    };
    settings.alpha * pterm + (1.0 - settings.alpha) * problem.cost.topology_score(t, level)
}

/// The candidate chain key of a candidate; the victim list only when `with_victims`.
pub(super) fn candidate_key(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    c: &Candidate,
    with_victims: bool,
) -> ChainKey {
    let q = &filtered.servers[c.qualifying];
    let facts = q.facts();
    let members = sink.members(c);
    let ids = if with_victims {
        members.iter().map(|&i| facts[i].id).collect()
    } else {
        Vec::new()
    };
    let chain_facts = members
        .iter()
        .map(|&i| (facts[i].priority, facts[i].start_time_s));
    ChainKey::from_facts(problem.cluster, q.server, ids, chain_facts)
}

/// Eq. 1 over the candidates: highest S wins (P normalised over these candidates), ties by
/// the candidate chain.
fn best_candidate<'c>(
    problem: &Problem<'_>,
    state: &ClusterState,
    filtered: &Filtered,
    sink: &'c Sink,
) -> Option<&'c Candidate> {
    let candidates = &sink.candidates;
    let lo = candidates.iter().map(|c| c.priority_sum).min()?;
    let hi = candidates.iter().map(|c| c.priority_sum).max()?;
    let scores: Vec<f64> = candidates
        .iter()
        .map(|c| candidate_score(problem, filtered, sink, c, (lo, hi)))
        .collect();
    pick_best(problem, state, filtered, sink, &scores)
}

/// The best of `sink`'s candidates given their Eq. 1 scores: the highest score (within
/// SCORE_EPS), ties by the candidate chain.
pub(super) fn pick_best<'c>(
    problem: &Problem<'_>,
    state: &ClusterState,
    filtered: &Filtered,
    sink: &'c Sink,
    scores: &[f64],
) -> Option<&'c Candidate> {
    let candidates = &sink.candidates;
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let key =
        |c: &Candidate, with_victims: bool| candidate_key(problem, filtered, sink, c, with_victims);
    // Numeric keys first: the victim list is materialised only for a candidate that ties or wins.
    let mut best: Option<(ChainKey, &Candidate)> = None;
    for (c, s) in candidates.iter().zip(scores) {
        if *s < top - SCORE_EPS {
            continue;
        }
        let replace = match &best {
            None => true,
            Some((bk, _)) => match key(c, false).compare_numeric(bk) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => key(c, true).compare(bk, state).is_lt(),
                std::cmp::Ordering::Greater => false,
            },
        };
        if replace {
            best = Some((key(c, true), c));
        }
    }
    best.map(|(_, c)| c)
}

/// The lowest and highest priority of the spec's preemptible workloads (`(0, 0)` when none
/// is preemptible: there are no victims to score then).
pub(super) fn preemptible_priority_range(problem: &Problem<'_>) -> (i64, i64) {
    let prios = problem
        .spec
        .workload
        .iter()
        .filter(|w| w.preemptible)
        .map(|w| w.priority);
    let lo = prios.clone().min().unwrap_or(0);
    (lo, prios.max().unwrap_or(lo))
}

/// Eq. 1's priority term P ∈ [0, 1] of a candidate; higher is better (fewer, less important
/// victims). `sums` = the lowest and highest victim-priority sum among this event's candidates;
/// `spec_range` = the spec's preemptible priority range.
pub(super) fn priority_term(
    norm: PriorityNorm,
    victims: usize,
    priority_sum: i64,
    (lo, hi): (i64, i64),
    (p_lo, p_hi): (i64, i64),
) -> f64 {
    match norm {
        PriorityNorm::Candidates if hi == lo => 1.0,
        PriorityNorm::Candidates => (hi - priority_sum) as f64 / (hi - lo) as f64,
        PriorityNorm::Spec => {
            // Σ over the victims of (prio − p_lo + 1) / (p_hi − p_lo + 1), each in (0, 1].
            let shifted = priority_sum as f64 - victims as f64 * (p_lo - 1) as f64;
            1.0 / (1.0 + shifted / (p_hi - p_lo + 1) as f64)
        }
        PriorityNorm::InverseSum => 1.0 / (priority_sum as f64).max(1.0),
    }
}

/// Calls `f` with every k-subset of `pods` (lexicographic order) and the union of `base` with
/// the subset's GPUs and cores, built incrementally, until `f` returns false.
pub fn for_each_union(
    pods: &[VictimFacts],
    k: usize,
    base: (GpuSet, CoreSet),
    f: &mut dyn FnMut(&[usize], GpuSet, CoreSet) -> bool,
) {
    fn go(
        pods: &[VictimFacts],
        k: usize,
        start: usize,
        acc: (GpuSet, CoreSet),
        idx: &mut Vec<usize>,
        f: &mut dyn FnMut(&[usize], GpuSet, CoreSet) -> bool,
    ) -> bool {
        if idx.len() == k {
            return f(idx, acc.0, acc.1);
        }
        let remaining = k - idx.len();
        for i in start..=pods.len().saturating_sub(remaining) {
            if i >= pods.len() {
                break;
            }
            idx.push(i);
            let next = (acc.0.or(pods[i].gpus), acc.1.or(pods[i].cores));
            let more = go(pods, k, i + 1, next, idx, f);
            idx.pop();
            if !more {
                return false;
            }
        }
        true
    }
    if k > pods.len() {
        return;
    }
    let mut idx = Vec::with_capacity(k);
    go(pods, k, 0, base, &mut idx, f);
}

/// Calls `f` with every k-subset of `0..n` in lexicographic order until it returns false.
pub fn for_each_subset(n: usize, k: usize, mut f: impl FnMut(&[usize]) -> bool) {
    if k > n {
        return;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        if !f(&idx) {
            return;
        }
        // Advance to the next combination.
        let mut i = k;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            if idx[i] < n - k + i {
                idx[i] += 1;
                for j in i + 1..k {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_subset;

    #[test]
    fn subsets_are_enumerated_once_each() {
        let mut seen = Vec::new();
        for_each_subset(4, 2, |s| {
            seen.push(s.to_vec());
            true
        });
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], vec![0, 1]);
        assert_eq!(seen[5], vec![2, 3]);
        let mut empty = 0;
        for_each_subset(3, 0, |s| {
            assert!(s.is_empty());
            empty += 1;
            true
        });
        assert_eq!(empty, 1);
    }
}
