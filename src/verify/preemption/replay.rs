//! The replay: each event enacted in order on the checker's own records, every rule checked
//! as it goes, then the reported metrics recomputed from what the replay tallied.

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::{
    BudgetIndex, ClassTally, PodRecord, Rejection, close, level_of, reject, score,
};
use crate::plan::PlannerRole;
use crate::plan::preemption::{
    EventOutcome, PreemptionEvent, PreemptionPlannerReport, Preemptor, enactment_order,
};
use crate::spec::PreemptionSpec;
use crate::spec::cluster::{DEFAULT_GPU_KIND, TopologyPolicySpec};
use crate::spec::eligibility::PreemptionPolicy;
use crate::spec::preemption::{Admission, TopologyQos};
use crate::topology::budgets::disruptions_allowed;
use crate::topology::eligibility::Eligibility;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, Level, ServerType};
use crate::verify::devices::{DeviceAsk, required_level};

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
    let mut replay = Replay::new(cluster, spec, initial);
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
    // A joint plan is enacted highest priority first (`enactment_order`); its events are
    // still reported in list order.
    let joint = report.role == PlannerRole::BatchReference;
    for i in enactment_order(preemptors, joint) {
        replay.event(&report.events[i], &preemptors[i])?;
    }
    replay.check_metrics(report, preemptors.len())
}

/// The checker's own bookkeeping while it replays a plan: which pods run where, what each
/// budget still allows, and the tallies the reported metrics must match.
struct Replay<'a> {
    cluster: &'a Cluster,
    spec: &'a PreemptionSpec,
    pods: BTreeMap<String, PodRecord>,
    /// The pods of each server by name, so that checking a placement reads its server's pods,
    /// not every pod of the cluster (a pass per event grew with pods × preemptors).
    on_server: BTreeMap<String, BTreeSet<String>>,
    /// What each budget still allows.
    budget_left: Vec<i64>,
    evicted: BTreeSet<String>,
    /// The lowest and highest priority among the spec's workloads.
    priorities: (i64, i64),
    placed: u64,
    hits: u64,
    victims: u64,
    wasted: u64,
    objective: f64,
    victim_priority_sum: i64,
    /// Per QoS class (guaranteed, best-effort): preemptors, hits, placed pods and their
    /// summed slowdown.
    classes: [ClassTally; 2],
}

impl<'a> Replay<'a> {
    /// The initial state as the checker records it: pods by name with their budgets.
    fn new(cluster: &'a Cluster, spec: &'a PreemptionSpec, initial: &ClusterState) -> Self {
        let budget_index = BudgetIndex::new(spec);
        let pods: BTreeMap<String, PodRecord> = initial
            .pods()
            .map(|(_, p)| {
                let budgets = budget_index.of(
                    spec.workload.get(p.workload).map(|w| w.name.as_str()),
                    &p.name,
                );
                (p.name.clone(), PodRecord::of(cluster, p, budgets))
            })
            .collect();
        // What each budget allows, from the pods it covers at the start.
        let budget_left: Vec<i64> = spec
            .disruption_budget
            .iter()
            .enumerate()
            .map(|(b, budget)| {
                let covered = pods.values().filter(|r| r.budgets.contains(&b)).count();
                disruptions_allowed(budget, covered as i64)
            })
            .collect();
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
        Replay {
            cluster,
            spec,
            pods,
            on_server,
            budget_left,
            evicted: BTreeSet::new(),
            priorities: (p_lo, p_hi),
            placed: 0,
            hits: 0,
            victims: 0,
            wasted: 0,
            objective: 0.0,
            victim_priority_sum: 0,
            classes: [ClassTally::default(); 2],
        }
    }

