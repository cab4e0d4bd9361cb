//! `coplan explain` output of a preemption workload: one decision of every planner beside the
//! per-event optimum on the state each planner faced, with every term of the canonical cost.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::plan::preemption::EventOutcome;
use crate::spec::eligibility::PreemptionPolicy;
use crate::spec::preemption::TopologyQos;
use crate::spec::sorted_keys;
use crate::topology::Level;

/// One preemptor's decision, explained (`coplan explain CLUSTER WORKLOAD --event N`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EventExplanation {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"preemption-explain"`.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of the generated churn fill, when the spec has one (`--seed`, else `[fill].seed`).
    pub seed: Option<u64>,
    /// 1-based position of the preemptor in the `[[preempt]]` list.
    pub event: usize,
    /// Instance name of the preemptor.
    pub preemptor: String,
    /// The preemptor's workload class.
    pub class: String,
    /// The preemptor's priority (higher is more important; may be negative).
    pub priority: i64,
    /// GPUs the preemptor requests (may be 0).
    pub gpus: u32,
    /// CPU cores the preemptor requests (may be 0).
    pub cores: u32,
    /// The preemptor's topology QoS (`guaranteed` must land at its required level).
    pub topology_qos: TopologyQos,
    /// The best level any server type can hold the request at (`null`: none can).
    pub required_level: Option<Level>,
    /// `never`: the preemptor is placed where it fits and evicts nobody.
    pub preemption_policy: PreemptionPolicy,
    /// Every server the scheduler's filter keeps the preemptor off, in name order, with the
    /// rule that does (labels, taints, cordon, readiness).
    pub filtered_out: Vec<FilteredServer>,
    /// Planners first, in the order asked; then one optimum per distinct state they faced.
    pub columns: Vec<DecisionColumn>,
    /// For each planner that is not the per-event optimum: its excess over the optimum on its
    /// own state and the term that decides it.
    pub differences: Vec<TermDifference>,
    /// Remarks, e.g. a joint planner whose solver had no plan to show.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A server the scheduler's filter refuses a preemptor, and why.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FilteredServer {
    /// Server name.
    pub server: String,
    /// The first rule that refuses: `not-ready`, `unschedulable`, `node-selector`,
    /// `node-affinity` or `taint`.
    pub rule: &'static str,
    /// The rule in words, e.g. `untolerated taint gpu=h100:NoSchedule`.
    pub reason: String,
}

/// Whose decision a column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ColumnKind {
    /// A planner's own decision, on the state its earlier decisions left.
    Planner,
    /// The per-event optimum (`ilp`'s solver) on the state of the planners in `state_of`.
    Optimum,
}

/// One decision and its cost, term by term.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecisionColumn {
    /// The planner, or `ilp` for an optimum column.
    pub name: String,
    /// A planner's own decision, or the per-event optimum.
    pub column: ColumnKind,
    /// The planners whose faced state this decision was taken on (in the order asked).
    pub state_of: Vec<String>,
    /// Server chosen (also for a refused pod, whose victims were evicted there).
    pub server: Option<String>,
    /// Pods evicted for this decision, in the planner's order.
    pub victims: Vec<VictimFacts>,
    /// Level of the placement (or of the placement admission refused).
    pub level: Option<Level>,
    /// The level the pod needs on the chosen server.
    pub server_required_level: Option<Level>,
    /// Whether the preemptor got a placement.
    pub placed: bool,
    /// Placed, refused by admission after evicting, or not placed.
    pub outcome: EventOutcome,
    /// Placed at or better than its required level (the hit of the metrics).
    pub hit: bool,
    /// The pod's topology QoS holds: a guaranteed pod is placed at its required level, any
    /// other pod is placed.
    pub qos_met: bool,
    /// The decision's canonical cost (DESIGN §5.4), term by term.
    pub terms: CostTerms,
    /// FlexTopo's Eq. 1 terms of the candidate it chose (FlexTopo columns only).
    pub flextopo_score: Option<ScoreRecord>,
    /// How the planner searched for this decision.
    pub search: SearchRecord,
    /// For an optimum column: whether the solve proved it (`false`: stopped at the time limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proven: Option<bool>,
    /// A gang's decision: its domain, spread and every pod's place (DESIGN §12.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<crate::plan::preemption::GangEvent>,
}

/// An evicted pod.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VictimFacts {
    /// Instance name of the evicted pod.
    pub name: String,
    /// Its workload class.
    pub class: String,
    /// Its priority (strictly below the preemptor's).
    pub priority: i64,
    /// Its topology QoS.
    pub topology_qos: TopologyQos,
}

/// The canonical cost of one decision (DESIGN §5.4), term by term: `total` is their sum, the
/// decision's cost in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct CostTerms {
    /// `per_victim` × victims.
    pub victims: f64,
    /// Σ `victim_priority` × (priority − lowest) / (priority span) over the victims.
    pub priority: f64,
    /// `topology` × (1 − T(level)) of the placement.
    pub topology: f64,
    /// `unplaced` when the pod is not placed.
    pub unplaced: f64,
    /// The decision's canonical cost: the sum of the four terms.
    pub total: f64,
}

impl CostTerms {
    /// The terms by name, in the order the table prints them.
    pub fn named(&self) -> [(&'static str, f64); 4] {
        [
            ("victims", self.victims),
            ("priority", self.priority),
            ("topology", self.topology),
            ("unplaced", self.unplaced),
        ]
    }
}

/// FlexTopo's Eq. 1 of the chosen candidate: S = α·P + (1 − α)·T.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct ScoreRecord {
    /// α: the weight of the priority term P against the topology term T.
    pub alpha: f64,
    /// P: the candidate's priority term normalised over the event's candidates to [0, 1] (1 for the
    /// lowest Σ victim priority).
    pub priority_term: f64,
    /// T: the topology score of the scored level, in [0, 1].
    pub topology_term: f64,
    /// The level T was scored at (`score_basis`).
    pub scored_level: Level,
    /// S = α·P + (1 − α)·T; the highest S wins.
    pub score: f64,
}

/// How the planner searched for this decision.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchRecord {
    /// Victim subsets (or dry runs) the planner tried.
    pub subsets_evaluated: u64,
    /// Where the search stopped: IMP's first subset size that yielded a candidate, the
    /// exhaustive search's "every size", the default's dry run, the optimum's proof.
    pub stopped: String,
    /// The enumeration budget cut the search short.
    pub truncated: bool,
}

/// A planner's decision against the optimum on its own state.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TermDifference {
    /// The planner whose decision this is.
    pub planner: String,
    /// Its cost minus the optimum's (≥ 0 when the optimum is proven).
    pub excess: f64,
    /// Per term, the planner's value minus the optimum's.
    pub delta: CostTerms,
    /// The term with the largest positive difference (`null`: the decision costs the optimum).
    pub deciding_term: Option<&'static str>,
}

/// The JSON Schema of `coplan explain --format json` (`schemas/explain.schema.json`), keys
/// sorted so that the text is byte-stable.
pub fn explain_schema() -> Value {
    sorted_keys(schemars::schema_for!(EventExplanation).to_value())
}
