//! FlexTopo (DESIGN §5.2): filter, candidate sourcing over victim subsets and Eq. 1 scoring.
//! One planner, two sourcing settings: `flextopo-imp` (Incremental Minimal Preemption: stop at
//! the first subset size that yields any candidate across the cluster) and
//! `flextopo-exhaustive` (every size, the paper's overhead baseline).

use super::planner::PreemptionPlanner;
use super::problem::{ChainKey, Decision, DecisionPoint, Problem, QosTest, freed};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::{ImpScope, PriorityNorm, ScoreBasis};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId, place, reachable_level};

pub(super) const SCORE_EPS: f64 = 1e-12;

/// What sourcing and scoring need of a potential victim.
#[derive(Debug, Clone, Copy)]
pub struct VictimFacts {
    pub gpus: GpuSet,
    pub cores: CoreSet,
    pub priority: i64,
    pub start_time_s: Option<f64>,
}

pub(super) struct Qualifying {
    pub(super) server: ServerId,
    pub(super) victims: Vec<PodId>,
    pub(super) facts: Vec<VictimFacts>,
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

/// A candidate: a subset of one qualifying server's victims, stored as a range of indices in
/// a shared arena (sourcing may produce thousands; none allocates).
pub(super) struct Candidate {
    pub(super) qualifying: usize,
    start: usize,
    pub(super) len: usize,
    level: Level,
    pub(super) priority_sum: i64,
}

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

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let (problem, state, p) = (at.problem, at.state, at.preemptor);
        Ok(match self.sourcing {
            Sourcing::IncrementalMinimal => super::imp_pruned::decide(problem, state, p)
                .unwrap_or_else(|| decide_by_enumeration(problem, state, p, true)),
            Sourcing::Exhaustive => decide_by_enumeration(problem, state, p, false),
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

/// Plans one preemptor by enumerating subsets; `early_stop` = Incremental Minimal Preemption.
fn decide_by_enumeration(
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
    let mut qualifying: Vec<Qualifying> = problem
        .servers()
        .filter_map(|server| qualify(problem, &qos, state, p, server))
        .collect();
    let max_k = qualifying
        .iter()
        .map(|q| q.victims.len())
        .max()
        .unwrap_or(0);
    let mut sink = Sink::default();
    let mut evaluated = 0u64;
    let mut truncated = false;
    for k in 0..=max_k {
        for (qi, q) in qualifying.iter_mut().enumerate() {
            // No subset smaller than the server's lower bound can fit: skip without trying.
            if q.done || q.victims.len() < k || k < q.min_victims || q.used >= budget {
                continue;
            }
            let found_before = sink.candidates.len();
            let (n, stopped) =
                source_subsets(problem, &qos, state, p, (qi, q), k, budget, &mut sink);
            evaluated += n;
            truncated |= stopped;
            q.done = early_stop
                && settings.imp_scope == ImpScope::Node
                && sink.candidates.len() > found_before;
        }
        if early_stop && settings.imp_scope == ImpScope::Cluster && !sink.candidates.is_empty() {
            break;
        }
    }
    decision(problem, state, &qualifying, &sink, evaluated, truncated)
}

/// The decision for the best of `sink`'s candidates.
pub(super) fn decision(
    problem: &Problem<'_>,
    state: &ClusterState,
    qualifying: &[Qualifying],
    sink: &Sink,
    evaluated: u64,
    truncated: bool,
) -> Decision {
    let chosen = best_candidate(problem, state, qualifying, sink);
    let (server, victims) = match chosen {
        Some(c) => {
            let q = &qualifying[c.qualifying];
            let ids = sink.members(c).iter().map(|&i| q.victims[i]).collect();
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
    /// The victim indices (into its server's `victims`) of a candidate.
    pub(super) fn members(&self, c: &Candidate) -> &[usize] {
        &self.arena[c.start..c.start + c.len]
    }
}

/// The filter for one server: it qualifies when draining every potential victim admits a
/// placement that meets the QoS.
pub(super) fn qualify(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    p: &Preemptor,
    server: ServerId,
) -> Option<Qualifying> {
    let victims = problem.potential_victims(state, server, p);
    let (g, c) = freed(state, server, &victims);
    let t = problem.cluster.type_of(server);
    let pl = place(t, g, c, p.request)?;
    if !qos.meets(problem.cluster, server, pl.level) {
        return None;
    }
    let facts: Vec<VictimFacts> = victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .map(|q| VictimFacts {
            gpus: q.gpus,
            cores: q.cores,
            priority: q.priority,
            start_time_s: q.start_time_s,
        })
        .collect();
    let a = &state.servers[server.index()];
    let level_bounds =
        victims_needed_per_level(problem, qos, server, p, a.free_gpus, a.free_cores, &facts);
    Some(Qualifying {
        server,
        victims,
        facts,
        min_victims: level_bounds.iter().flatten().copied().min().unwrap_or(0),
        level_bounds,
        used: 0,
        done: false,
    })
}

/// Tries every k-subset of one qualifying server's victims (within its budget) and records the
/// ones that admit a placement meeting the QoS. Returns the subsets tried and whether the
/// budget stopped the enumeration.
#[allow(clippy::too_many_arguments)]
pub(super) fn source_subsets(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    p: &Preemptor,
    (qi, q): (usize, &mut Qualifying),
    k: usize,
    budget: u64,
    sink: &mut Sink,
) -> (u64, bool) {
    let t = problem.cluster.type_of(q.server);
    let base = &state.servers[q.server.index()];
    let mut stopped = false;
    let mut evaluated = 0u64;
    let (used, server, facts) = (&mut q.used, q.server, &q.facts);
    for_each_union(
        facts,
        k,
        (base.free_gpus, base.free_cores),
        &mut |idx, g, c| {
            if *used >= budget {
                stopped = true;
                return false;
            }
            *used += 1;
            evaluated += 1;
            if g.len() < p.request.gpus || c.len() < p.request.cores {
                return true;
            }
            if let Some(level) = reachable_level(t, g, c, p.request)
                && qos.meets(problem.cluster, server, level)
            {
                sink.candidates.push(Candidate {
                    qualifying: qi,
                    start: sink.arena.len(),
                    len: idx.len(),
                    level,
                    priority_sum: idx.iter().map(|&i| facts[i].priority).sum(),
                });
                sink.arena.extend_from_slice(idx);
            }
            true
        },
    );
    (evaluated, stopped)
}

/// A lower bound of the victims needed on a server to reach each level: for each admissible
/// domain of the level, the fewest victims whose GPUs (and, separately, cores) inside it
/// could cover the shortfall.
fn victims_needed_per_level(
    problem: &Problem<'_>,
    qos: &QosTest,
    server: ServerId,
    p: &Preemptor,
    free_gpus: GpuSet,
    free_cores: CoreSet,
    facts: &[VictimFacts],
) -> [Option<usize>; 3] {
    let t = problem.cluster.type_of(server);
    let fewest = |need: u32, mut gains: Vec<u32>| -> Option<usize> {
        if need == 0 {
            return Some(0);
        }
        gains.sort_unstable_by(|a, b| b.cmp(a));
        let mut sum = 0;
        for (i, g) in gains.iter().enumerate() {
            sum += g;
            if sum >= need {
                return Some(i + 1);
            }
        }
        None
    };
    Level::ALL.map(|level| {
        if !qos.meets(problem.cluster, server, level) {
            return None;
        }
        t.domains(level)
            .iter()
            .filter_map(|d| {
                let need_g = p.request.gpus.saturating_sub(free_gpus.and(d.gpus).len());
                let need_c = p
                    .request
                    .cores
                    .saturating_sub(free_cores.and(d.cores).len());
                let kg = fewest(
                    need_g,
                    facts.iter().map(|v| v.gpus.and(d.gpus).len()).collect(),
                )?;
                let kc = fewest(
                    need_c,
                    facts.iter().map(|v| v.cores.and(d.cores).len()).collect(),
                )?;
                Some(kg.max(kc))
            })
            .min()
    })
}

/// Eq. 1: S = α·P + (1 − α)·T of one candidate; `sums` = the lowest and highest
/// victim-priority sum among the event's candidates (for `priority_norm = "candidates"`).
pub(super) fn candidate_score(
    problem: &Problem<'_>,
    qualifying: &[Qualifying],
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
    let q = &qualifying[c.qualifying];
    let t = problem.cluster.type_of(q.server);
    let level = match settings.score_basis {
        ScoreBasis::Placement => c.level,
        ScoreBasis::Victims => {
            let (g, x) = sink
                .members(c)
                .iter()
                .map(|&i| q.facts[i])
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
    qualifying: &[Qualifying],
    sink: &Sink,
    c: &Candidate,
    with_victims: bool,
) -> ChainKey {
    let q = &qualifying[c.qualifying];
    let members = sink.members(c);
    let ids = if with_victims {
        members.iter().map(|&i| q.victims[i]).collect()
    } else {
        Vec::new()
    };
    let facts = members
        .iter()
        .map(|&i| (q.facts[i].priority, q.facts[i].start_time_s));
    ChainKey::from_facts(problem.cluster, q.server, ids, facts)
}

/// Eq. 1 over the candidates: highest S wins (P normalised over these candidates), ties by
/// the candidate chain.
fn best_candidate<'c>(
    problem: &Problem<'_>,
    state: &ClusterState,
    qualifying: &[Qualifying],
    sink: &'c Sink,
) -> Option<&'c Candidate> {
    let candidates = &sink.candidates;
    let lo = candidates.iter().map(|c| c.priority_sum).min()?;
    let hi = candidates.iter().map(|c| c.priority_sum).max()?;
    let scores: Vec<f64> = candidates
        .iter()
        .map(|c| candidate_score(problem, qualifying, sink, c, (lo, hi)))
        .collect();
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let key = |c: &Candidate, with_victims: bool| {
        candidate_key(problem, qualifying, sink, c, with_victims)
    };
    // Numeric keys first: the victim list is materialised only for a candidate that ties or wins.
    let mut best: Option<(ChainKey, &Candidate)> = None;
    for (c, s) in candidates.iter().zip(&scores) {
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
