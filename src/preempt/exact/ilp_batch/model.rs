//! The aggregated batch MILP (see the module header of `ilp_batch`): workload classes, the
//! model over some servers, its solution.

use std::collections::BTreeMap;

use good_lp::{Constraint, Expression, ProblemVariables, Variable, constraint, variable};

pub use super::classes::{Class, Counts, classes};
use super::domains::{domain_capacity, domains_of, inside, lowest_victim, may_refuse, reachable};
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::{self, Deadline, SolveError, SolveStatus};
use crate::topology::state::ClusterState;
use crate::topology::{Domain, GpuSet, Level, PodId, ServerId};

/// `count` instances of `class` placed in domain `domain` of `server`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// Index of the class in the list from [`classes`](super::classes::classes).
    pub class: usize,
    /// The server.
    pub server: ServerId,
    /// Index of the domain in [`domains_of`] of the server's type.
    pub domain: usize,
    /// Level of that domain.
    pub level: Level,
    /// Instances placed there (0 in the model's variable list; the solved count in a solution).
    pub count: u32,
}

/// A solved batch model (the whole list, or one server's subproblem): placements, refusals,
/// evicted pods, objective, status and best bound.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSolution {
    /// Where instances were placed (count > 0 only).
    pub placed: Vec<Placed>,
    /// (class, server): an instance left unplaced whose eviction rights were used on a server.
    pub refused: Vec<(usize, ServerId)>,
    /// Pods evicted.
    pub evicted: Vec<PodId>,
    /// Canonical cost of the solution, including the unplaced instances.
    pub objective: f64,
    /// Whether the solve was proven optimal or stopped at a limit.
    pub status: PlanStatus,
    /// Best proven lower bound of the objective.
    pub bound: Option<f64>,
}

/// The canonical cost of a solution of a list of `list_len` preemptors, counted from its
/// parts (not the solver's value): its placements, its victims, and `unplaced` for every
/// instance it does not place (refused ones included).
pub fn priced_objective(
    problem: &Problem<'_>,
    initial: &ClusterState,
    list_len: usize,
    solution: &BatchSolution,
) -> f64 {
    let cluster = problem.cluster;
    let instances: u32 = solution.placed.iter().map(|p| p.count).sum();
    solution
        .placed
        .iter()
        .map(|p| {
            f64::from(p.count)
                * problem
                    .cost
                    .placement_cost(cluster.type_of(p.server), p.level)
        })
        .sum::<f64>()
        + solution
            .evicted
            .iter()
            .filter_map(|id| initial.pod(*id))
            .map(|pod| problem.cost.victim_cost(pod.priority))
            .sum::<f64>()
        + problem.cost.weights.unplaced * (list_len as f64 - f64::from(instances))
}

/// Positions of one server's variables in the model's lists.
#[derive(Default)]
struct ServerVars {
    placements: Vec<usize>,
    refusals: Vec<usize>,
    victims: Vec<usize>,
}

/// A batch MILP and what its variables mean.
pub struct Model {
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    /// Integer: instances of a class placed in a domain of a server.
    pub placements: Vec<(Placed, Variable)>,
    /// Binary: one instance of the class evicts on the server but is not placed.
    pub refusals: Vec<((usize, ServerId), Variable)>,
    /// Binary: the pod is evicted.
    pub victims: Vec<(PodId, Variable)>,
}

/// Builds the batch MILP over `servers` from the `initial` state: integer placements per
/// (class, server, domain), eviction and refusal binaries, laminar domain capacities.
pub fn build(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    servers: &[ServerId],
    counts: Counts<'_>,
) -> Model {
    let never = || false;
    let built = build_until(
        problem,
        (initial, preemptors, classes),
        servers,
        counts,
        &never,
    );
    built.unwrap_or_else(unreachable_model)
}

/// An empty model: what `build` would return if a stop that never comes had come.
fn unreachable_model() -> Model {
    Model {
        vars: ProblemVariables::new(),
        objective: Expression::from(0.0),
        constraints: Vec::new(),
        placements: Vec::new(),
        refusals: Vec::new(),
        victims: Vec::new(),
    }
}

/// Servers between two reads of `stop` while a model is built.
const SERVERS_BETWEEN_CHECKS: usize = 256;

