//! FlexTopo's exhaustive evaluation in one pass per server, keeping one candidate per class.
//!
//! The reference ([`super::planner::decide_reference`]) enumerates the subsets of each size
//! separately (revisiting every smaller prefix once per size) and stores every feasible one
//! before scoring. Here each server's subsets are visited once, all sizes in one Gray-code
//! sequence (each subset differs from the previous one by one victim, so the free GPUs and
//! cores per domain, the priority sum and the name set are updated in constant time), and
//! every subset is still evaluated: its placement level, its priority sum and its chain key.
//! Subsets alike in everything Eq. 1 sees — size, priority sum and scored level on one server —
//! score identically, so only the best of each such class under the candidate chain is kept;
//! the final ranking (the priority normalisation over all candidates included) runs over
//! these class leaders and chooses what the reference chooses.
//!
//! The per-server budget is honoured by falling back to the reference whenever it would cut
//! the reference's enumeration short; so are servers with more than [`MAX_VICTIMS`] potential
//! victims and server types with more than [`MAX_DOMAINS`] domains that could hold the pod.

use std::cmp::Ordering;

use super::score::decision;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{Decision, Problem, QosTest, start_key};
use crate::preempt::victims::candidates::Sink;
use crate::preempt::victims::filter::{Filtered, Qualifying, VictimFacts};
use crate::preempt::victims::subsets::subsets_up_to;
use crate::spec::preemption::ScoreBasis;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, GpuSet, Level, ServerType};

/// The best subset seen so far of one class (size, priority sum, scored level) on a server.
#[derive(Debug, Clone, Copy)]
struct Leader {
    priority_sum: i64,
    placed_level: Level,
    /// Highest victim priority and the earliest start among those victims (the chain keys).
    highest: i64,
    earliest: f64,
    /// Members by index into the server's facts.
    members: u64,
    /// Members by rank of their pod names (for the chain's last key).
    by_name: u64,
}

/// The most domains a walk tracks (a server type's domains that could hold the request).
pub const MAX_DOMAINS: usize = 16;
/// The most potential victims on one server that a walk enumerates (2^20 subsets).
pub const MAX_VICTIMS: usize = 20;

/// GPU and core counts per tracked domain.
#[derive(Clone, Copy)]
struct Counts {
    gpus: [u16; MAX_DOMAINS],
    cores: [u16; MAX_DOMAINS],
}

impl Counts {
    /// `gpus` and `cores` counted in each of `domains`.
    fn of(domains: &[(Level, Domain)], gpus: GpuSet, cores: CoreSet) -> Self {
        let mut c = Counts {
            gpus: [0; MAX_DOMAINS],
            cores: [0; MAX_DOMAINS],
        };
        for (i, (_, d)) in domains.iter().enumerate() {
            // A domain holds at most 256 cores (the width of a core set).
            c.gpus[i] = gpus.and(d.gpus).len() as u16;
            c.cores[i] = cores.and(d.cores).len() as u16;
        }
        c
    }
}

/// FlexTopo-exhaustive's decision, or `None` when the budget, the victim count or the domain
/// count sends it to the reference.
pub fn decide(problem: &Problem<'_>, state: &ClusterState, p: &Preemptor) -> Option<Decision> {
    let settings = &problem.spec.flextopo;
    let qos = problem.qos_test(p);
    let filtered = Filtered::new(problem, &qos, state, p);
    let walkable = |q: &Qualifying| {
        q.victims <= MAX_VICTIMS
            && qos.domains(problem.cluster, q.server).len() <= MAX_DOMAINS
            && subsets_up_to(q.victims, q.min_victims, q.victims) <= settings.max_subset_evaluations
    };
    if !filtered.servers.iter().all(walkable) {
        return None;
    }
    let victims_basis = settings.score_basis == ScoreBasis::Victims;
    let mut sink = Sink::default();
    let mut evaluated = 0u64;
    let mut members = Vec::new();
    for (qi, q) in filtered.servers.iter().enumerate() {
        let facts = q.facts();
        let base = &state.servers()[q.server.index()];
        let walk = Walk::new(problem, state, &qos, q, facts, p, victims_basis);
        let (leaders, n) = walk.run(Counts::of(
            qos.domains(problem.cluster, q.server),
            base.free_gpus(),
            base.free_cores(),
        ));
        evaluated += n;
        for l in &leaders {
            members.clear();
            members.extend(
                (0..facts.len())
                    .filter(|i| l.members & (1 << i) != 0)
                    .map(|i| walk.order[i]),
            );
            members.sort_unstable();
            sink.push(qi, &members, l.placed_level, facts);
        }
    }
    Some(decision(problem, state, &filtered, &sink, evaluated, false))
}

