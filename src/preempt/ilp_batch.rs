//! `ilp-batch`: the exact optimum of the whole `[[preempt]]` list decided at once — which
//! preemptors land where and which pods are evicted (each at most once) — minimising the summed
//! canonical cost. Its optimum bounds every sequential plan from below (DESIGN §5.4).
//!
//! Model. Identical preemptors (one workload class) are aggregated: an integer variable counts
//! the instances of a class placed in a domain of a server, a binary variable evicts a pod.
//! Capacities are laminar (NUMA ⊂ socket ⊂ server), so counting demand per domain is exact: ids
//! are then assigned bottom-up (NUMA-level placements first), which succeeds whenever the counts
//! fit.
//!
//! Solution. Servers interact only through the class counts, so when the count space is small
//! the problem is solved exactly by decomposition: one MILP per server and count vector, then a
//! dynamic programme over servers. Otherwise one monolithic MILP is solved, warm-started from
//! the best sequential plan. Both are exact; the time limit applies to both.
//!
//! Replay. Victims are attributed to the preemptor whose ids they free (else the first
//! eligible preemptor on their server), so the plan replays event by event like any other.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};
use rayon::prelude::*;

use super::engine::Applied;
use super::{BatchDecision, Decision, PlanError, PreemptionPlanner, Preemptor, Problem, Status};
use crate::solver::{self, SolveError, SolveStatus};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, GpuSet, Level, PodId, ServerId, ServerType};

/// Largest class-count space (Π (count + 1)) solved by decomposition.
const MAX_DP_STATES: usize = 100_000;
/// Largest number of per-server subproblems solved by decomposition.
const MAX_SUBPROBLEMS: usize = 20_000;

pub struct IlpBatch;

impl PreemptionPlanner for IlpBatch {
    fn name(&self) -> &'static str {
        "ilp-batch"
    }

    fn status(&self) -> Status {
        Status::Optimal
    }

    fn joint(&self) -> bool {
        true
    }

    fn decide(
        &self,
        problem: &Problem<'_>,
        state: &ClusterState,
        p: &Preemptor,
    ) -> Result<Decision, PlanError> {
        let batch = self.decide_batch(problem, state, std::slice::from_ref(p), None)?;
        Ok(batch.decisions.into_iter().next().unwrap_or_default())
    }

    fn decide_batch(
        &self,
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        warm_start: Option<&[Applied]>,
    ) -> Result<BatchDecision, PlanError> {
        let classes = classes(preemptors);
        let started = Instant::now();
        let limit = problem.spec.planners.ilp_time_limit_s;
        let outcome = match decomposition_size(problem, preemptors, &classes) {
            Some(_) => solve_decomposed(problem, initial, preemptors, &classes, started, limit)?,
            None => solve_monolithic(problem, initial, preemptors, &classes, warm_start, limit)?,
        };
        let Some(outcome) = outcome else {
            return Ok(BatchDecision {
                decisions: Vec::new(),
                status: Status::TimeLimit,
                bound: None,
                objective: None,
            });
        };
        let decisions = assemble(
            problem,
            initial,
            preemptors,
            &classes,
            &outcome.placed,
            &outcome.refused,
            &outcome.evicted,
        );
        Ok(BatchDecision {
            decisions,
            status: outcome.status,
            bound: outcome.bound,
            objective: Some(outcome.objective),
        })
    }
}

/// Instances of one workload class, in list order.
struct Class {
    members: Vec<usize>,
    rep: usize,
}

fn classes(preemptors: &[Preemptor]) -> Vec<Class> {
    let mut out: Vec<Class> = Vec::new();
    let mut of_workload: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, p) in preemptors.iter().enumerate() {
        let c = *of_workload.entry(p.workload).or_insert_with(|| {
            out.push(Class {
                members: Vec::new(),
                rep: i,
            });
            out.len() - 1
        });
        out[c].members.push(i);
    }
    out
}

/// `count` instances of `class` placed in domain `domain` of `server`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Placed {
    class: usize,
    server: ServerId,
    domain: usize,
    level: Level,
    count: u32,
}

/// A solved batch: placements, evicted pods, objective, status and bound.
struct Outcome {
    placed: Vec<Placed>,
    /// (class, server): an instance left unplaced whose eviction rights were used on a server.
    refused: Vec<(usize, ServerId)>,
    evicted: Vec<PodId>,
    objective: f64,
    status: Status,
    bound: Option<f64>,
}

