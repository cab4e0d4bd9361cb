//! `k8s-default`: Kubernetes/Gödel default preemption, topology-blind (DESIGN §5.2).
//! Per server: a zero-victim candidate when the pod fits by counts; else remove every
//! potential victim and reprieve them most important first while the pod still fits. The
//! server is chosen by the candidate chain.

use super::planner::PreemptionPlanner;
use super::problem::{ChainKey, Decision, DecisionPoint, freed, more_important};
use crate::plan::error::PlanningError;
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
pub fn dry_run_preemption(
    at: &DecisionPoint<'_>,
    fits: &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync),
) -> Decision {
    let (problem, state, p) = (at.problem, at.state, at.preemptor);
    let candidate = |server: ServerId| {
        let a = &state.servers[server.index()];
        let mut evaluated = 1u64;
        let victims: Vec<PodId> = if fits(server, a.free_gpus, a.free_cores) {
            Vec::new()
        } else {
            let mut potential = problem.potential_victims(state, server, p);
            let (mut g, mut c) = freed(state, server, &potential);
            if !fits(server, g, c) {
                return (evaluated, None);
            }
            potential.sort_by(|x, y| match (state.pod(*x), state.pod(*y)) {
                (Some(a), Some(b)) => more_important(a, b),
                _ => x.cmp(y),
            });
            let mut victims = Vec::new();
            for id in potential {
                let Some(pod) = state.pod(id) else { continue };
                evaluated += 1;
                let (g2, c2) = (g.minus(pod.gpus), c.minus(pod.cores));
                if fits(server, g2, c2) {
                    (g, c) = (g2, c2);
                } else {
                    victims.push(id);
                }
            }
            victims
        };
        let key = ChainKey::new(problem.cluster, state, server, &victims);
        (evaluated, Some((key, server, victims)))
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
