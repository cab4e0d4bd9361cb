//! One gang decision: which pods land where, and which pods are evicted for them.

use super::request::Gang;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, PodId, ServerId};

/// One gang to decide, on the state it faces.
#[derive(Debug, Clone, Copy)]
pub struct GangPoint<'a> {
    /// The plan's fixed context.
    pub problem: &'a Problem<'a>,
    /// The allocation state the gang faces (earlier decisions applied).
    pub state: &'a ClusterState,
    /// The gang to place.
    pub gang: &'a Gang,
}

/// Where one pod of a gang lands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PodPlacement {
    /// The server.
    pub server: ServerId,
    /// GPU ids it takes there.
    pub gpus: GpuSet,
    /// Core ids it takes there.
    pub cores: CoreSet,
}

/// A planner's choice for one gang.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GangDecision {
    /// The pods placed, pod 0 first (a gang-aware planner places all or none; a gang-blind
    /// one may place some).
    pub pods: Vec<PodPlacement>,
    /// Pods evicted, ascending id.
    pub victims: Vec<PodId>,
    /// The victims are evicted but the node agents refuse the pods: nothing is placed (a
    /// scheduler that counts resources without the kubelet's alignment rule).
    pub refused: bool,
    /// The node whose kubelet refused a pod, when one did.
    pub refused_at: Option<ServerId>,
    /// Victim subsets (or trial fits) evaluated: a deterministic measure of search effort.
    pub subsets_evaluated: u64,
    /// An exact planner could not prove the decision optimal.
    pub unproven: bool,
    /// Where the search stopped, in words (`coplan explain`).
    pub search: String,
}

impl GangDecision {
    /// No placement, no eviction.
    pub fn none(search: impl Into<String>, subsets_evaluated: u64) -> Self {
        GangDecision {
            search: search.into(),
            subsets_evaluated,
            ..GangDecision::default()
        }
    }
}
