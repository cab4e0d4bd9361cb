//! The Kubernetes conventions the importer follows: the resource and label it reads, the
//! priorities that belong to the system, and how a node's Topology Manager policy and a pod's
//! QoS class give a coplan topology QoS (the table in `docs/import.md`). Kept apart from the
//! reading so the mapping rules can be checked against the docs in one place.

use crate::spec::preemption::TopologyQos;

/// The GPU resource coplan reads.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The node label that names the GPU model (NVIDIA GPU feature discovery).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
/// Pods at or above this priority (the system-critical classes) are never made victims.
pub const SYSTEM_PRIORITY: i64 = 1_000_000_000;
/// The priority of the pods that stand for the kubelet's reserved cores
/// (`system-node-critical`).
pub const SYSTEM_RESERVED_PRIORITY: i64 = 2_000_001_000;

/// The kubelet Topology Manager policy of a node, as its NRT object reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TopologyPolicy {
    /// `none`: no alignment.
    None,
    /// `best-effort`: prefers aligned placements, admits any.
    BestEffort,
    /// `restricted`: refuses a pod whose preferred alignment cannot be met.
    Restricted,
    /// `single-numa-node`: refuses a pod that does not fit one NUMA node.
    SingleNumaNode,
}

impl TopologyPolicy {
    /// From a v1alpha2 `topologyManagerPolicy` attribute or a v1alpha1 `topologyPolicies`
    /// entry.
    pub(super) fn parse(text: &str) -> Option<Self> {
        let t = text.to_ascii_lowercase().replace(['-', '_'], "");
        if t.starts_with("singlenumanode") {
            Some(Self::SingleNumaNode)
        } else if t.starts_with("restricted") {
            Some(Self::Restricted)
        } else if t.starts_with("besteffort") {
            Some(Self::BestEffort)
        } else if t.starts_with("none") {
            Some(Self::None)
        } else {
            None
        }
    }

    /// The spec's spelling of the policy.
    pub fn to_spec(self) -> crate::spec::cluster::TopologyPolicySpec {
        use crate::spec::cluster::TopologyPolicySpec as S;
        match self {
            Self::None => S::None,
            Self::BestEffort => S::BestEffort,
            Self::Restricted => S::Restricted,
            Self::SingleNumaNode => S::SingleNumaNode,
        }
    }

    /// The policy's kubelet name, e.g. `single-numa-node`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::BestEffort => "best-effort",
            Self::Restricted => "restricted",
            Self::SingleNumaNode => "single-numa-node",
        }
    }
}

/// The pod QoS classes of Kubernetes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosClass {
    /// Every container has CPU and memory limits equal to its requests.
    Guaranteed,
    /// Some container has a request or limit, but not Guaranteed.
    Burstable,
    /// No container has any request or limit.
    BestEffort,
}

/// The topology QoS of a pod (the table in `docs/import.md`): under `single-numa-node` or
/// `restricted`, Guaranteed pods need alignment; under `best-effort` they prefer it; under
/// `none` nothing aligns; with no NRT object the policy is unknown and the DESIGN defaults
/// apply (Guaranteed → guaranteed, Burstable → best-effort, BestEffort → none).
pub fn topology_qos(qos: QosClass, policy: Option<TopologyPolicy>) -> TopologyQos {
    use TopologyPolicy as P;
    match (qos, policy) {
        (_, Some(P::None)) | (QosClass::BestEffort, _) => TopologyQos::None,
        (QosClass::Guaranteed, Some(P::SingleNumaNode | P::Restricted) | None) => {
            TopologyQos::Guaranteed
        }
        (QosClass::Guaranteed, Some(P::BestEffort)) | (QosClass::Burstable, _) => {
            TopologyQos::BestEffort
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_topology_qos_table() {
        use QosClass::*;
        use TopologyPolicy as P;
        let g = TopologyQos::Guaranteed;
        let b = TopologyQos::BestEffort;
        let n = TopologyQos::None;
        let table = [
            (Guaranteed, Some(P::SingleNumaNode), g),
            (Guaranteed, Some(P::Restricted), g),
            (Guaranteed, Some(P::BestEffort), b),
            (Guaranteed, Some(P::None), n),
            (Guaranteed, None, g),
            (Burstable, Some(P::SingleNumaNode), b),
            (Burstable, None, b),
            (Burstable, Some(P::None), n),
            (BestEffort, Some(P::SingleNumaNode), n),
            (BestEffort, None, n),
        ];
        for (qos, policy, want) in table {
            assert_eq!(topology_qos(qos, policy), want, "{qos:?} {policy:?}");
        }
        assert_eq!(
            TopologyPolicy::parse("single-numa-node"),
            Some(P::SingleNumaNode)
        );
        assert_eq!(
            TopologyPolicy::parse("SingleNUMANodeContainerLevel"),
            Some(P::SingleNumaNode)
        );
        assert_eq!(TopologyPolicy::parse("best-effort"), Some(P::BestEffort));
        assert_eq!(TopologyPolicy::parse("Restricted"), Some(P::Restricted));
        assert_eq!(TopologyPolicy::parse("whatever"), None);
    }
}
