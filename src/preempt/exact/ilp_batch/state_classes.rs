//! Servers in identical states, as the batch model sees them: one class per state, so that a
//! server's part of the batch is priced once per class and not once per server.
//!
//! The model reads a server through counts per domain only (NUMA ⊂ socket ⊂ server): the
//! free GPUs and cores in each domain, and for each pod a plan may evict its GPUs and cores in
//! each domain and its priority. Two servers of one type that agree on those, on which levels
//! admit each class and on whether a class may be refused there, have the same subproblems,
//! the same optima and the same bounds; a solution of one is a solution of the other once the
//! pods are matched in the canonical order kept here.

use std::collections::BTreeMap;

use super::classes::Class;
use super::domains::{domains_of, lowest_victim, may_refuse};
use super::model::{BatchSolution, Placed};
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{Level, PodId, ServerId};

/// One server of a class: its id and its evictable pods in the class's canonical order.
#[derive(Debug, Clone)]
pub struct Member {
    /// The server.
    pub server: ServerId,
    /// Its pods a plan may evict, matched position by position across the class.
    pub pods: Vec<PodId>,
}

/// Servers in identical states; the first member stands for the class.
#[derive(Debug, Clone)]
pub struct StateClass {
    /// The servers, ascending.
    pub members: Vec<Member>,
}

impl StateClass {
    /// The server that stands for the class.
    pub fn representative(&self) -> &Member {
        &self.members[0]
    }

    /// `solution`, a solution of the subproblem of the member on `from`, as the same solution
    /// on `to`: the same counts in the same domains, the matching pods evicted.
    pub fn moved(&self, solution: &BatchSolution, from: ServerId, to: &Member) -> BatchSolution {
        let source = self.members.iter().find(|m| m.server == from);
        let counterpart = |pod: &PodId| {
            let at = source?.pods.iter().position(|p| p == pod)?;
            to.pods.get(at).copied()
        };
        let server = to.server;
        BatchSolution {
            placed: solution
                .placed
                .iter()
                .map(|pl| Placed { server, ..*pl })
                .collect(),
            refused: solution.refused.iter().map(|(c, _)| (*c, server)).collect(),
            evicted: solution.evicted.iter().filter_map(counterpart).collect(),
            ..solution.clone()
        }
    }
}

/// The servers grouped by state, classes in order of their first server (ascending ids), so
/// the grouping is deterministic. `top`: the highest priority of the preemptors considered (a
/// pod at or above it is no victim of the list).
pub fn state_classes(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    classes: &[Class],
    top: i64,
) -> Vec<StateClass> {
    let mut out: Vec<StateClass> = Vec::new();
    let mut index: BTreeMap<Vec<i64>, usize> = BTreeMap::new();
    for server in problem.servers() {
        let (key, pods) = signature(problem, initial, (preemptors, classes), server, top);
        let member = Member { server, pods };
        match index.get(&key) {
            Some(&c) => out[c].members.push(member),
            None => {
                index.insert(key, out.len());
                out.push(StateClass {
                    members: vec![member],
                });
            }
        }
    }
    out
}

/// A server's state as the model reads it, flattened into integers, and its evictable pods
/// sorted by their part of that key (ties by id, which no two servers share).
fn signature(
    problem: &Problem<'_>,
    initial: &ClusterState,
    (preemptors, classes): (&[Preemptor], &[Class]),
    server: ServerId,
    top: i64,
) -> (Vec<i64>, Vec<PodId>) {
    let t = problem.cluster.type_of(server);
    let doms = domains_of(t);
    let alloc = &initial.servers()[server.index()];
    let mut key: Vec<i64> = vec![problem.cluster.server(server).type_id.index() as i64];
    let lowest = lowest_victim(initial, server);
    for class in classes {
        let p = &preemptors[class.rep];
        for level in Level::ALL {
            key.push(i64::from(problem.admits(server, p, level)));
        }
        key.push(i64::from(may_refuse(problem, server, p, lowest)));
    }
    for (_, d) in &doms {
        key.push(i64::from(alloc.free_gpus().and(d.gpus).len()));
        key.push(i64::from(alloc.free_cores().and(d.cores).len()));
    }
    let hard_budgets = initial.budgets().hard();
    let mut pods: Vec<(Vec<i64>, PodId)> = alloc
        .residents()
        .iter()
        .filter(|r| r.preemptible && r.priority < top)
        .map(|r| {
            let mut k = vec![r.priority];
            for (_, d) in &doms {
                k.push(i64::from(r.gpus.and(d.gpus).len()));
                k.push(i64::from(r.cores.and(d.cores).len()));
            }
            // Under hard budgets a server's subproblem limits the evictions of each budget:
            // only servers whose pods are in the same budgets share it.
            if hard_budgets {
                let budgets = initial.pod(r.id).map_or(&[][..], |p| &p.budgets);
                k.push(budgets.len() as i64);
                k.extend(budgets.iter().map(|&b| i64::from(b)));
            }
            (k, r.id)
        })
        .collect();
    pods.sort();
    key.push(pods.len() as i64);
    for (k, _) in &pods {
        key.extend(k);
    }
    (key, pods.into_iter().map(|(_, id)| id).collect())
}
