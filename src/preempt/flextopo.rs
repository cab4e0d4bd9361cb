//! FlexTopo candidate sourcing and Eq. 1 scoring, shared by `flextopo-imp` (early stop at the
//! first subset size with a candidate) and `flextopo-exhaustive` (all sizes).

use super::{ChainKey, Decision, Preemptor, Problem, freed};
use crate::spec::preemption::{ScoreBasis, TopologyQos};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId, place};

const SCORE_EPS: f64 = 1e-12;

struct Candidate {
    server: ServerId,
    victims: Vec<PodId>,
    level: Level,
    priority_sum: i64,
}

/// Plans one preemptor; `early_stop` = Incremental Minimal Preemption.
pub fn decide(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    early_stop: bool,
) -> Decision {
    let settings = &problem.spec.flextopo;
    let budget = settings.max_subset_evaluations;
    let mut evaluated = 0u64;
    let mut truncated = false;
    // Filter: a server qualifies when draining every potential victim admits a placement.
    let mut qualifying: Vec<(ServerId, Vec<PodId>, u64)> = Vec::new();
    for server in problem.servers() {
        let victims = problem.potential_victims(state, server, p);
        let (g, c) = freed(state, server, &victims);
        let t = problem.cluster.type_of(server);
        if let Some(pl) = place(t, g, c, p.request)
            && admitted(problem, server, p, pl.level)
        {
            qualifying.push((server, victims, 0));
        }
    }
    let max_k = qualifying
        .iter()
        .map(|(_, v, _)| v.len())
        .max()
        .unwrap_or(0);
    let mut candidates: Vec<Candidate> = Vec::new();
    for k in 0..=max_k {
        for (server, victims, used) in qualifying.iter_mut() {
            if victims.len() < k || *used >= budget {
                continue;
            }
            let t = problem.cluster.type_of(*server);
            let base = &state.servers[server.index()];
            let pods: Vec<(GpuSet, CoreSet, i64)> = victims
                .iter()
                .filter_map(|id| state.pod(*id).map(|q| (q.gpus, q.cores, q.priority)))
                .collect();
            let mut stopped = false;
            for_each_subset(pods.len(), k, |idx| {
                if *used >= budget {
                    stopped = true;
                    return false;
                }
                *used += 1;
                evaluated += 1;
                let (g, c) = idx
                    .iter()
                    .fold((base.free_gpus, base.free_cores), |(g, c), &i| {
                        (g.or(pods[i].0), c.or(pods[i].1))
                    });
                if g.len() < p.request.gpus || c.len() < p.request.cores {
                    return true;
                }
                if let Some(pl) = place(t, g, c, p.request)
                    && admitted(problem, *server, p, pl.level)
                {
                    candidates.push(Candidate {
                        server: *server,
                        victims: idx.iter().map(|&i| victims[i]).collect(),
                        level: pl.level,
                        priority_sum: idx.iter().map(|&i| pods[i].2).sum(),
                    });
                }
                true
            });
            truncated |= stopped;
        }
        if early_stop && !candidates.is_empty() {
            break;
        }
    }
    let chosen = best_candidate(
        problem,
        state,
        &candidates,
        settings.alpha,
        settings.score_basis,
    );
    Decision {
        server: chosen.map(|c| c.server),
        victims: chosen.map(|c| c.victims.clone()).unwrap_or_default(),
        subsets_evaluated: evaluated,
        truncated,
        ..Decision::default()
    }
}

fn admitted(problem: &Problem<'_>, server: ServerId, p: &Preemptor, level: Level) -> bool {
    p.qos != TopologyQos::Guaranteed || problem.admits(server, p, level)
}

/// Eq. 1: S = α·P + (1 − α)·T, P normalised over this event's candidates; highest S wins, ties
/// by the candidate chain.
fn best_candidate<'c>(
    problem: &Problem<'_>,
    state: &ClusterState,
    candidates: &'c [Candidate],
    alpha: f64,
    basis: ScoreBasis,
) -> Option<&'c Candidate> {
    let lo = candidates.iter().map(|c| c.priority_sum).min()?;
    let hi = candidates.iter().map(|c| c.priority_sum).max()?;
    let scored: Vec<(f64, &Candidate)> = candidates
        .iter()
        .map(|c| {
            let pterm = if hi == lo {
                1.0
            } else {
                (hi - c.priority_sum) as f64 / (hi - lo) as f64
            };
            let t = problem.cluster.type_of(c.server);
            let level = match basis {
                ScoreBasis::Placement => c.level,
                ScoreBasis::Victims => victims_span(problem, state, c),
            };
            let tterm = problem.cost.topology_score(t, level);
            (alpha * pterm + (1.0 - alpha) * tterm, c)
        })
        .collect();
    let top = scored
        .iter()
        .map(|(s, _)| *s)
        .fold(f64::NEG_INFINITY, f64::max);
    scored
        .into_iter()
        .filter(|(s, _)| *s >= top - SCORE_EPS)
        .map(|(_, c)| {
            (
                ChainKey::new(problem.cluster, state, c.server, &c.victims),
                c,
            )
        })
        .min_by(|(a, _), (b, _)| a.compare(b))
        .map(|(_, c)| c)
}

/// The level of the span of the victims' resources (released-code rule); no victims = NUMA.
fn victims_span(problem: &Problem<'_>, state: &ClusterState, c: &Candidate) -> Level {
    let (g, cores) = c
        .victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .fold((GpuSet::empty(), CoreSet::empty()), |(g, x), p| {
            (g.or(p.gpus), x.or(p.cores))
        });
    problem.cluster.type_of(c.server).level_of(g, cores)
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
