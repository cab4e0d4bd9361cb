//! Plan data of a preemption workload: the preemptors, what happened to each (events and
//! outcomes), and each planner's measured plan (DESIGN §5.3, §7).

use serde::Serialize;
use std::collections::BTreeMap;

use super::{PlanStatus, PlannerRole};
use crate::spec::preemption::TopologyQos;
use crate::topology::{Level, Request};

/// One pod of the `[[preempt]]` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemptor {
    /// Instance name of the pod, unique in the spec.
    pub name: String,
    /// Index of its workload class in the spec.
    pub workload: usize,
    /// Priority (a Kubernetes PriorityClass value; higher is more important, may be negative).
    pub priority: i64,
    /// GPUs and cores it asks for on one server.
    pub request: Request,
    /// Topology QoS: `guaranteed` must land at its required level, `best-effort` anywhere.
    pub qos: TopologyQos,
}

/// The order a plan's events are enacted in: list order for a plan decided one preemptor at a
/// time; for a plan decided at once (`joint`), highest priority first and list order among
/// equal priorities, as the scheduler's queue pops pending pods. In that order every pod a
/// joint plan evicts can be evicted by a preemptor enacted no later than any pod that takes
/// its GPUs or cores (an eviction needs a strictly higher priority), so a joint plan whose
/// victims have an eligible preemptor on their server always replays; and every plan valid in
/// list order is valid in this one too, so the joint optimum bounds every sequential plan.
pub fn enactment_order(preemptors: &[Preemptor], joint: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..preemptors.len()).collect();
    if joint {
        order.sort_by_key(|&i| (std::cmp::Reverse(preemptors[i].priority), i));
    }
    order
}

/// What happened to one preemptor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionEvent {
    /// Instance name of the preemptor.
    pub preemptor: String,
    /// Name of its workload class.
    pub workload: String,
    /// Its topology QoS.
    pub topology_qos: TopologyQos,
    /// Server chosen (also for a refused pod, whose victims were evicted there).
    pub node: Option<String>,
    /// Instance names of the pods evicted for it, in eviction order.
    pub victims: Vec<String>,
    /// GPU indices allocated on `node` (empty when not placed).
    pub gpus: Vec<u32>,
    /// Core indices allocated on `node` (empty when not placed).
    pub cores: Vec<u32>,
    /// Topology level of the placement (`numa`, `socket`, `cross-socket`); `null` when not placed.
    pub level: Option<Level>,
    /// The level the pod needs on the chosen server (the best its server type can offer).
    pub required_level: Option<Level>,
    /// Whether the preemptor holds a placement after the event.
    pub placed: bool,
    /// Placed, placed below its level, refused by admission, or no candidate at all.
    pub outcome: EventOutcome,
    /// Placed at or better than its required level.
    pub hit: bool,
    /// The event's canonical cost (DESIGN §5.4); a plan's objective sums them.
    pub cost: f64,
    /// Victim subsets (or dry runs) the planner evaluated: a deterministic measure of search
    /// effort.
    pub subsets_evaluated: u64,
    /// The enumeration stopped at `max_subset_evaluations` (omitted when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The gang this event placed (DESIGN §12.3); absent for a single pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<GangEvent>,
}

/// What happened to a gang: its asked levels, and where each pod landed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GangEvent {
    /// Pods in the gang.
    pub pods: u32,
    /// Pods placed (all or none for a gang-aware planner).
    pub pods_placed: u32,
    /// The level one domain of which must hold every pod.
    pub required_level: String,
    /// The level the gang would rather fit in, when it names one.
    pub preferred_level: Option<String>,
    /// Pods per slice, when the gang is sliced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_size: Option<u32>,
    /// The level one domain of which holds each slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_level: Option<String>,
    /// The narrowest level one domain of which holds every placed pod.
    pub spread_level: Option<String>,
    /// That domain.
    pub domain: Option<String>,
    /// Whether the placed pods lie inside the preferred level (null without one).
    pub preferred_hit: Option<bool>,
    /// Every placed pod, in pod order.
    pub placements: Vec<GangPodPlacement>,
}

/// Where one pod of a gang landed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GangPodPlacement {
    /// The pod's name (`<gang>/<k>`).
    pub pod: String,
    /// Its server.
    pub node: String,
    /// GPU indices on that server.
    pub gpus: Vec<u32>,
    /// Core indices on that server.
    pub cores: Vec<u32>,
    /// The level of its GPUs and cores on the server.
    pub level: Level,
}

/// How a preemptor's event ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventOutcome {
    /// Placed at its required level (or, best-effort, anywhere).
    Placed,
    /// A guaranteed pod placed below its required level: only `admission = "bind"` lets it
    /// through (no node agent refuses it); it counts as a miss.
    PlacedMiss,
    /// A guaranteed pod below its required level: admission failed (its victims are gone).
    Refused,
    /// No candidate (server and victim set) could hold the preemptor: it is not placed.
    NoCandidate,
    /// A gang of which some pods but not all were placed (gang-blind preemption): it cannot
    /// run, its placed pods hold their resources.
    Partial,
    /// A gang whose pods were all placed, but not inside one domain of its required level
    /// (gang-blind preemption): it cannot run as asked.
    Split,
}

impl EventOutcome {
    /// The outcome as JSON, CSV and tables write it (kebab-case).
    pub fn as_str(self) -> &'static str {
        match self {
            EventOutcome::Placed => "placed",
            EventOutcome::PlacedMiss => "placed-miss",
            EventOutcome::Refused => "refused",
            EventOutcome::NoCandidate => "no-candidate",
            EventOutcome::Partial => "partial",
            EventOutcome::Split => "split",
        }
    }
}

