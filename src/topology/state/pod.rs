//! The pods of a state: the whole record of a running pod, and the part of it the planners'
//! per-server scans read.

use crate::spec::preemption::WorkloadClass;
use crate::topology::bits::{CoreSet, GpuSet};
use crate::topology::ids::{PodId, ServerId};

/// A running pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Pod {
    /// `<workload>-<index>`.
    pub name: String,
    /// Index of its workload class in the spec.
    pub workload: usize,
    /// Kubernetes PriorityClass value of its workload class; higher is more important.
    pub priority: i64,
    /// Whether a higher-priority preemptor may evict it.
    pub preemptible: bool,
    /// The server it runs on.
    pub server: ServerId,
    /// GPU ids it holds on that server.
    pub gpus: GpuSet,
    /// Core ids it holds on that server.
    pub cores: CoreSet,
    /// Absent = latest (for the start-time tie-break).
    pub start_time_s: Option<f64>,
    /// The PodDisruptionBudgets covering it, ascending (set by the state it joins).
    pub budgets: Vec<u32>,
}

impl Pod {
    /// A pod of workload class `workload` (its priority and preemptibility) holding `gpus`
    /// and `cores` on `server`.
    pub fn of_class(
        name: String,
        workload: (usize, &WorkloadClass),
        server: ServerId,
        (gpus, cores): (GpuSet, CoreSet),
        start_time_s: Option<f64>,
    ) -> Self {
        Pod {
            name,
            workload: workload.0,
            priority: workload.1.priority,
            preemptible: workload.1.preemptible,
            server,
            gpus,
            cores,
            start_time_s,
            budgets: Vec::new(),
        }
    }
}

/// What the planners' per-server scans read of a resident pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resident {
    /// The pod's id in the state's pod table.
    pub id: PodId,
    /// Its PriorityClass value.
    pub priority: i64,
    /// Whether it may be evicted.
    pub preemptible: bool,
    /// GPU ids it holds.
    pub gpus: GpuSet,
    /// Core ids it holds.
    pub cores: CoreSet,
    /// Its start time in seconds; absent = latest (for the start-time tie-break).
    pub start_time_s: Option<f64>,
    /// A PodDisruptionBudget covers it.
    pub guarded: bool,
}
