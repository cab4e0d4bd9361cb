//! Only the victims a preemptor needs: the batch's plan replayed as the scheduler would enact
//! it, each preemption reprieving the victims it can do without.
//!
//! The batch model lets a pod be evicted wherever a preemptor of higher priority lands on its
//! server, needed or not, so a lower-priority preemptor may take what such an eviction frees:
//! a best-effort pod placed by evicting a best-effort pod "for" a latency-sensitive one. No
//! scheduler does that. Kubernetes evicts, for one preemptor, the victims it needs on the
//! chosen node and reprieves the rest (highest priority first); a pod is never evicted for one
//! of equal or lower priority. So the model is a relaxation: its optimum bounds every plan a
//! scheduler can make, but its plan is reported only as the cluster would enact it. Each event,
//! in enactment order, keeps a victim only if without it the preemptor no longer fits where it
//! lands (in its domain, at its level; by counts on the node for a refused pod); a later
//! preemptor that relied on a reprieved pod's GPUs or cores does not fit and is left unplaced.

use std::collections::BTreeMap;

use crate::plan::preemption::{Preemptor, enactment_order};
use crate::preempt::problem::{Decision, Problem};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, GpuSet, Level, PodId, ServerId, pick_cores, place};

/// The plan as enacted: decisions in list order and their summed canonical cost.
#[derive(Debug, Clone)]
pub struct Enacted {
    /// One decision per preemptor, in list order, with explicit GPUs and cores.
    pub decisions: Vec<Decision>,
    /// Σ of the decisions' canonical costs.
    pub objective: f64,
    /// Whether some victim was reprieved or some preemptor lost its place.
    pub changed: bool,
}

/// Replays `decisions` (one per preemptor, list order) highest priority first, each keeping
/// only the victims it needs (see the module header).
pub fn enact_needed(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    mut decisions: Vec<Decision>,
) -> Enacted {
    // Per server: what is free, and the pods the plan evicts there that still run. A preemptor
    // may take any of those below its priority (the plan attributes each to one preemptor, but
    // which one needs it depends on what the earlier ones reprieved).
    let mut free: BTreeMap<ServerId, (GpuSet, CoreSet)> = BTreeMap::new();
    let mut planned: BTreeMap<ServerId, Vec<PodId>> = BTreeMap::new();
    for d in &decisions {
        if let Some(server) = d.server {
            planned
                .entry(server)
                .or_default()
                .extend(d.victims.iter().copied());
        }
    }
    let priority = |id: &PodId| initial.pod(*id).map_or(i64::MAX, |pod| pod.priority);
    let mut objective = 0.0;
    let mut dropped = false;
    for i in enactment_order(preemptors, true) {
        let p = &preemptors[i];
        let Some(server) = decisions[i].server else {
            objective += problem.cost.weights.unplaced;
            continue;
        };
        let t = problem.cluster.type_of(server);
        let (free_g, free_c) = *free.entry(server).or_insert_with(|| {
            let a = &initial.servers()[server.index()];
            (a.free_gpus(), a.free_cores())
        });
        let running = planned.entry(server).or_default();
        // Reprieve order: the pods the plan gave to other preemptors first, so that each
        // takes its own when they suffice; then highest priority first, then id.
        let own = &decisions[i].victims;
        let mut victims: Vec<PodId> = running
            .iter()
            .copied()
            .filter(|id| priority(id) < problem.eviction_reach(p))
            .collect();
        victims.sort_by_key(|id| (own.contains(id), std::cmp::Reverse(priority(id)), *id));
        let freed = |kept: &[PodId]| {
            kept.iter()
                .filter_map(|id| initial.pod(*id))
                .fold((free_g, free_c), |(g, c), pod| {
                    (g.or(pod.gpus), c.or(pod.cores))
                })
        };
        let here = (server, p);
        let d = &decisions[i];
        let target = Target::of(problem, here, d, freed(&victims))
            .filter(|target| target.fit(problem, here, freed(&victims)).is_some());
        let Some(target) = target else {
            // It relied on GPUs or cores no preemptor above it may free: not placed.
            dropped = true;
            decisions[i] = Decision::default();
            objective += problem.cost.weights.unplaced;
            continue;
        };
        let mut k = 0;
        while k < victims.len() {
            let mut without = victims.clone();
            without.remove(k);
            if target.fit(problem, here, freed(&without)).is_some() {
                victims = without;
            } else {
                k += 1;
            }
        }
        running.retain(|id| !victims.contains(id));
        let (g, c) = freed(&victims);
        let placed = target.fit(problem, here, (g, c));
        let prios: Vec<i64> = victims.iter().map(priority).collect();
        victims.sort_unstable();
        let d = &mut decisions[i];
        d.victims = victims;
        match (d.refuse, placed) {
            (false, Some((pg, pc))) => {
                free.insert(server, (g.minus(pg), c.minus(pc)));
                d.placement = Some((pg, pc));
                objective += problem
                    .cost
                    .event_cost(Some((t, t.level_of(pg, pc))), &prios);
            }
            _ => {
                free.insert(server, (g, c));
                objective += problem.cost.event_cost(None, &prios);
                if d.victims.is_empty() {
                    // Every victim reprieved: a refusal that evicts nothing is an unplaced pod
                    // (as `assemble` writes one), at the same cost.
                    d.server = None;
                    d.refuse = false;
                    d.placement = None;
                }
            }
        }
    }
    let reprieved = planned.values().any(|running| !running.is_empty());
    Enacted {
        decisions,
        objective,
        changed: dropped || reprieved,
    }
}

