//! The workload of a preemption spec: classes, running pods, fill, preemptors and
//! PodDisruptionBudgets.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::settings::{
    FlextopoSettings, PreemptionObjective, PreemptionPlanners, SimulationSettings,
};
use crate::spec::eligibility::{AffinityTerm, PreemptionPolicy, Toleration};
use crate::spec::kind::SpecKind;

/// A preemption workload: workload classes, the initial state and the preemptors to plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreemptionSpec {
    /// Must be `"preemption"`.
    pub kind: SpecKind,
    /// Optional name for reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reference time for `gpu_hours_evicted` (pods need `start_time_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now_s: Option<f64>,
    /// Workload classes: each a set of identical instances.
    pub workload: Vec<WorkloadClass>,
    /// Pods running at the start, placed explicitly or by the node allocator.
    #[serde(default)]
    pub running: Vec<RunningPod>,
    /// Fill the cluster by seeded churn to a target GPU utilisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<FillSpec>,
    /// Preemptors to plan, in arrival order.
    #[serde(default)]
    pub preempt: Vec<PreemptEntry>,
    /// PodDisruptionBudgets over the pods running at the start (`[[disruption_budget]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disruption_budget: Vec<DisruptionBudget>,
    /// FlexTopo scoring settings.
    #[serde(default)]
    pub flextopo: FlextopoSettings,
    /// Weights of the canonical cost every planner is measured by.
    #[serde(default)]
    pub objective: PreemptionObjective,
    /// Which planners run and their budgets.
    #[serde(default)]
    pub planners: PreemptionPlanners,
    /// Settings of `coplan simulate`.
    #[serde(default)]
    pub simulation: SimulationSettings,
}

/// A class of identical pods.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadClass {
    /// Unique name; instances are named `<name>-<index>`.
    pub name: String,
    /// Kubernetes PriorityClass value; higher is more important.
    pub priority: i64,
    /// GPUs per instance (≥ 0).
    #[serde(default)]
    pub gpus: i64,
    /// CPU cores per instance (≥ 0).
    #[serde(default)]
    pub cores: i64,
    /// Topology QoS when this workload preempts.
    #[serde(default)]
    pub topology_qos: TopologyQos,
    /// Whether instances may be evicted by higher-priority pods (default false).
    #[serde(default)]
    pub preemptible: bool,
    /// `nodeSelector`: a server must carry every one of these labels with this value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity: alternatives, of which one must hold (none: no constraint).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_affinity: Vec<AffinityTerm>,
    /// Taints the pods tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// `never`: a preemptor of this class is placed where it fits but never evicts.
    #[serde(default, skip_serializing_if = "PreemptionPolicy::is_default")]
    pub preemption_policy: PreemptionPolicy,
    /// The device kind its `gpus` ask for (`amd.com/gpu`, `nvidia.com/mig-3g.40gb`, a DRA
    /// device class); absent: `gpu`, the whole GPUs of a server type that names no kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_resource: Option<String>,
    /// A DRA claim's `matchAttribute` constraint: where its devices must lie together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_alignment: Option<DeviceAlignment>,
}

impl WorkloadClass {
    /// The device kind of the class's GPUs.
    pub fn gpu_kind(&self) -> &str {
        self.gpu_resource
            .as_deref()
            .unwrap_or(crate::spec::cluster::DEFAULT_GPU_KIND)
    }
}

/// Where a claim's devices must lie together (its `constraints[].matchAttribute`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceAlignment {
    /// `resource.kubernetes.io/numaNode`: every device on one NUMA node; the cores anywhere
    /// the node allocator puts them.
    Numa,
    /// `resource.kubernetes.io/pcieRoot`: every device behind one PCIe root.
    PcieRoot,
    /// `numaNode` over the GPUs and the CPU driver's device of the same claim: devices and
    /// cores on one NUMA node.
    NumaWithCores,
}

impl DeviceAlignment {
    /// The kebab-case name used in specs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceAlignment::Numa => "numa",
            DeviceAlignment::PcieRoot => "pcie-root",
            DeviceAlignment::NumaWithCores => "numa-with-cores",
        }
    }
}

