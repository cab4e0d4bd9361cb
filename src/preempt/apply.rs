//! Applying one decision to the state: evict the victims, place the pod (the node allocator,
//! unless the planner placed it), check admission, price the event.

use super::problem::{Decision, Problem};
use crate::plan::error::PlanningError;
use crate::plan::preemption::{EventOutcome, PreemptionEvent, Preemptor};
use crate::spec::preemption::TopologyQos;
use crate::topology::state::{ClusterState, Pod};
use crate::topology::{CoreSet, GpuSet, Level, PodId, ServerId, place};

/// One decision of a sequential plan as it was applied, by ids: what a joint planner takes as
/// its warm start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppliedDecision {
    /// The server chosen (also for a refused pod, whose victims were evicted there).
    pub server: Option<ServerId>,
    /// GPUs, cores and level of the placement, when the pod was placed.
    pub placement: Option<(GpuSet, CoreSet, Level)>,
    /// Evicted pods, by their id in the initial state.
    pub victims: Vec<PodId>,
}

/// An applied decision: its event, and what measurement and warm starts need besides.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The event as reported: preemptor, server, victims, outcome and cost.
    pub event: PreemptionEvent,
    /// The decision as applied, by ids.
    pub ids: AppliedDecision,
    /// The preemptor's topology QoS.
    pub qos: TopologyQos,
    /// The evicted pods as they were before eviction.
    pub victims: Vec<Pod>,
    /// Server type penalty of the placement level, when placed.
    pub slowdown: Option<f64>,
}

/// Applies a decision: evict the victims, place the pod (node allocator unless the planner
/// placed it), check admission, price it.
pub fn apply(
    problem: &Problem<'_>,
    state: &mut ClusterState,
    p: &Preemptor,
    d: &Decision,
) -> Result<Applied, PlanningError> {
    let mut victims = Vec::with_capacity(d.victims.len());
    for id in &d.victims {
        let pod = state
            .evict(*id)
            .map_err(|e| PlanningError::Internal(format!("{}: {e}", p.name)))?;
        victims.push(pod);
    }
    let workload = problem.spec.workload[p.workload].name.clone();
    let mut event = PreemptionEvent {
        preemptor: p.name.clone(),
        workload,
        topology_qos: p.qos,
        node: None,
        victims: victims.iter().map(|v| v.name.clone()).collect(),
        gpus: Vec::new(),
        cores: Vec::new(),
        level: None,
        required_level: problem
            .cluster
            .types
            .iter()
            .filter_map(|t| t.required_level(p.request))
            .min(),
        placed: false,
        outcome: EventOutcome::NoCandidate,
        hit: false,
        cost: 0.0,
        subsets_evaluated: d.subsets_evaluated,
        truncated: d.truncated,
        gang: None,
    };
    let mut slowdown = None;
    let mut placed_at = None;
    let mut placement_ids = None;
    if let Some(server) = d.server {
        let t = problem.cluster.type_of(server);
        event.node = Some(problem.cluster.server(server).name.clone());
        event.required_level = t.required_level(p.request);
        let a = &state.servers()[server.index()];
        let placement = match d.placement {
            _ if d.refuse => None,
            Some((g, c)) => Some((g, c, t.level_of(g, c))),
            None => place(t, a.free_gpus(), a.free_cores(), p.request)
                .map(|pl| (pl.gpus, pl.cores, pl.level)),
        };
        match placement {
            Some((g, c, level)) if problem.admits(server, p, level) => {
                let pod = Pod {
                    name: p.name.clone(),
                    workload: p.workload,
                    priority: p.priority,
                    // Pods placed by this plan are never victims of later preemptors in it.
                    preemptible: false,
                    server,
                    gpus: g,
                    cores: c,
                    start_time_s: None,
                    budgets: Vec::new(),
                };
                state
                    .add(problem.cluster, pod)
                    .map_err(|e| PlanningError::Internal(format!("{}: {e}", p.name)))?;
                event.gpus = g.to_vec();
                event.cores = c.to_vec();
                event.level = Some(level);
                event.placed = true;
                event.hit = event.required_level.is_some_and(|r| level <= r);
                event.outcome = if p.qos == TopologyQos::Guaranteed && !event.hit {
                    EventOutcome::PlacedMiss
                } else {
                    EventOutcome::Placed
                };
                slowdown = Some(level.penalty(&t.penalty));
                placed_at = Some((t, level));
                placement_ids = Some((g, c, level));
            }
            Some((_, _, level)) => {
                event.level = Some(level);
                event.outcome = EventOutcome::Refused;
            }
            None => event.outcome = EventOutcome::Refused,
        }
    }
    let prios: Vec<i64> = victims.iter().map(|v| v.priority).collect();
    event.cost = problem.cost.event_cost(placed_at, &prios);
    Ok(Applied {
        event,
        ids: AppliedDecision {
            server: d.server,
            placement: placement_ids,
            victims: d.victims.clone(),
        },
        qos: p.qos,
        victims,
        slowdown,
    })
}