/// Where a decision's preemptor must still fit when a victim is reprieved.
enum Target {
    /// In this domain (the one its planned GPUs and cores lie in, at their level).
    Domain(Domain),
    /// Wherever the node allocator places it, at an admitted level no worse than this one.
    Allocator(Level),
    /// By counts on the node: a refused pod, as the scheduler's filter sees it.
    Counts,
}

impl Target {
    /// The target of decision `d` on `server`; `all_gone`: what is free there with every one of
    /// its planned victims evicted (the allocator's level then is the plan's).
    fn of(
        problem: &Problem<'_>,
        (server, p): (ServerId, &Preemptor),
        d: &Decision,
        all_gone: (GpuSet, CoreSet),
    ) -> Option<Target> {
        let t = problem.cluster.type_of(server);
        if d.refuse {
            return Some(Target::Counts);
        }
        match d.placement {
            Some((g, c)) => {
                let level = t.level_of(g, c);
                t.domains(level)
                    .iter()
                    .find(|dom| g.is_subset(&dom.gpus) && c.is_subset(&dom.cores))
                    .map(|dom| Target::Domain(*dom))
            }
            None => {
                let pl = place(t, all_gone.0, all_gone.1, p.request)?;
                problem
                    .admits(server, p, pl.level)
                    .then_some(Target::Allocator(pl.level))
            }
        }
    }

    /// The GPUs and cores the preemptor takes given what is free (nothing taken, for a
    /// refused pod that fits by counts), or `None` when it does not fit.
    fn fit(
        &self,
        problem: &Problem<'_>,
        (server, p): (ServerId, &Preemptor),
        (g, c): (GpuSet, CoreSet),
    ) -> Option<(GpuSet, CoreSet)> {
        let t = problem.cluster.type_of(server);
        let req = p.request;
        match self {
            Target::Domain(dom) => {
                let gpus = t.pick_devices(req, g.and(dom.gpus))?;
                let cores = pick_cores(t, gpus, c.and(dom.cores), req.cores)?;
                Some((gpus, cores))
            }
            Target::Allocator(level) => {
                let pl = place(t, g, c, req)?;
                (pl.level <= *level && problem.admits(server, p, pl.level))
                    .then_some((pl.gpus, pl.cores))
            }
            Target::Counts => (t.devices_fit(req, g) && c.len() >= req.cores)
                .then_some((GpuSet::empty(), CoreSet::empty())),
        }
    }
}
