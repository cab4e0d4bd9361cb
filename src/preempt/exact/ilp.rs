//! The per-event optimum of the canonical cost (DESIGN §5.2) as a MILP: the reference of
//! `[planners] event_solver = "milp"`, and the fallback of the exact search
//! ([`super::event_exact`]) on a server whose victims are too many to enumerate. The cluster
//! problem decomposes by server (one server is chosen), so one small MILP per server is solved
//! — servers whose lower bound cannot beat the best so far are skipped — and the best is
//! taken, ties by the candidate chain. Within one server the MILP returns one of its optimal
//! victim sets, whichever the solver found first.

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};

use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{ChainKey, Decision, Problem, freed};
use crate::preempt::victims::for_each_subset;
use crate::solver::{self, Deadline, SolveError, SolveStatus};
use crate::topology::state::ClusterState;
use crate::topology::{Level, PodId, Request, ServerId, place};

/// Costs closer than this are a tie, broken by the candidate chain (both per-event solvers).
pub const COST_EPS: f64 = 1e-9;

/// The per-event optimum on one state.
#[derive(Debug, Clone, PartialEq)]
pub struct EventOptimum {
    /// Canonical cost of the optimal decision.
    pub cost: f64,
    /// The optimal decision (server and victims; none when every choice leaves it unplaced).
    pub decision: Decision,
    /// `false` when a solve stopped at the time limit (the cost is then an upper bound).
    pub proven: bool,
}

/// The budget and backend of one decision's solves (the MILPs of one event, or the whole
/// batch of `ilp-batch`): `ilp_time_limit_s` from now at most, ending with the run's budget
/// (`--time-limit`) and at a stop request, on `[planners] solver` with `ilp_mip_gap`. Every
/// preemption solve takes its deadline from here.
pub fn deadline(problem: &Problem<'_>) -> Deadline {
    let planners = &problem.spec.planners;
    Deadline::for_run(
        planners.ilp_time_limit_s,
        solver::SolverSettings {
            backend: planners.solver,
            mip_gap: planners.ilp_mip_gap,
        },
        problem.cancel.flag(),
        problem.cancel.ends_at(),
    )
}

/// What one server's MILP found.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMilp {
    /// Its best victim set, the set's replayed cost, and whether the solve proved it optimal.
    Found {
        /// Canonical cost of the event with these victims, replayed through the node allocator.
        cost: f64,
        /// The victim set, ascending id.
        victims: Vec<PodId>,
        /// Whether the solve proved it optimal on this server.
        proven: bool,
    },
    /// No admitted placement, whatever is evicted.
    Infeasible,
    /// The deadline passed before any incumbent: nothing proven on this server.
    Unproven,
}

/// A domain a placement may use, with its level and placement cost.
struct DomainOption {
    cost: f64,
    free_gpus: u32,
    free_cores: u32,
    /// GPUs and cores each potential victim holds inside the domain.
    victim_gpus: Vec<u32>,
    victim_cores: Vec<u32>,
}

/// The victim set first in the total order of decisions among those on a server that cost at
/// most a given cost, with its replayed cost (`event_exact::best_tied_on_server`).
pub type BestTied<'f> =
    dyn Fn(ServerId, f64) -> Result<Option<(f64, Vec<PodId>)>, PlanningError> + 'f;

/// Solves the per-event problem exactly, one MILP per server. Each server's MILP proves its
/// optimum cost; its set is then the one `best_tied` ranks first among the sets of that cost
/// (one total order on decisions: the MILP alone returns whichever tied set it found first).
pub fn milp_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    best_tied: &BestTied<'_>,
) -> Result<EventOptimum, PlanningError> {
    let deadline = deadline(problem);
    let mut best_cost = problem.cost.weights.unplaced;
    let mut best: Option<(ChainKey, Decision)> = None;
    let mut proven = true;
    let mut servers: Vec<(f64, ServerId, Vec<PodId>, Vec<DomainOption>)> = problem
        .servers()
        .filter_map(|s| {
            let victims = problem.potential_victims(state, s, p);
            let domains = domain_options(problem, state, s, p, &victims);
            let lb = lower_bound(problem, state, p.request, &victims, &domains)?;
            Some((lb, s, victims, domains))
        })
        .collect();
    servers.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut evaluated = 0u64;
    for (lb, server, victims, domains) in servers {
        if lb > best_cost + COST_EPS {
            break;
        }
        evaluated += 1;
        let (cost, chosen) =
            match solve_server(problem, state, server, p, &victims, &domains, &deadline)? {
                ServerMilp::Found {
                    cost,
                    victims,
                    proven: optimal,
                } => {
                    proven &= optimal;
                    match best_tied(server, cost)? {
                        // Only a proven cost ranks its ties: a time-limited one is a set
                        // like any other.
                        Some((tied_cost, tied)) if optimal && tied_cost <= cost + COST_EPS => {
                            (tied_cost, tied)
                        }
                        _ => (cost, victims),
                    }
                }
                ServerMilp::Infeasible => continue,
                ServerMilp::Unproven => {
                    proven = false;
                    continue;
                }
            };
        let key = ChainKey::new(problem.cluster, state, server, &chosen);
        let better = cost < best_cost - COST_EPS
            || ((cost - best_cost).abs() <= COST_EPS
                && best
                    .as_ref()
                    .is_none_or(|(k, _)| key.compare(k, state).is_lt()));
        if better {
            best_cost = cost;
            best = Some((
                key,
                Decision {
                    server: Some(server),
                    victims: chosen,
                    ..Decision::default()
                },
            ));
        }
    }
    let mut decision = best.map(|(_, d)| d).unwrap_or_default();
    decision.subsets_evaluated = evaluated;
    Ok(EventOptimum {
        cost: best_cost,
        decision,
        proven,
    })
}

