//! `ilp-batch`: one MILP for the whole `[[preempt]]` list — which preemptors land where and
//! which pods are evicted (each at most once) — minimising the summed canonical cost. Its
//! optimum bounds every sequential plan from below (DESIGN §5.4).
//!
//! Identical preemptors (one workload class) are aggregated: an integer variable counts the
//! instances of a class placed in a domain of a server. Capacities are laminar (NUMA ⊂ socket ⊂
//! server), so counting demand per domain is exact: ids are then assigned bottom-up (NUMA-level
//! placements first), which always succeeds when the counts fit. Victims are attributed to the
//! first eligible preemptor on their server, so the plan replays event by event like any other.

use std::collections::{BTreeMap, HashMap};

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};

use super::engine::Applied;
use super::{BatchDecision, Decision, PlanError, PreemptionPlanner, Preemptor, Problem, Status};
use crate::solver::{self, SolveError, SolveStatus};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, GpuSet, Level, PodId, ServerId};

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

    fn decide(&self, problem: &Problem<'_>, state: &ClusterState, p: &Preemptor) -> Result<Decision, PlanError> {
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
        solve_batch(problem, initial, preemptors, warm_start)
    }
}

/// Instances of one workload class, in list order.
struct Class {
    members: Vec<usize>,
    rep: usize,
}

/// An integer variable: instances of `class` placed in domain `domain` (index into
/// `domains_of(server)`) of `server`.
struct PlacementVar {
    class: usize,
    server: ServerId,
    domain: usize,
    level: Level,
    var: Variable,
}

/// Every domain of a server type: NUMA nodes, sockets, then the whole server.
fn domains_of(t: &crate::topology::ServerType) -> Vec<(Level, Domain)> {
    Level::ALL
        .iter()
        .flat_map(|&l| t.domains(l).iter().map(move |d| (l, *d)))
        .collect()
}

fn inside(inner: &Domain, outer: &Domain) -> bool {
    inner.gpus.is_subset(&outer.gpus) && inner.cores.is_subset(&outer.cores)
}

