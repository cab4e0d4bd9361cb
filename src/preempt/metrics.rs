//! Per-planner metrics of a preemption plan (DESIGN §5.3), computed from applied events.

use super::apply::Applied;
use crate::plan::preemption::PreemptionMetrics;
use crate::spec::preemption::TopologyQos;
use crate::topology::ServerId;

fn rate(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// The share of one whole GPU that device `g` of server `s` is (a MIG slice is less than 1).
pub type DeviceFraction<'a> = &'a dyn Fn(ServerId, usize) -> f64;

/// Counts and rates of a list of applied events; objective, gaps and runtime are filled in by
/// the engine. GPU-hours count each device by `fraction`.
pub fn compute(
    fraction: DeviceFraction<'_>,
    applied: &[Applied],
    now_s: Option<f64>,
) -> PreemptionMetrics {
    let n = applied.len() as u64;
    let placed = applied.iter().filter(|a| a.event.placed).count() as u64;
    let hits = applied.iter().filter(|a| a.event.hit).count() as u64;
    let by_qos = |q: TopologyQos| {
        let of: Vec<&Applied> = applied.iter().filter(|a| a.qos == q).collect();
        rate(
            of.iter().filter(|a| a.event.hit).count() as u64,
            of.len() as u64,
        )
    };
    let victims: u64 = applied.iter().map(|a| a.victims.len() as u64).sum();
    let wasted: u64 = applied
        .iter()
        .filter(|a| !a.event.placed)
        .map(|a| a.victims.len() as u64)
        .sum();
    let mean_slowdown = |of: &dyn Fn(&Applied) -> bool| {
        let s: Vec<f64> = applied
            .iter()
            .filter(|a| of(a))
            .filter_map(|a| a.slowdown)
            .collect();
        (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64)
    };
    // Folded from +0.0: `sum()` of no floats is −0.0, which JSON would print as `-0.0` for a
    // plan that evicted nothing.
    let gpu_hours = now_s.map(|now| {
        applied
            .iter()
            .flat_map(|a| &a.victims)
            .filter_map(|v| {
                // A MIG slice counts as the share of a GPU it is.
                let gpus: f64 = v.gpus.iter().map(|g| fraction(v.server, g)).sum();
                v.start_time_s.map(|t| gpus * (now - t).max(0.0) / 3600.0)
            })
            .fold(0.0, |total, hours| total + hours)
    });
    PreemptionMetrics {
        preemptions: n,
        placed,
        unplaced: n - placed,
        hits,
        hit_rate: rate(hits, n),
        hit_rate_guaranteed: by_qos(TopologyQos::Guaranteed),
        hit_rate_best_effort: by_qos(TopologyQos::BestEffort),
        victims,
        victim_priority_sum: applied
            .iter()
            .flat_map(|a| &a.victims)
            .map(|v| v.priority)
            .sum(),
        wasted_evictions: wasted,
        slowdown_mean: mean_slowdown(&|_| true),
        slowdown_guaranteed: mean_slowdown(&|a| a.qos == TopologyQos::Guaranteed),
        slowdown_best_effort: mean_slowdown(&|a| a.qos == TopologyQos::BestEffort),
        gpu_hours_evicted: gpu_hours,
        objective: None,
        gap: None,
        decision_gap: None,
        runtime_ms: 0.0,
        subsets_evaluated: applied.iter().map(|a| a.event.subsets_evaluated).sum(),
        pdb_violations: 0,
        gangs: None,
    }
}

/// How many PodDisruptionBudgets a plan violates: those it evicts more pods of than they
/// allowed when it started (`allowed`, per budget).
pub fn pdb_violations(applied: &[Applied], allowed: &[i64]) -> u64 {
    let mut evicted = vec![0i64; allowed.len()];
    for b in applied
        .iter()
        .flat_map(|a| &a.victims)
        .flat_map(|v| &v.budgets)
    {
        if let Some(n) = evicted.get_mut(*b as usize) {
            *n += 1;
        }
    }
    evicted.iter().zip(allowed).filter(|(n, a)| n > a).count() as u64
}
