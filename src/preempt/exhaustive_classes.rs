//! FlexTopo's exhaustive evaluation in one pass per server, keeping one candidate per class.
//!
//! The reference ([`super::flextopo::decide_reference`]) enumerates the subsets of each size
//! separately (revisiting every smaller prefix once per size) and stores every feasible one
//! before scoring. Here each server's subsets are visited once, in one depth-first walk over
//! all sizes, and every subset is still evaluated: its placement level, its priority sum and
//! its chain key. Subsets alike in everything Eq. 1 sees — size, priority sum and scored
//! level on one server — score identically, so only the best of each such class under the
//! candidate chain is kept; the final ranking (the priority normalisation over all candidates
//! included) runs over these class leaders and chooses what the reference chooses.
//!
//! The per-server budget is honoured by falling back to the reference whenever it would cut
//! the reference's enumeration short; servers with more than 63 potential victims fall back
//! too (the walk keys subsets by bit masks).

use std::cmp::Ordering;

use super::flextopo_sourcing::{Filtered, Qualifying, Sink, VictimFacts, decision, subsets_up_to};
use super::problem::{Decision, Problem, QosTest, start_key};
use crate::plan::preemption::Preemptor;
use crate::spec::preemption::ScoreBasis;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, ServerType};

/// The best subset seen so far of one class (size, priority sum, scored level) on a server.
#[derive(Debug, Clone, Copy)]
struct Leader {
    len: usize,
    priority_sum: i64,
    scored_level: Level,
    placed_level: Level,
    /// Highest victim priority and the earliest start among those victims (the chain keys).
    highest: i64,
    earliest: f64,
    /// Members by index into the server's facts.
    members: u64,
    /// Members by rank of their pod names (for the chain's last key).
    by_name: u64,
}

/// The running state of a subset during the walk.
#[derive(Clone, Copy)]
struct Partial {
    len: usize,
    gpus: GpuSet,
    cores: CoreSet,
    victim_gpus: GpuSet,
    victim_cores: CoreSet,
    priority_sum: i64,
    highest: i64,
    earliest: f64,
    members: u64,
    by_name: u64,
}

/// FlexTopo-exhaustive's decision, or `None` when the budget or the victim count sends it to
/// the reference.
pub fn decide(problem: &Problem<'_>, state: &ClusterState, p: &Preemptor) -> Option<Decision> {
    let settings = &problem.spec.flextopo;
    let qos = problem.qos_test(p);
    let filtered = Filtered::new(problem, &qos, state, p);
    let fits_budget = |q: &Qualifying| {
        q.victims < 64
            && subsets_up_to(q.victims, q.min_victims, q.victims) <= settings.max_subset_evaluations
    };
    if !filtered.servers.iter().all(fits_budget) {
        return None;
    }
    let mut sink = Sink::default();
    let mut evaluated = 0u64;
    let mut leaders = Vec::new();
    for (qi, q) in filtered.servers.iter().enumerate() {
        let facts = filtered.facts(q);
        let mut walk = Walk {
            problem,
            qos: &qos,
            q,
            t: problem.cluster.type_of(q.server),
            facts,
            name_rank: name_ranks(state, facts),
            victims_basis: settings.score_basis == ScoreBasis::Victims,
            leaders: &mut leaders,
            evaluated: 0,
        };
        walk.leaders.clear();
        let base = &state.servers[q.server.index()];
        walk.visit(
            0,
            Partial {
                len: 0,
                gpus: base.free_gpus,
                cores: base.free_cores,
                victim_gpus: GpuSet::empty(),
                victim_cores: CoreSet::empty(),
                priority_sum: 0,
                highest: i64::MIN,
                earliest: f64::INFINITY,
                members: 0,
                by_name: 0,
            },
        );
        evaluated += walk.evaluated;
        let mut members = Vec::new();
        for l in leaders.iter() {
            members.clear();
            members.extend((0..facts.len()).filter(|i| l.members & (1 << i) != 0));
            sink.push(qi, &members, l.placed_level, facts);
        }
    }
    Some(decision(problem, state, &filtered, &sink, evaluated, false))
}

struct Walk<'a> {
    problem: &'a Problem<'a>,
    qos: &'a QosTest,
    q: &'a Qualifying,
    t: &'a ServerType,
    facts: &'a [VictimFacts],
    name_rank: Vec<u32>,
    victims_basis: bool,
    leaders: &'a mut Vec<Leader>,
    evaluated: u64,
}

impl Walk<'_> {
    /// Evaluates `s`, then every extension of it by victims from `next` on.
    fn visit(&mut self, next: usize, s: Partial) {
        // Below the server's counting bound no subset can fit: the reference skips them too.
        if s.len >= self.q.min_victims {
            self.evaluated += 1;
            if let Some(level) =
                self.qos
                    .placed_level(self.problem.cluster, self.q.server, s.gpus, s.cores)
            {
                self.record(&s, level);
            }
        }
        for i in next..self.facts.len() {
            let v = &self.facts[i];
            let start = start_key(v.start_time_s);
            let (highest, earliest) = match v.priority.cmp(&s.highest) {
                Ordering::Greater => (v.priority, start),
                Ordering::Equal => (s.highest, s.earliest.min(start)),
                Ordering::Less => (s.highest, s.earliest),
            };
            self.visit(
                i + 1,
                Partial {
                    len: s.len + 1,
                    gpus: s.gpus.or(v.gpus),
                    cores: s.cores.or(v.cores),
                    victim_gpus: s.victim_gpus.or(v.gpus),
                    victim_cores: s.victim_cores.or(v.cores),
                    priority_sum: s.priority_sum + v.priority,
                    highest,
                    earliest,
                    members: s.members | 1 << i,
                    by_name: s.by_name | 1 << self.name_rank[i],
                },
            );
        }
    }

    /// Keeps `s` when it is the best of its class so far.
    fn record(&mut self, s: &Partial, placed_level: Level) {
        let scored_level = if self.victims_basis {
            self.t.level_of(s.victim_gpus, s.victim_cores)
        } else {
            placed_level
        };
        let candidate = Leader {
            len: s.len,
            priority_sum: s.priority_sum,
            scored_level,
            placed_level,
            highest: s.highest,
            earliest: s.earliest,
            members: s.members,
            by_name: s.by_name,
        };
        let class = self.leaders.iter_mut().find(|l| {
            l.len == s.len && l.priority_sum == s.priority_sum && l.scored_level == scored_level
        });
        match class {
            None => self.leaders.push(candidate),
            Some(l) if chain_precedes(&candidate, l) => *l = candidate,
            Some(_) => {}
        }
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
