//! A gang preemptor (DESIGN §12.3): `pods` identical pods placed whole, inside one domain of
//! its required level, or not at all.

use crate::plan::preemption::Preemptor;
use crate::spec::PreemptionSpec;
use crate::spec::fabric::CLUSTER_LEVEL;
use crate::spec::preemption::TopologyQos;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel, Request};

/// One gang to place.
#[derive(Debug, Clone, PartialEq)]
pub struct Gang {
    /// The gang's name (its pods are `<name>/<k>`).
    pub name: String,
    /// Index of its workload class in the spec.
    pub workload: usize,
    /// Priority of every pod.
    pub priority: i64,
    /// What each pod asks for on its server.
    pub request: Request,
    /// Each pod's intra-server topology QoS.
    pub qos: TopologyQos,
    /// How many pods.
    pub pods: u32,
    /// One domain of this level holds every pod.
    pub required: FabricLevel,
    /// The level the gang would rather fit in (never wider than `required`).
    pub preferred: Option<FabricLevel>,
    /// Slices: this many pods each inside one domain of the level.
    pub slice: Option<(u32, FabricLevel)>,
}

impl Gang {
    /// Pod `k` of the gang, as a single preemptor.
    pub fn pod(&self, k: u32) -> Preemptor {
        Preemptor {
            name: format!("{}/{k}", self.name),
            workload: self.workload,
            priority: self.priority,
            request: self.request,
            qos: self.qos,
        }
    }

    /// The gang as the preemptor one of its pods is (`<name>/0`): what the per-pod rules
    /// (eligibility, eviction reach, QoS) are asked about.
    pub fn any_pod(&self) -> Preemptor {
        self.pod(0)
    }

    /// Pods per slice (1 without slices).
    pub fn slice_size(&self) -> u32 {
        self.slice.map_or(1, |(s, _)| s)
    }
}

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