/// [`build`], given up (`None`) once `stop` says so: on tens of thousands of servers the
/// model itself takes seconds to build, which the run's budget may not have.
pub fn build_until(
    problem: &Problem<'_>,
    list: (&ClusterState, &[Preemptor], &[Class]),
    servers: &[ServerId],
    counts: Counts<'_>,
    stop: &dyn Fn() -> bool,
) -> Option<Model> {
    let (initial, preemptors, classes) = list;
    let top_priority = classes
        .iter()
        .enumerate()
        .filter(|(ci, _)| counts.includes(*ci))
        .map(|(_, c)| problem.eviction_reach(&preemptors[c.rep]))
        .max()
        .unwrap_or(i64::MIN);
    let mut vars = ProblemVariables::new();
    let columns = Columns::new(
        problem,
        list,
        servers,
        counts,
        top_priority,
        &mut vars,
        stop,
    )?;
    let objective = objective_of(problem, initial, preemptors.len(), counts, &columns);
    let mut constraints = class_rows(classes, counts, &columns);
    let on_server = columns.per_server(initial);
    eviction_rows(problem, list, &columns, &on_server, &mut constraints);
    budget_rows(initial, &columns, &mut constraints);
    capacity_rows(problem, list, &columns, &on_server, stop, &mut constraints)?;
    let Columns {
        placements,
        refusals,
        victims,
    } = columns;
    Some(Model {
        vars,
        objective,
        constraints,
        placements,
        refusals,
        victims,
    })
}

/// The model's variables, in the order the solver reads them.
struct Columns {
    placements: Vec<(Placed, Variable)>,
    refusals: Vec<((usize, ServerId), Variable)>,
    victims: Vec<(PodId, Variable)>,
}

