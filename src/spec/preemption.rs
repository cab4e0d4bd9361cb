//! Preemption workload spec (DESIGN §5.1).

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::eligibility::{AffinityTerm, PreemptionPolicy, Toleration};
use super::kind::SpecKind;

/// Planners of `kind = "preemption"`, in report order.
pub const PREEMPTION_PLANNERS: [&str; 6] = [
    "k8s-default",
    "k8s-nrt",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

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
    /// `<workload>-<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
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

/// FlexTopo Eq. 1 settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FlextopoSettings {
    /// Trade-off in [0, 1]: α·P + (1 − α)·T.
    pub alpha: f64,
    /// Topology score per level, or `"calibrated"` for 1/penalty of the server type.
    pub topology_score: TopologyScore,
    /// Level scored: of the placement, or of the victims' span (released-code rule).
    pub score_basis: ScoreBasis,
    /// Enumeration budget per server and event.
    pub max_subset_evaluations: u64,
    /// Where IMP stops: at the smallest victim count across the cluster (`cluster`), or at
    /// each server's own smallest count (`node`, the released code).
    pub imp_scope: ImpScope,
    /// How Eq. 1's priority term P is normalised.
    pub priority_norm: PriorityNorm,
}

/// Where Incremental Minimal Preemption stops enumerating subset sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ImpScope {
    /// Stop at the first size k that yields a candidate on any server; only size-k candidates
    /// compete.
    #[default]
    Cluster,
    /// Each server stops at its own first feasible size; every server's candidates compete
    /// under Eq. 1 (the released code).
    Node,
}

/// Normalisation of Eq. 1's priority term P over a candidate's victims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PriorityNorm {
    /// Min–max of the victims' priority sum over this event's candidates (1 = lowest sum).
    #[default]
    Candidates,
    /// Each victim's priority min–max normalised over the range of the spec's preemptible
    /// workloads, u ∈ (0, 1]; P = 1 / (1 + Σ u). Independent of the other candidates.
    Spec,
    /// The paper's literal P = 1 / Σ priority (1 when the sum is at most 1).
    InverseSum,
}

impl Default for FlextopoSettings {
    fn default() -> Self {
        Self {
            alpha: 0.5,
            topology_score: TopologyScore::default(),
            score_basis: ScoreBasis::Placement,
            max_subset_evaluations: 100_000,
            imp_scope: ImpScope::Cluster,
            priority_norm: PriorityNorm::Candidates,
        }
    }
}

/// Per-level topology scores in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LevelScores {
    /// Score of a single-NUMA placement.
    pub numa: f64,
    /// Score of a single-socket placement.
    pub socket: f64,
    /// Score of a cross-socket placement.
    pub cross_socket: f64,
}

/// Explicit scores, or `"calibrated"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum TopologyScore {
    /// One score per level.
    Scores(LevelScores),
    /// A named rule (`"calibrated"`).
    Named(TopologyScoreName),
}

/// A named topology-score rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyScoreName {
    /// 1 / penalty of the server type's level.
    Calibrated,
}

impl Default for TopologyScore {
    fn default() -> Self {
        TopologyScore::Scores(LevelScores {
            numa: 1.0,
            socket: 0.8,
            cross_socket: 0.467,
        })
    }
}

impl<'de> Deserialize<'de> for TopologyScore {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopologyScore;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"a table { numa, socket, cross_socket } or "calibrated""#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "calibrated" => Ok(TopologyScore::Named(TopologyScoreName::Calibrated)),
                    other => Err(E::unknown_variant(other, &["calibrated"])),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                LevelScores::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(TopologyScore::Scores)
            }
        }
        d.deserialize_any(V)
    }
}

/// What the topology score T of a candidate is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreBasis {
    /// The level of the preemptor's placement after eviction.
    #[default]
    Placement,
    /// The span of the victims' resources (released FlexTopo code).
    Victims,
}

/// Weights of the canonical preemption cost (DESIGN §5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PreemptionObjective {
    /// Cost of a preemptor left unplaced.
    pub unplaced: f64,
    /// Cost per evicted pod.
    pub per_victim: f64,
    /// Weight of each victim's priority, normalised to [0, 1) over the spec's priority range.
    pub victim_priority: f64,
    /// Weight of 1 − T(level) for a placed preemptor.
    pub topology: f64,
}

impl Default for PreemptionObjective {
    fn default() -> Self {
        Self {
            unplaced: 1000.0,
            per_victim: 1.0,
            victim_priority: 1.0,
            topology: 2.0,
        }
    }
}

