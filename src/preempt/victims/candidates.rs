//! Candidate sourcing: the victim subsets tried on one qualifying server, in the order every
//! search relies on ([`super::subsets`]), and the arena that keeps the feasible ones without
//! allocating per candidate.

use super::filter::{Filtered, Qualifying, VictimFacts};
use super::subsets::for_each_union;
use crate::preempt::problem::{Problem, QosTest};
use crate::topology::state::ClusterState;
use crate::topology::{Level, ServerId};

impl<'s> Filtered<'s> {
    /// Sources the `k`-subsets of qualifying server `qi` into `sink` ([`source_subsets`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn source(
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
pub(crate) struct Candidate {
    pub(crate) qualifying: usize,
    start: usize,
    pub(crate) len: usize,
    pub(crate) level: Level,
    pub(crate) priority_sum: i64,
}

/// Candidates found so far and the victim indices they point into.
#[derive(Default)]
pub(crate) struct Sink {
    pub(crate) candidates: Vec<Candidate>,
    arena: Vec<usize>,
}

impl Sink {
    /// Records a candidate of qualifying server `qi`: `members` index its `facts`, ascending.
    pub(crate) fn push(
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
    pub(crate) fn members(&self, c: &Candidate) -> &[usize] {
        &self.arena[c.start..c.start + c.len]
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
            if let Some(level) = qos.placed_level(problem.cluster, server, g, c)
                && within_budgets(state, idx, facts)
            {
                sink.push(qi, idx, level, facts);
            }
            true
        },
    );
    (evaluated, stopped)
}

/// Whether a subset keeps within hard PodDisruptionBudgets (always, when they are soft).
fn within_budgets(state: &ClusterState, members: &[usize], facts: &[VictimFacts]) -> bool {
    !state.budgets().hard()
        || !members.iter().any(|&i| facts[i].guarded)
        || state.budgets_allow(members.iter().map(|&i| facts[i].id))
}
