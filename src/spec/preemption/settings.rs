//! The settings of a preemption spec: FlexTopo scoring, the objective, the planners and the
//! simulation.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Planners of `kind = "preemption"`, in report order.
pub const PREEMPTION_PLANNERS: [&str; 7] = [
    "k8s-default",
    "k8s-nrt",
    "kueue-tas",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

/// The default `[planners] run` of a workload without gangs: every planner but `kueue-tas`,
/// which answers the gang question (a workload with gangs runs all of
/// [`PREEMPTION_PLANNERS`] by default).
pub const SINGLE_POD_PLANNERS: [&str; 6] = [
    "k8s-default",
    "k8s-nrt",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

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
    pub solver: crate::spec::kind::SolverBackend,
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
            run: SINGLE_POD_PLANNERS.iter().map(|s| s.to_string()).collect(),
            ilp_time_limit_s: 30.0,
            ilp_mip_gap: 0.0,
            solver: crate::spec::kind::SolverBackend::Microlp,
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
    crate::spec::kind::planner_list_schema(&PREEMPTION_PLANNERS)
}