    /// Replays one event: its preemptor, its victims, then its placement (or none), and checks
    /// its reported cost against the one recomputed.
    fn event(&mut self, e: &PreemptionEvent, p: &Preemptor) -> Result<(), Rejection> {
        let (cluster, spec) = (self.cluster, self.spec);
        let class = match p.qos {
            TopologyQos::Guaranteed => Some(0),
            TopologyQos::BestEffort => Some(1),
            TopologyQos::None => None,
        };
        if let Some(i) = class {
            self.classes[i].preemptors += 1;
        }
        let name = e.preemptor.as_str();
        if name != p.name {
            return Err(reject(
                name,
                format!("event order differs: expected {}", p.name),
            ));
        }
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
        let mut cost = self.evict(e, p)?;
        self.victims += e.victims.len() as u64;
        cost += if e.placed {
            self.place(e, p, class)?
        } else {
            self.leave_unplaced(e)?
        };
        if !close(cost, e.cost) {
            return Err(reject(
                name,
                format!("reported cost {}, recomputed {cost}", e.cost),
            ));
        }
        self.objective += cost;
        Ok(())
    }

    /// Evicts the event's victims, each checked (running, preemptible, lower priority, on
    /// the chosen server, within the budgets `respect_pdb` keeps); returns their cost.
    fn evict(&mut self, e: &PreemptionEvent, p: &Preemptor) -> Result<f64, Rejection> {
        let spec = self.spec;
        let w = &spec.objective;
        let (p_lo, p_hi) = self.priorities;
        let name = e.preemptor.as_str();
        let mut cost = 0.0;
        for v in &e.victims {
            if !self.evicted.insert(v.clone()) {
                return Err(reject(name, format!("victim {v} is evicted twice")));
            }
            let Some(rec) = self.pods.remove(v) else {
                return Err(reject(name, format!("victim {v} is not running")));
            };
            if let Some(names) = self.on_server.get_mut(&rec.server) {
                names.remove(v);
            }
            if !rec.preemptible {
                return Err(reject(name, format!("victim {v} is not preemptible")));
            }
            for &b in &rec.budgets {
                if spec.planners.respect_pdb && self.budget_left[b] <= 0 {
                    return Err(reject(
                        name,
                        format!(
                            "victim {v} is covered by PodDisruptionBudget {}, which allows no more evictions (respect_pdb)",
                            spec.disruption_budget[b].name
                        ),
                    ));
                }
                self.budget_left[b] -= 1;
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
            self.victim_priority_sum += rec.priority;
        }
        Ok(cost)
    }

    /// Places the event's preemptor once its placement passes every rule
    /// ([`Replay::placement_rules`]); returns the placement's cost.
    fn place(
        &mut self,
        e: &PreemptionEvent,
        p: &Preemptor,
        class: Option<usize>,
    ) -> Result<f64, Rejection> {
        let name = e.preemptor.as_str();
        let Some(node) = &e.node else {
            return Err(reject(name, "placed without a server".into()));
        };
        let Some(server) = self.cluster.server_id(node) else {
            return Err(reject(name, format!("unknown server {node}")));
        };
        let t = self.cluster.type_of(server);
        let gpus: BTreeSet<u32> = e.gpus.iter().copied().collect();
        let cores: BTreeSet<u32> = e.cores.iter().copied().collect();
        let (level, hit) = self.placement_rules(e, p, (node, t), &gpus, &cores)?;
        let cost = self.spec.objective.topology * (1.0 - score(self.spec, t, level));
        self.on_server
            .entry(node.clone())
            .or_default()
            .insert(name.to_string());
        self.pods.insert(
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
        self.placed += 1;
        self.hits += u64::from(hit);
        if let Some(i) = class {
            let penalty = match level {
                Level::Numa => t.penalty.numa,
                Level::Socket => t.penalty.socket,
                Level::CrossSocket => t.penalty.cross_socket,
            };
            self.classes[i].hits += u64::from(hit);
            self.classes[i].placed += 1;
            self.classes[i].slowdown_sum += penalty;
        }
        Ok(cost)
    }

    /// The rules a placement keeps: the ids requested, free and on the server; the level,
    /// required level, hit and outcome reported as the placement makes them; the device ask
    /// kept. Returns the placement's level and whether it is a hit.
    fn placement_rules(
        &self,
        e: &PreemptionEvent,
        p: &Preemptor,
        (node, t): (&str, &ServerType),
        gpus: &BTreeSet<u32>,
        cores: &BTreeSet<u32>,
    ) -> Result<(Level, bool), Rejection> {
        let (cluster, spec) = (self.cluster, self.spec);
        let name = e.preemptor.as_str();
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
        let holder = self.on_server.get(node).into_iter().flatten().find(|pod| {
            self.pods
                .get(*pod)
                .is_some_and(|r| !r.gpus.is_disjoint(gpus) || !r.cores.is_disjoint(cores))
        });
        if let Some(holder) = holder {
            return Err(reject(
                name,
                format!("its GPUs or cores are still held by {holder}"),
            ));
        }
        let level = level_of(t, gpus, cores);
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
        if let Some(why) = ask.broken_by(cluster, t, gpus, cores) {
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
        let expected = expected_outcome(spec, t, p, hit).ok_or_else(|| {
            reject(
                name,
                format!("guaranteed pod placed at {level}, below its required level"),
            )
        })?;
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
        Ok((level, hit))
    }

    /// Checks an event that places nothing: no placed outcome, no resources, no victims
    /// without a server. Returns its cost (`unplaced`); its victims were wasted.
    fn leave_unplaced(&mut self, e: &PreemptionEvent) -> Result<f64, Rejection> {
        let name = e.preemptor.as_str();
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
        self.wasted += e.victims.len() as u64;
        Ok(self.spec.objective.unplaced)
    }

    /// Checks the reported metrics and objective against the tallies of the replay.
    fn check_metrics(
        self,
        report: &PreemptionPlannerReport,
        preemptors: usize,
    ) -> Result<(), Rejection> {
        let m = &report.metrics;
        let violated = self.budget_left.iter().filter(|&&left| left < 0).count() as u64;
        let checks: [(&str, bool); 8] = [
            ("pdb_violations", m.pdb_violations == violated),
            ("placed", m.placed == self.placed),
            ("unplaced", m.unplaced == preemptors as u64 - self.placed),
            ("hits", m.hits == self.hits),
            ("victims", m.victims == self.victims),
            ("wasted_evictions", m.wasted_evictions == self.wasted),
            (
                "victim_priority_sum",
                m.victim_priority_sum == self.victim_priority_sum,
            ),
            (
                "objective",
                report.objective.is_some_and(|o| close(o, self.objective)),
            ),
        ];
        if let Some((metric, _)) = checks.iter().find(|(_, ok)| !ok) {
            return Err(reject("metrics", format!("`{metric}` does not recompute")));
        }
        let [g, be] = self.classes;
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
}

/// The outcome a placement must report: `placed`, or `placed-miss` for a guaranteed pod
/// below its required level where it is admitted; `None` where the kubelet refuses it. Only
/// `bind` admission, or a node whose Topology Manager policy admits every pod (`none`,
/// `best-effort`), places a guaranteed pod below its required level.
fn expected_outcome(
    spec: &PreemptionSpec,
    t: &ServerType,
    p: &Preemptor,
    hit: bool,
) -> Option<EventOutcome> {
    let lenient = matches!(
        t.topology_policy,
        Some(TopologyPolicySpec::None | TopologyPolicySpec::BestEffort)
    );
    match (
        p.qos == TopologyQos::Guaranteed && !hit,
        spec.simulation.admission,
    ) {
        (false, _) => Some(EventOutcome::Placed),
        (true, Admission::Bind) => Some(EventOutcome::PlacedMiss),
        (true, Admission::Kubelet) if lenient => Some(EventOutcome::PlacedMiss),
        (true, Admission::Kubelet) => None,
    }
}
