//! The options of `coplan import alibaba-openb`: the moment, the preemptors, the fill, the
//! server types and the QoS table.

use std::collections::BTreeMap;

use crate::import::build::QosMapping;
use crate::spec::preemption::TopologyQos;

/// The moment whose running pods form the initial state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum At {
    /// A time in the trace's seconds.
    Time(f64),
    /// The moment the most whole GPUs are held (the earliest such moment).
    Peak,
}

/// What a GPU share (`gpu_milli < 1000`) becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuShares {
    /// One whole GPU (coplan allocates whole GPUs).
    #[default]
    Whole,
    /// Left out.
    Drop,
}

/// Options of the Alibaba importer.
#[derive(Debug, Clone)]
pub struct AlibabaOptions {
    /// Default: the peak.
    pub at: Option<At>,
    /// Preemptors: the pods created after the moment (or after the fill), in arrival order.
    pub next: usize,
    /// Share of GPUs the sampled lists fill to.
    pub fill: f64,
    /// GPU model → built-in server type.
    pub server_types: BTreeMap<String, String>,
    /// QoS class → mapping, over the default table.
    pub qos: BTreeMap<String, QosMapping>,
    /// What a fractional GPU request (`gpu_milli < 1000`) becomes.
    pub gpu_shares: GpuShares,
    /// QoS classes of the fill pods and of the preemptors of a sampled list (no `qos` column).
    pub sampled_qos: (String, String),
    /// Read a timed list as an arrival sequence too (FGD's protocol): fill, then the next pods.
    pub as_sequence: bool,
}

impl Default for AlibabaOptions {
    fn default() -> Self {
        Self {
            at: None,
            next: 200,
            fill: 0.9,
            server_types: BTreeMap::new(),
            qos: BTreeMap::new(),
            gpu_shares: GpuShares::Whole,
            sampled_qos: ("BE".into(), "LS".into()),
            as_sequence: false,
        }
    }
}

/// The default QoS table (DESIGN §11.1): LS and Guaranteed high and guaranteed, Burstable
/// middle and best-effort, BE low, preemptible and without topology needs.
pub fn default_qos_table() -> BTreeMap<String, QosMapping> {
    let m = |priority, topology_qos, preemptible| QosMapping {
        priority,
        topology_qos,
        preemptible,
    };
    BTreeMap::from([
        ("LS".into(), m(1000, TopologyQos::Guaranteed, false)),
        ("Guaranteed".into(), m(1000, TopologyQos::Guaranteed, false)),
        ("Burstable".into(), m(500, TopologyQos::BestEffort, false)),
        ("BE".into(), m(100, TopologyQos::None, true)),
    ])
}