/// One server's MILP on its own (the exact search's fallback), within `deadline`.
pub fn server_milp(
    problem: &Problem<'_>,
    state: &ClusterState,
    server: ServerId,
    p: &Preemptor,
    deadline: &Deadline,
) -> Result<ServerMilp, PlanningError> {
    let victims = problem.potential_victims(state, server, p);
    let domains = domain_options(problem, state, server, p, &victims);
    if domains.is_empty() {
        return Ok(ServerMilp::Infeasible);
    }
    solve_server(problem, state, server, p, &victims, &domains, deadline)
}

/// Solves one server's MILP and replays its answer with the node allocator, which must
/// reproduce the MILP's cost when the solve is proven (else the model is wrong: an error).
fn solve_server(
    problem: &Problem<'_>,
    state: &ClusterState,
    server: ServerId,
    p: &Preemptor,
    victims: &[PodId],
    domains: &[DomainOption],
    deadline: &Deadline,
) -> Result<ServerMilp, PlanningError> {
    let (milp_cost, chosen, optimal) =
        match server_optimum(problem, state, p.request, victims, domains, deadline) {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(ServerMilp::Infeasible),
            Err(ServerFailure::Unproven) => return Ok(ServerMilp::Unproven),
            Err(ServerFailure::Solver(e)) => return Err(e),
        };
    let cost = replay_cost(problem, state, server, p, &chosen).ok_or_else(|| {
        PlanningError::Solver(format!(
            "the solver chose victims on {} that do not admit a placement",
            problem.cluster.server(server).name
        ))
    })?;
    if optimal && (cost - milp_cost).abs() > 1e-6 {
        return Err(PlanningError::Solver(format!(
            "the solver's optimum on {} ({milp_cost}) disagrees with its replay ({cost})",
            problem.cluster.server(server).name
        )));
    }
    Ok(ServerMilp::Found {
        cost,
        victims: chosen,
        proven: optimal,
    })
}

/// Domains of `server` where `p` could be placed at an admitted level, with what each victim
/// would free there.
fn domain_options(
    problem: &Problem<'_>,
    state: &ClusterState,
    server: ServerId,
    p: &Preemptor,
    victims: &[PodId],
) -> Vec<DomainOption> {
    let t = problem.cluster.type_of(server);
    let a = &state.servers()[server.index()];
    let mut out = Vec::new();
    for level in Level::ALL {
        if !problem.admits(server, p, level) {
            continue;
        }
        for d in t.domains_for(p.request, level) {
            if d.gpus.len() < p.request.gpus || d.cores.len() < p.request.cores {
                continue;
            }
            let pods = victims.iter().filter_map(|id| state.pod(*id));
            out.push(DomainOption {
                cost: problem.cost.placement_cost(t, level),
                free_gpus: a.free_gpus().and(d.gpus).len(),
                free_cores: a.free_cores().and(d.cores).len(),
                victim_gpus: pods.clone().map(|v| v.gpus.and(d.gpus).len()).collect(),
                victim_cores: pods.map(|v| v.cores.and(d.cores).len()).collect(),
            });
        }
    }
    out
}

/// A lower bound of the server's cost; `None` when no admitted placement exists even after
/// evicting every potential victim.
fn lower_bound(
    problem: &Problem<'_>,
    state: &ClusterState,
    request: Request,
    victims: &[PodId],
    domains: &[DomainOption],
) -> Option<f64> {
    let cheapest_victim = victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .map(|v| problem.cost.victim_cost(v.priority))
        .fold(f64::INFINITY, f64::min);
    domains
        .iter()
        .filter_map(|d| {
            if d.free_gpus >= request.gpus && d.free_cores >= request.cores {
                return Some(d.cost);
            }
            let all_g = d.free_gpus + d.victim_gpus.iter().sum::<u32>();
            let all_c = d.free_cores + d.victim_cores.iter().sum::<u32>();
            (all_g >= request.gpus && all_c >= request.cores).then_some(d.cost + cheapest_victim)
        })
        .reduce(f64::min)
}

