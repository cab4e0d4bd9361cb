//! `coplan explain --task ID` output of a co-location workload: one task as every asked
//! planner decided it — what the planner compared at each offer of the task, as its own
//! decision record holds it — and how the task then ran, beside where `ilp`'s schedule put it.
//! Also the offer records the planners keep when asked (`Dispatcher::record_offers`), and the
//! tasks whose response differs most from `ilp`'s (`--worst K`).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::PlanStatus;
use crate::spec::colocation::Deprioritize;
use crate::spec::sorted_keys;

/// What a planner answered when a task was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OfferAnswer {
    /// The task goes to this node.
    Node(usize),
    /// A training task waits for the next inference arrival.
    Defer,
}

/// One offer of a task to a planner, as the planner recorded it while deciding.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OfferRecord {
    pub task: u32,
    /// The simulated time of the offer.
    pub time_s: f64,
    pub answer: OfferAnswer,
    /// What the planner compared, in its own terms.
    pub terms: OfferTerms,
}

/// What a planner compared at one offer: the values it decided by.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum OfferTerms {
    /// `lemix` / `lemix-balanced`: Algorithm 1's prediction and Eq. 1–3's score per node, and
    /// the deferral rule (Eq. 4).
    Lemix(LemixOffer),
    /// `mix-luf`: the lowest mean GPU memory utilisation wins (ties: the lowest index).
    LeastUtilized { nodes: Vec<NodeUtilization> },
    /// `mix-rr`: the task's position in the round robin over every node.
    RoundRobin { position: u64, nodes: usize },
    /// `separate`: round robin within the task's role (training or serving nodes).
    RoleSplit {
        role: TaskRole,
        training_nodes: Vec<usize>,
        serving_nodes: Vec<usize>,
        /// The task's position in its role's round robin.
        position: u64,
    },
}

/// The two node sets of `separate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskRole {
    Training,
    Serving,
}

impl TaskRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskRole::Training => "training",
            TaskRole::Serving => "serving",
        }
    }
}

/// `mix-luf`'s one term of a node.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct NodeUtilization {
    pub node: usize,
    /// Mean memory utilisation of the node's GPUs (used / capacity).
    pub memory_utilization: f64,
}

/// LeMix's score of every node at one offer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LemixOffer {
    /// `faithful` (`lemix`: f = (IP + λ2·LC) / (λ1·R)) or `balanced` (`lemix-balanced`:
    /// f = IP_norm + λ2·LC − λ1·R_norm).
    pub score: &'static str,
    pub lambda1: f64,
    pub lambda2: f64,
    /// τ, the floor of −IP.
    pub tau: f64,
    pub nodes: Vec<LemixNodeTerms>,
    /// The best-scoring node (the first of equal scores): the answer unless deferred.
    pub best: usize,
    pub deferral: DeferralVerdict,
}

/// LeMix's terms of one node.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct LemixNodeTerms {
    pub node: usize,
    /// II: the idleness the task's forward would add on the node (Algorithm 1).
    pub idleness_increase_s: f64,
    /// IP = −max(II / S − gap since the node's last arrival, τ).
    pub ip: f64,
    /// R: the predicted response (last stage's forward end − now).
    pub response_s: f64,
    /// LC: how typical the task's length is of the lengths the node was given.
    pub length_consistency: f64,
    /// The node's score f (higher is better).
    pub score: f64,
}

/// LeMix's deferral rule at one offer, with the numbers it compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct DeferralVerdict {
    /// `[lemix] deprioritize`.
    pub rule: Deprioritize,
    /// Whether the rule was consulted: only for a training task while an inference arrival
    /// is still ahead.
    pub consulted: bool,
    /// The next inference arrival, when one is ahead.
    pub next_arrival_s: Option<f64>,
    /// The response set against the SLO: `threshold`, the task's own predicted R on the best
    /// node; `lookahead`, the next request's best predicted response over the nodes with this
    /// task on the best node. `null` when the rule was not consulted or is `off`.
    pub compared_response_s: Option<f64>,
    /// τ_R.
    pub slo_s: f64,
    pub defer: bool,
}

