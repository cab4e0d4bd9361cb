//! Exact solution of the batch by decomposition: servers interact only through the class
//! counts, so each server is solved for every count vector that fits it, and a dynamic
//! programme over servers picks the best combination.

use rayon::prelude::*;

use super::model::{BatchSolution, Class, Counts, build, domain_capacity, solve_model};
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::ServerId;
use crate::topology::state::ClusterState;

/// One server's best solution with exactly these class counts placed (or refused) on it.
type CountSolution = (Vec<u32>, BatchSolution);

/// Largest class-count space (Π (count + 1)) solved by decomposition.
const MAX_DP_STATES: usize = 100_000;
/// Largest number of per-server subproblems solved by decomposition.
const MAX_SUBPROBLEMS: usize = 20_000;

/// The DP state count and subproblem count, when decomposition is small enough.
pub fn decomposition_size(
    problem: &Problem<'_>,
    preemptors: &[Preemptor],
    classes: &[Class],
) -> Option<(usize, usize)> {
    let mut states = 1usize;
    for c in classes {
        states = states.checked_mul(c.members.len() + 1)?;
        if states > MAX_DP_STATES {
            return None;
        }
    }
    let mut subproblems = 0usize;
    for server in problem.servers() {
        subproblems += count_vectors(problem, preemptors, classes, server).len();
        if subproblems > MAX_SUBPROBLEMS {
            return None;
        }
    }
    Some((states, subproblems))
}

/// Non-zero count vectors that fit an empty server of this type by totals.
fn count_vectors(
    problem: &Problem<'_>,
    preemptors: &[Preemptor],
    classes: &[Class],
    server: ServerId,
) -> Vec<Vec<u32>> {
    let t = problem.cluster.type_of(server);
    let (cap_g, cap_c) = (t.gpu_count() as u32, t.core_count() as u32);
    let limits: Vec<u32> = classes
        .iter()
        .map(|c| {
            let p = &preemptors[c.rep];
            // One more than fits: an instance may be refused after evicting here.
            let fit = if t.required_level(p.request).is_none() {
                0
            } else {
                domain_capacity(t.whole(), p, c.members.len())
            };
            (fit + 1).min(c.members.len() as u32)
        })
        .collect();
    let mut out = Vec::new();
    let mut k = vec![0u32; classes.len()];
    loop {
        // Next vector in mixed radix.
        let mut i = 0;
        loop {
            if i == k.len() {
                return out;
            }
            if k[i] < limits[i] {
                k[i] += 1;
                break;
            }
            k[i] = 0;
            i += 1;
        }
        let (g, c) = k
            .iter()
            .zip(classes)
            .fold((0u32, 0u32), |(g, c), (&n, cl)| {
                let r = preemptors[cl.rep].request;
                let placed = n.saturating_sub(1);
                (g + placed * r.gpus, c + placed * r.cores)
            });
        if g <= cap_g && c <= cap_c {
            out.push(k.clone());
        }
    }
}

/// Solves the batch exactly by one MILP per server and count vector, then a dynamic
/// programme over servers.
pub fn solve_decomposed(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let per_server: Vec<Result<Vec<CountSolution>, PlanningError>> = servers
        .par_iter()
        .map(|&server| {
            // No pruning by dominance: one class's evictions can make room for another's, so
            // a vector may be feasible although a smaller one is not.
            let mut out: Vec<CountSolution> = Vec::new();
            for k in count_vectors(problem, preemptors, classes, server) {
                let model = build(
                    problem,
                    initial,
                    preemptors,
                    classes,
                    &[server],
                    Counts::Exactly(&k),
                );
                if let Some(solution) = solve_model(model, deadline, None)? {
                    out.push((k, solution));
                }
            }
            Ok(out)
        })
        .collect();
    let per_server: Vec<Vec<CountSolution>> = per_server.into_iter().collect::<Result<_, _>>()?;
    // Dynamic programme over servers; the state is the vector of placed counts per class.
    let radix: Vec<usize> = classes.iter().map(|c| c.members.len() + 1).collect();
    let states: usize = radix.iter().product();
    let index = |k: &[u32]| -> usize {
        k.iter()
            .zip(&radix)
            .rev()
            .fold(0usize, |acc, (&n, &r)| acc * r + n as usize)
    };
    let decode = |mut i: usize| -> Vec<u32> {
        radix
            .iter()
            .map(|&r| {
                let n = (i % r) as u32;
                i /= r;
                n
            })
            .collect()
    };
    let mut dp = vec![f64::INFINITY; states];
    dp[0] = 0.0;
    // choice[s][state] = index into per_server[s] + 1, or 0 for "nothing on this server".
    let mut choice: Vec<Vec<u32>> = Vec::with_capacity(servers.len());
    for subs in &per_server {
        let mut next = dp.clone();
        let mut pick = vec![0u32; states];
        for (state, &base) in dp.iter().enumerate() {
            if !base.is_finite() {
                continue;
            }
            let have = decode(state);
            for (j, (counts, sub)) in subs.iter().enumerate() {
                let sum: Vec<u32> = have.iter().zip(counts).map(|(a, b)| a + b).collect();
                if sum.iter().zip(&radix).any(|(&n, &r)| n as usize >= r) {
                    continue;
                }
                let ns = index(&sum);
                let cost = base + sub.objective;
                if cost < next[ns] - 1e-9 {
                    next[ns] = cost;
                    pick[ns] = j as u32 + 1;
                }
            }
        }
        dp = next;
        choice.push(pick);
    }
    let unplaced_w = problem.cost.weights.unplaced;
    let n = preemptors.len() as f64;
    let (best_state, objective) = dp
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(s, &v)| {
            let placed: u32 = decode(s).iter().sum();
            (s, v + unplaced_w * (n - placed as f64))
        })
        .fold(None, |best: Option<(usize, f64)>, (s, v)| match best {
            Some((_, bv)) if bv <= v + 1e-9 => best,
            _ => Some((s, v)),
        })
        .unwrap_or((0, unplaced_w * n));
    let mut placed = Vec::new();
    let mut refused = Vec::new();
    let mut evicted = Vec::new();
    let mut optimal = true;
    let mut state = best_state;
    for (s, subs) in per_server.iter().enumerate().rev() {
        let j = choice[s][state];
        if j == 0 {
            continue;
        }
        let (counts, sub) = &subs[j as usize - 1];
        placed.extend(sub.placed.iter().copied());
        refused.extend(sub.refused.iter().copied());
        evicted.extend(sub.evicted.iter().copied());
        optimal &= sub.status == PlanStatus::Optimal;
        let have: Vec<u32> = decode(state)
            .iter()
            .zip(counts)
            .map(|(a, b)| a - b)
            .collect();
        state = index(&have);
    }
    placed.sort_by_key(|p| (p.server, p.class, p.domain));
    refused.sort_unstable();
    evicted.sort_unstable();
    let status = if optimal && !deadline.expired() {
        PlanStatus::Optimal
    } else {
        PlanStatus::TimeLimit
    };
    Ok(Some(BatchSolution {
        placed,
        refused,
        evicted,
        objective,
        status,
        bound: (status == PlanStatus::Optimal).then_some(objective),
    }))
}