impl Columns {
    /// Per server: a placement variable per class and domain that could hold an instance, an
    /// eviction binary per pod a preemptor of the list may evict, a refusal binary per class
    /// that may be refused there. `None` once `stop` says so.
    fn new(
        problem: &Problem<'_>,
        (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
        servers: &[ServerId],
        counts: Counts<'_>,
        top_priority: i64,
        vars: &mut ProblemVariables,
        stop: &dyn Fn() -> bool,
    ) -> Option<Self> {
        let cluster = problem.cluster;
        let mut placements = Vec::new();
        let mut victims = Vec::new();
        let mut refusals = Vec::new();
        for (done, &server) in servers.iter().enumerate() {
            if done % SERVERS_BETWEEN_CHECKS == 0 && stop() {
                return None;
            }
            let t = cluster.type_of(server);
            // What any plan can use here: the free GPUs and cores and those of the pods a
            // preemptor of the list may evict. A domain that cannot hold an instance in them
            // gets no variable (on a saturated cluster, most of them).
            let reachable = reachable(initial, server, top_priority);
            for (ci, class) in classes.iter().enumerate() {
                if !counts.includes(ci) {
                    continue;
                }
                let p = &preemptors[class.rep];
                for (di, (level, d)) in domains_of(t).iter().enumerate() {
                    if !problem.admits(server, p, *level) {
                        continue;
                    }
                    let within = Domain {
                        gpus: d.gpus.and(reachable.0).and(t.usable(p.request)),
                        cores: d.cores.and(reachable.1),
                    };
                    let cap = domain_capacity(&within, p, class.members.len());
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
            let lowest_victim = lowest_victim(initial, server);
            for id in initial.servers()[server.index()].pods() {
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
                let p = &preemptors[class.rep];
                // Refused where the scheduler would have placed it: it fits by counts once
                // every pod it may evict is gone.
                let fits =
                    reachable.0.len() >= p.request.gpus && reachable.1.len() >= p.request.cores;
                if counts.includes(ci) && fits && may_refuse(problem, server, p, lowest_victim) {
                    refusals.push(((ci, server), vars.add(variable().binary())));
                }
            }
        }
        Some(Columns {
            placements,
            refusals,
            victims,
        })
    }

    /// Per server, the positions of its placements, refusals and victims: the rows are per
    /// server, and a scan of every variable per row would be quadratic in the cluster.
    fn per_server(&self, initial: &ClusterState) -> BTreeMap<ServerId, ServerVars> {
        let mut on_server: BTreeMap<ServerId, ServerVars> = BTreeMap::new();
        for (k, (pl, _)) in self.placements.iter().enumerate() {
            on_server.entry(pl.server).or_default().placements.push(k);
        }
        for (k, ((_, s), _)) in self.refusals.iter().enumerate() {
            on_server.entry(*s).or_default().refusals.push(k);
        }
        for (k, (id, _)) in self.victims.iter().enumerate() {
            if let Some(pod) = initial.pod(*id) {
                on_server.entry(pod.server).or_default().victims.push(k);
            }
        }
        on_server
    }
}

/// The canonical cost of the model's plan: placements at their level, evictions at their
/// victim cost, and unplaced instances (counted in the constant, or priced per refusal).
fn objective_of(
    problem: &Problem<'_>,
    initial: &ClusterState,
    list_len: usize,
    counts: Counts<'_>,
    columns: &Columns,
) -> Expression {
    let unplaced_w = problem.cost.weights.unplaced;
    let mut objective = match counts {
        Counts::AtMost => Expression::from(unplaced_w * list_len as f64),
        Counts::Exactly(_) | Counts::Priced(_) => Expression::from(0.0),
    };
    for (pl, var) in &columns.placements {
        let t = problem.cluster.type_of(pl.server);
        let unplaced_saving = match counts {
            Counts::AtMost => unplaced_w,
            Counts::Exactly(_) => 0.0,
            Counts::Priced(price) => price[pl.class],
        };
        objective += (problem.cost.placement_cost(t, pl.level) - unplaced_saving) * *var;
    }
    for (id, v) in &columns.victims {
        let prio = initial.pod(*id).map_or(0, |p| p.priority);
        objective += problem.cost.victim_cost(prio) * *v;
    }
    // Per server, a refused instance is an unplaced one (in the monolithic model the constant
    // already counts it).
    for ((ci, _), var) in &columns.refusals {
        match counts {
            Counts::AtMost => {}
            Counts::Exactly(_) => objective += unplaced_w * *var,
            Counts::Priced(price) => objective += (unplaced_w - price[*ci]) * *var,
        }
    }
    objective
}

/// Per class, its instances placed or refused: at most its size, or exactly the count asked.
fn class_rows(classes: &[Class], counts: Counts<'_>, columns: &Columns) -> Vec<Constraint> {
    let mut constraints = Vec::new();
    for (ci, class) in classes.iter().enumerate() {
        if !counts.includes(ci) {
            continue;
        }
        let placed: Expression = columns
            .placements
            .iter()
            .filter(|(pl, _)| pl.class == ci)
            .map(|(_, v)| Expression::from(*v))
            .chain(
                columns
                    .refusals
                    .iter()
                    .filter(|((c, _), _)| *c == ci)
                    .map(|(_, v)| Expression::from(*v)),
            )
            .sum();
        match counts {
            Counts::AtMost | Counts::Priced(_) => {
                constraints.push(constraint!(placed <= class.members.len() as f64))
            }
            Counts::Exactly(k) => constraints.push(constraint!(placed == k[ci] as f64)),
        }
    }
    constraints
}

/// A pod can be evicted only for an eligible (higher-priority) preemptor on its server.
fn eviction_rows(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    columns: &Columns,
    on_server: &BTreeMap<ServerId, ServerVars>,
    constraints: &mut Vec<Constraint>,
) {
    let reaches_above =
        |ci: usize, priority: i64| problem.eviction_reach(&preemptors[classes[ci].rep]) > priority;
    for (id, v) in &columns.victims {
        let Some(pod) = initial.pod(*id) else {
            continue;
        };
        let Some(here) = on_server.get(&pod.server) else {
            continue;
        };
        let eligible: Expression = here
            .placements
            .iter()
            .map(|&k| &columns.placements[k])
            .filter(|(pl, _)| reaches_above(pl.class, pod.priority))
            .map(|(_, var)| Expression::from(*var))
            .chain(
                here.refusals
                    .iter()
                    .map(|&k| &columns.refusals[k])
                    .filter(|((c, _), _)| reaches_above(*c, pod.priority))
                    .map(|(_, var)| Expression::from(*var)),
            )
            .sum();
        constraints.push(constraint!(*v <= eligible));
    }
}

/// Hard PodDisruptionBudgets: no more of a budget's pods than it allows (over the servers of
/// this model; a model of part of the cluster is a relaxation, checked when enacted).
fn budget_rows(initial: &ClusterState, columns: &Columns, constraints: &mut Vec<Constraint>) {
    if !initial.budgets().hard() {
        return;
    }
    let mut per_budget: BTreeMap<u32, Expression> = BTreeMap::new();
    for (id, v) in &columns.victims {
        for &b in initial.pod(*id).map_or(&[][..], |p| &p.budgets) {
            *per_budget.entry(b).or_default() += *v;
        }
    }
    for (b, taken) in per_budget {
        let left = initial.budgets().left()[b as usize] as f64;
        constraints.push(constraint!(taken <= left));
    }
}

/// Laminar capacities: the demand placed in domains inside D fits what is free in D plus what
/// the evicted pods free there. `None` once `stop` says so.
fn capacity_rows(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    columns: &Columns,
    on_server: &BTreeMap<ServerId, ServerVars>,
    stop: &dyn Fn() -> bool,
    constraints: &mut Vec<Constraint>,
) -> Option<()> {
    for (done, (&server, indices)) in on_server.iter().enumerate() {
        if done % SERVERS_BETWEEN_CHECKS == 0 && stop() {
            return None;
        }
        let t = problem.cluster.type_of(server);
        let doms = domains_of(t);
        let a = &initial.servers()[server.index()];
        let here: Vec<&(Placed, Variable)> = indices
            .placements
            .iter()
            .map(|&k| &columns.placements[k])
            .collect();
        if here.is_empty() {
            continue;
        }
        let server_victims: Vec<&(PodId, Variable)> = indices
            .victims
            .iter()
            .map(|&k| &columns.victims[k])
            .collect();
        for (_, outer) in &doms {
            let inner: Vec<&&(Placed, Variable)> = here
                .iter()
                .filter(|(pl, _)| inside(&doms[pl.domain].1, outer))
                .collect();
            // Cores are one resource; devices one per kind a class here asks for, each
            // class drawing only on the devices of its kind (`usable`).
            let mut resources: Vec<Option<GpuSet>> = vec![None];
            for (pl, _) in &inner {
                let usable = t.usable(preemptors[classes[pl.class].rep].request);
                if !resources.contains(&Some(usable)) {
                    resources.push(Some(usable));
                }
            }
            for resource in resources {
                let gpus = resource.is_some();
                let of_kind = |pl: &Placed| {
                    let r = preemptors[classes[pl.class].rep].request;
                    resource.is_none_or(|u| t.usable(r) == u)
                };
                let need = |pl: &Placed| {
                    let r = preemptors[classes[pl.class].rep].request;
                    if !of_kind(pl) {
                        0
                    } else if gpus {
                        r.gpus
                    } else {
                        r.cores
                    }
                };
                if inner.iter().all(|(pl, _)| need(pl) == 0) {
                    continue;
                }
                let devices = resource.map_or(outer.gpus, |u| outer.gpus.and(u));
                let demand: Expression = inner.iter().map(|(pl, var)| need(pl) as f64 * *var).sum();
                let free = if gpus {
                    a.free_gpus().and(devices).len()
                } else {
                    a.free_cores().and(outer.cores).len()
                };
                let freed: Expression = server_victims
                    .iter()
                    .filter_map(|(id, v)| {
                        let pod = initial.pod(*id)?;
                        let n = if gpus {
                            pod.gpus.and(devices).len()
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
    Some(())
}

/// The batch model of one server alone, solved: a subproblem of the decompositions.
pub fn solve_on_server(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    server: ServerId,
    counts: Counts<'_>,
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let model = build(problem, initial, preemptors, classes, &[server], counts);
    solve_model(model, deadline, None)
}

/// Solves a model; `None` when it is infeasible or the deadline passed before any incumbent
/// (a warm start is one, `solver::minimise`).
pub fn solve_model(
    model: Model,
    deadline: &Deadline,
    warm: Option<Vec<(Variable, f64)>>,
) -> Result<Option<BatchSolution>, PlanningError> {
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
        deadline,
        warm,
    ) {
        Ok(s) => s,
        Err(SolveError::Infeasible) | Err(SolveError::NoIncumbent) => return Ok(None),
        Err(e) => return Err(PlanningError::Solver(e.to_string())),
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
    Ok(Some(BatchSolution {
        placed,
        refused,
        evicted,
        objective: solved.objective,
        status: match solved.status {
            SolveStatus::Optimal => PlanStatus::Optimal,
            SolveStatus::TimeLimit => PlanStatus::TimeLimit,
            SolveStatus::GapLimit => PlanStatus::GapLimit,
        },
        bound: solved.bound,
    }))
}
