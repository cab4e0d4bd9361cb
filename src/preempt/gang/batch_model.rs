//! The joint MILP of a list of gangs (`ilp-batch`): which domain each gang takes, how many of
//! its pods sit in each NUMA node, socket or server of that domain, and which pods are
//! evicted (each once), minimising the summed canonical cost.
//! - `x[g, s, d]`: pods of gang g in domain d (a NUMA node, socket or whole server of s whose
//!   level the pod may take there). Capacities are laminar (NUMA ⊂ socket ⊂ server), so
//!   counting demand per domain is exact; each pod is priced at the level of its domain (a
//!   pod counted in a socket may in fact sit in one NUMA node, which only lowers its cost).
//! - `y[g, D]`: gang g lies inside domain D of its required level; Σ_{s∈D} pods = pods·y.
//! - `q[g, F]`: whole slices of g in domain F of its slice level.
//! - `u[g, E]`: g lies inside domain E of a level narrower than its required one, which
//!   earns back the difference of the spread penalties of E's level and the one above.
//! - `z[v]`: pod v is evicted, only where a gang that may evict it places a pod.

use std::collections::BTreeMap;

use good_lp::{Constraint, Expression, ProblemVariables, Variable, constraint, variable};

use super::menu::worst_level;
use super::request::Gang;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, FabricLevel, GpuSet, Level, PodId, ServerId};

/// One placement variable: pods of `gang` in `domain` (at `level`) of `server`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// Index of the gang in the list.
    pub gang: usize,
    /// The server.
    pub server: ServerId,
    /// The level of the domain.
    pub level: Level,
    /// The domain's GPUs and cores.
    pub domain: Domain,
}

/// The model, and what its variables stand for.
pub struct GangModel {
    /// The variables.
    pub vars: ProblemVariables,
    /// What is minimised.
    pub objective: Expression,
    /// The constraints.
    pub constraints: Vec<Constraint>,
    /// Placement variables.
    pub slots: Vec<(Slot, Variable)>,
    /// Eviction variables.
    pub victims: Vec<(PodId, Variable)>,
    /// Domain choices: (gang, level, domain index).
    pub choices: Vec<((usize, FabricLevel, u32), Variable)>,
    /// Slice counts: (gang, domain index at its slice level).
    pub slices: Vec<((usize, u32), Variable)>,
    /// Narrower-domain rewards: (gang, level, domain index).
    pub within: Vec<((usize, FabricLevel, u32), Variable)>,
}

/// Pods of `g` an empty domain could hold.
fn empty_capacity(g: &Gang, d: &Domain) -> u32 {
    let by = |n: u32, need: u32| n.checked_div(need).unwrap_or(g.pods);
    by(d.gpus.len(), g.request.gpus)
        .min(by(d.cores.len(), g.request.cores))
        .min(g.pods)
}

/// Pods of `g` that fit in `d` with `gpus` and `cores` free there.
fn pods_fitting(g: &Gang, d: &Domain, gpus: GpuSet, cores: CoreSet) -> u32 {
    empty_capacity(
        g,
        &Domain {
            gpus: gpus.and(d.gpus),
            cores: cores.and(d.cores),
        },
    )
}

/// Valid inequalities that tighten the relaxation: a slot that holds more than `k` pods only
/// when pod v is evicted, `k` being what it holds with every other candidate evicted, obeys
/// x ≤ k + (cap − k)·z_v. (Without them the relaxation evicts fractions of pods: a whole-host
/// pod would need a share of each resident.)
fn must_evict_cuts(
    constraints: &mut Vec<Constraint>,
    (initial, server): (&ClusterState, ServerId),
    slots: &[(Slot, Variable)],
    freed: &[(PodId, Variable)],
    gangs: &[Gang],
) {
    let alloc = &initial.servers()[server.index()];
    let everything = freed
        .iter()
        .filter_map(|(id, _)| initial.pod(*id))
        .fold((alloc.free_gpus(), alloc.free_cores()), |(g, c), p| {
            (g.or(p.gpus), c.or(p.cores))
        });
    for (slot, x) in slots.iter().filter(|(s, _)| s.server == server) {
        let g = &gangs[slot.gang];
        let cap = empty_capacity(g, &slot.domain).min(pods_fitting(
            g,
            &slot.domain,
            everything.0,
            everything.1,
        ));
        for (id, z) in freed {
            let Some(v) = initial.pod(*id) else { continue };
            let without = pods_fitting(
                g,
                &slot.domain,
                everything.0.minus(v.gpus),
                everything.1.minus(v.cores),
            );
            if without < cap {
                constraints.push(constraint!(
                    *x <= without as f64 + (cap - without) as f64 * *z
                ));
            }
        }
    }
}

