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
    /// Index of the offered task in the task set.
    pub task: u32,
    /// The simulated time of the offer.
    pub time_s: f64,
    /// The planner's answer: a node, or deferral of a training task.
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
    LeastUtilized {
        /// Every node's mean memory utilisation, in node order.
        nodes: Vec<NodeUtilization>,
    },
    /// `mix-rr`: the task's position in the round robin over every node.
    RoundRobin {
        /// The task's position in the round robin, from 0 (its node is `position mod nodes`).
        position: u64,
        /// Nodes in the round robin.
        nodes: usize,
    },
    /// `separate`: round robin within the task's role (training or serving nodes).
    RoleSplit {
        /// Whether the task is a training task or an inference request, which picks its node set.
        role: TaskRole,
        /// The nodes `separate` gives to training (the first `round(N · separate_split)`, at least
        /// one).
        training_nodes: Vec<usize>,
        /// The nodes `separate` gives to inference (the rest; with one node, the same node).
        serving_nodes: Vec<usize>,
        /// The task's position in its role's round robin.
        position: u64,
    },
}

/// The two node sets of `separate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskRole {
    /// The node set that runs training tasks.
    Training,
    /// The node set that serves inference requests.
    Serving,
}

impl TaskRole {
    /// The role's name as JSON and the tables write it: `training` or `serving`.
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
    /// The node (index in `0..nodes`).
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
    /// λ1: the weight of the response time R in the score.
    pub lambda1: f64,
    /// λ2: the weight of the length consistency LC in the score.
    pub lambda2: f64,
    /// τ, the floor of −IP.
    pub tau: f64,
    /// Every node's terms, in node order.
    pub nodes: Vec<LemixNodeTerms>,
    /// The best-scoring node (the first of equal scores): the answer unless deferred.
    pub best: usize,
    /// Whether the deferral rule (Eq. 4) was consulted and what it answered.
    pub deferral: DeferralVerdict,
}

/// LeMix's terms of one node.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct LemixNodeTerms {
    /// The node (index in `0..nodes`).
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
    /// Whether the training task was deferred to the next inference arrival.
    pub defer: bool,
}

/// One task as every asked planner decided and ran it (`coplan explain --task ID`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TaskExplanation {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"colocation-explain"`.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of the task generation and of every run.
    pub seed: u64,
    /// Co-location nodes of the runs.
    pub nodes: usize,
    /// Pipeline stages per node.
    pub stages: usize,
    /// τ_R, the response-time SLO.
    pub slo_s: f64,
    /// The explained task's facts.
    pub task: TaskFacts,
    /// The candidate planners, in the order asked.
    pub planners: Vec<PlannerColumn>,
    /// Where `ilp`'s schedule (exact or windowed search) placed the task.
    pub ilp: PlannerColumn,
}

/// What a task is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct TaskFacts {
    /// Index of the task in the task set.
    pub id: u32,
    /// `inference` or `training`.
    pub kind: &'static str,
    /// A request's arrival, a training task's submission.
    pub arrival_s: f64,
    /// A request's prompt tokens (its prefill length); `null` for training.
    pub prompt_tokens: Option<u32>,
    /// A request's tokens to generate (its decode iterations); `null` for training.
    pub output_tokens: Option<u32>,
    /// Tokens per sequence of a training task.
    pub training_tokens: Option<u32>,
    /// Sequences per batch of a training task; `null` for a request.
    pub batch: Option<u32>,
}

/// One planner's decisions on the task and the task's run.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannerColumn {
    /// The planner's registry name, or `ilp`.
    pub name: String,
    /// The run's status: `heuristic` for a candidate; for `ilp`, whether its schedule is proven
    /// optimal.
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
    /// The simulated time of the offer, in seconds since the start of the run.
    pub time_s: f64,
    /// The planner's answer.
    pub answer: OfferAnswer,
    /// What the planner compared, in its own terms.
    pub terms: OfferTerms,
    /// The answer in words, from the recorded terms.
    pub why: String,
}

/// How the task ran in one planner's run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct TaskRun {
    /// The node the task ran on; `null` if it was never placed.
    pub node: Option<usize>,
    /// When A-PP first offered a training task.
    pub released_s: Option<f64>,
    /// Start of its first forward, in seconds; `null` if it never started.
    pub start_s: Option<f64>,
    /// R: a request's prefill end − arrival (its TTFT); a training task's completion −
    /// submission. `null` for a dropped or unfinished task.
    pub response_s: Option<f64>,
    /// A request's time to first token (prefill end − arrival).
    pub ttft_s: Option<f64>,
    /// A request's mean time between tokens (the first from its prefill end).
    pub tbt_mean_s: Option<f64>,
    /// A request's longest gap between consecutive tokens (the first from its prefill end), in
    /// seconds.
    pub tbt_max_s: Option<f64>,
    /// Tokens a request decoded (0 for training).
    pub tokens_decoded: usize,
    /// Completion: a request's last decode iteration, a training task's stage-0 backward (s);
    /// `null` if it did not complete.
    pub completion_s: Option<f64>,
    /// A request's R ≤ τ_R.
    pub slo_met: Option<bool>,
    /// Dropped for lack of memory.
    pub dropped: bool,
    /// Offloaded to the host for lack of memory.
    pub offloaded: bool,
    /// Times a training task was deferred to the next inference arrival.
    pub deferrals: u32,
    /// The task's term of the canonical objective: all tasks' terms sum to the plan's.
    pub objective_term: f64,
}

/// Per planner, the tasks whose response differs most from `ilp`'s schedule
/// (`coplan plan --worst K` of a co-location workload).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorstTasks {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"colocation-worst"`.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of the task generation and of every run.
    pub seed: u64,
    /// K: tasks listed per planner at most (`--worst K`).
    pub k: usize,
    /// Status of `ilp`'s schedule: `optimal`, `time_limit` or `windowed`.
    pub ilp_status: PlanStatus,
    /// One entry per candidate planner, in the order asked.
    pub planners: Vec<PlannerWorst>,
}

/// One planner's K tasks furthest from `ilp`'s responses.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannerWorst {
    /// The planner's registry name.
    pub planner: String,
    /// Largest |R − R_ilp| first (ties: lower task id); tasks without a response in either
    /// run (dropped, unfinished) are left out.
    pub tasks: Vec<ResponseDifference>,
}

/// A task's response under a planner and under `ilp`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct ResponseDifference {
    /// Index of the task in the task set.
    pub task: u32,
    /// `inference` or `training`.
    pub kind: &'static str,
    /// The node the planner put the task on.
    pub node: Option<usize>,
    /// The node `ilp`'s schedule put it on.
    pub ilp_node: Option<usize>,
    /// R under the planner, in seconds (a request's prefill end − arrival; a training task's
    /// completion − submission).
    pub response_s: f64,
    /// R under `ilp`'s schedule, in seconds.
    pub ilp_response_s: f64,
    /// |response_s − ilp_response_s|.
    pub difference_s: f64,
}

/// The JSON Schema of `coplan explain --task ID --format json`
/// (`schemas/colocation-explain.schema.json`), keys sorted so that the text is byte-stable.
pub fn colocation_explain_schema() -> Value {
    sorted_keys(schemars::schema_for!(TaskExplanation).to_value())
}