fn solve_batch(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    warm_start: Option<&[Applied]>,
) -> Result<BatchDecision, PlanError> {
    let cluster = problem.cluster;
    let mut classes: Vec<Class> = Vec::new();
    let mut class_of_workload: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, p) in preemptors.iter().enumerate() {
        let c = *class_of_workload.entry(p.workload).or_insert_with(|| {
            classes.push(Class {
                members: Vec::new(),
                rep: i,
            });
            classes.len() - 1
        });
        classes[c].members.push(i);
    }
    let top_priority = preemptors.iter().map(|p| p.priority).max().unwrap_or(i64::MIN);
    let mut vars = ProblemVariables::new();
    let mut placements: Vec<PlacementVar> = Vec::new();
    let mut victims: Vec<(PodId, Variable)> = Vec::new();
    for server in problem.servers() {
        let t = cluster.type_of(server);
        for (ci, class) in classes.iter().enumerate() {
            let p = &preemptors[class.rep];
            for (di, (level, d)) in domains_of(t).iter().enumerate() {
                if !problem.admits(server, p, *level) {
                    continue;
                }
                let cap_g = if p.request.gpus == 0 { u32::MAX } else { d.gpus.len() / p.request.gpus };
                let cap_c = if p.request.cores == 0 { u32::MAX } else { d.cores.len() / p.request.cores };
                let cap = cap_g.min(cap_c).min(class.members.len() as u32);
                if cap == 0 {
                    continue;
                }
                let var = vars.add(variable().integer().min(0).max(cap as f64));
                placements.push(PlacementVar {
                    class: ci,
                    server,
                    domain: di,
                    level: *level,
                    var,
                });
            }
        }
        for id in &initial.servers[server.index()].pods {
            if let Some(pod) = initial.pod(*id)
                && pod.preemptible
                && pod.priority < top_priority
            {
                victims.push((*id, vars.add(variable().binary())));
            }
        }
    }
    let unplaced_w = problem.cost.weights.unplaced;
    let mut objective = Expression::from(unplaced_w * preemptors.len() as f64);
    for pv in &placements {
        let t = cluster.type_of(pv.server);
        objective += (problem.cost.placement_cost(t, pv.level) - unplaced_w) * pv.var;
    }
    for (id, v) in &victims {
        let prio = initial.pod(*id).map_or(0, |p| p.priority);
        objective += problem.cost.victim_cost(prio) * *v;
    }
    let mut constraints = Vec::new();
    for (ci, class) in classes.iter().enumerate() {
        let placed: Expression = placements
            .iter()
            .filter(|pv| pv.class == ci)
            .map(|pv| Expression::from(pv.var))
            .sum();
        constraints.push(constraint!(placed <= class.members.len() as f64));
    }
    let mut by_server: HashMap<ServerId, Vec<&PlacementVar>> = HashMap::new();
    for pv in &placements {
        by_server.entry(pv.server).or_default().push(pv);
    }
    let victim_server: Vec<ServerId> = victims
        .iter()
        .map(|(id, _)| initial.pod(*id).map_or(ServerId(0), |p| p.server))
        .collect();
    // A pod can be evicted only for an eligible (higher-priority) preemptor on its server.
    for ((id, v), server) in victims.iter().zip(&victim_server) {
        let prio = initial.pod(*id).map_or(0, |p| p.priority);
        let eligible: Expression = by_server
            .get(server)
            .map(|list| {
                list.iter()
                    .filter(|pv| preemptors[classes[pv.class].rep].priority > prio)
                    .map(|pv| Expression::from(pv.var))
                    .sum()
            })
            .unwrap_or_else(|| Expression::from(0.0));
        constraints.push(constraint!(*v <= eligible));
    }
    // Laminar capacities: demand placed in domains inside D fits what is free in D plus what
    // the victims free there.
    for server in problem.servers() {
        let Some(list) = by_server.get(&server) else { continue };
        let t = cluster.type_of(server);
        let doms = domains_of(t);
        let a = &initial.servers[server.index()];
        let server_victims: Vec<(PodId, Variable)> = victims
            .iter()
            .zip(&victim_server)
            .filter(|(_, s)| **s == server)
            .map(|(v, _)| *v)
            .collect();
        for (_, outer) in &doms {
            let inner: Vec<&&PlacementVar> = list.iter().filter(|pv| inside(&doms[pv.domain].1, outer)).collect();
            if inner.is_empty() {
                continue;
            }
            for gpus in [true, false] {
                let demand: Expression = inner
                    .iter()
                    .map(|pv| {
                        let r = preemptors[classes[pv.class].rep].request;
                        (if gpus { r.gpus } else { r.cores }) as f64 * pv.var
                    })
                    .sum();
                if inner.iter().all(|pv| {
                    let r = preemptors[classes[pv.class].rep].request;
                    (if gpus { r.gpus } else { r.cores }) == 0
                }) {
                    continue;
                }
                let free = if gpus { a.free_gpus.and(outer.gpus).len() } else { a.free_cores.and(outer.cores).len() };
                let freed: Expression = server_victims
                    .iter()
                    .filter_map(|(id, v)| {
                        let pod = initial.pod(*id)?;
                        let n = if gpus { pod.gpus.and(outer.gpus).len() } else { pod.cores.and(outer.cores).len() };
                        (n > 0).then(|| n as f64 * *v)
                    })
                    .sum();
                constraints.push(constraint!(demand <= freed + free as f64));
            }
        }
    }
    let warm = warm_start.map(|applied| warm_values(problem, initial, &classes, preemptors, &placements, &victims, applied));
    let keep: Vec<Variable> = placements
        .iter()
        .map(|pv| pv.var)
        .chain(victims.iter().map(|(_, v)| *v))
        .collect();
    let solved = match solver::minimise(
        vars,
        objective,
        constraints,
        &keep,
        problem.spec.planners.ilp_time_limit_s,
        warm,
    ) {
        Ok(s) => s,
        Err(SolveError::NoIncumbent) => {
            return Ok(BatchDecision {
                decisions: Vec::new(),
                status: Status::TimeLimit,
                bound: None,
                objective: None,
            });
        }
        Err(e) => return Err(PlanError::Solver(e.to_string())),
    };
    let counts: Vec<u32> = solved.values[..placements.len()]
        .iter()
        .map(|v| v.round().max(0.0) as u32)
        .collect();
    let evicted: Vec<PodId> = victims
        .iter()
        .zip(&solved.values[placements.len()..])
        .filter(|(_, v)| **v > 0.5)
        .map(|((id, _), _)| *id)
        .collect();
    let decisions = assemble(problem, initial, preemptors, &classes, &placements, &counts, &evicted);
    Ok(BatchDecision {
        decisions,
        status: match solved.status {
            SolveStatus::Optimal => Status::Optimal,
            SolveStatus::TimeLimit => Status::TimeLimit,
        },
        bound: solved.bound,
        objective: Some(solved.objective),
    })
}