/// Every domain of a server type: NUMA nodes, sockets, then the whole server.
fn domains_of(t: &ServerType) -> Vec<(Level, Domain)> {
    Level::ALL
        .iter()
        .flat_map(|&l| t.domains(l).iter().map(move |d| (l, *d)))
        .collect()
}

fn inside(inner: &Domain, outer: &Domain) -> bool {
    inner.gpus.is_subset(&outer.gpus) && inner.cores.is_subset(&outer.cores)
}

/// How many instances of a class fit a domain of an empty server.
fn domain_capacity(d: &Domain, p: &Preemptor, limit: usize) -> u32 {
    let per = |have: u32, need: u32| have.checked_div(need).unwrap_or(u32::MAX);
    per(d.gpus.len(), p.request.gpus)
        .min(per(d.cores.len(), p.request.cores))
        .min(limit as u32)
}

/// The model restricted to some servers: either "at most the class sizes" over all servers
/// (monolithic), or "exactly these counts" on one server (a subproblem).
enum Counts<'a> {
    AtMost,
    Exactly(&'a [u32]),
}

struct Model {
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<good_lp::Constraint>,
    placements: Vec<(Placed, Variable)>,
    /// Binary: one instance of the class evicts on the server but is not placed.
    refusals: Vec<((usize, ServerId), Variable)>,
    victims: Vec<(PodId, Variable)>,
}