/// One task as every asked planner decided and ran it (`coplan explain --task ID`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TaskExplanation {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: u64,
    pub nodes: usize,
    pub stages: usize,
    /// τ_R, the response-time SLO.
    pub slo_s: f64,
    pub task: TaskFacts,
    /// The candidate planners, in the order asked.
    pub planners: Vec<PlannerColumn>,
    /// Where `ilp`'s schedule (exact or windowed search) placed the task.
    pub ilp: PlannerColumn,
}

/// What a task is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct TaskFacts {
    pub id: u32,
    /// `inference` or `training`.
    pub kind: &'static str,
    /// A request's arrival, a training task's submission.
    pub arrival_s: f64,
    pub prompt_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    /// Tokens per sequence of a training task.
    pub training_tokens: Option<u32>,
    pub batch: Option<u32>,
}

/// One planner's decisions on the task and the task's run.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannerColumn {
    pub name: String,
    pub status: PlanStatus,
    /// Every offer of the task, in order, with what the planner compared (empty for `ilp`,
    /// whose search keeps no per-offer record).
    pub offers: Vec<ExplainedOffer>,
    /// The task as it ran (`null`: the planner did not run; see `reason`).
    pub run: Option<TaskRun>,
    /// Why the planner did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One offer with its reading.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainedOffer {
    pub time_s: f64,
    pub answer: OfferAnswer,
    pub terms: OfferTerms,
    /// The answer in words, from the recorded terms.
    pub why: String,
}

/// How the task ran in one planner's run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct TaskRun {
    pub node: Option<usize>,
    /// When A-PP first offered a training task.
    pub released_s: Option<f64>,
    pub start_s: Option<f64>,
    /// R: a request's prefill end − arrival (its TTFT); a training task's completion −
    /// submission. `null` for a dropped or unfinished task.
    pub response_s: Option<f64>,
    /// A request's time to first token (prefill end − arrival).
    pub ttft_s: Option<f64>,
    /// A request's mean time between tokens (the first from its prefill end).
    pub tbt_mean_s: Option<f64>,
    pub tbt_max_s: Option<f64>,
    pub tokens_decoded: usize,
    pub completion_s: Option<f64>,
    /// A request's R ≤ τ_R.
    pub slo_met: Option<bool>,
    pub dropped: bool,
    pub offloaded: bool,
    pub deferrals: u32,
    /// The task's term of the canonical objective: all tasks' terms sum to the plan's.
    pub objective_term: f64,
}

/// Per planner, the tasks whose response differs most from `ilp`'s schedule
/// (`coplan plan --worst K` of a co-location workload).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorstTasks {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: u64,
    pub k: usize,
    pub ilp_status: PlanStatus,
    pub planners: Vec<PlannerWorst>,
}

/// One planner's K tasks furthest from `ilp`'s responses.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannerWorst {
    pub planner: String,
    /// Largest |R − R_ilp| first (ties: lower task id); tasks without a response in either
    /// run (dropped, unfinished) are left out.
    pub tasks: Vec<ResponseDifference>,
}

/// A task's response under a planner and under `ilp`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct ResponseDifference {
    pub task: u32,
    pub kind: &'static str,
    pub node: Option<usize>,
    pub ilp_node: Option<usize>,
    pub response_s: f64,
    pub ilp_response_s: f64,
    /// |response_s − ilp_response_s|.
    pub difference_s: f64,
}

/// The JSON Schema of `coplan explain --task ID --format json`
/// (`schemas/colocation-explain.schema.json`), keys sorted so that the text is byte-stable.
pub fn colocation_explain_schema() -> Value {
    sorted_keys(schemars::schema_for!(TaskExplanation).to_value())
}
