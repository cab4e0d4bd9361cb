//! FlexTopo's filter, candidate sourcing over victim subsets and Eq. 1 scoring, shared by
//! its searches, and the reference search that enumerates every subset size by size. Each
//! shared part has its own file, so a search reads as the parts it combines; the reference
//! and the decision every search returns stay here, above them.

mod candidates;
mod filter;
mod score;

pub(super) use self::candidates::{Sink, subsets_up_to};
pub use self::candidates::{for_each_subset, for_each_union};
pub use self::filter::VictimFacts;
pub(super) use self::filter::{BestChain, Filtered, Qualifying, fewest};
pub(super) use self::score::{
    SCORE_EPS, candidate_key, candidate_score, pick_best, preemptible_priority_range, priority_term,
};

use self::candidates::Candidate;
use self::score::{best_candidate, candidate_terms};
use super::problem::{Decision, Problem};
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::ImpScope;
use crate::topology::state::ClusterState;

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
        // The run's budget is spent: the sizes enumerated so far decide, and say so.
        if !sink.candidates.is_empty() && problem.cancel.out_of_time() {
            truncated = true;
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
pub(super) fn decision_of(
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