/// Metrics of one planner's preemption plan (DESIGN §5.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionMetrics {
    /// Preemptors planned (the `[[preempt]]` list).
    pub preemptions: u64,
    /// Preemptors that hold a placement after their event.
    pub placed: u64,
    /// Preemptors not placed (refused or without a candidate): `preemptions − placed`.
    pub unplaced: u64,
    /// Preemptors placed at or better than their required level.
    pub hits: u64,
    /// `hits / preemptions`; null with no preemptor.
    pub hit_rate: Option<f64>,
    /// Over guaranteed preemptors; null when there are none.
    pub hit_rate_guaranteed: Option<f64>,
    /// Over best-effort preemptors; null when there are none.
    pub hit_rate_best_effort: Option<f64>,
    /// Pods evicted over the plan.
    pub victims: u64,
    /// Σ priority of the evicted pods.
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
    /// The plan's canonical objective (sum of its events' costs); `null` for a planner without a
    /// plan.
    pub objective: Option<f64>,
    /// (objective − reference) / max(1, |reference|) against `ilp-batch`'s objective or best bound.
    pub gap: Option<f64>,
    /// Σ per event (cost − per-event optimum on the same state) / max(1, Σ optimum); ≥ 0, 0 for
    /// `ilp`.
    pub decision_gap: Option<f64>,
    /// Wall time of the planner, in milliseconds (redacted in snapshots).
    pub runtime_ms: f64,
    /// Victim subsets (or dry runs) evaluated over all events.
    pub subsets_evaluated: u64,
    /// PodDisruptionBudgets the plan violates: it evicts more of their pods than they allowed
    /// when it started (0 under `respect_pdb`).
    pub pdb_violations: u64,
    /// What a plan of gangs did to them (DESIGN §12.3); absent without gangs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gangs: Option<GangMetrics>,
}

/// Metrics of a plan of gangs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GangMetrics {
    /// Gangs planned.
    pub gangs: u64,
    /// Gangs placed whole inside one domain of their required level.
    pub placed: u64,
    /// Per required level: the share of its gangs placed whole there with every pod at its
    /// intra-server level (hits / gangs).
    pub hit_rate_by_level: BTreeMap<String, f64>,
    /// Gangs of which some pods but not all were placed (0 for a gang-aware planner).
    pub partial: u64,
    /// Gangs placed whole but across domains of their required level (0 for a gang-aware
    /// planner).
    pub split: u64,
    /// Gangs placed inside their preferred level, of those that name one.
    pub preferred_hits: u64,
    /// Mean victims per gang.
    pub victims_per_gang: Option<f64>,
    /// Σ over gangs of the victims' canonical cost beyond the per-event optimum's victims on
    /// the same state (only when `ilp` runs; 0 for `ilp`).
    pub over_eviction: Option<f64>,
    /// After the plan: per named level (and `host`), the most GPUs free in one of its
    /// domains, what the next gang can have without preemption.
    pub largest_free_domain: BTreeMap<String, u32>,
    /// After the plan: free GPUs of every domain of each named level.
    pub free_gpus_per_domain: BTreeMap<String, BTreeMap<String, u32>>,
}

/// One planner's preemption plan, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionPlannerReport {
    /// The planner's registry name (`k8s-default`, `flextopo-imp`, …).
    pub name: String,
    /// What the plan is used for (not in the JSON contract: the name says it).
    #[serde(skip)]
    pub role: PlannerRole,
    /// `heuristic`, or a solver's status (`optimal`, `time_limit`, …).
    pub status: PlanStatus,
    /// The plan's canonical objective; `null` when the planner has no plan.
    pub objective: Option<f64>,
    /// (objective − reference) / max(1, |reference|) against `ilp-batch`.
    pub gap: Option<f64>,
    /// Whether the reference is `ilp-batch`'s best bound (stopped at its time limit), so `gap` is
    /// an upper bound.
    pub gap_is_bound: bool,
    /// The solver's best proven bound on the objective (solver planners only).
    pub bound: Option<f64>,
    /// The per-event gap: the decisions' excess over the per-event optimum on the same state,
    /// relative to the summed optimum.
    pub decision_gap: Option<f64>,
    /// The decisions with the largest excess over the per-event optimum on the state the
    /// planner faced, largest first (`plan --worst K`; absent without it, empty for a planner
    /// that loses no decision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<Vec<WorstDecision>>,
    /// Wall time of the planner, in milliseconds (redacted in snapshots).
    pub runtime_ms: f64,
    /// Whether any event's enumeration stopped at `max_subset_evaluations`.
    pub truncated: bool,
    /// The plan's metrics (DESIGN §5.3).
    pub metrics: PreemptionMetrics,
    /// One event per preemptor, in `[[preempt]]` order.
    pub events: Vec<PreemptionEvent>,
}

/// One decision of a plan against the per-event optimum on the state the planner faced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstDecision {
    /// 1-based position of the preemptor in the `[[preempt]]` list (`explain --event`).
    pub event: usize,
    /// Instance name of the preemptor.
    pub preemptor: String,
    /// The planner's server, and the optimum's.
    pub server: Option<String>,
    /// See `server`.
    pub optimum_server: Option<String>,
    /// The decision's cost minus the optimum's.
    pub excess: f64,
    /// The cost term with the largest positive difference.
    pub deciding_term: Option<&'static str>,
}

/// The `plan` output of a preemption workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionPlan {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"preemption"`: tells this plan apart from a co-location plan.
    pub kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of the generated churn fill, when the spec has one (`--seed`, else `[fill].seed`).
    pub seed: Option<u64>,
    /// One report per planner, in the order asked.
    pub planners: Vec<PreemptionPlannerReport>,
    /// Non-fatal remarks (e.g. a preemptor no server type can hold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