/// One server's subsets, walked in Gray-code order. Victims are re-indexed by ascending
/// priority, then descending start: the highest-indexed member of a subset is then one of its
/// highest-priority victims with the earliest start among them, i.e. it gives both chain keys.
struct Walk<'a> {
    q: &'a Qualifying<'a>,
    t: &'a ServerType,
    /// The domains a placement meeting the QoS could use, best level first.
    domains: &'a [(Level, Domain)],
    need: (u16, u16),
    victims_basis: bool,
    /// Walk index → index into the server's facts.
    order: Vec<usize>,
    facts: Vec<VictimFacts>,
    /// Each victim's GPUs and cores per domain.
    gains: Vec<Counts>,
    /// Each victim's rank by pod name among the server's victims.
    name_rank: Vec<u32>,
}

impl<'a> Walk<'a> {
    fn new(
        problem: &'a Problem<'a>,
        state: &ClusterState,
        qos: &'a QosTest,
        q: &'a Qualifying,
        facts: &[VictimFacts],
        p: &Preemptor,
        victims_basis: bool,
    ) -> Self {
        let domains = qos.domains(problem.cluster, q.server);
        let mut order: Vec<usize> = (0..facts.len()).collect();
        order.sort_by(|&a, &b| {
            facts[a].priority.cmp(&facts[b].priority).then_with(|| {
                start_key(facts[b].start_time_s).total_cmp(&start_key(facts[a].start_time_s))
            })
        });
        let walked: Vec<VictimFacts> = order.iter().map(|&i| facts[i]).collect();
        let ranks = name_ranks(state, &walked);
        Walk {
            q,
            t: problem.cluster.type_of(q.server),
            domains,
            // Counts per domain never exceed 256 (the width of a core set); a larger request
            // saturates and fits nowhere, as in the bit-set test.
            need: (
                u16::try_from(p.request.gpus).unwrap_or(u16::MAX),
                u16::try_from(p.request.cores).unwrap_or(u16::MAX),
            ),
            victims_basis,
            gains: walked
                .iter()
                .map(|v| Counts::of(domains, v.gpus, v.cores))
                .collect(),
            facts: walked,
            order,
            name_rank: ranks,
        }
    }

