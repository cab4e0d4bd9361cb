//! The independent plan checker. It replays a plan's events on the initial state (in the order
//! they are enacted: list order, or highest priority first for a joint plan) with its own
//! bookkeeping (names and id sets, not the planners' state or allocator) and checks every rule
//! of DESIGN §5: victims exist, are preemptible, have strictly lower priority and are evicted
//! once; the preemptor's GPUs and cores are free after eviction and on one server; level, hit
//! and admission match the placement; costs, metrics and the objective recompute.

use std::collections::{BTreeMap, BTreeSet};

use super::devices::{DeviceAsk, numa_of_core, required_level};
use crate::plan::PlannerRole;
use crate::plan::preemption::{EventOutcome, PreemptionPlannerReport, Preemptor, enactment_order};
use crate::spec::PreemptionSpec;
use crate::spec::cluster::{DEFAULT_GPU_KIND, TopologyPolicySpec};
use crate::spec::eligibility::PreemptionPolicy;
use crate::spec::preemption::{Admission, TopologyQos, TopologyScore};
use crate::topology::budgets::disruptions_allowed;
use crate::topology::eligibility::Eligibility;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, Level, ServerType};

/// Where and why a plan was rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Where the plan broke a rule: the preemptor's name, or `plan` / `metrics` for whole-plan
    /// checks.
    pub event: String,
    /// The rule broken, with the values found.
    pub reason: String,
}

struct PodRecord {
    server: String,
    gpus: BTreeSet<u32>,
    cores: BTreeSet<u32>,
    priority: i64,
    preemptible: bool,
    /// The PodDisruptionBudgets covering it, by index.
    budgets: Vec<usize>,
}

const EPS: f64 = 1e-6;

fn reject(event: &str, reason: String) -> Rejection {
    Rejection {
        event: event.to_string(),
        reason,
    }
}

fn level_of(t: &ServerType, gpus: &BTreeSet<u32>, cores: &BTreeSet<u32>) -> Level {
    let numas: BTreeSet<usize> = gpus
        .iter()
        .map(|&g| t.gpu_numa[g as usize])
        .chain(cores.iter().map(|&c| numa_of_core(t, c)))
        .collect();
    let sockets: BTreeSet<usize> = numas.iter().map(|n| n / t.numa_per_socket).collect();
    if numas.len() <= 1 {
        Level::Numa
    } else if sockets.len() <= 1 {
        Level::Socket
    } else {
        Level::CrossSocket
    }
}