fn build(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    servers: &[ServerId],
    counts: Counts<'_>,
) -> Model {
    let cluster = problem.cluster;
    let active = |ci: usize| match counts {
        Counts::AtMost => true,
        Counts::Exactly(k) => k[ci] > 0,
    };
    let top_priority = classes
        .iter()
        .enumerate()
        .filter(|(ci, _)| active(*ci))
        .map(|(_, c)| preemptors[c.rep].priority)
        .max()
        .unwrap_or(i64::MIN);
    let mut vars = ProblemVariables::new();
    let mut placements = Vec::new();
    let mut victims = Vec::new();
    let mut refusals = Vec::new();
    for &server in servers {
        let t = cluster.type_of(server);
        for (ci, class) in classes.iter().enumerate() {
            if !active(ci) {
                continue;
            }
            let p = &preemptors[class.rep];
            for (di, (level, d)) in domains_of(t).iter().enumerate() {
                if !problem.admits(server, p, *level) {
                    continue;
                }
                let cap = domain_capacity(d, p, class.members.len());
                if cap == 0 {
                    continue;
                }
                let var = vars.add(variable().integer().min(0).max(cap as f64));
                let placed = Placed {
                    class: ci,
                    server,
                    domain: di,
                    level: *level,
                    count: 0,
                };
                placements.push((placed, var));
            }
        }
        let lowest_victim = initial.servers[server.index()]
            .pods
            .iter()
            .filter_map(|id| initial.pod(*id))
            .filter(|pod| pod.preemptible)
            .map(|pod| pod.priority)
            .min();
        for id in &initial.servers[server.index()].pods {
            if let Some(pod) = initial.pod(*id)
                && pod.preemptible
                && pod.priority < top_priority
            {
                victims.push((*id, vars.add(variable().binary())));
            }
        }
        // A preemptor that is not placed may still have evicted here (a refused pod of the
        // default): without this, such sequential plans would fall outside the model.
        for (ci, class) in classes.iter().enumerate() {
            if active(ci) && lowest_victim.is_some_and(|lo| lo < preemptors[class.rep].priority) {
                refusals.push(((ci, server), vars.add(variable().binary())));
            }
        }
    }
    let unplaced_w = problem.cost.weights.unplaced;
    let mut objective = match counts {
        Counts::AtMost => Expression::from(unplaced_w * preemptors.len() as f64),
        Counts::Exactly(_) => Expression::from(0.0),
    };
    for (pl, var) in &placements {
        let t = cluster.type_of(pl.server);
        let unplaced_saving = match counts {
            Counts::AtMost => unplaced_w,
            Counts::Exactly(_) => 0.0,
        };
        objective += (problem.cost.placement_cost(t, pl.level) - unplaced_saving) * *var;
    }
    for (id, v) in &victims {
        let prio = initial.pod(*id).map_or(0, |p| p.priority);
        objective += problem.cost.victim_cost(prio) * *v;
    }
    if let Counts::Exactly(_) = counts {
        // Per server, a refused instance is an unplaced one (in the monolithic model the
        // constant already counts it).
        for (_, var) in &refusals {
            objective += unplaced_w * *var;
        }
    }
    let mut constraints = Vec::new();
    for (ci, class) in classes.iter().enumerate() {
        if !active(ci) {
            continue;
        }
        let placed: Expression = placements
            .iter()
            .filter(|(pl, _)| pl.class == ci)
            .map(|(_, v)| Expression::from(*v))
            .chain(
                refusals
                    .iter()
                    .filter(|((c, _), _)| *c == ci)
                    .map(|(_, v)| Expression::from(*v)),
            )
            .sum();
        match counts {
            Counts::AtMost => constraints.push(constraint!(placed <= class.members.len() as f64)),
            Counts::Exactly(k) => constraints.push(constraint!(placed == k[ci] as f64)),
        }
    }
    // A pod can be evicted only for an eligible (higher-priority) preemptor on its server.
    for (id, v) in &victims {
        let Some(pod) = initial.pod(*id) else {
            continue;
        };
        let eligible: Expression = placements
            .iter()
            .filter(|(pl, _)| {
                pl.server == pod.server && preemptors[classes[pl.class].rep].priority > pod.priority
            })
            .map(|(_, var)| Expression::from(*var))
            .chain(
                refusals
                    .iter()
                    .filter(|((c, s), _)| {
                        *s == pod.server && preemptors[classes[*c].rep].priority > pod.priority
                    })
                    .map(|(_, var)| Expression::from(*var)),
            )
            .sum();
        constraints.push(constraint!(*v <= eligible));
    }
    // Laminar capacities: the demand placed in domains inside D fits what is free in D plus
    // what the evicted pods free there.
    for &server in servers {
        let t = cluster.type_of(server);
        let doms = domains_of(t);
        let a = &initial.servers[server.index()];
        let here: Vec<&(Placed, Variable)> = placements
            .iter()
            .filter(|(pl, _)| pl.server == server)
            .collect();
        if here.is_empty() {
            continue;
        }
        let server_victims: Vec<&(PodId, Variable)> = victims
            .iter()
            .filter(|(id, _)| initial.pod(*id).is_some_and(|p| p.server == server))
            .collect();
        for (_, outer) in &doms {
            let inner: Vec<&&(Placed, Variable)> = here
                .iter()
                .filter(|(pl, _)| inside(&doms[pl.domain].1, outer))
                .collect();
            for gpus in [true, false] {
                let need = |pl: &Placed| {
                    let r = preemptors[classes[pl.class].rep].request;
                    if gpus { r.gpus } else { r.cores }
                };
                if inner.iter().all(|(pl, _)| need(pl) == 0) {
                    continue;
                }
                let demand: Expression = inner.iter().map(|(pl, var)| need(pl) as f64 * *var).sum();
                let free = if gpus {
                    a.free_gpus.and(outer.gpus).len()
                } else {
                    a.free_cores.and(outer.cores).len()
                };
                let freed: Expression = server_victims
                    .iter()
                    .filter_map(|(id, v)| {
                        let pod = initial.pod(*id)?;
                        let n = if gpus {
                            pod.gpus.and(outer.gpus).len()
                        } else {
                            pod.cores.and(outer.cores).len()
                        };
                        (n > 0).then(|| n as f64 * *v)
                    })
                    .sum();
                constraints.push(constraint!(demand <= freed + free as f64));
            }
        }
    }
    Model {
        vars,
        objective,
        constraints,
        placements,
        refusals,
        victims,
    }
}

