//! `k8s-nrt`: Kubernetes default preemption with a topology-aware per-node filter (DESIGN
//! §10.2), as the scheduler-plugins `NodeResourceTopologyMatch` filter runs it on a cluster whose
//! kubelets enforce the Topology Manager: the default preemption's dry run, in which a
//! guaranteed pod fits a node only when the node allocator reaches its required level there.
//! Best-effort and `none` pods fit by counts, as with `k8s-default`. Node choice and tie-breaks
//! are `k8s-default`'s. This is what a user deploys today instead of FlexTopo.

use super::default::{dry_run_preemption, dry_run_reference, fits_by_counts};
use crate::plan::error::PlanningError;
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::{Decision, DecisionPoint};
use crate::spec::preemption::TopologyQos;
use crate::topology::{CoreSet, GpuSet, ServerId};

/// The `k8s-nrt` planner: default preemption whose dry run on a node counts a guaranteed pod
/// as fitting only where the allocator reaches its required level (the
/// `NodeResourceTopologyMatch` filter); node choice and tie-breaks as `k8s-default`.
pub struct K8sNrt;

impl PreemptionPlanner for K8sNrt {
    fn name(&self) -> &'static str {
        "k8s-nrt"
    }

    fn describe_search(&self, _decision: &Decision) -> String {
        "one dry run per server: evict every lower-priority pod, then reprieve".into()
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        Ok(decide_with(at, dry_run_preemption))
    }
}

/// [`K8sNrt`]'s decision by the reference dry run of every server.
pub fn decide_reference(at: &DecisionPoint<'_>) -> Decision {
    decide_with(at, dry_run_reference)
}

type DryRun =
    fn(&DecisionPoint<'_>, &(dyn Fn(ServerId, GpuSet, CoreSet) -> bool + Sync)) -> Decision;

fn decide_with(at: &DecisionPoint<'_>, dry_run: DryRun) -> Decision {
    let (problem, p) = (at.problem, at.preemptor);
    if p.qos != TopologyQos::Guaranteed {
        return dry_run(at, &|s, g, c| {
            fits_by_counts(problem.cluster.type_of(s), g, c, p.request)
        });
    }
    let qos = problem.qos_test(p);
    let fits = |server: ServerId, g: GpuSet, c: CoreSet| {
        // Counts first: the topology test can only pass when they do.
        fits_by_counts(problem.cluster.type_of(server), g, c, p.request)
            && qos.placed_level(problem.cluster, server, g, c).is_some()
    };
    dry_run(at, &fits)
}
