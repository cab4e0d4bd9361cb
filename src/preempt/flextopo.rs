//! FlexTopo (DESIGN §5.2): filter, candidate sourcing over victim subsets and Eq. 1 scoring.
//! One planner, two sourcing settings: `flextopo-imp` (Incremental Minimal Preemption: stop at
//! the first subset size that yields any candidate across the cluster) and
//! `flextopo-exhaustive` (every size, the paper's overhead baseline).

use super::planner::PreemptionPlanner;
use super::problem::{ChainKey, Decision, DecisionPoint, Problem, QosTest, freed};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::{FlextopoSettings, ImpScope, PriorityNorm, ScoreBasis};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId, place, reachable_level};

const SCORE_EPS: f64 = 1e-12;

/// What sourcing and scoring need of a potential victim.
#[derive(Debug, Clone, Copy)]
pub struct VictimFacts {
    pub gpus: GpuSet,
    pub cores: CoreSet,
    pub priority: i64,
    pub start_time_s: Option<f64>,
}

struct Qualifying {
    server: ServerId,
    victims: Vec<PodId>,
    facts: Vec<VictimFacts>,
    /// No victim set smaller than this can admit the pod (a counting bound per domain).
    min_victims: usize,
    /// Subsets tried on this server (the budget is per server).
    used: u64,
    /// The server has yielded its candidates (IMP with `imp_scope = "node"`).
    done: bool,
}

/// A candidate: a subset of one qualifying server's victims, stored as a range of indices in
/// a shared arena (sourcing may produce thousands; none allocates).
struct Candidate {
    qualifying: usize,
    start: usize,
    len: usize,
    level: Level,
    priority_sum: i64,
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
        let early_stop = self.sourcing == Sourcing::IncrementalMinimal;
        Ok(decide(at.problem, at.state, at.preemptor, early_stop))
    }
}

/// Plans one preemptor; `early_stop` = Incremental Minimal Preemption.
fn decide(
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
    let (candidates, arena) = (sink.candidates, sink.arena);
    let chosen = best_candidate(problem, state, &qualifying, &candidates, &arena, settings);
    let (server, victims) = match chosen {
        Some(c) => {
            let q = &qualifying[c.qualifying];
            let ids = arena[c.start..c.start + c.len]
                .iter()
                .map(|&i| q.victims[i])
                .collect();
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
struct Sink {
    candidates: Vec<Candidate>,
    arena: Vec<usize>,
}

/// The filter for one server: it qualifies when draining every potential victim admits a
/// placement that meets the QoS.
fn qualify(
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
    let min_victims =
        min_victims_needed(problem, qos, server, p, a.free_gpus, a.free_cores, &facts);
    Some(Qualifying {
        server,
        victims,
        facts,
        min_victims,
        used: 0,
        done: false,
    })
}

/// Tries every k-subset of one qualifying server's victims (within its budget) and records the
/// ones that admit a placement meeting the QoS. Returns the subsets tried and whether the
/// budget stopped the enumeration.
#[allow(clippy::too_many_arguments)]
fn source_subsets(
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

/// A lower bound of the victims needed on a server: for each admissible domain, the fewest
/// victims whose GPUs (and, separately, cores) inside it could cover the shortfall.
fn min_victims_needed(
    problem: &Problem<'_>,
    qos: &QosTest,
    server: ServerId,
    p: &Preemptor,
    free_gpus: GpuSet,
    free_cores: CoreSet,
    facts: &[VictimFacts],
) -> usize {
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
    Level::ALL
        .iter()
        .filter(|&&level| qos.meets(problem.cluster, server, level))
        .flat_map(|&level| t.domains(level).iter())
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
        .unwrap_or(0)
}

/// Eq. 1: S = α·P + (1 − α)·T, P normalised over this event's candidates; highest S wins, ties
/// by the candidate chain.
fn best_candidate<'c>(
    problem: &Problem<'_>,
    state: &ClusterState,
    qualifying: &[Qualifying],
    candidates: &'c [Candidate],
    arena: &[usize],
    settings: &FlextopoSettings,
) -> Option<&'c Candidate> {
    let (alpha, basis) = (settings.alpha, settings.score_basis);
    let lo = candidates.iter().map(|c| c.priority_sum).min()?;
    let hi = candidates.iter().map(|c| c.priority_sum).max()?;
    let range = preemptible_priority_range(problem);
    fn members<'a>(
        qualifying: &'a [Qualifying],
        arena: &'a [usize],
        c: &Candidate,
    ) -> impl Iterator<Item = VictimFacts> + 'a {
        let facts = &qualifying[c.qualifying].facts;
        arena[c.start..c.start + c.len]
            .iter()
            .map(move |&i| facts[i])
    }
    let score = |c: &Candidate| {
        let pterm = priority_term(settings.priority_norm, c, (lo, hi), range);
        let server = qualifying[c.qualifying].server;
        let t = problem.cluster.type_of(server);
        let level = match basis {
            ScoreBasis::Placement => c.level,
            ScoreBasis::Victims => {
                let (g, x) = members(qualifying, arena, c)
                    .fold((GpuSet::empty(), CoreSet::empty()), |(g, x), v| {
                        (g.or(v.gpus), x.or(v.cores))
                    });
                t.level_of(g, x)
            }
        };
        alpha * pterm + (1.0 - alpha) * problem.cost.topology_score(t, level)
    };
    let scores: Vec<f64> = candidates.iter().map(score).collect();
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let key = |c: &Candidate, with_victims: bool| {
        let q = &qualifying[c.qualifying];
        let ids = if with_victims {
            arena[c.start..c.start + c.len]
                .iter()
                .map(|&i| q.victims[i])
                .collect()
        } else {
            Vec::new()
        };
        let facts = members(qualifying, arena, c).map(|v| (v.priority, v.start_time_s));
        ChainKey::from_facts(problem.cluster, q.server, ids, facts)
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
fn preemptible_priority_range(problem: &Problem<'_>) -> (i64, i64) {
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
fn priority_term(
    norm: PriorityNorm,
    c: &Candidate,
    (lo, hi): (i64, i64),
    (p_lo, p_hi): (i64, i64),
) -> f64 {
    match norm {
        PriorityNorm::Candidates if hi == lo => 1.0,
        PriorityNorm::Candidates => (hi - c.priority_sum) as f64 / (hi - lo) as f64,
        PriorityNorm::Spec => {
            // Σ over the victims of (prio − p_lo + 1) / (p_hi − p_lo + 1), each in (0, 1].
            let shifted = c.priority_sum as f64 - c.len as f64 * (p_lo - 1) as f64;
            1.0 / (1.0 + shifted / (p_hi - p_lo + 1) as f64)
        }
        PriorityNorm::InverseSum => 1.0 / (c.priority_sum as f64).max(1.0),
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