/// Turns the aggregated solution into one decision per preemptor.
fn assemble(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    placements: &[PlacementVar],
    counts: &[u32],
    evicted: &[PodId],
) -> Vec<Decision> {
    let cluster = problem.cluster;
    let mut decisions: Vec<Decision> = vec![Decision::default(); preemptors.len()];
    // (preemptor, server, domain index, level)
    let mut assigned: Vec<(usize, ServerId, usize, Level)> = Vec::new();
    let mut next_member = vec![0usize; classes.len()];
    for (pv, &n) in placements.iter().zip(counts) {
        for _ in 0..n {
            let class = &classes[pv.class];
            if let Some(&i) = class.members.get(next_member[pv.class]) {
                next_member[pv.class] += 1;
                assigned.push((i, pv.server, pv.domain, pv.level));
            }
        }
    }
    let mut by_server: BTreeMap<ServerId, Vec<(usize, usize, Level)>> = BTreeMap::new();
    for &(i, s, d, l) in &assigned {
        by_server.entry(s).or_default().push((i, d, l));
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
            .fold((a.free_gpus, a.free_cores), |(g, c), p| (g.or(p.gpus), c.or(p.cores)));
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
                let rest = avail_c.and(dom.cores).minus(first).lowest(req.cores - first.len())?;
                Some(first.or(rest))
            });
            if let (Some(g), Some(c)) = (gpus, cores) {
                avail_g = avail_g.minus(g);
                avail_c = avail_c.minus(c);
                ids.insert(*i, (g, c));
            }
        }
        // Victims go to the first eligible preemptor on the server, in list order.
        let mut order: Vec<usize> = items.iter().map(|(i, _, _)| *i).collect();
        order.sort_unstable();
        let mut attributed: BTreeMap<usize, Vec<PodId>> = BTreeMap::new();
        for id in &here {
            let prio = initial.pod(*id).map_or(i64::MAX, |p| p.priority);
            if let Some(&i) = order.iter().find(|&&i| preemptors[i].priority > prio) {
                attributed.entry(i).or_default().push(*id);
            }
        }
        // The ids must be free when each event is replayed in list order; otherwise let the
        // node allocator place the server's pods during the replay.
        let replayable = ids.len() == order.len() && {
            let mut free_g = a.free_gpus;
            let mut free_c = a.free_cores;
            order.iter().all(|i| {
                for v in attributed.get(i).into_iter().flatten() {
                    if let Some(p) = initial.pod(*v) {
                        free_g = free_g.or(p.gpus);
                        free_c = free_c.or(p.cores);
                    }
                }
                let Some((g, c)) = ids.get(i) else { return false };
                let ok = g.is_subset(&free_g) && c.is_subset(&free_c);
                free_g = free_g.minus(*g);
                free_c = free_c.minus(*c);
                ok
            })
        };
        for i in order {
            decisions[i] = Decision {
                server: Some(server),
                victims: attributed.remove(&i).unwrap_or_default(),
                subsets_evaluated: 0,
                truncated: false,
                placement: if replayable { ids.get(&i).copied() } else { None },
            };
        }
    }
    decisions
}

/// Values of the batch variables that reproduce a sequential plan (a warm start).
fn warm_values(
    problem: &Problem<'_>,
    initial: &ClusterState,
    classes: &[Class],
    preemptors: &[Preemptor],
    placements: &[PlacementVar],
    victims: &[(PodId, Variable)],
    applied: &[Applied],
) -> Vec<(Variable, f64)> {
    let cluster = problem.cluster;
    let mut count: HashMap<(usize, ServerId, usize), f64> = HashMap::new();
    for (a, p) in applied.iter().zip(preemptors) {
        let (Some(node), Some(level)) = (&a.event.node, a.event.level) else { continue };
        if !a.event.placed {
            continue;
        }
        let Some(server) = cluster.server_id(node) else { continue };
        let g = GpuSet::from_ids(a.event.gpus.iter().map(|&x| x as usize));
        let c = CoreSet::from_ids(a.event.cores.iter().map(|&x| x as usize));
        let doms = domains_of(cluster.type_of(server));
        let Some(di) = doms
            .iter()
            .position(|(l, d)| *l == level && g.is_subset(&d.gpus) && c.is_subset(&d.cores))
        else {
            continue;
        };
        let Some(ci) = classes.iter().position(|cl| preemptors[cl.rep].workload == p.workload) else {
            continue;
        };
        *count.entry((ci, server, di)).or_default() += 1.0;
    }
    let evicted: std::collections::BTreeSet<&str> = applied
        .iter()
        .flat_map(|a| a.event.victims.iter().map(String::as_str))
        .collect();
    placements
        .iter()
        .map(|pv| (pv.var, count.get(&(pv.class, pv.server, pv.domain)).copied().unwrap_or(0.0)))
        .chain(victims.iter().map(|(id, v)| {
            let hit = initial.pod(*id).is_some_and(|p| evicted.contains(p.name.as_str()));
            (*v, if hit { 1.0 } else { 0.0 })
        }))
        .collect()
}
