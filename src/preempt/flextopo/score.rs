//! FlexTopo's Eq. 1, S = α·P + (1 − α)·T ([`eq1`]), and the candidate chain that breaks its
//! ties: the rule that decides which victim set FlexTopo evicts, IMP's included. P is
//! [`priority_term`], T is the topology score of the candidate's level
//! ([`CostModel::topology_score`](crate::preempt::objective::CostModel::topology_score)),
//! [`pick_best`] takes the highest S (ties by the chain) and [`decision_of`] records the winner
//! with its terms. Every search ranks through these functions, so each chooses what the
//! reference chooses, to the last floating-point operation.

use crate::preempt::problem::{ChainKey, Decision, Problem, ScoreTerms};
use crate::preempt::victims::candidates::{Candidate, Sink};
use crate::preempt::victims::filter::Filtered;
use crate::spec::preemption::{PriorityNorm, ScoreBasis};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet};

/// Scores closer than this tie, and the candidate chain decides between them.
pub(crate) const SCORE_EPS: f64 = 1e-12;

/// Eq. 1: S = α·P + (1 − α)·T, the score FlexTopo maximises; `priority_term` is P,
/// `topology_term` is T, both in [0, 1], higher better.
pub(crate) fn eq1(alpha: f64, priority_term: f64, topology_term: f64) -> f64 {
    alpha * priority_term + (1.0 - alpha) * topology_term
}

/// Eq. 1: S = α·P + (1 − α)·T of one candidate; `sums` = the lowest and highest
/// victim-priority sum among the event's candidates (for `priority_norm = "candidates"`).
pub(crate) fn candidate_score(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    c: &Candidate,
    sums: (i64, i64),
) -> f64 {
    candidate_terms(problem, filtered, sink, c, sums).score
}

/// Eq. 1's terms of one candidate, as the searches rank it: the chosen candidate's terms are
/// the decision's own record of why it won (`coplan explain`).
pub(crate) fn candidate_terms(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    c: &Candidate,
    sums: (i64, i64),
) -> ScoreTerms {
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
    let tterm = problem.cost.topology_score(t, level);
    ScoreTerms {
        alpha: settings.alpha,
        priority_term: pterm,
        topology_term: tterm,
        scored_level: level,
        score: eq1(settings.alpha, pterm, tterm),
    }
}

/// The candidate chain key of a candidate; the victim list only when `with_victims`.
pub(crate) fn candidate_key(
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
pub(crate) fn pick_best<'c>(
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
pub(crate) fn preemptible_priority_range(problem: &Problem<'_>) -> (i64, i64) {
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
pub(crate) fn priority_term(
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

/// The decision for the best of `sink`'s candidates.
pub(crate) fn decision(
    problem: &Problem<'_>,
    state: &ClusterState,
    filtered: &Filtered,
    sink: &Sink,
    evaluated: u64,
    truncated: bool,
) -> Decision {
    decision_of(
        problem,
        filtered,
        sink,
        best_candidate(problem, state, filtered, sink),
        evaluated,
        truncated,
    )
}

/// The decision for `chosen`, one of `sink`'s candidates (or none), with its Eq. 1 terms as
/// the search ranked it (P normalised over the sink's candidates, which is what every search
/// scored with: the pruned IMP search keeps `priority_norm = "candidates"` only where every
/// candidate has one priority sum).
pub(crate) fn decision_of(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    chosen: Option<&Candidate>,
    evaluated: u64,
    truncated: bool,
) -> Decision {
    let sums = sink.candidates.iter().map(|c| c.priority_sum).fold(
        None,
        |range: Option<(i64, i64)>, s| {
            Some(range.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))))
        },
    );
    let score = chosen
        .zip(sums)
        .map(|(c, sums)| candidate_terms(problem, filtered, sink, c, sums));
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
        score,
        ..Decision::default()
    }
}
