//! What a server offers the batch model, apart from the model: its domains and how many
//! instances of a class each could hold, what a list's preemptors can reach there, and whether
//! a preemptor may be refused there after evicting.

use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::spec::preemption::{Admission, TopologyQos};
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, Domain, GpuSet, Level, ServerId, ServerType};

/// Every domain of a server type: NUMA nodes, sockets, then the whole server.
pub fn domains_of(t: &ServerType) -> Vec<(Level, Domain)> {
    Level::ALL
        .iter()
        .flat_map(|&l| t.domains(l).iter().map(move |d| (l, *d)))
        .collect()
}

/// Whether `inner` lies within `outer` (its GPUs and cores both subsets).
pub fn inside(inner: &Domain, outer: &Domain) -> bool {
    inner.gpus.is_subset(&outer.gpus) && inner.cores.is_subset(&outer.cores)
}

/// How many instances of a class fit a domain of an empty server.
pub fn domain_capacity(d: &Domain, p: &Preemptor, limit: usize) -> u32 {
    let per = |have: u32, need: u32| have.checked_div(need).unwrap_or(u32::MAX);
    per(d.gpus.len(), p.request.gpus)
        .min(per(d.cores.len(), p.request.cores))
        .min(limit as u32)
}

/// Whether an instance of `p` may evict on `server` and then be left unplaced there: what the
/// kubelet does to a guaranteed pod the scheduler placed below its required level (the
/// default's wasted evictions), so that such sequential plans lie inside the model. Nothing
/// else is refused: a pod of another QoS, or under `bind` admission, is admitted wherever it
/// fits, and a pod no server of this type holds is never a candidate here. `lowest_victim`:
/// the lowest priority of the server's preemptible pods.
pub fn may_refuse(
    problem: &Problem<'_>,
    server: ServerId,
    p: &Preemptor,
    lowest_victim: Option<i64>,
) -> bool {
    problem.spec.simulation.admission == Admission::Kubelet
        && p.qos == TopologyQos::Guaranteed
        && problem.cluster.type_of(server).enforces_alignment()
        && problem.cluster.type_of(server).fits_empty(p.request)
        && problem.eligible(server, p)
        && lowest_victim.is_some_and(|lo| lo < problem.eviction_reach(p))
}

/// The GPUs and cores of `server` a plan may use: free, or held by a preemptible pod below
/// `top` (the highest priority of the preemptors considered).
pub fn reachable(initial: &ClusterState, server: ServerId, top: i64) -> (GpuSet, CoreSet) {
    let alloc = &initial.servers()[server.index()];
    alloc
        .residents()
        .iter()
        .filter(|r| r.preemptible && r.priority < top)
        .fold((alloc.free_gpus(), alloc.free_cores()), |(g, c), r| {
            (g.or(r.gpus), c.or(r.cores))
        })
}

/// The lowest priority of the preemptible pods on `server`, if any.
pub fn lowest_victim(initial: &ClusterState, server: ServerId) -> Option<i64> {
    initial.servers()[server.index()]
        .pods()
        .iter()
        .filter_map(|id| initial.pod(*id))
        .filter(|pod| pod.preemptible)
        .map(|pod| pod.priority)
        .min()
}
