//! Applying one gang decision to the state: evict the victims, place the pods, judge the
//! gang (whole and inside one domain of its required level, or partial, split or refused)
//! and price it.

use super::decision::{GangDecision, PodPlacement};
use super::request::Gang;
use crate::plan::error::PlanningError;
use crate::plan::preemption::{EventOutcome, GangEvent, GangPodPlacement, PreemptionEvent};
use crate::preempt::apply::Applied;
use crate::preempt::planner::AppliedDecision;
use crate::preempt::problem::Problem;
use crate::spec::preemption::TopologyQos;
use crate::topology::state::{ClusterState, Pod};
use crate::topology::{FabricLevel, Level, ServerId};

/// An applied gang decision: the event, and what metrics need of the gang besides.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedGang {
    /// The event as every preemption event is measured.
    pub applied: Applied,
    /// The gang's required level.
    pub required: FabricLevel,
    /// Whether the gang was placed whole inside one domain of its required level.
    pub whole: bool,
    /// The canonical cost of its victims alone.
    pub victim_cost: f64,
}

/// Whether each domain of the gang's slice level holds whole slices of its pods (`servers`:
/// one entry per placed pod), so that every slice can lie inside one of them.
pub fn slices_hold(fabric: &crate::topology::Fabric, gang: &Gang, servers: &[ServerId]) -> bool {
    let Some((size, level)) = gang.slice else {
        return true;
    };
    let mut per_domain: std::collections::BTreeMap<u32, u32> = Default::default();
    for s in servers {
        *per_domain.entry(fabric.domain_of(level, *s)).or_default() += 1;
    }
    per_domain.values().all(|n| n.is_multiple_of(size))
}

/// The pods of a gang as they were placed, with what its event and metrics need of them.
struct Placed {
    placements: Vec<GangPodPlacement>,
    servers: Vec<ServerId>,
    all_hit: bool,
    worst: Option<Level>,
    placement_cost: f64,
    slowdowns: Vec<f64>,
}

/// Adds each of `pods` to `state` (a pod of this plan is never a victim later in it), each
/// checked for admission at its level.
fn place_pods(
    problem: &Problem<'_>,
    state: &mut ClusterState,
    gang: &Gang,
    pods: &[PodPlacement],
) -> Result<Placed, PlanningError> {
    let fail = |e: String| PlanningError::Internal(format!("{}: {e}", gang.name));
    let cluster = problem.cluster;
    let mut placements = Vec::new();
    let mut servers: Vec<ServerId> = Vec::new();
    let mut all_hit = true;
    let mut worst: Option<Level> = None;
    let mut placement_cost = 0.0;
    let mut slowdowns = Vec::new();
    for (k, p) in pods.iter().enumerate() {
        let pod = gang.pod(k as u32);
        let t = cluster.type_of(p.server);
        let level = t.level_of(p.gpus, p.cores);
        if !problem.admits(p.server, &pod, level) {
            return Err(fail(format!(
                "pod {k} on {} at {} is not admitted there",
                cluster.server(p.server).name,
                level.as_str()
            )));
        }
        state
            .add(
                cluster,
                Pod {
                    name: pod.name.clone(),
                    workload: gang.workload,
                    priority: gang.priority,
                    // Pods placed by this plan are never victims of later preemptors in it.
                    preemptible: false,
                    server: p.server,
                    gpus: p.gpus,
                    cores: p.cores,
                    start_time_s: None,
                    budgets: Vec::new(),
                },
            )
            .map_err(|e| fail(e.to_string()))?;
        all_hit &= t.required_level(gang.request).is_some_and(|r| level <= r);
        worst = worst.max(Some(level));
        placement_cost += problem.cost.placement_cost(t, level);
        slowdowns.push(level.penalty(&t.penalty));
        servers.push(p.server);
        placements.push(GangPodPlacement {
            pod: pod.name,
            node: cluster.server(p.server).name.clone(),
            gpus: p.gpus.to_vec(),
            cores: p.cores.to_vec(),
            level,
        });
    }
    Ok(Placed {
        placements,
        servers,
        all_hit,
        worst,
        placement_cost,
        slowdowns,
    })
}