/// The DP state count and subproblem count, when decomposition is small enough.
fn decomposition_size(
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

struct SubSolution {
    counts: Vec<u32>,
    cost: f64,
    placed: Vec<Placed>,
    refused: Vec<(usize, ServerId)>,
    evicted: Vec<PodId>,
    optimal: bool,
}

/// What a solved model says: objective, placements, refusals, evictions and the raw solve.
type Solution = (
    f64,
    Vec<Placed>,
    Vec<(usize, ServerId)>,
    Vec<PodId>,
    solver::Solved,
);

fn solve_model(
    model: Model,
    time_limit_s: f64,
    warm: Option<Vec<(Variable, f64)>>,
) -> Result<Option<Solution>, PlanError> {
    let keep: Vec<Variable> = model
        .placements
        .iter()
        .map(|(_, v)| *v)
        .chain(model.victims.iter().map(|(_, v)| *v))
        .chain(model.refusals.iter().map(|(_, v)| *v))
        .collect();
    let solved = match solver::minimise(
        model.vars,
        model.objective,
        model.constraints,
        &keep,
        time_limit_s,
        warm,
    ) {
        Ok(s) => s,
        Err(SolveError::Infeasible) | Err(SolveError::NoIncumbent) => return Ok(None),
        Err(e) => return Err(PlanError::Solver(e.to_string())),
    };
    let n = model.placements.len();
    let placed = model
        .placements
        .iter()
        .zip(&solved.values[..n])
        .filter_map(|((pl, _), v)| {
            let count = v.round().max(0.0) as u32;
            (count > 0).then_some(Placed { count, ..*pl })
        })
        .collect();
    let m = model.victims.len();
    let evicted = model
        .victims
        .iter()
        .zip(&solved.values[n..n + m])
        .filter(|(_, v)| **v > 0.5)
        .map(|((id, _), _)| *id)
        .collect();
    let refused = model
        .refusals
        .iter()
        .zip(&solved.values[n + m..])
        .filter(|(_, v)| **v > 0.5)
        .map(|(r, _)| r.0)
        .collect();
    Ok(Some((solved.objective, placed, refused, evicted, solved)))
}

fn solve_decomposed(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    started: Instant,
    limit: f64,
) -> Result<Option<Outcome>, PlanError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let per_server: Vec<Result<Vec<SubSolution>, PlanError>> = servers
        .par_iter()
        .map(|&server| {
            // No pruning by dominance: one class's evictions can make room for another's, so
            // a vector may be feasible although a smaller one is not.
            let mut out: Vec<SubSolution> = Vec::new();
            for k in count_vectors(problem, preemptors, classes, server) {
                let model = build(
                    problem,
                    initial,
                    preemptors,
                    classes,
                    &[server],
                    Counts::Exactly(&k),
                );
                let remaining = limit - started.elapsed().as_secs_f64();
                if let Some((cost, placed, refused, evicted, solved)) =
                    solve_model(model, remaining, None)?
                {
                    out.push(SubSolution {
                        counts: k,
                        cost,
                        placed,
                        refused,
                        evicted,
                        optimal: solved.status == SolveStatus::Optimal,
                    });
                }
            }
            Ok(out)
        })
        .collect();
    let per_server: Vec<Vec<SubSolution>> = per_server.into_iter().collect::<Result<_, _>>()?;
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
            for (j, sub) in subs.iter().enumerate() {
                let sum: Vec<u32> = have.iter().zip(&sub.counts).map(|(a, b)| a + b).collect();
                if sum.iter().zip(&radix).any(|(&n, &r)| n as usize >= r) {
                    continue;
                }
                let ns = index(&sum);
                let cost = base + sub.cost;
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
        let sub = &subs[j as usize - 1];
        placed.extend(sub.placed.iter().copied());
        refused.extend(sub.refused.iter().copied());
        evicted.extend(sub.evicted.iter().copied());
        optimal &= sub.optimal;
        let have: Vec<u32> = decode(state)
            .iter()
            .zip(&sub.counts)
            .map(|(a, b)| a - b)
            .collect();
        state = index(&have);
    }
    placed.sort_by_key(|p| (p.server, p.class, p.domain));
    refused.sort_unstable();
    evicted.sort_unstable();
    let out_of_time = started.elapsed().as_secs_f64() > limit;
    let status = if optimal && !out_of_time {
        Status::Optimal
    } else {
        Status::TimeLimit
    };
    Ok(Some(Outcome {
        placed,
        refused,
        evicted,
        objective,
        status,
        bound: (status == Status::Optimal).then_some(objective),
    }))
}

