//! The warm start of the batch: a sequential plan read as the batch model reads plans (counts
//! per class, server and domain; evicted pods; refusals), either as values of the monolithic
//! model's variables or, when the run's budget is spent before any model is built, as the
//! batch's solution itself (an incumbent with no bound).

use std::collections::{BTreeMap, BTreeSet};

use good_lp::Variable;

use super::model::{BatchSolution, Class, Model, Placed, domains_of, priced_objective};
use crate::plan::PlanStatus;
use crate::plan::preemption::Preemptor;
use crate::preempt::planner::AppliedDecision;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{Level, PodId, ServerId};

/// A sequential plan in the model's terms.
struct WarmPlan {
    /// Instances placed per (class, server, domain), with the domain's level.
    count: BTreeMap<(usize, ServerId, usize), (u32, Level)>,
    evicted: BTreeSet<PodId>,
    /// (class, server) pairs where the plan evicted for a pod it then left unplaced.
    refusing: BTreeSet<(usize, ServerId)>,
}

fn read_plan(
    classes: &[Class],
    preemptors: &[Preemptor],
    applied: &[AppliedDecision],
    cluster: &crate::topology::Cluster,
) -> WarmPlan {
    let class_of = |p: &Preemptor| {
        classes
            .iter()
            .position(|cl| preemptors[cl.rep].workload == p.workload)
    };
    let mut count: BTreeMap<(usize, ServerId, usize), (u32, Level)> = BTreeMap::new();
    for (a, p) in applied.iter().zip(preemptors) {
        let (Some(server), Some((g, c, level))) = (a.server, a.placement) else {
            continue;
        };
        let doms = domains_of(cluster.type_of(server));
        let Some(di) = doms
            .iter()
            .position(|(l, d)| *l == level && g.is_subset(&d.gpus) && c.is_subset(&d.cores))
        else {
            continue;
        };
        let Some(ci) = class_of(p) else {
            continue;
        };
        count.entry((ci, server, di)).or_insert((0, level)).0 += 1;
    }
    let evicted = applied
        .iter()
        .flat_map(|a| a.victims.iter().copied())
        .collect();
    let refusing = applied
        .iter()
        .zip(preemptors)
        .filter(|(a, _)| a.placement.is_none() && !a.victims.is_empty())
        .filter_map(|(a, p)| Some((class_of(p)?, a.server?)))
        .collect();
    WarmPlan {
        count,
        evicted,
        refusing,
    }
}

/// Values of the monolithic model's variables that reproduce a solution (a sequential plan
/// read by [`warm_solution`], or the Lagrangian decomposition's plan).
pub fn warm_values(model: &Model, solution: &BatchSolution) -> Vec<(Variable, f64)> {
    let count: BTreeMap<(usize, ServerId, usize), u32> = solution
        .placed
        .iter()
        .map(|p| ((p.class, p.server, p.domain), p.count))
        .fold(BTreeMap::new(), |mut m, (k, n)| {
            *m.entry(k).or_insert(0) += n;
            m
        });
    let evicted: BTreeSet<PodId> = solution.evicted.iter().copied().collect();
    let refusing: BTreeSet<(usize, ServerId)> = solution.refused.iter().copied().collect();
    let one_if = |b: bool| if b { 1.0 } else { 0.0 };
    model
        .placements
        .iter()
        .map(|(pl, var)| {
            let n = count.get(&(pl.class, pl.server, pl.domain)).copied();
            (*var, f64::from(n.unwrap_or(0)))
        })
        .chain(
            model
                .victims
                .iter()
                .map(|(id, v)| (*v, one_if(evicted.contains(id)))),
        )
        .chain(
            model
                .refusals
                .iter()
                .map(|(key, v)| (*v, one_if(refusing.contains(key)))),
        )
        .collect()
}

/// The sequential plan as the batch's solution: status `time_limit`, no bound (it is an
/// incumbent, not an optimum), its objective priced as the model prices it. `assemble` then
/// attributes its victims for the batch's enactment order.
pub fn warm_solution(
    problem: &Problem<'_>,
    initial: &ClusterState,
    (classes, preemptors): (&[Class], &[Preemptor]),
    applied: &[AppliedDecision],
) -> BatchSolution {
    let cluster = problem.cluster;
    let plan = read_plan(classes, preemptors, applied, cluster);
    let placed: Vec<Placed> = plan
        .count
        .iter()
        .map(|(&(class, server, domain), &(count, level))| Placed {
            class,
            server,
            domain,
            level,
            count,
        })
        .collect();
    let mut solution = BatchSolution {
        placed,
        refused: plan.refusing.into_iter().collect(),
        evicted: plan.evicted.into_iter().collect(),
        objective: 0.0,
        status: PlanStatus::TimeLimit,
        bound: None,
    };
    solution.objective = priced_objective(problem, initial, preemptors.len(), &solution);
    solution
}
