//! `ilp-batch` for gangs: the joint optimum of the whole list (`batch_model`), decoded into one
//! decision per gang: each victim attributed to the first gang, in enactment order, that may
//! evict it and places a pod on its server; ids assigned per server bottom-up (every NUMA-level
//! pod first, then socket, then server), which the laminar counts guarantee to succeed. A
//! decoded plan is replayed before it is returned; one that does not replay, or that is worse
//! than the best sequential plan (a solve stopped early), gives way to that plan, the solver's
//! bound kept.

use std::collections::BTreeMap;

use good_lp::Variable;

use super::apply::apply_gang;
use super::batch_model::{GangModel, build};
use super::decision::{GangDecision, PodPlacement};
use super::request::Gang;
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::gang::gang_enactment_order;
use crate::preempt::exact::ilp::deadline;
use crate::preempt::planner::GangBatch;
use crate::preempt::problem::Problem;
use crate::solver::{self, SolveError, SolveStatus};
use crate::topology::state::ClusterState;
use crate::topology::{Level, PodId, ServerId, pick_cores};

/// The joint decision of `gangs` from `initial`, warm-started from `warm_start`.
pub fn decide_batch(
    problem: &Problem<'_>,
    initial: &ClusterState,
    gangs: &[Gang],
    warm_start: Option<&[GangDecision]>,
) -> Result<GangBatch, PlanningError> {
    let deadline = deadline(problem);
    let model = build(problem, initial, gangs);
    let warm = warm_start.and_then(|w| warm_values(problem, initial, gangs, &model, w));
    let keep: Vec<Variable> = model
        .slots
        .iter()
        .map(|(_, v)| *v)
        .chain(model.victims.iter().map(|(_, v)| *v))
        .collect();
    let GangModel {
        vars,
        objective,
        constraints,
        slots,
        victims,
        ..
    } = model;
    let fallback = |status: PlanStatus, bound: Option<f64>| GangBatch {
        decisions: warm_start.map(<[GangDecision]>::to_vec).unwrap_or_default(),
        status: if warm_start.is_some() {
            status
        } else {
            PlanStatus::NoSolution
        },
        bound,
    };
    let solved = match solver::minimise(vars, objective, constraints, &keep, &deadline, warm) {
        Ok(s) => s,
        Err(SolveError::Infeasible) | Err(SolveError::NoIncumbent) => {
            return Ok(fallback(PlanStatus::TimeLimit, None));
        }
        Err(e) => return Err(PlanningError::Solver(e.to_string())),
    };
    let status = match solved.status {
        SolveStatus::Optimal => PlanStatus::Optimal,
        SolveStatus::TimeLimit => PlanStatus::TimeLimit,
        SolveStatus::GapLimit => PlanStatus::GapLimit,
    };
    let n = slots.len();
    let counts: Vec<u32> = solved.values[..n]
        .iter()
        .map(|v| v.round().max(0.0) as u32)
        .collect();
    let evicted: Vec<PodId> = victims
        .iter()
        .zip(&solved.values[n..])
        .filter(|(_, v)| **v > 0.5)
        .map(|((id, _), _)| *id)
        .collect();
    let decoded = decode(problem, initial, gangs, &slots, &counts, &evicted);
    let replayed = decoded
        .as_ref()
        .and_then(|d| replay_cost(problem, initial, gangs, d));
    let warm_cost = warm_start.and_then(|w| replay_cost(problem, initial, gangs, w));
    match (decoded, replayed) {
        (Some(decisions), Some(cost)) if warm_cost.is_none_or(|w| cost <= w + 1e-9) => {
            Ok(GangBatch {
                decisions,
                status,
                bound: solved.bound,
            })
        }
        // The solver's plan does not replay, or a sequential plan is better: that plan, with
        // the proven bound if any; never `optimal` unless the bound says so.
        _ => {
            let proven = matches!(
                (solved.bound, warm_cost),
                (Some(b), Some(w)) if (w - b).abs() <= 1e-9 * w.abs().max(1.0)
            );
            Ok(fallback(
                if proven {
                    PlanStatus::Optimal
                } else {
                    PlanStatus::TimeLimit
                },
                solved.bound,
            ))
        }
    }
}

/// The canonical cost of `decisions` replayed in enactment order, `None` when they do not
/// replay or a gang is not kept whole.
fn replay_cost(
    problem: &Problem<'_>,
    initial: &ClusterState,
    gangs: &[Gang],
    decisions: &[GangDecision],
) -> Option<f64> {
    if decisions.len() != gangs.len() {
        return None;
    }
    let mut state = initial.clone();
    let mut cost = 0.0;
    for i in gang_enactment_order(gangs, true) {
        let a = apply_gang(problem, &mut state, &gangs[i], &decisions[i]).ok()?;
        if !a.whole && !decisions[i].pods.is_empty() {
            return None;
        }
        cost += a.applied.event.cost;
    }
    Some(cost)
}