fn solve_monolithic(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    warm_start: Option<&[Applied]>,
    limit: f64,
) -> Result<Option<Outcome>, PlanError> {
    let servers: Vec<ServerId> = problem.servers().collect();
    let model = build(
        problem,
        initial,
        preemptors,
        classes,
        &servers,
        Counts::AtMost,
    );
    let warm = warm_start.map(|a| warm_values(problem, initial, classes, preemptors, &model, a));
    let Some((objective, placed, refused, evicted, solved)) = solve_model(model, limit, warm)?
    else {
        return Ok(None);
    };
    let status = match solved.status {
        SolveStatus::Optimal => Status::Optimal,
        SolveStatus::TimeLimit => Status::TimeLimit,
    };
    Ok(Some(Outcome {
        placed,
        refused,
        evicted,
        objective,
        status,
        bound: solved.bound,
    }))
}

/// Turns the aggregated solution into one decision per preemptor.
fn assemble(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    placed: &[Placed],
    refused: &[(usize, ServerId)],
    evicted: &[PodId],
) -> Vec<Decision> {
    let cluster = problem.cluster;
    let mut decisions: Vec<Decision> = vec![Decision::default(); preemptors.len()];
    let mut next_member = vec![0usize; classes.len()];
    let mut by_server: BTreeMap<ServerId, Vec<(usize, usize, Level)>> = BTreeMap::new();
    for pl in placed {
        for _ in 0..pl.count {
            let class = &classes[pl.class];
            if let Some(&i) = class.members.get(next_member[pl.class]) {
                next_member[pl.class] += 1;
                by_server
                    .entry(pl.server)
                    .or_default()
                    .push((i, pl.domain, pl.level));
            }
        }
    }
    let mut refused_on: BTreeMap<ServerId, Vec<usize>> = BTreeMap::new();
    for &(ci, server) in refused {
        if let Some(&i) = classes[ci].members.get(next_member[ci]) {
            next_member[ci] += 1;
            refused_on.entry(server).or_default().push(i);
            by_server.entry(server).or_default();
        }
    }
    for (server, mut items) in by_server {
        let t = cluster.type_of(server);
        let doms = domains_of(t);
        let a = &initial.servers[server.index()];
        let here: Vec<PodId> = evicted
            .iter()
            .copied()
            .filter(|id| initial.pod(*id).is_some_and(|p| p.server == server))
            .collect();
        let (mut avail_g, mut avail_c) = here
            .iter()
            .filter_map(|id| initial.pod(*id))
            .fold((a.free_gpus, a.free_cores), |(g, c), p| {
                (g.or(p.gpus), c.or(p.cores))
            });
        // Bottom-up: NUMA-level placements first, then socket, then server.
        items.sort_by_key(|&(i, _, l)| (l, i));
        let mut ids: BTreeMap<usize, (GpuSet, CoreSet)> = BTreeMap::new();
        for (i, d, _) in &items {
            let req = preemptors[*i].request;
            let dom = doms[*d].1;
            let gpus = avail_g.and(dom.gpus).lowest(req.gpus);
            let cores = gpus.and_then(|g| {
                let near = g
                    .iter()
                    .map(|x| t.numa_domain(t.gpu_numa[x]).cores)
                    .fold(CoreSet::empty(), CoreSet::or)
                    .and(avail_c)
                    .and(dom.cores);
                let first = near.lowest(req.cores.min(near.len()))?;
                let rest = avail_c
                    .and(dom.cores)
                    .minus(first)
                    .lowest(req.cores - first.len())?;
                Some(first.or(rest))
            });
            if let (Some(g), Some(c)) = (gpus, cores) {
                avail_g = avail_g.minus(g);
                avail_c = avail_c.minus(c);
                ids.insert(*i, (g, c));
            }
        }
        let mut order: Vec<usize> = items.iter().map(|(i, _, _)| *i).collect();
        let refusing = refused_on.remove(&server).unwrap_or_default();
        order.extend(refusing.iter().copied());
        order.sort_unstable();
        let attributed = attribute(initial, preemptors, &order, &ids, &here);
        // The ids must be free when the events replay in list order; otherwise the node
        // allocator places this server's pods during the replay.
        let replayable = ids.len() + refusing.len() == order.len() && {
            let (mut free_g, mut free_c) = (a.free_gpus, a.free_cores);
            order.iter().all(|i| {
                for v in attributed.get(i).into_iter().flatten() {
                    if let Some(p) = initial.pod(*v) {
                        free_g = free_g.or(p.gpus);
                        free_c = free_c.or(p.cores);
                    }
                }
                if refusing.contains(i) {
                    return true;
                }
                let Some((g, c)) = ids.get(i) else {
                    return false;
                };
                let ok = g.is_subset(&free_g) && c.is_subset(&free_c);
                free_g = free_g.minus(*g);
                free_c = free_c.minus(*c);
                ok
            })
        };
        let mut attributed = attributed;
        for i in order {
            decisions[i] = Decision {
                server: Some(server),
                victims: attributed.remove(&i).unwrap_or_default(),
                subsets_evaluated: 0,
                truncated: false,
                placement: if replayable {
                    ids.get(&i).copied()
                } else {
                    None
                },
                refuse: refusing.contains(&i),
            };
        }
    }
    decisions
}

