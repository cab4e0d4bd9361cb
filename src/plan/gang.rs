//! A gang preemptor (DESIGN §12.3): `pods` identical pods placed whole, inside one domain of
//! its required level, or not at all; and the order a joint plan of gangs is enacted in.

use super::preemption::Preemptor;
use crate::spec::preemption::TopologyQos;
use crate::topology::{FabricLevel, Request};

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

/// The order a joint plan's gangs are enacted in: highest priority first, list order among
/// equals (an eviction needs a strictly higher priority, so every victim's evictor comes no
/// later than the pods that take its place); list order for a sequential plan.
pub fn gang_enactment_order(gangs: &[Gang], joint: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..gangs.len()).collect();
    if joint {
        order.sort_by_key(|&i| (std::cmp::Reverse(gangs[i].priority), i));
    }
    order
}
