//! The gangs of a preemption workload, built from its `[[preempt]]` list (DESIGN §12.3).

pub use crate::plan::gang::Gang;
use crate::spec::PreemptionSpec;
use crate::spec::fabric::CLUSTER_LEVEL;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel};

/// The gangs of a spec whose `[[preempt]]` list has any (every entry is then a gang; a
/// single pod is a gang of one, required level `cluster`). Levels are validated against the
/// cluster beforehand; an unknown one reads as `cluster`.
pub fn gangs(cluster: &Cluster, spec: &PreemptionSpec, state: &mut ClusterState) -> Vec<Gang> {
    let fabric = &cluster.fabric;
    let level = |name: &Option<String>| {
        name.as_deref()
            .map(|n| fabric.level(n).unwrap_or(FabricLevel::CLUSTER))
    };
    let mut out = Vec::new();
    for entry in &spec.preempt {
        let Some(wi) = spec.workload.iter().position(|w| w.name == entry.workload) else {
            continue;
        };
        let class = &spec.workload[wi];
        let required = level(&entry.required_level)
            .unwrap_or_else(|| fabric.level(CLUSTER_LEVEL).unwrap_or(FabricLevel::CLUSTER));
        let slice = match (entry.slice_size, level(&entry.slice_level)) {
            (Some(size), Some(l)) => Some((size.max(1) as u32, l)),
            _ => None,
        };
        for _ in 0..entry.count.max(0) {
            let generated = state.next_name(wi, &class.name);
            out.push(Gang {
                name: entry.name.clone().unwrap_or(generated),
                workload: wi,
                priority: class.priority,
                request: cluster.request_of(
                    class,
                    class.gpus.max(0) as u32,
                    class.cores.max(0) as u32,
                ),
                qos: class.topology_qos,
                pods: entry.pods.unwrap_or(1).max(1) as u32,
                required,
                preferred: level(&entry.preferred_level),
                slice,
            });
        }
    }
    out
}
