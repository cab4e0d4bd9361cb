//! `k8s-nrt`: Kubernetes default preemption with a topology-aware per-node filter (DESIGN
//! §10.2), as the scheduler-plugins `NodeResourceTopologyMatch` filter runs it on a cluster whose
//! kubelets enforce the Topology Manager: the default preemption's dry run, in which a
//! guaranteed pod fits a node only when the node allocator reaches its required level there.
//! Best-effort and `none` pods fit by counts, as with `k8s-default`. Node choice and tie-breaks
//! are `k8s-default`'s. This is what a user deploys today instead of FlexTopo.

use super::k8s_default::dry_run_preemption;
use super::planner::PreemptionPlanner;
use super::problem::{Decision, DecisionPoint};
use crate::plan::error::PlanningError;
use crate::spec::preemption::TopologyQos;
use crate::topology::{CoreSet, GpuSet, ServerId, reachable_within};

pub struct K8sNrt;

impl PreemptionPlanner for K8sNrt {
    fn name(&self) -> &'static str {
        "k8s-nrt"
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let (problem, p) = (at.problem, at.preemptor);
        let req = p.request;
        let by_counts = |g: GpuSet, c: CoreSet| g.len() >= req.gpus && c.len() >= req.cores;
        if p.qos != TopologyQos::Guaranteed {
            return Ok(dry_run_preemption(at, &|_, g, c| by_counts(g, c)));
        }
        let qos = problem.qos_test(p);
        let fits = |server: ServerId, g: GpuSet, c: CoreSet| {
            // Counts first: the topology test can only pass when they do.
            by_counts(g, c)
                && qos.required(problem.cluster, server).is_some_and(|level| {
                    reachable_within(problem.cluster.type_of(server), g, c, req, level)
                })
        };
        Ok(dry_run_preemption(at, &fits))
    }
}