fn score(spec: &PreemptionSpec, t: &ServerType, level: Level) -> f64 {
    match spec.flextopo.topology_score {
        TopologyScore::Scores(s) => match level {
            Level::Numa => s.numa,
            Level::Socket => s.socket,
            Level::CrossSocket => s.cross_socket,
        },
        TopologyScore::Named(_) => {
            let p = &t.penalty;
            1.0 / match level {
                Level::Numa => p.numa,
                Level::Socket => p.socket,
                Level::CrossSocket => p.cross_socket,
            }
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EPS * a.abs().max(b.abs()).max(1.0)
}

/// Replays `report` from `initial` and checks it.
pub fn verify_plan(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    report: &PreemptionPlannerReport,
) -> Result<(), Rejection> {
    if report.objective.is_none() && report.events.is_empty() {
        // A solver stopped before any plan existed: nothing to replay.
        return Ok(());
    }
    let budget_index = BudgetIndex::new(spec);
    let mut pods: BTreeMap<String, PodRecord> = initial
        .pods()
        .map(|(_, p)| {
            (
                p.name.clone(),
                PodRecord {
                    server: cluster.server(p.server).name.clone(),
                    gpus: p.gpus.iter().map(|g| g as u32).collect(),
                    cores: p.cores.iter().map(|c| c as u32).collect(),
                    priority: p.priority,
                    preemptible: p.preemptible,
                    budgets: budget_index.of(
                        spec.workload.get(p.workload).map(|w| w.name.as_str()),
                        &p.name,
                    ),
                },
            )
        })
        .collect();
    // What each budget allows, from the pods it covers at the start.
    let mut budget_left: Vec<i64> = spec
        .disruption_budget
        .iter()
        .enumerate()
        .map(|(b, budget)| {
            let covered = pods.values().filter(|r| r.budgets.contains(&b)).count();
            disruptions_allowed(budget, covered as i64)
        })
        .collect();
    // The pods of each server by name, so that checking a placement reads its server's pods,
    // not every pod of the cluster (a pass per event grew with pods × preemptors).
    let mut on_server: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (pod, rec) in &pods {
        on_server
            .entry(rec.server.clone())
            .or_default()
            .insert(pod.clone());
    }
    let prios: Vec<i64> = spec.workload.iter().map(|w| w.priority).collect();
    let p_lo = prios.iter().copied().min().unwrap_or(0);
    let p_hi = prios.iter().copied().max().unwrap_or(0);
    let w = &spec.objective;
    if report.events.len() != preemptors.len() {
        return Err(reject(
            "plan",
            format!(
                "{} events for {} preemptors",
                report.events.len(),
                preemptors.len()
            ),
        ));
    }
    let mut evicted: BTreeSet<String> = BTreeSet::new();
    let (mut placed, mut hits, mut victims_total, mut wasted) = (0u64, 0u64, 0u64, 0u64);
    let mut objective = 0.0;
    let mut victim_prio_sum = 0i64;
    // Per QoS class (guaranteed, best-effort): preemptors, hits, placed pods and their
    // summed slowdown.
    let mut classes = [ClassTally::default(); 2];
    // A joint plan is enacted highest priority first (`enactment_order`); its events are
    // still reported in list order.
    let joint = report.role == PlannerRole::BatchReference;
    for i in enactment_order(preemptors, joint) {
        let (e, p) = (&report.events[i], &preemptors[i]);
        let class = match p.qos {
            TopologyQos::Guaranteed => Some(0),
            TopologyQos::BestEffort => Some(1),
            TopologyQos::None => None,
        };
        if let Some(i) = class {
            classes[i].preemptors += 1;
        }
        let name = e.preemptor.as_str();
        if name != p.name {
            return Err(reject(
                name,
                format!("event order differs: expected {}", p.name),
            ));
        }
        let mut cost = 0.0;
        let never = spec
            .workload
            .get(p.workload)
            .is_some_and(|c| c.preemption_policy == PreemptionPolicy::Never);
        if never && !e.victims.is_empty() {
            return Err(reject(
                name,
                "evicts, but its class's preemption_policy is `never`".into(),
            ));
        }
        // The scheduler nominates only a node its filter lets the pod onto, placed or not.
        if let Some(node) = &e.node
            && let Some(server) = cluster.server_id(node)
            && let Some(refusal) = Eligibility::why(cluster, spec, p.workload, server)
        {
            return Err(reject(
                name,
                format!("chose {node}, which refuses it: {refusal}"),
            ));
        }
        for v in &e.victims {
            if !evicted.insert(v.clone()) {
                return Err(reject(name, format!("victim {v} is evicted twice")));
            }
            let Some(rec) = pods.remove(v) else {
                return Err(reject(name, format!("victim {v} is not running")));
            };
            if let Some(names) = on_server.get_mut(&rec.server) {
                names.remove(v);
            }
            if !rec.preemptible {
                return Err(reject(name, format!("victim {v} is not preemptible")));
            }
            for &b in &rec.budgets {
                if spec.planners.respect_pdb && budget_left[b] <= 0 {
                    return Err(reject(
                        name,
                        format!(
                            "victim {v} is covered by PodDisruptionBudget {}, which allows no more evictions (respect_pdb)",
                            spec.disruption_budget[b].name
                        ),
                    ));
                }
                budget_left[b] -= 1;
            }
            if rec.priority >= p.priority {
                return Err(reject(
                    name,
                    format!(
                        "victim {v} has priority {} ≥ the preemptor's {}",
                        rec.priority, p.priority
                    ),
                ));
            }
            if e.node.as_deref() != Some(rec.server.as_str()) {
                return Err(reject(
                    name,
                    format!(
                        "victim {v} runs on {}, not on the chosen server",
                        rec.server
                    ),
                ));
            }
            cost += w.per_victim
                + w.victim_priority * (rec.priority - p_lo) as f64 / (p_hi - p_lo + 1) as f64;
            victim_prio_sum += rec.priority;
        }
        victims_total += e.victims.len() as u64;
        if e.placed {
            let Some(node) = &e.node else {
                return Err(reject(name, "placed without a server".into()));
            };
            let Some(server) = cluster.server_id(node) else {
                return Err(reject(name, format!("unknown server {node}")));
            };
            let t = cluster.type_of(server);
            let gpus: BTreeSet<u32> = e.gpus.iter().copied().collect();
            let cores: BTreeSet<u32> = e.cores.iter().copied().collect();
            if gpus.len() != e.gpus.len() || cores.len() != e.cores.len() {
                return Err(reject(name, "a GPU or core is listed twice".into()));
            }
            if gpus.len() as u32 != p.request.gpus || cores.len() as u32 != p.request.cores {
                return Err(reject(
                    name,
                    format!(
                        "placed {} GPUs and {} cores, requested {} and {}",
                        gpus.len(),
                        cores.len(),
                        p.request.gpus,
                        p.request.cores
                    ),
                ));
            }
            if gpus.iter().any(|&g| g as usize >= t.gpu_count())
                || cores.iter().any(|&c| c as usize >= t.core_count())
            {
                return Err(reject(name, format!("an id lies outside {node}")));
            }
            let holder = on_server.get(node).into_iter().flatten().find(|pod| {
                pods.get(*pod)
                    .is_some_and(|r| !r.gpus.is_disjoint(&gpus) || !r.cores.is_disjoint(&cores))
            });
            if let Some(holder) = holder {
                return Err(reject(
                    name,
                    format!("its GPUs or cores are still held by {holder}"),
                ));
            }
            let level = level_of(t, &gpus, &cores);
            if e.level != Some(level) {
                return Err(reject(
                    name,
                    format!("reported level {:?}, the placement is {level}", e.level),
                ));
            }
            let asked_by = spec.workload.get(p.workload);
            let ask = DeviceAsk {
                kind: asked_by.map_or(DEFAULT_GPU_KIND, |c| c.gpu_kind()),
                alignment: asked_by.and_then(|c| c.device_alignment),
            };
            if let Some(why) = ask.broken_by(cluster, t, &gpus, &cores) {
                return Err(reject(name, why));
            }
            let required = required_level(cluster, t, &ask, (p.request.gpus, p.request.cores));
            if e.required_level != required {
                return Err(reject(
                    name,
                    format!(
                        "reported required level {:?}, expected {required:?}",
                        e.required_level
                    ),
                ));
            }
            let hit = required.is_some_and(|r| level <= r);
            if e.hit != hit {
                return Err(reject(
                    name,
                    format!("reported hit {}, expected {hit}", e.hit),
                ));
            }
            // Below its required level a guaranteed pod is refused by the kubelet; only
            // `bind` admission, or a node whose Topology Manager policy admits every pod
            // (`none`, `best-effort`), places it, as a `placed-miss`.
            let lenient = matches!(
                t.topology_policy,
                Some(TopologyPolicySpec::None | TopologyPolicySpec::BestEffort)
            );
            let expected = match (
                p.qos == TopologyQos::Guaranteed && !hit,
                spec.simulation.admission,
            ) {
                (false, _) => EventOutcome::Placed,
                (true, Admission::Bind) => EventOutcome::PlacedMiss,
                (true, Admission::Kubelet) if lenient => EventOutcome::PlacedMiss,
                (true, Admission::Kubelet) => {
                    return Err(reject(
                        name,
                        format!("guaranteed pod placed at {level}, below its required level"),
                    ));
                }
            };
            if e.outcome != expected {
                return Err(reject(
                    name,
                    format!(
                        "placed at {level}: the outcome must be {}, not {}",
                        expected.as_str(),
                        e.outcome.as_str()
                    ),
                ));
            }
            cost += w.topology * (1.0 - score(spec, t, level));
            on_server
                .entry(node.clone())
                .or_default()
                .insert(name.to_string());
            pods.insert(
                name.to_string(),
                PodRecord {
                    server: node.clone(),
                    gpus,
                    cores,
                    priority: p.priority,
                    preemptible: false,
                    budgets: Vec::new(),
                },
            );
            placed += 1;
            hits += u64::from(hit);
            if let Some(i) = class {
                let penalty = match level {
                    Level::Numa => t.penalty.numa,
                    Level::Socket => t.penalty.socket,
                    Level::CrossSocket => t.penalty.cross_socket,
                };
                classes[i].hits += u64::from(hit);
                classes[i].placed += 1;
                classes[i].slowdown_sum += penalty;
            }
        } else {
            if matches!(e.outcome, EventOutcome::Placed | EventOutcome::PlacedMiss) {
                return Err(reject(
                    name,
                    format!("unplaced, but the outcome is {}", e.outcome.as_str()),
                ));
            }
            if !e.gpus.is_empty() || !e.cores.is_empty() || e.hit {
                return Err(reject(
                    name,
                    "unplaced, but it holds resources or a hit".into(),
                ));
            }
            if e.node.is_none() && !e.victims.is_empty() {
                return Err(reject(name, "victims without a server".into()));
            }
            cost += w.unplaced;
            wasted += e.victims.len() as u64;
        }
        if !close(cost, e.cost) {
            return Err(reject(
                name,
                format!("reported cost {}, recomputed {cost}", e.cost),
            ));
        }
        objective += cost;
    }
    let m = &report.metrics;
    let violated = budget_left.iter().filter(|&&left| left < 0).count() as u64;
    let checks: [(&str, bool); 8] = [
        ("pdb_violations", m.pdb_violations == violated),
        ("placed", m.placed == placed),
        ("unplaced", m.unplaced == preemptors.len() as u64 - placed),
        ("hits", m.hits == hits),
        ("victims", m.victims == victims_total),
        ("wasted_evictions", m.wasted_evictions == wasted),
        (
            "victim_priority_sum",
            m.victim_priority_sum == victim_prio_sum,
        ),
        (
            "objective",
            report.objective.is_some_and(|o| close(o, objective)),
        ),
    ];
    if let Some((metric, _)) = checks.iter().find(|(_, ok)| !ok) {
        return Err(reject("metrics", format!("`{metric}` does not recompute")));
    }
    let [g, be] = classes;
    let per_class: [(&str, Option<f64>, Option<f64>); 4] = [
        ("hit_rate_guaranteed", m.hit_rate_guaranteed, g.hit_rate()),
        (
            "hit_rate_best_effort",
            m.hit_rate_best_effort,
            be.hit_rate(),
        ),
        ("slowdown_guaranteed", m.slowdown_guaranteed, g.slowdown()),
        (
            "slowdown_best_effort",
            m.slowdown_best_effort,
            be.slowdown(),
        ),
    ];
    for (metric, reported, recomputed) in per_class {
        let same = match (reported, recomputed) {
            (Some(a), Some(b)) => close(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            return Err(reject("metrics", format!("`{metric}` does not recompute")));
        }
    }
    Ok(())
}

/// Which PodDisruptionBudgets name each pod and each class, read from the spec.
struct BudgetIndex<'s> {
    by_pod: BTreeMap<&'s str, BTreeSet<usize>>,
    by_class: BTreeMap<&'s str, BTreeSet<usize>>,
}

impl<'s> BudgetIndex<'s> {
    fn new(spec: &'s PreemptionSpec) -> Self {
        let mut index = BudgetIndex {
            by_pod: BTreeMap::new(),
            by_class: BTreeMap::new(),
        };
        for (i, b) in spec.disruption_budget.iter().enumerate() {
            for pod in &b.pods {
                index.by_pod.entry(pod).or_default().insert(i);
            }
            for class in &b.workloads {
                index.by_class.entry(class).or_default().insert(i);
            }
        }
        index
    }

    /// The budgets covering a pod of class `class` named `name`, ascending.
    fn of(&self, class: Option<&str>, name: &str) -> Vec<usize> {
        let mut out: BTreeSet<usize> = self.by_pod.get(name).cloned().unwrap_or_default();
        if let Some(set) = class.and_then(|c| self.by_class.get(c)) {
            out.extend(set);
        }
        out.into_iter().collect()
    }
}

/// The events of one QoS class, for its metrics.
#[derive(Debug, Clone, Copy, Default)]
struct ClassTally {
    preemptors: u64,
    hits: u64,
    placed: u64,
    slowdown_sum: f64,
}

impl ClassTally {
    fn hit_rate(&self) -> Option<f64> {
        (self.preemptors > 0).then(|| self.hits as f64 / self.preemptors as f64)
    }

    fn slowdown(&self) -> Option<f64> {
        (self.placed > 0).then(|| self.slowdown_sum / self.placed as f64)
    }
}
