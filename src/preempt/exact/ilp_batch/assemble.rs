//! From the aggregated solution to one decision per preemptor: ids are assigned bottom-up
//! (NUMA-level placements first, which succeeds whenever the counts fit the laminar
//! capacities), and each evicted pod is attributed to the preemptor whose ids it frees, or to
//! one enacted before it (see `attribute`), so the plan replays in its enactment order.

use std::collections::BTreeMap;

use super::classes::Class;
use super::domains::domains_of;
use super::model::{BatchSolution, Placed};
use crate::plan::PlanStatus;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{Decision, Problem};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId, pick_cores};

/// Turns the aggregated solution into one decision per preemptor.
pub fn assemble(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    solution: &BatchSolution,
) -> Vec<Decision> {
    let (placed, refused, evicted) = (&solution.placed, &solution.refused, &solution.evicted);
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
    for &(ci, server) in refused.iter() {
        if let Some(&i) = classes[ci].members.get(next_member[ci]) {
            next_member[ci] += 1;
            refused_on.entry(server).or_default().push(i);
            by_server.entry(server).or_default();
        }
    }
    for (server, mut items) in by_server {
        let t = cluster.type_of(server);
        let doms = domains_of(t);
        let a = &initial.servers()[server.index()];
        let here: Vec<PodId> = evicted
            .iter()
            .copied()
            .filter(|id| initial.pod(*id).is_some_and(|p| p.server == server))
            .collect();
        let (mut avail_g, mut avail_c) = here
            .iter()
            .filter_map(|id| initial.pod(*id))
            .fold((a.free_gpus(), a.free_cores()), |(g, c), p| {
                (g.or(p.gpus), c.or(p.cores))
            });
        // Bottom-up: NUMA-level placements first, then socket, then server.
        items.sort_by_key(|&(i, _, l)| (l, i));
        let mut ids: BTreeMap<usize, (GpuSet, CoreSet)> = BTreeMap::new();
        for (i, d, _) in &items {
            let req = preemptors[*i].request;
            let dom = doms[*d].1;
            // Devices of the pod's kind, in one group its claim accepts (the model relaxes
            // both; a placement that cannot keep them is left to the check after assembly).
            let gpus = t.pick_devices(req, avail_g.and(dom.gpus));
            let cores = gpus.and_then(|g| pick_cores(t, g, avail_c.and(dom.cores), req.cores));
            if let (Some(g), Some(c)) = (gpus, cores) {
                avail_g = avail_g.minus(g);
                avail_c = avail_c.minus(c);
                ids.insert(*i, (g, c));
            }
        }
        // Enacted highest priority first (`enactment_order`), list order among equals.
        let mut order: Vec<usize> = items.iter().map(|(i, _, _)| *i).collect();
        let refusing = refused_on.remove(&server).unwrap_or_default();
        order.extend(refusing.iter().copied());
        order.sort_unstable_by_key(|&i| (std::cmp::Reverse(preemptors[i].priority), i));
        let mut attributed = attribute(problem, initial, preemptors, (&order, &ids), &here);
        // The ids must be free when the events replay in that order; otherwise the node
        // allocator places this server's pods during the replay.
        let replayable = ids.len() + refusing.len() == order.len() && {
            let (mut free_g, mut free_c) = (a.free_gpus(), a.free_cores());
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
        for i in order {
            let victims = attributed.remove(&i).unwrap_or_default();
            let refuse = refusing.contains(&i);
            if refuse && victims.is_empty() {
                // A refusal that evicts nothing is an unplaced pod: no server, no event there.
                continue;
            }
            decisions[i] = Decision {
                server: Some(server),
                victims,
                subsets_evaluated: 0,
                truncated: false,
                unproven: false,
                placement: if replayable {
                    ids.get(&i).copied()
                } else {
                    None
                },
                refuse,
                score: None,
                optimum_cost: None,
            };
        }
    }
    decisions
}

/// Each evicted pod goes to the first preemptor (in enactment `order`) that takes its GPUs or
/// cores when that one may evict it, else to the first that may: a preemptor that may evict a
/// pod has a strictly higher priority than every one that may not, so it is enacted before any
/// of them and the pod is gone before its resources are taken.
fn attribute(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    (order, ids): (&[usize], &BTreeMap<usize, (GpuSet, CoreSet)>),
    evicted: &[PodId],
) -> BTreeMap<usize, Vec<PodId>> {
    let mut out: BTreeMap<usize, Vec<PodId>> = BTreeMap::new();
    for id in evicted {
        let Some(pod) = initial.pod(*id) else {
            continue;
        };
        let eligible = |i: &usize| problem.eviction_reach(&preemptors[*i]) > pod.priority;
        let first_taker = order.iter().find(|i| {
            ids.get(i)
                .is_some_and(|(g, c)| g.intersects(&pod.gpus) || c.intersects(&pod.cores))
        });
        let evictor = first_taker
            .filter(|i| eligible(i))
            .or_else(|| order.iter().find(|i| eligible(i)));
        if let Some(&i) = evictor {
            out.entry(i).or_default().push(*id);
        }
    }
    out
}

/// The inverse of [`assemble`]: decisions (one per preemptor, list order, placements as GPU
/// and core ids) read back as a batch solution — counts per class, server and domain;
/// refusals; victims — with `objective` and `status` given by the caller.
pub fn solution_of(
    problem: &Problem<'_>,
    classes: &[Class],
    decisions: &[Decision],
    (objective, status): (f64, PlanStatus),
) -> BatchSolution {
    let mut class_of: BTreeMap<usize, usize> = BTreeMap::new();
    for (c, class) in classes.iter().enumerate() {
        for &i in &class.members {
            class_of.insert(i, c);
        }
    }
    let mut count: BTreeMap<(usize, ServerId, usize), (u32, Level)> = BTreeMap::new();
    let mut refused = Vec::new();
    let mut evicted = Vec::new();
    for (i, d) in decisions.iter().enumerate() {
        let (Some(server), Some(&c)) = (d.server, class_of.get(&i)) else {
            continue;
        };
        evicted.extend(d.victims.iter().copied());
        if d.refuse {
            refused.push((c, server));
            continue;
        }
        let Some((g, cores)) = d.placement else {
            continue;
        };
        let t = problem.cluster.type_of(server);
        let level = t.level_of(g, cores);
        let domain = domains_of(t).iter().position(|(l, dom)| {
            *l == level && g.is_subset(&dom.gpus) && cores.is_subset(&dom.cores)
        });
        if let Some(di) = domain {
            count.entry((c, server, di)).or_insert((0, level)).0 += 1;
        }
    }
    evicted.sort_unstable();
    BatchSolution {
        placed: count
            .into_iter()
            .map(|((class, server, domain), (count, level))| Placed {
                class,
                server,
                domain,
                level,
                count,
            })
            .collect(),
        refused,
        evicted,
        objective,
        status,
        bound: None,
    }
}
