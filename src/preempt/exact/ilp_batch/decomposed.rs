//! Exact solution of the batch by decomposition: servers interact only through the class
//! counts, so a server's part of the batch is one subproblem per count vector (its own MILP),
//! and a dynamic programme over servers picks the best combination.
//!
//! The subproblems are solved lazily. Every one starts with a cheap lower bound (`bounds`);
//! the programme runs on what is known — MILP optima where solved, bounds elsewhere — and the
//! subproblems its best combination uses but that are not solved yet get their MILPs; this
//! repeats until the best combination uses MILP optima only. That combination is optimal for
//! the fully solved decomposition too: every other combination costs at least the sum of what
//! is known of it, which is at least the best found. `solve_every_subproblem` solves them all
//! (the reference the lazy path is tested against).

use std::collections::BTreeSet;

use rayon::prelude::*;

use super::bounds::ServerBounds;
use super::classes::{Class, Counts};
use super::domains::{domain_capacity, lowest_victim, may_refuse};
use super::model::{BatchSolution, solve_on_server};
use super::state_classes::state_classes;
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::ServerId;
use crate::topology::state::ClusterState;

/// What is known of one server's subproblem for one count vector.
#[derive(Debug, Clone)]
enum Known {
    /// A lower bound; the MILP has not been solved.
    Bound(f64),
    /// The MILP's solution (its objective is the value, proven unless its status says not).
    Solved(BatchSolution),
    /// No solution: proven infeasible, or the deadline passed before any incumbent.
    Infeasible,
}

impl Known {
    /// The value the dynamic programme uses; `None` leaves the subproblem out.
    fn value(&self) -> Option<f64> {
        match self {
            Known::Bound(b) => Some(*b),
            Known::Solved(s) => Some(s.objective),
            Known::Infeasible => None,
        }
    }
}

/// One server's subproblem: exactly these class counts placed (or refused) on it.
struct Subproblem {
    counts: Vec<u32>,
    known: Known,
}

/// Largest class-count space (Π (count + 1)) solved by decomposition.
const MAX_DP_STATES: usize = 100_000;
/// Largest number of per-server subproblems solved by decomposition.
const MAX_SUBPROBLEMS: usize = 20_000;

/// The DP state count and subproblem count, when decomposition is small enough.
pub fn decomposition_size(
    problem: &Problem<'_>,
    initial: &ClusterState,
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
        subproblems += count_vectors(problem, initial, preemptors, classes, server).len();
        if subproblems > MAX_SUBPROBLEMS {
            return None;
        }
    }
    Some((states, subproblems))
}