/// Applies `d` for `gang` to `state`.
pub fn apply_gang(
    problem: &Problem<'_>,
    state: &mut ClusterState,
    gang: &Gang,
    d: &GangDecision,
) -> Result<AppliedGang, PlanningError> {
    let fail = |e: String| PlanningError::Internal(format!("{}: {e}", gang.name));
    let mut victims = Vec::with_capacity(d.victims.len());
    for id in &d.victims {
        victims.push(state.evict(*id).map_err(|e| fail(e.to_string()))?);
    }
    let cluster = problem.cluster;
    let fabric = &cluster.fabric;
    let placed_pods = if d.refused { &[][..] } else { &d.pods[..] };
    let Placed {
        placements,
        servers,
        all_hit,
        worst,
        placement_cost,
        slowdowns,
    } = place_pods(problem, state, gang, placed_pods)?;
    let spread = (!servers.is_empty()).then(|| fabric.spread_level(&servers));
    let all_placed = placements.len() as u32 == gang.pods;
    let whole = all_placed
        && spread.is_some_and(|s| s >= gang.required)
        && slices_hold(fabric, gang, &servers);
    let outcome = if d.refused {
        EventOutcome::Refused
    } else if placements.is_empty() {
        EventOutcome::NoCandidate
    } else if !all_placed {
        EventOutcome::Partial
    } else if !whole {
        EventOutcome::Split
    } else if gang.qos == TopologyQos::Guaranteed && !all_hit {
        EventOutcome::PlacedMiss
    } else {
        EventOutcome::Placed
    };
    let victim_prios: Vec<i64> = victims.iter().map(|v| v.priority).collect();
    let victim_cost: f64 = victim_prios
        .iter()
        .map(|&p| problem.cost.victim_cost(p))
        .sum();
    let cost = victim_cost
        + match (whole, spread) {
            (true, Some(s)) => {
                placement_cost + problem.cost.spread_cost(gang.pods, fabric.penalty_of(s))
            }
            _ => gang.pods as f64 * problem.cost.weights.unplaced,
        };
    let domain = spread.and_then(|s| {
        let first = *servers.first()?;
        Some(
            fabric.domains_at(s)[fabric.domain_of(s, first) as usize]
                .name
                .clone(),
        )
    });
    let level_name = |l: FabricLevel| fabric.level_name(l).to_string();
    let event = PreemptionEvent {
        preemptor: gang.name.clone(),
        workload: problem.spec.workload[gang.workload].name.clone(),
        topology_qos: gang.qos,
        node: servers.first().map(|s| cluster.server(*s).name.clone()),
        victims: victims.iter().map(|v| v.name.clone()).collect(),
        gpus: Vec::new(),
        cores: Vec::new(),
        level: if whole { worst } else { None },
        required_level: cluster
            .types
            .iter()
            .filter_map(|t| t.required_level(gang.request))
            .min(),
        placed: whole,
        outcome,
        hit: whole && all_hit,
        cost,
        subsets_evaluated: d.subsets_evaluated,
        truncated: false,
        gang: Some(GangEvent {
            pods: gang.pods,
            pods_placed: placements.len() as u32,
            required_level: level_name(gang.required),
            preferred_level: gang.preferred.map(level_name),
            slice_size: gang.slice.map(|(s, _)| s),
            slice_level: gang.slice.map(|(_, l)| level_name(l)),
            spread_level: spread.map(level_name),
            domain,
            preferred_hit: gang
                .preferred
                .map(|p| whole && spread.is_some_and(|s| s >= p)),
            placements,
        }),
    };
    let slowdown = (whole && !slowdowns.is_empty())
        .then(|| slowdowns.iter().sum::<f64>() / slowdowns.len() as f64);
    Ok(AppliedGang {
        applied: Applied {
            event,
            ids: AppliedDecision {
                server: servers.first().copied(),
                placement: None,
                victims: d.victims.clone(),
            },
            qos: gang.qos,
            victims,
            slowdown,
        },
        required: gang.required,
        whole,
        victim_cost,
    })
}