/// Each evicted pod goes to the first preemptor (list order) that takes its resources and may
/// evict it; the rest to the first eligible preemptor on the server.
fn attribute(
    initial: &ClusterState,
    preemptors: &[Preemptor],
    order: &[usize],
    ids: &BTreeMap<usize, (GpuSet, CoreSet)>,
    evicted: &[PodId],
) -> BTreeMap<usize, Vec<PodId>> {
    let mut out: BTreeMap<usize, Vec<PodId>> = BTreeMap::new();
    for id in evicted {
        let Some(pod) = initial.pod(*id) else {
            continue;
        };
        let eligible = |i: &usize| preemptors[*i].priority > pod.priority;
        let taker = order.iter().find(|i| {
            eligible(i)
                && ids
                    .get(i)
                    .is_some_and(|(g, c)| g.intersects(&pod.gpus) || c.intersects(&pod.cores))
        });
        if let Some(&i) = taker.or_else(|| order.iter().find(|i| eligible(i))) {
            out.entry(i).or_default().push(*id);
        }
    }
    out
}

/// Values of the monolithic model's variables that reproduce a sequential plan.
fn warm_values(
    problem: &Problem<'_>,
    initial: &ClusterState,
    classes: &[Class],
    preemptors: &[Preemptor],
    model: &Model,
    applied: &[Applied],
) -> Vec<(Variable, f64)> {
    let cluster = problem.cluster;
    let mut count: HashMap<(usize, ServerId, usize), f64> = HashMap::new();
    for (a, p) in applied.iter().zip(preemptors) {
        let (Some(node), Some(level)) = (&a.event.node, a.event.level) else {
            continue;
        };
        if !a.event.placed {
            continue;
        }
        let Some(server) = cluster.server_id(node) else {
            continue;
        };
        let g = GpuSet::from_ids(a.event.gpus.iter().map(|&x| x as usize));
        let c = CoreSet::from_ids(a.event.cores.iter().map(|&x| x as usize));
        let doms = domains_of(cluster.type_of(server));
        let Some(di) = doms
            .iter()
            .position(|(l, d)| *l == level && g.is_subset(&d.gpus) && c.is_subset(&d.cores))
        else {
            continue;
        };
        let Some(ci) = classes
            .iter()
            .position(|cl| preemptors[cl.rep].workload == p.workload)
        else {
            continue;
        };
        *count.entry((ci, server, di)).or_default() += 1.0;
    }
    let evicted: std::collections::BTreeSet<&str> = applied
        .iter()
        .flat_map(|a| a.event.victims.iter().map(String::as_str))
        .collect();
    model
        .placements
        .iter()
        .map(|(pl, var)| {
            (
                *var,
                count
                    .get(&(pl.class, pl.server, pl.domain))
                    .copied()
                    .unwrap_or(0.0),
            )
        })
        .chain(model.victims.iter().map(|(id, v)| {
            let hit = initial
                .pod(*id)
                .is_some_and(|p| evicted.contains(p.name.as_str()));
            (*v, if hit { 1.0 } else { 0.0 })
        }))
        .chain(model.refusals.iter().map(|((ci, server), v)| {
            let used = applied.iter().zip(preemptors).any(|(a, p)| {
                !a.event.placed
                    && !a.event.victims.is_empty()
                    && a.event.node.as_deref() == Some(cluster.server(*server).name.as_str())
                    && preemptors[classes[*ci].rep].workload == p.workload
            });
            (*v, if used { 1.0 } else { 0.0 })
        }))
        .collect()
}