/// Builds the joint model of `gangs` on `initial`.
pub fn build(problem: &Problem<'_>, initial: &ClusterState, gangs: &[Gang]) -> GangModel {
    let cluster = problem.cluster;
    let mut vars = ProblemVariables::new();
    let mut objective = Expression::from(0.0);
    let constraints = Vec::new();
    let mut slots: Vec<(Slot, Variable)> = Vec::new();
    // Per (gang, server): the pods it places there.
    let mut pods_on: PodsOn = BTreeMap::new();
    for (gi, g) in gangs.iter().enumerate() {
        let pod = g.any_pod();
        for server in problem.servers() {
            let Some(worst) = worst_level(problem, g, server) else {
                continue;
            };
            if !problem.eligible(server, &pod) {
                continue;
            }
            let t = cluster.type_of(server);
            for level in Level::ALL.into_iter().filter(|l| *l <= worst) {
                for d in t.domains_for(g.request, level) {
                    let cap = empty_capacity(g, d);
                    if cap == 0 {
                        continue;
                    }
                    let var = vars.add(variable().integer().min(0).max(cap as f64));
                    objective += problem.cost.placement_cost(t, level) * var;
                    *pods_on.entry((gi, server)).or_default() += var;
                    slots.push((
                        Slot {
                            gang: gi,
                            server,
                            level,
                            domain: *d,
                        },
                        var,
                    ));
                }
            }
        }
    }
    let mut model = GangModel {
        vars,
        objective,
        constraints,
        slots,
        victims: Vec::new(),
        choices: Vec::new(),
        slices: Vec::new(),
        within: Vec::new(),
    };
    model.add_servers(problem, initial, gangs, &pods_on);
    model.add_gangs(problem, gangs, &pods_on);
    model
}

/// Per (gang, server): the pods it places there.
type PodsOn = BTreeMap<(usize, ServerId), Expression>;

impl GangModel {
    /// Evictions, and the capacity of every domain of every server that holds a slot.
    fn add_servers(
        &mut self,
        problem: &Problem<'_>,
        initial: &ClusterState,
        gangs: &[Gang],
        pods_on: &PodsOn,
    ) {
        let cluster = problem.cluster;
        // Evictions, and the capacity of every domain of every server that holds a slot.
        let servers: std::collections::BTreeSet<ServerId> =
            self.slots.iter().map(|(s, _)| s.server).collect();
        for &server in &servers {
            let t = cluster.type_of(server);
            let alloc = &initial.servers()[server.index()];
            let mut freed: Vec<(PodId, Variable)> = Vec::new();
            for r in alloc.residents() {
                let evictors: Vec<usize> = (0..gangs.len())
                    .filter(|&gi| pods_on.contains_key(&(gi, server)))
                    .filter(|&gi| {
                        problem.may_evict(&gangs[gi].any_pod(), r.priority, r.preemptible)
                    })
                    .collect();
                if evictors.is_empty() {
                    continue;
                }
                let z = self.vars.add(variable().binary());
                self.objective += problem.cost.victim_cost(r.priority) * z;
                let mut reach = Expression::from(0.0);
                for gi in evictors {
                    reach += pods_on[&(gi, server)].clone();
                }
                self.constraints.push(constraint!(z <= reach));
                freed.push((r.id, z));
                self.victims.push((r.id, z));
            }
            must_evict_cuts(
                &mut self.constraints,
                (initial, server),
                &self.slots,
                &freed,
                gangs,
            );
            for level in Level::ALL {
                for e in t.domains(level) {
                    let mut gpu_demand = Expression::from(0.0);
                    let mut core_demand = Expression::from(0.0);
                    for (slot, var) in self.slots.iter().filter(|(s, _)| s.server == server) {
                        if slot.domain.gpus.is_subset(&e.gpus)
                            && slot.domain.cores.is_subset(&e.cores)
                        {
                            let g = &gangs[slot.gang];
                            gpu_demand += g.request.gpus as f64 * *var;
                            core_demand += g.request.cores as f64 * *var;
                        }
                    }
                    let mut gpu_supply =
                        Expression::from(alloc.free_gpus().and(e.gpus).len() as f64);
                    let mut core_supply =
                        Expression::from(alloc.free_cores().and(e.cores).len() as f64);
                    for (id, z) in &freed {
                        if let Some(p) = initial.pod(*id) {
                            gpu_supply += p.gpus.and(e.gpus).len() as f64 * *z;
                            core_supply += p.cores.and(e.cores).len() as f64 * *z;
                        }
                    }
                    self.constraints.push(constraint!(gpu_demand <= gpu_supply));
                    self.constraints
                        .push(constraint!(core_demand <= core_supply));
                }
            }
        }
    }

