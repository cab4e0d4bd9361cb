//! The warm start of the monolithic batch MILP: the values of its variables that reproduce a
//! sequential plan, matched by server, pod and class ids.

use std::collections::{BTreeSet, HashMap};

use good_lp::Variable;

use super::model::{Class, Model, domains_of};
use crate::plan::preemption::Preemptor;
use crate::preempt::planner::AppliedDecision;
use crate::topology::ServerId;

/// Values of the monolithic model's variables that reproduce a sequential plan.
pub fn warm_values(
    classes: &[Class],
    preemptors: &[Preemptor],
    model: &Model,
    applied: &[AppliedDecision],
    cluster: &crate::topology::Cluster,
) -> Vec<(Variable, f64)> {
    let class_of = |p: &Preemptor| {
        classes
            .iter()
            .position(|cl| preemptors[cl.rep].workload == p.workload)
    };
    let mut count: HashMap<(usize, ServerId, usize), f64> = HashMap::new();
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
        *count.entry((ci, server, di)).or_default() += 1.0;
    }
    let evicted: BTreeSet<_> = applied
        .iter()
        .flat_map(|a| a.victims.iter().copied())
        .collect();
    // (class, server) pairs where a sequential plan evicted for a pod it then left unplaced.
    let refusing: BTreeSet<(usize, ServerId)> = applied
        .iter()
        .zip(preemptors)
        .filter(|(a, _)| a.placement.is_none() && !a.victims.is_empty())
        .filter_map(|(a, p)| Some((class_of(p)?, a.server?)))
        .collect();
    let one_if = |b: bool| if b { 1.0 } else { 0.0 };
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
