//! The checker of a plan of gangs (DESIGN §12.3), with its own records as the single-pod
//! replay keeps them: every victim running, preemptible and of lower priority, evicted once;
//! every pod's ids free, of its kind, on an eligible server and admitted at their level; a
//! gang-aware plan places each gang whole inside one domain of its required level (each slice
//! inside one domain of its slice level) or not at all; outcome, cost, metrics and objective
//! recompute.

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::{PodRecord, Rejection, close, level_of, reject, score};
use crate::plan::PlannerRole;
use crate::plan::gang::{Gang, gang_enactment_order};
use crate::plan::preemption::{EventOutcome, GangEvent, PreemptionEvent, PreemptionPlannerReport};
use crate::spec::PreemptionSpec;
use crate::spec::cluster::DEFAULT_GPU_KIND;
use crate::spec::eligibility::PreemptionPolicy;
use crate::spec::preemption::{Admission, TopologyQos};
use crate::topology::eligibility::Eligibility;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel, ServerId};
use crate::verify::devices::{DeviceAsk, required_level};

/// Checks a plan of `gangs` from `initial`; `gang_aware`: the planner must keep gangs whole.
pub fn verify_gang_plan(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    initial: &ClusterState,
    gangs: &[Gang],
    report: &PreemptionPlannerReport,
    gang_aware: bool,
) -> Result<(), Rejection> {
    if report.objective.is_none() && report.events.is_empty() {
        return Ok(());
    }
    if report.events.len() != gangs.len() {
        return Err(reject(
            "plan",
            format!("{} events for {} gangs", report.events.len(), gangs.len()),
        ));
    }
    let mut check = GangCheck {
        cluster,
        spec,
        pods: initial
            .pods()
            .map(|(_, p)| (p.name.clone(), PodRecord::of(cluster, p, Vec::new())))
            .collect(),
        evicted: BTreeSet::new(),
        gang_aware,
        placed: 0,
        hits: 0,
        victims: 0,
        wasted: 0,
        objective: 0.0,
    };
    let joint = report.role == PlannerRole::BatchReference;
    for i in gang_enactment_order(gangs, joint) {
        check.event(&report.events[i], &gangs[i])?;
    }
    let m = &report.metrics;
    let checks = [
        ("placed", m.placed == check.placed),
        ("hits", m.hits == check.hits),
        ("victims", m.victims == check.victims),
        ("wasted_evictions", m.wasted_evictions == check.wasted),
        (
            "objective",
            report.objective.is_some_and(|o| close(o, check.objective)),
        ),
    ];
    if let Some((metric, _)) = checks.iter().find(|(_, ok)| !ok) {
        return Err(reject("metrics", format!("`{metric}` does not recompute")));
    }
    if let Some(g) = &m.gangs
        && gang_aware
        && (g.partial > 0 || g.split > 0)
    {
        return Err(reject(
            "metrics",
            "a gang-aware plan reports partial or split gangs".into(),
        ));
    }
    Ok(())
}

struct GangCheck<'a> {
    cluster: &'a Cluster,
    spec: &'a PreemptionSpec,
    pods: BTreeMap<String, PodRecord>,
    evicted: BTreeSet<String>,
    gang_aware: bool,
    placed: u64,
    hits: u64,
    victims: u64,
    wasted: u64,
    objective: f64,
}