    /// Every subset once; returns the class leaders and the subsets evaluated.
    fn run(&self, free: Counts) -> (Vec<Leader>, u64) {
        let n = self.facts.len();
        let d = self.domains.len();
        let mut counts = free;
        let (mut len, mut priority_sum, mut members, mut by_name) = (0usize, 0i64, 0u64, 0u64);
        let (mut victim_gpus, mut victim_cores) = (GpuSet::empty(), CoreSet::empty());
        let mut leaders: Vec<Leader> = Vec::new();
        // Leader indices by (size, scored level).
        let mut classes: Vec<Vec<usize>> = vec![Vec::new(); (n + 1) * Level::ALL.len()];
        let mut evaluated = 0u64;
        for step in 0u64..1 << n {
            if step > 0 {
                // The Gray code of `step` differs from the previous one in this bit.
                let i = step.trailing_zeros() as usize;
                let (v, g) = (&self.facts[i], &self.gains[i]);
                let adding = members & (1 << i) == 0;
                members ^= 1 << i;
                by_name ^= 1 << self.name_rank[i];
                if adding {
                    len += 1;
                    priority_sum += v.priority;
                    for k in 0..d {
                        counts.gpus[k] += g.gpus[k];
                        counts.cores[k] += g.cores[k];
                    }
                } else {
                    len -= 1;
                    priority_sum -= v.priority;
                    for k in 0..d {
                        counts.gpus[k] -= g.gpus[k];
                        counts.cores[k] -= g.cores[k];
                    }
                }
                if self.victims_basis {
                    // Victims hold disjoint resources: removing one is a set difference.
                    (victim_gpus, victim_cores) = if adding {
                        (victim_gpus.or(v.gpus), victim_cores.or(v.cores))
                    } else {
                        (victim_gpus.minus(v.gpus), victim_cores.minus(v.cores))
                    };
                }
            }
            // Below the server's counting bound no subset can fit: the reference skips them.
            if len < self.q.min_victims {
                continue;
            }
            evaluated += 1;
            let (need_g, need_c) = self.need;
            let Some(k) = (0..d).find(|&k| counts.gpus[k] >= need_g && counts.cores[k] >= need_c)
            else {
                continue;
            };
            let placed_level = self.domains[k].0;
            let scored_level = if self.victims_basis {
                self.t.level_of(victim_gpus, victim_cores)
            } else {
                placed_level
            };
            let (highest, earliest) = match members.checked_ilog2() {
                Some(top) => {
                    let v = &self.facts[top as usize];
                    (v.priority, start_key(v.start_time_s))
                }
                None => (i64::MIN, f64::INFINITY),
            };
            let candidate = Leader {
                priority_sum,
                placed_level,
                highest,
                earliest,
                members,
                by_name,
            };
            let slot = &mut classes[len * Level::ALL.len() + scored_level as usize];
            match slot
                .iter()
                .find(|&&i| leaders[i].priority_sum == priority_sum)
            {
                None => {
                    slot.push(leaders.len());
                    leaders.push(candidate);
                }
                Some(&i) if chain_precedes(&candidate, &leaders[i]) => leaders[i] = candidate,
                Some(_) => {}
            }
        }
        (leaders, evaluated)
    }
}

/// Whether `a` precedes `b` in the candidate chain, both on one server with the same size and
/// priority sum: the lower highest priority, then the later earliest start among the
/// highest-priority victims, then the smaller sorted list of victim names.
fn chain_precedes(a: &Leader, b: &Leader) -> bool {
    a.highest
        .cmp(&b.highest)
        .then(b.earliest.total_cmp(&a.earliest))
        .then_with(|| names_cmp(a.by_name, b.by_name))
        .is_lt()
}

/// Compares the ascending name lists of two sets given as masks over name ranks: at the
/// lowest rank where they differ, the set holding it has the smaller next name unless the
/// other set has no names beyond it (a prefix is smaller).
fn names_cmp(a: u64, b: u64) -> Ordering {
    let diff = a ^ b;
    if diff == 0 {
        return Ordering::Equal;
    }
    let r = diff.trailing_zeros();
    let above = |m: u64| m.checked_shr(r + 1).unwrap_or(0) != 0;
    if a & (1 << r) != 0 {
        if above(b) {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    } else if above(a) {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

/// The rank of each victim's pod name among the server's victims.
fn name_ranks(state: &ClusterState, facts: &[VictimFacts]) -> Vec<u32> {
    let name = |i: usize| state.pod(facts[i].id).map_or("", |p| p.name.as_str());
    let mut order: Vec<usize> = (0..facts.len()).collect();
    order.sort_by(|&a, &b| name(a).cmp(name(b)));
    let mut rank = vec![0u32; facts.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::names_cmp;
    use std::cmp::Ordering;

    /// The mask comparison equals comparing the sorted rank lists.
    #[test]
    fn name_masks_compare_as_sorted_lists() {
        let list = |m: u64| (0..6).filter(|i| m & (1 << i) != 0).collect::<Vec<u32>>();
        for a in 0..64u64 {
            for b in 0..64u64 {
                assert_eq!(names_cmp(a, b), list(a).cmp(&list(b)), "{a:b} vs {b:b}");
            }
        }
        assert_eq!(names_cmp(1 << 63, 1 << 63), Ordering::Equal);
    }
}
