//! The warm start of the batch: a sequential plan read as the batch model reads plans (counts
//! per class, server and domain; evicted pods; refusals), either as values of the monolithic
//! model's variables or, when the run's budget is spent before any model is built, as the
//! batch's solution itself (an incumbent with no bound).

use std::collections::{BTreeMap, BTreeSet};

use good_lp::Variable;

use super::assemble::solution_of;
use super::classes::Class;
use super::model::{BatchSolution, Model, priced_objective};
use crate::plan::PlanStatus;
use crate::plan::preemption::Preemptor;
use crate::preempt::planner::AppliedDecision;
use crate::preempt::problem::{Decision, Problem};
use crate::topology::state::ClusterState;
use crate::topology::{PodId, ServerId};

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
    // An applied decision without a placement but with victims evicted for a pod it left
    // unplaced: a refusal, as the model reads it.
    let decisions: Vec<Decision> = applied
        .iter()
        .map(|a| Decision {
            server: a.server,
            victims: a.victims.clone(),
            placement: a.placement.map(|(g, c, _)| (g, c)),
            refuse: a.placement.is_none() && !a.victims.is_empty(),
            ..Decision::default()
        })
        .collect();
    let mut solution = solution_of(problem, classes, &decisions, (0.0, PlanStatus::TimeLimit));
    solution.objective = priced_objective(problem, initial, preemptors.len(), &solution);
    solution
}
