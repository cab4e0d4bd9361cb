//! Metrics of a plan of gangs (DESIGN §12.3): hits per required level, partial and split
//! gangs, victims per gang, over-eviction, and what stays free for the next gang.

use std::collections::BTreeMap;

use super::apply::AppliedGang;
use crate::plan::preemption::{EventOutcome, GangMetrics};
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel};

/// The gang metrics of `applied`; `optima` per gang (cost, victims' cost) when measured;
/// `end` is the state after the plan.
pub fn gang_metrics(
    cluster: &Cluster,
    applied: &[AppliedGang],
    optima: Option<&[(f64, f64)]>,
    end: &ClusterState,
) -> GangMetrics {
    let fabric = &cluster.fabric;
    let mut per_level: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for a in applied {
        let entry = per_level
            .entry(fabric.level_name(a.required).to_string())
            .or_default();
        entry.0 += 1;
        entry.1 += u64::from(a.applied.event.hit);
    }
    let count = |o: EventOutcome| {
        applied
            .iter()
            .filter(|a| a.applied.event.outcome == o)
            .count() as u64
    };
    let victims: usize = applied.iter().map(|a| a.applied.victims.len()).sum();
    let over_eviction = optima.map(|optima| {
        applied
            .iter()
            .zip(optima)
            .map(|(a, (_, opt))| (a.victim_cost - opt).max(0.0))
            .fold(0.0, |s, x| s + x)
    });
    let free: Vec<u32> = end
        .servers()
        .iter()
        .enumerate()
        .map(|(s, a)| {
            let t = cluster.type_of(crate::topology::ServerId(s as u32));
            a.free_gpus().and(t.whole().gpus).len()
        })
        .collect();
    let mut largest = BTreeMap::new();
    let mut per_domain = BTreeMap::new();
    for l in 1..fabric.levels.len() {
        let level = FabricLevel(l as u16);
        let sums: Vec<(String, u32)> = fabric
            .domains_at(level)
            .iter()
            .map(|d| {
                (
                    d.name.clone(),
                    d.servers.iter().map(|s| free[s.index()]).sum(),
                )
            })
            .collect();
        largest.insert(
            fabric.level_name(level).to_string(),
            sums.iter().map(|(_, f)| *f).max().unwrap_or(0),
        );
        if level != fabric.host() {
            per_domain.insert(
                fabric.level_name(level).to_string(),
                sums.into_iter().collect(),
            );
        }
    }
    GangMetrics {
        gangs: applied.len() as u64,
        placed: applied.iter().filter(|a| a.whole).count() as u64,
        hit_rate_by_level: per_level
            .into_iter()
            .map(|(l, (n, hits))| (l, hits as f64 / n as f64))
            .collect(),
        partial: count(EventOutcome::Partial),
        split: count(EventOutcome::Split),
        preferred_hits: applied
            .iter()
            .filter(|a| {
                a.applied
                    .event
                    .gang
                    .as_ref()
                    .is_some_and(|g| g.preferred_hit == Some(true))
            })
            .count() as u64,
        victims_per_gang: (!applied.is_empty()).then(|| victims as f64 / applied.len() as f64),
        over_eviction,
        largest_free_domain: largest,
        free_gpus_per_domain: per_domain,
    }
}