/// FlexTopo topology QoS of a preemptor.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyQos {
    /// A placement below the required level is refused (fails admission).
    Guaranteed,
    /// Admitted at any level; a worse level is a miss.
    BestEffort,
    /// Topology is ignored.
    #[default]
    None,
}

impl TopologyQos {
    /// The kebab-case name used in specs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyQos::Guaranteed => "guaranteed",
            TopologyQos::BestEffort => "best-effort",
            TopologyQos::None => "none",
        }
    }
}

/// One running pod of the initial state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunningPod {
    /// The pod's own name (`namespace/name` or a bare name), kept through every output;
    /// absent: `<workload>-<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The workload class of the pod.
    pub workload: String,
    /// Server name.
    pub node: String,
    /// Explicit GPU ids, or a count the node allocator places; default: the workload's GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<IdsOrCount>,
    /// Explicit core ids, or a count the node allocator places; default: the workload's cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<IdsOrCount>,
    /// Start time for the start-time tie-break; absent = latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time_s: Option<f64>,
}

/// Either a list of explicit ids or a count.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IdsOrCount {
    /// How many; the node allocator picks the ids.
    Count(i64),
    /// Explicit ids on the server.
    Ids(Vec<i64>),
}

impl<'de> Deserialize<'de> for IdsOrCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdsOrCount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count (integer) or a list of ids")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(IdsOrCount::Count(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(IdsOrCount::Count)
                    .map_err(|_| E::custom("count too large"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut ids = Vec::new();
                while let Some(id) = seq.next_element::<i64>()? {
                    ids.push(id);
                }
                Ok(IdsOrCount::Ids(ids))
            }
        }
        d.deserialize_any(V)
    }
}

/// Seeded churn that fills the cluster before planning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FillSpec {
    /// Weights over workload names.
    pub mix: BTreeMap<String, f64>,
    /// Target share of GPUs in use, in (0, 1].
    #[serde(default = "one")]
    pub target_gpu_utilization: f64,
    /// How the topology-blind default scheduler placed the fill pods.
    #[serde(default)]
    pub allocator: FillAllocator,
    /// Rounds of random departures and refills, which fragment the cluster.
    #[serde(default = "default_churn_rounds")]
    pub churn_rounds: i64,
    /// Seed of the fill; `--seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn one() -> f64 {
    1.0
}
fn default_churn_rounds() -> i64 {
    3
}
fn default_seed() -> u64 {
    1
}

/// Topology-blind placement of fill pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FillAllocator {
    /// Random free GPUs and cores of a random server with room.
    #[default]
    Random,
    /// The server with the fewest free GPUs that fits; lowest ids.
    BestFit,
    /// The server with the most free GPUs; lowest ids.
    Spread,
    /// Random server and GPUs as `random`; the cores on the NUMA node of the pod's first GPU
    /// (then the lowest free cores elsewhere), as a kubelet with the static CPU manager and the
    /// Topology Manager assigns them (the paper's agent snapshots look like this).
    NumaAligned,
}

impl FillAllocator {
    /// The kebab-case name used in specs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            FillAllocator::Random => "random",
            FillAllocator::BestFit => "best-fit",
            FillAllocator::Spread => "spread",
            FillAllocator::NumaAligned => "numa-aligned",
        }
    }
}

/// `count` preemptors of one workload class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreemptEntry {
    /// Name of the workload class of the preemptors.
    pub workload: String,
    /// Number of instances (≥ 1).
    #[serde(default = "one_i64")]
    pub count: i64,
    /// The pod's own name (`namespace/name` or a bare name) when `count` is 1; absent:
    /// `<workload>-<index>`. A gang's pods are named after it: `<name>/<k>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Pods per preemptor: more than one makes each preemptor a gang, placed whole or not at
    /// all (DESIGN §12.3). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<i64>,
    /// The level (`[topology] levels`, `host` or `cluster`) one domain of which must hold
    /// every pod of the gang; absent: `cluster`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_level: Option<String>,
    /// The level the gang would rather fit in (no wider than `required_level`): what the
    /// topology-aware heuristics try first; the optimum weighs it by `[topology] penalty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_level: Option<String>,
    /// Kueue's podset slices: the gang's pods in slices of this many, each inside one domain
    /// of `slice_level`; must divide `pods`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_size: Option<i64>,
    /// The level one domain of which holds each slice (no wider than `required_level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_level: Option<String>,
}

