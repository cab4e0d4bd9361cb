//! FlexTopo's reference search: every subset of every qualifying server, size by size, each
//! feasible one scored by Eq. 1 ([`super::score`]). The fast searches ([`super::imp_pruned`],
//! [`super::exhaustive_classes`]) must choose exactly what it chooses, and fall back to it
//! where their preconditions fail.

use super::score::decision;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{Decision, Problem};
use crate::preempt::victims::candidates::Sink;
use crate::preempt::victims::filter::Filtered;
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
