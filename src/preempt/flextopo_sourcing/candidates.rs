//! Candidate sourcing: the victim subsets tried on one qualifying server, in the order every
//! search relies on, and the arena that keeps the feasible ones without allocating per
//! candidate. Counting them lives here too, since the budget checks must count alike.

use super::filter::{Filtered, Qualifying, VictimFacts};
use crate::preempt::problem::{Problem, QosTest};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, ServerId};

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
    pub(super) level: Level,
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

/// Subsets of sizes `from..=to` of `n` victims: what the reference tries on a server.
pub(crate) fn subsets_up_to(n: usize, from: usize, to: usize) -> u64 {
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