impl PreemptEntry {
    /// `count` single pods of `workload`, unnamed.
    pub fn pods_of(workload: &str, count: i64) -> Self {
        PreemptEntry {
            workload: workload.to_string(),
            count,
            name: None,
            pods: None,
            required_level: None,
            preferred_level: None,
            slice_size: None,
            slice_level: None,
        }
    }

    /// Whether the entry's preemptors are gangs: several pods, or a level, a preference or
    /// slices asked for.
    pub fn is_gang(&self) -> bool {
        self.pods.is_some_and(|p| p > 1)
            || self.required_level.is_some()
            || self.preferred_level.is_some()
            || self.slice_size.is_some()
            || self.slice_level.is_some()
    }
}

impl PreemptionSpec {
    /// Whether any preemptor is a gang: the plan then decides gangs (DESIGN §12.3).
    pub fn has_gangs(&self) -> bool {
        self.preempt.iter().any(PreemptEntry::is_gang)
    }

    /// The planners a run without `--planners` runs: `[planners] run`, where a workload with
    /// gangs that leaves it at its default also runs `kueue-tas`.
    pub fn planners_to_run(&self) -> Vec<String> {
        let default = super::settings::SINGLE_POD_PLANNERS;
        if self.has_gangs() && self.planners.run.iter().eq(default.iter()) {
            return super::settings::PREEMPTION_PLANNERS
                .iter()
                .map(|s| s.to_string())
                .collect();
        }
        self.planners.run.clone()
    }
}

fn one_i64() -> i64 {
    1
}

/// A PodDisruptionBudget: how many of the pods it covers may be evicted. It covers the pods
/// running when the plan starts that `pods` names or that are of a class `workloads` names;
/// pods a plan places are never victims, so they are not counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DisruptionBudget {
    /// The budget's name (`namespace/name` when imported), kept in every output.
    pub name: String,
    /// Running pods it covers, by name (`[[running]] name`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<String>,
    /// Workload classes whose running pods it covers (fill pods included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<String>,
    /// Evictions it allows, as its `status.disruptionsAllowed` says; exclusive with
    /// `min_available` and `max_unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruptions_allowed: Option<i64>,
    /// Pods that must stay: a count or a percentage of the covered pods (`"50%"`, rounded up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrPercent>,
    /// Pods that may be unavailable: a count or a percentage of the covered pods (rounded up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrPercent>,
}

/// A count or a percentage, as a PodDisruptionBudget writes `minAvailable`/`maxUnavailable`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IntOrPercent {
    /// A number of pods.
    Int(i64),
    /// A percentage of the covered pods, written `"N%"`.
    Percent(String),
}

impl IntOrPercent {
    /// The number of pods of `total` it stands for, percentages rounded up (as the disruption
    /// controller scales them); `None` for a malformed percentage.
    pub fn scaled(&self, total: i64) -> Option<i64> {
        match self {
            IntOrPercent::Int(n) => Some(*n),
            IntOrPercent::Percent(text) => {
                let pct: i64 = text.strip_suffix('%')?.trim().parse().ok()?;
                (0..=100)
                    .contains(&pct)
                    .then(|| (pct * total + 99).div_euclid(100))
            }
        }
    }
}

impl<'de> Deserialize<'de> for IntOrPercent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IntOrPercent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count of pods or a percentage such as \"50%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(IntOrPercent::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(IntOrPercent::Int)
                    .map_err(|_| E::custom("count too large"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(IntOrPercent::Percent(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}