/// Planner selection and budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PreemptionPlanners {
    /// Planners to run, in report order.
    #[schemars(schema_with = "preemption_planner_names")]
    pub run: Vec<String>,
    /// Time budget of each MILP planner, in seconds.
    pub ilp_time_limit_s: f64,
    /// Relative MIP gap at which a solve may stop (0: prove optimality; above 0 a solve that
    /// stops there reports `gap_limit`).
    pub ilp_mip_gap: f64,
    /// The MILP backend (`--solver` overrides it).
    pub solver: super::kind::SolverBackend,
    /// How `ilp` and every `decision_gap` find the per-event optimum (`--event-solver`
    /// overrides it). `ilp-batch` is a MILP whatever this says.
    pub event_solver: EventSolver,
    /// PodDisruptionBudgets are hard for every planner (as Gödel treats them): no plan evicts
    /// more of a budget's pods than it allows. Off: they are counted, and only `k8s-default`
    /// prefers victims that violate none (as kube-scheduler does).
    pub respect_pdb: bool,
}

/// The per-event optimum's solver (`[planners] event_solver`, `--event-solver`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventSolver {
    /// A combinatorial branch and bound over servers and victim sets: proven optimal on the
    /// MILP's objective with its tie-breaks, in a fraction of its time.
    #[default]
    Exact,
    /// One MILP per server on the `solver` backend: the reference the exact search is tested
    /// against.
    Milp,
}

impl EventSolver {
    /// The kebab-case name used in specs and output: `exact` or `milp`.
    pub fn name(self) -> &'static str {
        match self {
            EventSolver::Exact => "exact",
            EventSolver::Milp => "milp",
        }
    }
}

impl Default for PreemptionPlanners {
    fn default() -> Self {
        Self {
            run: PREEMPTION_PLANNERS.iter().map(|s| s.to_string()).collect(),
            ilp_time_limit_s: 30.0,
            ilp_mip_gap: 0.0,
            solver: super::kind::SolverBackend::Microlp,
            event_solver: EventSolver::Exact,
            respect_pdb: false,
        }
    }
}

/// Settings of `coplan simulate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SimulationSettings {
    /// Cycles per seed.
    pub cycles: i64,
    /// A count (seeds 1..=N) or an explicit list.
    pub seeds: Seeds,
    /// What happens between cycles.
    pub reset: ResetMode,
    /// Who admits a placed pod: the kubelet's Topology Manager refuses a guaranteed pod below
    /// its required level (`kubelet`), or nothing refuses it (`bind`, as under KWOK).
    pub admission: Admission,
}

/// What happens to a guaranteed pod placed below its required level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Admission {
    /// The node agent refuses it (`TopologyAffinityError`); its victims are already evicted.
    #[default]
    Kubelet,
    /// It is bound where the allocator put it and counted as a miss (outcome `placed-miss`):
    /// fake kubelets (KWOK) refuse nothing.
    Bind,
}

impl Default for SimulationSettings {
    fn default() -> Self {
        Self {
            cycles: 100,
            seeds: Seeds::Count(10),
            reset: ResetMode::Refill,
            admission: Admission::Kubelet,
        }
    }
}

/// Seeds of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Seeds {
    /// Seeds 1..=N.
    Count(u64),
    /// These seeds, in this order.
    List(Vec<u64>),
}

/// A count or a list, read by hand so that a wrong value says what is expected (a derived
/// untagged enum only says that no variant matched).
impl<'de> Deserialize<'de> for Seeds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SeedsVisitor;
        const A_SEED: &str = "a seed: an integer ≥ 0";
        impl<'de> Visitor<'de> for SeedsVisitor {
            type Value = Seeds;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a seed count (an integer ≥ 1: seeds 1..=N) or a list of seeds (integers ≥ 0)",
                )
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Seeds, E> {
                Ok(Seeds::Count(v))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Seeds, E> {
                u64::try_from(v)
                    .map(Seeds::Count)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seeds, A::Error> {
                let mut seeds = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    let seed = u64::try_from(v).map_err(|_| {
                        de::Error::invalid_value(de::Unexpected::Signed(v), &A_SEED)
                    })?;
                    seeds.push(seed);
                }
                Ok(Seeds::List(seeds))
            }
        }
        d.deserialize_any(SeedsVisitor)
    }
}

impl Seeds {
    /// The seeds to run, in order.
    pub fn values(&self) -> Vec<u64> {
        match self {
            Seeds::Count(n) => (1..=*n).collect(),
            Seeds::List(v) => v.clone(),
        }
    }
}

/// Between cycles: preemptors leave and the cluster is refilled by churn (`refill`), or the
/// starting state of the seed is restored exactly (`restore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ResetMode {
    /// Preemptors leave and the cluster is refilled by churn from the current state.
    #[default]
    Refill,
    /// The seed's starting state is restored exactly.
    Restore,
}

/// `[planners].run` in the JSON Schema: a list of the known planner names.
fn preemption_planner_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::kind::planner_list_schema(&PREEMPTION_PLANNERS)
}
