//! Per-planner metrics (DESIGN §5.3), computed from applied events.

use serde::Serialize;

use super::engine::Applied;
use crate::spec::preemption::TopologyQos;

/// Metrics of one planner's plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
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
    /// GPU-hours of work lost by the victims (victims with `start_time_s`, when `now_s` is set).
    pub gpu_hours_evicted: Option<f64>,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub decision_gap: Option<f64>,
    pub runtime_ms: f64,
    pub subsets_evaluated: u64,
}

fn rate(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Counts and rates of a list of applied events; objective, gaps and runtime are filled in by
/// the engine.
pub fn compute(applied: &[Applied], now_s: Option<f64>) -> Metrics {
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
    let slowdowns: Vec<f64> = applied.iter().filter_map(|a| a.slowdown).collect();
    let gpu_hours = now_s.map(|now| {
        applied
            .iter()
            .flat_map(|a| &a.victims)
            .filter_map(|v| {
                v.start_time_s
                    .map(|t| v.gpus.len() as f64 * (now - t).max(0.0) / 3600.0)
            })
            .sum()
    });
    Metrics {
        preemptions: n,
        placed,
        unplaced: n - placed,
        hits,
        hit_rate: rate(hits, n).unwrap_or(0.0),
        hit_rate_guaranteed: by_qos(TopologyQos::Guaranteed),
        hit_rate_best_effort: by_qos(TopologyQos::BestEffort),
        victims,
        victim_priority_sum: applied
            .iter()
            .flat_map(|a| &a.victims)
            .map(|v| v.priority)
            .sum(),
        wasted_evictions: wasted,
        slowdown_mean: (!slowdowns.is_empty())
            .then(|| slowdowns.iter().sum::<f64>() / slowdowns.len() as f64),
        gpu_hours_evicted: gpu_hours,
        objective: None,
        gap: None,
        decision_gap: None,
        runtime_ms: 0.0,
        subsets_evaluated: applied.iter().map(|a| a.event.subsets_evaluated).sum(),
    }
}