    /// Each gang's domain choice, slices and the narrower domains that earn back spread.
    fn add_gangs(&mut self, problem: &Problem<'_>, gangs: &[Gang], pods_on: &PodsOn) {
        let fabric = &problem.cluster.fabric;
        let w = &problem.cost.weights;
        for (gi, g) in gangs.iter().enumerate() {
            let per_domain = |level: FabricLevel| {
                let mut out: BTreeMap<u32, Expression> = BTreeMap::new();
                for ((gj, server), e) in pods_on {
                    if *gj == gi {
                        *out.entry(fabric.domain_of(level, *server)).or_default() += e.clone();
                    }
                }
                out
            };
            let mut any = Expression::from(0.0);
            let required_cost = problem
                .cost
                .spread_cost(g.pods, fabric.penalty_of(g.required));
            for (d, pods) in per_domain(g.required) {
                let y = self.vars.add(variable().binary());
                self.constraints
                    .push(constraint!(pods == g.pods as f64 * y));
                // Each slot holds pods only as far as its domain is chosen: implied for whole
                // solutions, it keeps the relaxation from spreading a gang over several domains.
                for (slot, x) in &self.slots {
                    if slot.gang == gi && fabric.domain_of(g.required, slot.server) == d {
                        let cap = empty_capacity(g, &slot.domain);
                        if cap < g.pods {
                            self.constraints.push(constraint!(*x <= cap as f64 * y));
                        }
                    }
                }
                self.objective += (required_cost - g.pods as f64 * w.unplaced) * y;
                any += y;
                self.choices.push(((gi, g.required, d), y));
            }
            self.constraints.push(constraint!(any <= 1.0));
            self.objective += g.pods as f64 * w.unplaced;
            if let Some((size, level)) = g.slice {
                for (f, pods) in per_domain(level) {
                    let q = self
                        .vars
                        .add(variable().integer().min(0).max((g.pods / size) as f64));
                    self.constraints.push(constraint!(pods == size as f64 * q));
                    self.slices.push(((gi, f), q));
                }
            }
            let mut level = g.required;
            while level < fabric.host() {
                let inner = FabricLevel(level.0 + 1);
                let earned = problem.cost.spread_cost(g.pods, fabric.penalty_of(level))
                    - problem.cost.spread_cost(g.pods, fabric.penalty_of(inner));
                if earned > 0.0 {
                    for (e, pods) in per_domain(inner) {
                        let u = self.vars.add(variable().binary());
                        self.constraints
                            .push(constraint!(g.pods as f64 * u <= pods));
                        self.objective -= earned * u;
                        self.within.push(((gi, inner, e), u));
                    }
                }
                level = inner;
            }
        }
    }
}