/// Non-zero count vectors that fit an empty server of this type by totals.
fn count_vectors(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    server: ServerId,
) -> Vec<Vec<u32>> {
    let t = problem.cluster.type_of(server);
    let (cap_g, cap_c) = (t.gpu_count() as u32, t.core_count() as u32);
    let lowest_victim = lowest_victim(initial, server);
    // Per class: whether an instance may be refused after evicting here (one more than fits).
    let refusal: Vec<u32> = classes
        .iter()
        .map(|c| {
            u32::from(may_refuse(
                problem,
                server,
                &preemptors[c.rep],
                lowest_victim,
            ))
        })
        .collect();
    let limits: Vec<u32> = classes
        .iter()
        .zip(&refusal)
        .map(|(c, &r)| {
            let p = &preemptors[c.rep];
            // An upper bound: a pod that fits an empty server at all may be placed there.
            let fit = if !t.fits_empty(p.request) {
                0
            } else {
                domain_capacity(t.whole(), p, c.members.len())
            };
            (fit + r).min(c.members.len() as u32)
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
        let (g, c) = k.iter().zip(classes).zip(&refusal).fold(
            (0u32, 0u32),
            |(g, c), ((&n, cl), &refused)| {
                let r = preemptors[cl.rep].request;
                let placed = n.saturating_sub(refused);
                (g + placed * r.gpus, c + placed * r.cores)
            },
        );
        if g <= cap_g && c <= cap_c {
            out.push(k.clone());
        }
    }
}

/// Solves the batch exactly by decomposition, solving only the subproblems whose MILP optima
/// the best combination needs (see the module header).
pub fn solve_decomposed(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let combined = |table: &[Vec<Subproblem>], best: &Combination| {
        combined_solution(table, best, problem, preemptors.len(), deadline)
    };
    let mut table: Vec<Vec<Subproblem>> = servers
        .par_iter()
        .map(|&server| {
            let bounds = ServerBounds::new(problem, initial, preemptors, classes, server);
            count_vectors(problem, initial, preemptors, classes, server)
                .into_iter()
                .map(|counts| Subproblem {
                    known: bounds
                        .lower_bound(&counts)
                        .map_or(Known::Infeasible, Known::Bound),
                    counts,
                })
                .collect()
        })
        .collect();
    let space = CountSpace::new(classes);
    // Servers in identical states have the same subproblems: one MILP serves the whole group.
    let top = classes
        .iter()
        .map(|c| problem.eviction_reach(&preemptors[c.rep]))
        .max()
        .unwrap_or(i64::MIN);
    let states = state_classes(problem, initial, preemptors, classes, top);
    let mut state_of = vec![0usize; servers.len()];
    for (k, state) in states.iter().enumerate() {
        for m in &state.members {
            state_of[m.server.index()] = k;
        }
    }
    loop {
        if deadline.expired() {
            // Subproblems solved from here would find nothing and read as infeasible: what
            // is known is no plan (the caller's warm start, if any, is the incumbent).
            return Ok(None);
        }
        let best = best_combination(&space, &table, problem, preemptors.len());
        let mut groups = BTreeSet::new();
        let unsolved: Vec<(usize, usize)> = best
            .chosen
            .iter()
            .copied()
            .filter(|&(s, j)| matches!(table[s][j].known, Known::Bound(_)))
            .filter(|&(s, j)| groups.insert((state_of[s], j)))
            .collect();
        if unsolved.is_empty() {
            return Ok(Some(combined(&table, &best)));
        }
        let solved: Vec<Result<Known, PlanningError>> = unsolved
            .par_iter()
            .map(|&(s, j)| {
                let counts = &table[s][j].counts;
                solve_subproblem(
                    problem, initial, preemptors, classes, servers[s], counts, deadline,
                )
            })
            .collect();
        let mut all_met_their_bounds = true;
        for ((s, j), known) in unsolved.into_iter().zip(solved) {
            let known = known?;
            all_met_their_bounds &= met_its_bound(&table[s][j].known, &known);
            let state = &states[state_of[s]];
            for member in &state.members {
                table[member.server.index()][j].known = match &known {
                    Known::Solved(sol) => Known::Solved(state.moved(sol, servers[s], member)),
                    other => other.clone(),
                };
            }
        }
        // The combination's MILP optima equal the bounds it was chosen by, and every other
        // combination costs at least its bounds: it is optimal, and a second pass of the
        // programme would only confirm it.
        if all_met_their_bounds {
            return Ok(Some(combined(&table, &best)));
        }
    }
}

/// Whether a subproblem's MILP optimum equals the lower bound it had (up to rounding).
fn met_its_bound(before: &Known, after: &Known) -> bool {
    match (before, after) {
        (Known::Bound(bound), Known::Solved(s)) => s.objective <= bound + 1e-9,
        _ => false,
    }
}

/// Solves the batch by decomposition with every subproblem's MILP solved: the reference the
/// lazy `solve_decomposed` is tested against.
pub fn solve_every_subproblem(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let table: Vec<Result<Vec<Subproblem>, PlanningError>> = servers
        .par_iter()
        .map(|&server| {
            // No pruning by dominance: one class's evictions can make room for another's, so
            // a vector may be feasible although a smaller one is not.
            count_vectors(problem, initial, preemptors, classes, server)
                .into_iter()
                .map(|counts| {
                    let known = solve_subproblem(
                        problem, initial, preemptors, classes, server, &counts, deadline,
                    )?;
                    Ok(Subproblem { counts, known })
                })
                .collect()
        })
        .collect();
    let table: Vec<Vec<Subproblem>> = table.into_iter().collect::<Result<_, _>>()?;
    let best = best_combination(&CountSpace::new(classes), &table, problem, preemptors.len());
    Ok(Some(combined_solution(
        &table,
        &best,
        problem,
        preemptors.len(),
        deadline,
    )))
}

/// One subproblem's MILP.
fn solve_subproblem(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    server: ServerId,
    counts: &[u32],
    deadline: &Deadline,
) -> Result<Known, PlanningError> {
    let list = (initial, preemptors, classes);
    let solved = solve_on_server(problem, list, server, Counts::Exactly(counts), deadline)?;
    Ok(solved.map_or(Known::Infeasible, Known::Solved))
}

/// The mixed-radix space of placed counts per class (0..=class size each): the programme's
/// states.
struct CountSpace {
    radix: Vec<u32>,
    states: usize,
    /// Every state's digits, state by state.
    digits: Vec<u32>,
}

impl CountSpace {
    fn new(classes: &[Class]) -> Self {
        let radix: Vec<u32> = classes.iter().map(|c| c.members.len() as u32 + 1).collect();
        let states: usize = radix.iter().map(|&r| r as usize).product();
        let mut digits = Vec::with_capacity(states * radix.len());
        for mut i in 0..states {
            for &r in &radix {
                digits.push((i % r as usize) as u32);
                i /= r as usize;
            }
        }
        CountSpace {
            radix,
            states,
            digits,
        }
    }

    fn digits(&self, state: usize) -> &[u32] {
        let n = self.radix.len();
        &self.digits[state * n..(state + 1) * n]
    }

    /// The state of these counts; adding two states' counts adds their indices when no digit
    /// overflows.
    fn index(&self, counts: &[u32]) -> usize {
        counts
            .iter()
            .zip(&self.radix)
            .rev()
            .fold(0usize, |acc, (&n, &r)| acc * r as usize + n as usize)
    }

    /// Whether `counts` can be added to `state` without exceeding a class size.
    fn fits(&self, state: usize, counts: &[u32]) -> bool {
        self.digits(state)
            .iter()
            .zip(counts)
            .zip(&self.radix)
            .all(|((&have, &add), &r)| have + add < r)
    }
}

/// The programme's best combination: the subproblem chosen on each server that takes any, as
/// (server position, subproblem position), last server first.
struct Combination {
    chosen: Vec<(usize, usize)>,
}

/// The dynamic programme over servers; the state is the vector of placed counts per class.
/// Ties keep the earlier choice: "nothing on this server" first, then the earlier subproblem,
/// and among final states the first.
fn best_combination(
    space: &CountSpace,
    table: &[Vec<Subproblem>],
    problem: &Problem<'_>,
    preemptors: usize,
) -> Combination {
    let mut dp = vec![f64::INFINITY; space.states];
    dp[0] = 0.0;
    // choice[s][state] = index into table[s] + 1, or 0 for "nothing on this server".
    let mut choice: Vec<Vec<u32>> = Vec::with_capacity(table.len());
    for subs in table {
        let options: Vec<(usize, &[u32], usize, f64)> = subs
            .iter()
            .enumerate()
            .filter_map(|(j, sub)| {
                let value = sub.known.value()?;
                Some((j, sub.counts.as_slice(), space.index(&sub.counts), value))
            })
            .collect();
        let mut next = dp.clone();
        let mut pick = vec![0u32; space.states];
        for (state, &base) in dp.iter().enumerate() {
            if !base.is_finite() {
                continue;
            }
            for &(j, counts, offset, value) in &options {
                if !space.fits(state, counts) {
                    continue;
                }
                let ns = state + offset;
                let cost = base + value;
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
    let n = preemptors as f64;
    let (best_state, _) = dp
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(s, &v)| {
            let placed: u32 = space.digits(s).iter().sum();
            (s, v + unplaced_w * (n - placed as f64))
        })
        .fold(None, |best: Option<(usize, f64)>, (s, v)| match best {
            Some((_, bv)) if bv <= v + 1e-9 => best,
            _ => Some((s, v)),
        })
        .unwrap_or((0, unplaced_w * n));
    let mut chosen = Vec::new();
    let mut state = best_state;
    for (s, subs) in table.iter().enumerate().rev() {
        let Some(j) = (choice[s][state] as usize).checked_sub(1) else {
            continue;
        };
        chosen.push((s, j));
        state -= space.index(&subs[j].counts);
    }
    Combination { chosen }
}

/// The batch solution of a combination whose subproblems are all solved. Its objective is
/// summed from the MILP optima in the programme's order (server by server, then the unplaced
/// instances), so it is the programme's value whenever that ran on these optima.
fn combined_solution(
    table: &[Vec<Subproblem>],
    best: &Combination,
    problem: &Problem<'_>,
    preemptors: usize,
    deadline: &Deadline,
) -> BatchSolution {
    let mut placed = Vec::new();
    let mut refused = Vec::new();
    let mut evicted = Vec::new();
    let mut optimal = true;
    let mut objective = 0.0;
    let mut instances = 0u32;
    for &(s, j) in best.chosen.iter().rev() {
        // Only solved subproblems are combined (`solve_decomposed` solves every chosen one).
        let Known::Solved(sub) = &table[s][j].known else {
            optimal = false;
            continue;
        };
        placed.extend(sub.placed.iter().copied());
        refused.extend(sub.refused.iter().copied());
        evicted.extend(sub.evicted.iter().copied());
        optimal &= sub.status == PlanStatus::Optimal;
        objective += sub.objective;
        instances += table[s][j].counts.iter().sum::<u32>();
    }
    let unplaced = preemptors as f64 - f64::from(instances);
    let objective = objective + problem.cost.weights.unplaced * unplaced;
    placed.sort_by_key(|p| (p.server, p.class, p.domain));
    refused.sort_unstable();
    evicted.sort_unstable();
    let status = if optimal && !deadline.expired() {
        PlanStatus::Optimal
    } else {
        PlanStatus::TimeLimit
    };
    BatchSolution {
        placed,
        refused,
        evicted,
        objective,
        status,
        bound: (status == PlanStatus::Optimal).then_some(objective),
    }
}