impl GangCheck<'_> {
    fn event(&mut self, e: &PreemptionEvent, gang: &Gang) -> Result<(), Rejection> {
        let name = e.preemptor.as_str();
        if name != gang.name {
            return Err(reject(
                name,
                format!("event order differs: expected {}", gang.name),
            ));
        }
        let Some(g) = &e.gang else {
            return Err(reject(name, "a gang's event has no gang record".into()));
        };
        let never = self
            .spec
            .workload
            .get(gang.workload)
            .is_some_and(|c| c.preemption_policy == PreemptionPolicy::Never);
        if never && !e.victims.is_empty() {
            return Err(reject(
                name,
                "evicts, but its class's preemption_policy is `never`".into(),
            ));
        }
        let victim_servers = self.evict(e, gang)?;
        let (servers, placement_cost, all_hit) = self.place(e, g, gang)?;
        let whole = self.judge(e, g, gang, &servers, all_hit)?;
        if self.gang_aware && !whole && !servers.is_empty() {
            return Err(reject(
                name,
                "a gang-aware planner placed part of a gang, or split it".into(),
            ));
        }
        if self.gang_aware && whole {
            let fabric = &self.cluster.fabric;
            let domain = fabric.domain_of(gang.required, servers[0]);
            if let Some((v, _)) = victim_servers
                .iter()
                .find(|(s, _)| fabric.domain_of(gang.required, *s) != domain)
            {
                return Err(reject(
                    name,
                    format!(
                        "evicts on {}, outside the domain that holds the gang",
                        self.cluster.server(*v).name
                    ),
                ));
            }
        }
        let w = &self.spec.objective;
        let (p_lo, p_hi) = priority_range(self.spec);
        let victim_cost: f64 = victim_servers
            .iter()
            .map(|(_, p)| {
                w.per_victim + w.victim_priority * (p - p_lo) as f64 / (p_hi - p_lo + 1) as f64
            })
            .sum();
        let cost = victim_cost
            + if whole {
                let spread = self.cluster.fabric.spread_level(&servers);
                let penalty = self.cluster.fabric.penalty_of(spread);
                placement_cost + gang.pods as f64 * w.topology * (1.0 - 1.0 / penalty)
            } else {
                gang.pods as f64 * w.unplaced
            };
        if !close(cost, e.cost) {
            return Err(reject(
                name,
                format!("reported cost {}, recomputed {cost}", e.cost),
            ));
        }
        self.objective += cost;
        self.victims += e.victims.len() as u64;
        if whole {
            self.placed += 1;
            self.hits += u64::from(e.hit);
        } else {
            self.wasted += e.victims.len() as u64;
        }
        Ok(())
    }

    /// Evicts the event's victims, each checked; returns each one's server and priority.
    fn evict(
        &mut self,
        e: &PreemptionEvent,
        gang: &Gang,
    ) -> Result<Vec<(ServerId, i64)>, Rejection> {
        let name = e.preemptor.as_str();
        let mut out = Vec::new();
        for v in &e.victims {
            if !self.evicted.insert(v.clone()) {
                return Err(reject(name, format!("victim {v} is evicted twice")));
            }
            let Some(rec) = self.pods.remove(v) else {
                return Err(reject(name, format!("victim {v} is not running")));
            };
            if !rec.preemptible {
                return Err(reject(name, format!("victim {v} is not preemptible")));
            }
            if rec.priority >= gang.priority {
                return Err(reject(
                    name,
                    format!(
                        "victim {v} has priority {} ≥ the gang's {}",
                        rec.priority, gang.priority
                    ),
                ));
            }
            let Some(server) = self.cluster.server_id(&rec.server) else {
                return Err(reject(
                    name,
                    format!("victim {v} runs on an unknown server"),
                ));
            };
            out.push((server, rec.priority));
        }
        Ok(out)
    }

    /// Places each listed pod once its placement passes every rule; returns the servers, the
    /// summed placement cost and whether every pod reached its required level.
    fn place(
        &mut self,
        e: &PreemptionEvent,
        g: &GangEvent,
        gang: &Gang,
    ) -> Result<(Vec<ServerId>, f64, bool), Rejection> {
        let (cluster, spec) = (self.cluster, self.spec);
        let name = e.preemptor.as_str();
        let class = spec.workload.get(gang.workload);
        let ask = DeviceAsk {
            kind: class.map_or(DEFAULT_GPU_KIND, |c| c.gpu_kind()),
            alignment: class.and_then(|c| c.device_alignment),
        };
        let mut servers = Vec::new();
        let mut cost = 0.0;
        let mut all_hit = true;
        if g.placements.len() as u32 != g.pods_placed || g.pods_placed > gang.pods {
            return Err(reject(
                name,
                "the pods placed do not match the gang's count".into(),
            ));
        }
        for pod in &g.placements {
            let Some(server) = cluster.server_id(&pod.node) else {
                return Err(reject(name, format!("unknown server {}", pod.node)));
            };
            if let Some(refusal) = Eligibility::why(cluster, spec, gang.workload, server) {
                return Err(reject(
                    name,
                    format!("{} on {}, which refuses it: {refusal}", pod.pod, pod.node),
                ));
            }
            let t = cluster.type_of(server);
            let gpus: BTreeSet<u32> = pod.gpus.iter().copied().collect();
            let cores: BTreeSet<u32> = pod.cores.iter().copied().collect();
            if gpus.len() as u32 != gang.request.gpus
                || cores.len() as u32 != gang.request.cores
                || gpus.len() != pod.gpus.len()
                || cores.len() != pod.cores.len()
            {
                return Err(reject(
                    name,
                    format!(
                        "{} holds other than the GPUs and cores it asks for",
                        pod.pod
                    ),
                ));
            }
            if gpus.iter().any(|&x| x as usize >= t.gpu_count())
                || cores.iter().any(|&x| x as usize >= t.core_count())
            {
                return Err(reject(
                    name,
                    format!("{}: an id lies outside {}", pod.pod, pod.node),
                ));
            }
            if let Some((holder, _)) = self.pods.iter().find(|(_, r)| {
                r.server == pod.node && (!r.gpus.is_disjoint(&gpus) || !r.cores.is_disjoint(&cores))
            }) {
                return Err(reject(
                    name,
                    format!("{}: its GPUs or cores are still held by {holder}", pod.pod),
                ));
            }
            if let Some(why) = ask.broken_by(cluster, t, &gpus, &cores) {
                return Err(reject(name, why));
            }
            let level = level_of(t, &gpus, &cores);
            if pod.level != level {
                return Err(reject(
                    name,
                    format!(
                        "{}: reported level {}, the placement is {level}",
                        pod.pod, pod.level
                    ),
                ));
            }
            let required =
                required_level(cluster, t, &ask, (gang.request.gpus, gang.request.cores));
            let hit = required.is_some_and(|r| level <= r);
            let enforced = gang.qos == TopologyQos::Guaranteed
                && t.enforces_alignment()
                && spec.simulation.admission == Admission::Kubelet;
            if enforced && !hit {
                return Err(reject(
                    name,
                    format!(
                        "{}: guaranteed pod placed at {level}, below its required level",
                        pod.pod
                    ),
                ));
            }
            all_hit &= hit;
            cost += spec.objective.topology * (1.0 - score(spec, t, level));
            self.pods.insert(
                pod.pod.clone(),
                PodRecord {
                    server: pod.node.clone(),
                    gpus,
                    cores,
                    priority: gang.priority,
                    preemptible: false,
                    budgets: Vec::new(),
                },
            );
            servers.push(server);
        }
        Ok((servers, cost, all_hit))
    }

    /// Checks the reported judgement of the gang (whole, partial, split, refused) and its
    /// domain; returns whether it is placed whole inside one domain of its required level.
    fn judge(
        &self,
        e: &PreemptionEvent,
        g: &GangEvent,
        gang: &Gang,
        servers: &[ServerId],
        all_hit: bool,
    ) -> Result<bool, Rejection> {
        let name = e.preemptor.as_str();
        let fabric = &self.cluster.fabric;
        let spread = (!servers.is_empty()).then(|| fabric.spread_level(servers));
        let all = g.pods_placed == gang.pods;
        // Whole: every pod placed, inside one domain of the required level, each domain of the
        // slice level holding whole slices (recounted here, not asked of the planner side).
        let slices_hold = gang.slice.is_none_or(|(size, level)| {
            let mut per_domain: BTreeMap<u32, u32> = BTreeMap::new();
            for s in servers {
                *per_domain.entry(fabric.domain_of(level, *s)).or_default() += 1;
            }
            per_domain.values().all(|n| n.is_multiple_of(size))
        });
        let whole = all && spread.is_some_and(|s| s >= gang.required) && slices_hold;
        let expected = if e.outcome == EventOutcome::Refused {
            if !servers.is_empty() {
                return Err(reject(name, "refused, but pods are placed".into()));
            }
            EventOutcome::Refused
        } else if servers.is_empty() {
            EventOutcome::NoCandidate
        } else if !all {
            EventOutcome::Partial
        } else if !whole {
            EventOutcome::Split
        } else if gang.qos == TopologyQos::Guaranteed && !all_hit {
            EventOutcome::PlacedMiss
        } else {
            EventOutcome::Placed
        };
        let level_name = |l: FabricLevel| fabric.level_name(l).to_string();
        let checks = [
            ("outcome", e.outcome == expected),
            ("placed", e.placed == whole),
            ("hit", e.hit == (whole && all_hit)),
            ("spread_level", g.spread_level == spread.map(level_name)),
            (
                "required_level",
                g.required_level == level_name(gang.required),
            ),
        ];
        if let Some((what, _)) = checks.iter().find(|(_, ok)| !ok) {
            return Err(reject(
                name,
                format!("reported `{what}` does not match the placement"),
            ));
        }
        Ok(whole)
    }
}

/// The lowest and highest priority among the spec's workloads.
fn priority_range(spec: &PreemptionSpec) -> (i64, i64) {
    let prios = spec.workload.iter().map(|w| w.priority);
    (prios.clone().min().unwrap_or(0), prios.max().unwrap_or(0))
}