/// One decision per gang from the solution's counts and evictions.
fn decode(
    problem: &Problem<'_>,
    initial: &ClusterState,
    gangs: &[Gang],
    slots: &[(super::batch_model::Slot, Variable)],
    counts: &[u32],
    evicted: &[PodId],
) -> Option<Vec<GangDecision>> {
    let order = gang_enactment_order(gangs, true);
    let rank: Vec<usize> = {
        let mut r = vec![0; gangs.len()];
        for (k, &i) in order.iter().enumerate() {
            r[i] = k;
        }
        r
    };
    let mut decisions = vec![GangDecision::default(); gangs.len()];
    let mut by_server: BTreeMap<ServerId, Vec<(usize, u32)>> = BTreeMap::new();
    for (i, ((slot, _), &count)) in slots.iter().zip(counts).enumerate() {
        if count > 0 {
            by_server.entry(slot.server).or_default().push((i, count));
        }
    }
    for id in evicted {
        let pod = initial.pod(*id)?;
        let on_server = by_server.get(&pod.server)?;
        let evictor = on_server
            .iter()
            .map(|(i, _)| slots[*i].0.gang)
            .filter(|&g| problem.may_evict(&gangs[g].any_pod(), pod.priority, pod.preemptible))
            .min_by_key(|&g| rank[g])?;
        decisions[evictor].victims.push(*id);
    }
    for (server, demands) in &by_server {
        let t = problem.cluster.type_of(*server);
        let alloc = &initial.servers()[server.index()];
        let (mut gpus, mut cores) = evicted
            .iter()
            .filter_map(|id| initial.pod(*id))
            .filter(|p| p.server == *server)
            .fold((alloc.free_gpus(), alloc.free_cores()), |(g, c), p| {
                (g.or(p.gpus), c.or(p.cores))
            });
        for level in Level::ALL {
            let mut here: Vec<&(usize, u32)> = demands
                .iter()
                .filter(|(i, _)| slots[*i].0.level == level)
                .collect();
            here.sort_by_key(|(i, _)| (rank[slots[*i].0.gang], *i));
            for &&(i, count) in &here {
                let slot = slots[i].0;
                let req = gangs[slot.gang].request;
                for _ in 0..count {
                    let g = gpus.and(slot.domain.gpus).lowest(req.gpus)?;
                    let c = pick_cores(t, g, cores.and(slot.domain.cores), req.cores)?;
                    gpus = gpus.minus(g);
                    cores = cores.minus(c);
                    decisions[slot.gang].pods.push(PodPlacement {
                        server: *server,
                        gpus: g,
                        cores: c,
                    });
                }
            }
        }
    }
    for d in &mut decisions {
        d.victims.sort_unstable();
        d.search = "the joint optimum of the whole list, enacted highest priority first".into();
    }
    Some(decisions)
}

/// The warm start's values of every model variable, `None` when it falls outside the model.
fn warm_values(
    problem: &Problem<'_>,
    initial: &ClusterState,
    gangs: &[Gang],
    model: &GangModel,
    warm: &[GangDecision],
) -> Option<Vec<(Variable, f64)>> {
    let fabric = &problem.cluster.fabric;
    let mut slot_counts = vec![0u32; model.slots.len()];
    let mut servers_of: Vec<Vec<ServerId>> = vec![Vec::new(); gangs.len()];
    for (gi, d) in warm.iter().enumerate() {
        for p in &d.pods {
            let t = problem.cluster.type_of(p.server);
            let level = t.level_of(p.gpus, p.cores);
            let i = model.slots.iter().position(|(s, _)| {
                s.gang == gi
                    && s.server == p.server
                    && s.level == level
                    && p.gpus.is_subset(&s.domain.gpus)
                    && p.cores.is_subset(&s.domain.cores)
            })?;
            slot_counts[i] += 1;
            servers_of[gi].push(p.server);
        }
    }
    let evicted: std::collections::BTreeSet<PodId> = warm
        .iter()
        .flat_map(|d| d.victims.iter().copied())
        .collect();
    let known: std::collections::BTreeSet<PodId> =
        model.victims.iter().map(|(id, _)| *id).collect();
    if !evicted.is_subset(&known) || initial.pod_count() == 0 && !evicted.is_empty() {
        return None;
    }
    let mut values: Vec<(Variable, f64)> = model
        .slots
        .iter()
        .zip(&slot_counts)
        .map(|((_, v), &c)| (*v, c as f64))
        .collect();
    values.extend(
        model
            .victims
            .iter()
            .map(|(id, v)| (*v, if evicted.contains(id) { 1.0 } else { 0.0 })),
    );
    let inside = |gi: usize, level, domain: u32| {
        !servers_of[gi].is_empty()
            && servers_of[gi]
                .iter()
                .all(|s| fabric.domain_of(level, *s) == domain)
    };
    values.extend(
        model
            .choices
            .iter()
            .map(|((gi, level, d), v)| (*v, if inside(*gi, *level, *d) { 1.0 } else { 0.0 })),
    );
    values.extend(model.slices.iter().map(|((gi, f), v)| {
        let size = gangs[*gi].slice_size().max(1);
        let (_, level) = gangs[*gi].slice.unwrap_or((1, fabric.host()));
        let n = servers_of[*gi]
            .iter()
            .filter(|s| fabric.domain_of(level, **s) == *f)
            .count() as u32;
        (*v, (n / size) as f64)
    }));
    values.extend(
        model
            .within
            .iter()
            .map(|((gi, level, e), v)| (*v, if inside(*gi, *level, *e) { 1.0 } else { 0.0 })),
    );
    Some(values)
}
