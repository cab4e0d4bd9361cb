//! `k8s-default`: Kubernetes/Gödel default preemption, topology-blind (DESIGN §5.2).
//! Per server: a zero-victim candidate when the pod fits by counts; else remove every
//! potential victim and reprieve them most important first while the pod still fits. The
//! server is chosen by the candidate chain.

use super::planner::PreemptionPlanner;
use std::cmp::Ordering;

use super::problem::{ChainKey, Decision, DecisionPoint, more_important, start_key};
use crate::plan::error::PlanningError;
use crate::topology::state::{ClusterState, Resident};
use crate::topology::{CoreSet, GpuSet, PodId, Request, ServerId};

pub struct K8sDefault;

pub fn fits_by_counts(g: GpuSet, c: CoreSet, req: Request) -> bool {
    g.len() >= req.gpus && c.len() >= req.cores
}

impl PreemptionPlanner for K8sDefault {
    fn name(&self) -> &'static str {
        "k8s-default"
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let req = at.preemptor.request;
        Ok(dry_run_preemption(at, &|_, g, c| fits_by_counts(g, c, req)))
    }
}

/// The default preemption's dry run with a per-node fit test `fits(server, free GPUs, free
/// cores)`: per server, a zero-victim candidate when the pod fits as it is; else remove every
/// potential victim and, if the pod then fits, reprieve them most important first, keeping each
/// whose return still leaves a fit (the same test in both steps). The server is chosen by the
/// candidate chain. `fits` must hold for any superset of free resources it holds for.
/// [`more_important`] on residents: names are looked up only on a tie of the numeric keys.
fn more_important_resident(state: &ClusterState, a: &Resident, b: &Resident) -> Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| start_key(a.start_time_s).total_cmp(&start_key(b.start_time_s)))
        .then_with(|| match (state.pod(a.id), state.pod(b.id)) {
            (Some(x), Some(y)) => more_important(x, y),
            _ => a.id.cmp(&b.id),
        })
}

pub fn dry_run_preemption(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
) -> Decision {
    let (problem, state, p) = (at.problem, at.state, at.preemptor);
    let candidate = |server: ServerId| {
        let a = &state.servers[server.index()];
        let mut evaluated = 1u64;
        let victims: Vec<Resident> = if fits(server, a.free_gpus, a.free_cores) {
            Vec::new()
        } else {
            // The server's own copy of its pods' facts: no lookups in the cluster's pod table
            // except for names, on a tie of priority and start.
            let mut potential: Vec<Resident> = a
                .residents()
                .iter()
                .filter(|r| r.preemptible && r.priority < p.priority)
                .copied()
                .collect();
            let (mut g, mut c) = potential
                .iter()
                .fold((a.free_gpus, a.free_cores), |(g, c), r| {
                    (g.or(r.gpus), c.or(r.cores))
                });
            if !fits(server, g, c) {
                return (evaluated, None);
            }
            potential.sort_by(|x, y| more_important_resident(state, x, y));
            let mut victims = Vec::new();
            for pod in potential {
                evaluated += 1;
                let (g2, c2) = (g.minus(pod.gpus), c.minus(pod.cores));
                if fits(server, g2, c2) {
                    (g, c) = (g2, c2);
                } else {
                    victims.push(pod);
                }
            }
            victims
        };
        let key = ChainKey::from_facts(
            problem.cluster,
            server,
            victims.iter().map(|r| r.id).collect(),
            victims.iter().map(|r| (r.priority, r.start_time_s)),
        );
        let ids = victims.iter().map(|r| r.id).collect();
        (evaluated, Some((key, server, ids)))
    };
    let mut evaluated = 0u64;
    let mut best: Option<(ChainKey, Decision)> = None;
    let mut consider = |(n, candidate): (u64, Option<(ChainKey, ServerId, Vec<PodId>)>)| {
        evaluated += n;
        let Some((key, server, victims)) = candidate else {
            return;
        };
        if best
            .as_ref()
            .is_none_or(|(k, _)| key.compare(k, state).is_lt())
        {
            best = Some((
                key,
                Decision {
                    server: Some(server),
                    victims,
                    ..Decision::default()
                },
            ));
        }
    };
    // In server order either way: the chain ends in the server's rank, so no two candidates
    // tie and the choice does not depend on the thread count.
    if problem.parallel() {
        problem
            .map_servers(candidate)
            .into_iter()
            .for_each(&mut consider);
    } else {
        problem.servers().map(candidate).for_each(&mut consider);
    }
    let mut decision = best.map(|(_, d)| d).unwrap_or_default();
    decision.subsets_evaluated = evaluated;
    decision
}