/// Why a server's MILP gave no answer to use.
enum ServerFailure {
    /// The deadline passed before any incumbent.
    Unproven,
    Solver(PlanningError),
}

/// The best victim set on one server: `(MILP objective, victims, proven optimal)`, or `None`
/// when the server admits no placement.
fn server_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    request: Request,
    victims: &[PodId],
    domains: &[DomainOption],
    deadline: &Deadline,
) -> Result<Option<(f64, Vec<PodId>, bool)>, ServerFailure> {
    let mut vars = ProblemVariables::new();
    let x: Vec<Variable> = victims
        .iter()
        .map(|_| vars.add(variable().binary()))
        .collect();
    let z: Vec<Variable> = domains
        .iter()
        .map(|_| vars.add(variable().binary()))
        .collect();
    let mut objective = Expression::from(0.0);
    for (v, id) in x.iter().zip(victims) {
        let prio = state.pod(*id).map_or(0, |p| p.priority);
        objective += problem.cost.victim_cost(prio) * *v;
    }
    for (zd, d) in z.iter().zip(domains) {
        objective += d.cost * *zd;
    }
    let chosen_domains: Expression = z.iter().map(|v| Expression::from(*v)).sum();
    let mut constraints = vec![constraint!(chosen_domains == 1.0)];
    // Hard PodDisruptionBudgets: no more of a budget's pods than it has left.
    if state.budgets().hard() {
        let mut per_budget: std::collections::BTreeMap<u32, Expression> = Default::default();
        for (v, id) in x.iter().zip(victims) {
            for &b in state.pod(*id).map_or(&[][..], |p| &p.budgets) {
                *per_budget.entry(b).or_default() += *v;
            }
        }
        for (b, taken) in per_budget {
            let left = state.budgets().left()[b as usize] as f64;
            constraints.push(constraint!(taken <= left));
        }
    }
    for (zd, d) in z.iter().zip(domains) {
        let freed_gpus: Expression = x
            .iter()
            .zip(&d.victim_gpus)
            .map(|(v, &g)| g as f64 * *v)
            .sum();
        let freed_cores: Expression = x
            .iter()
            .zip(&d.victim_cores)
            .map(|(v, &c)| c as f64 * *v)
            .sum();
        constraints.push(constraint!(
            freed_gpus + d.free_gpus as f64 >= request.gpus as f64 * *zd
        ));
        constraints.push(constraint!(
            freed_cores + d.free_cores as f64 >= request.cores as f64 * *zd
        ));
    }
    match solver::minimise(vars, objective, constraints, &x, deadline, None) {
        Ok(solved) => {
            let chosen = victims
                .iter()
                .zip(&solved.values)
                .filter(|(_, v)| **v > 0.5)
                .map(|(id, _)| *id)
                .collect();
            Ok(Some((
                solved.objective,
                chosen,
                solved.status == SolveStatus::Optimal,
            )))
        }
        Err(SolveError::Infeasible) => Ok(None),
        // The deadline passed before any incumbent: nothing proven on this server.
        Err(SolveError::NoIncumbent) => Err(ServerFailure::Unproven),
        Err(e) => Err(ServerFailure::Solver(PlanningError::Solver(e.to_string()))),
    }
}

/// The cost of evicting `victims` on `server` and placing `p` with the node allocator, or
/// `None` when that placement is impossible or not admitted.
pub fn replay_cost(
    problem: &Problem<'_>,
    state: &ClusterState,
    server: ServerId,
    p: &Preemptor,
    victims: &[PodId],
) -> Option<f64> {
    let t = problem.cluster.type_of(server);
    let (g, c) = freed(state, server, victims);
    let pl = place(t, g, c, p.request)?;
    if !problem.admits(server, p, pl.level) {
        return None;
    }
    let prios: Vec<i64> = victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .map(|v| v.priority)
        .collect();
    Some(problem.cost.event_cost(Some((t, pl.level)), &prios))
}

/// Exhaustive per-event optimum over every victim subset of every server: the test oracle of
/// the MILP (exponential; small instances only).
pub fn brute_force_optimum(problem: &Problem<'_>, state: &ClusterState, p: &Preemptor) -> f64 {
    let mut best = problem.cost.weights.unplaced;
    for server in problem.servers() {
        let victims = problem.potential_victims(state, server, p);
        for k in 0..=victims.len() {
            for_each_subset(victims.len(), k, |idx| {
                let chosen: Vec<PodId> = idx.iter().map(|&i| victims[i]).collect();
                if let Some(c) = replay_cost(problem, state, server, p, &chosen) {
                    best = best.min(c);
                }
                true
            });
        }
    }
    best
}
