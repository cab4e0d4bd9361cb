//! Plan data of a preemption workload: the preemptors, what happened to each (events and
//! outcomes), and each planner's measured plan (DESIGN §5.3, §7).

use serde::Serialize;

use super::{PlanStatus, PlannerRole};
use crate::spec::preemption::TopologyQos;
use crate::topology::{Level, Request};

/// One pod of the `[[preempt]]` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemptor {
    pub name: String,
    /// Index of its workload class in the spec.
    pub workload: usize,
    pub priority: i64,
    pub request: Request,
    pub qos: TopologyQos,
}

/// What happened to one preemptor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionEvent {
    pub preemptor: String,
    pub workload: String,
    pub topology_qos: TopologyQos,
    /// Server chosen (also for a refused pod, whose victims were evicted there).
    pub node: Option<String>,
    pub victims: Vec<String>,
    pub gpus: Vec<u32>,
    pub cores: Vec<u32>,
    pub level: Option<Level>,
    pub required_level: Option<Level>,
    pub placed: bool,
    pub outcome: EventOutcome,
    pub hit: bool,
    pub cost: f64,
    pub subsets_evaluated: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// How a preemptor's event ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventOutcome {
    Placed,
    /// A guaranteed pod placed below its required level: only `admission = "bind"` lets it
    /// through (no node agent refuses it); it counts as a miss.
    PlacedMiss,
    /// A guaranteed pod below its required level: admission failed (its victims are gone).
    Refused,
    NoCandidate,
}

impl EventOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            EventOutcome::Placed => "placed",
            EventOutcome::PlacedMiss => "placed-miss",
            EventOutcome::Refused => "refused",
            EventOutcome::NoCandidate => "no-candidate",
        }
    }
}

/// Metrics of one planner's preemption plan (DESIGN §5.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionMetrics {
    pub preemptions: u64,
    pub placed: u64,
    pub unplaced: u64,
    pub hits: u64,
    pub hit_rate: f64,
    /// Over guaranteed preemptors; null when there are none.
    pub hit_rate_guaranteed: Option<f64>,
    /// Over best-effort preemptors; null when there are none.
    pub hit_rate_best_effort: Option<f64>,
    pub victims: u64,
    pub victim_priority_sum: i64,
    /// Victims evicted for a preemptor that was then not placed (failed admission).
    pub wasted_evictions: u64,
    /// Mean measured slowdown (server type penalty of the level) over placed pods.
    pub slowdown_mean: Option<f64>,
    /// Mean slowdown of the placed guaranteed pods; null when none was placed.
    pub slowdown_guaranteed: Option<f64>,
    /// Mean slowdown of the placed best-effort pods; null when none was placed.
    pub slowdown_best_effort: Option<f64>,
    /// GPU-hours of work lost by the victims (victims with `start_time_s`, when `now_s` is set).
    pub gpu_hours_evicted: Option<f64>,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub decision_gap: Option<f64>,
    pub runtime_ms: f64,
    pub subsets_evaluated: u64,
}

/// One planner's preemption plan, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionPlannerReport {
    pub name: String,
    /// What the plan is used for (not in the JSON contract: the name says it).
    #[serde(skip)]
    pub role: PlannerRole,
    pub status: PlanStatus,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub gap_is_bound: bool,
    pub bound: Option<f64>,
    pub decision_gap: Option<f64>,
    /// The decisions with the largest excess over the per-event optimum on the state the
    /// planner faced, largest first (`plan --worst K`; absent without it, empty for a planner
    /// that loses no decision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<Vec<WorstDecision>>,
    pub runtime_ms: f64,
    pub truncated: bool,
    pub metrics: PreemptionMetrics,
    pub events: Vec<PreemptionEvent>,
}

/// One decision of a plan against the per-event optimum on the state the planner faced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstDecision {
    /// 1-based position of the preemptor in the `[[preempt]]` list (`explain --event`).
    pub event: usize,
    pub preemptor: String,
    /// The planner's server, and the optimum's.
    pub server: Option<String>,
    pub optimum_server: Option<String>,
    /// The decision's cost minus the optimum's.
    pub excess: f64,
    /// The cost term with the largest positive difference.
    pub deciding_term: Option<&'static str>,
}

/// The `plan` output of a preemption workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionPlan {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: Option<u64>,
    pub planners: Vec<PreemptionPlannerReport>,
    /// Non-fatal remarks (e.g. a preemptor no server type can hold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
