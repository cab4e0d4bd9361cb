//! The metrics a sweep writes, by workload kind: a shard row that names any other metric was
//! not written by the sweep its header describes, and `merge` refuses it at its line.

/// The kind of workload a sweep ran, as its recorded inputs tell: preemption sweeps record
/// cycles per seed, co-location sweeps none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SweepKind {
    /// A preemption workload.
    Preemption,
    /// A co-location workload.
    Colocation,
}

/// The numeric fields of `PreemptionMetrics` but the timings (`TIMING_METRICS`), which a sweep
/// leaves out because they are not reproducible.
const PREEMPTION: &[&str] = &[
    "preemptions",
    "placed",
    "unplaced",
    "hits",
    "hit_rate",
    "hit_rate_guaranteed",
    "hit_rate_best_effort",
    "victims",
    "victim_priority_sum",
    "wasted_evictions",
    "slowdown_mean",
    "slowdown_guaranteed",
    "slowdown_best_effort",
    "gpu_hours_evicted",
    "objective",
    "gap",
    "decision_gap",
    "subsets_evaluated",
    "pdb_violations",
];

/// The numeric fields of `ColocationMetrics` and the planner's `gap`; its `slo_attainment` map
/// is written one metric per factor, [`SLO_ATTAINMENT`]`<k>x`.
const COLOCATION: &[&str] = &[
    "tasks",
    "inference_requests",
    "throughput_tasks_per_s",
    "throughput_tokens_per_s",
    "goodput_rps",
    "ttft_p50_s",
    "ttft_p99_s",
    "tbt_p50_s",
    "tbt_p99_s",
    "gpu_utilization",
    "transfer_utilization",
    "throughput_active",
    "utilization_active",
    "window_start_s",
    "window_end_s",
    "bubble_rate",
    "makespan_s",
    "nodes_used",
    "dropped",
    "offloaded",
    "training_tasks_done",
    "staleness_mean",
    "objective",
    "gap",
];

/// The prefix of the flattened `slo_attainment` metrics (`slo_attainment_5x`).
const SLO_ATTAINMENT: &str = "slo_attainment_";

impl SweepKind {
    /// The kind of the sweep whose inputs record `cycles`.
    pub(super) fn of(cycles: Option<u64>) -> Self {
        match cycles {
            Some(_) => SweepKind::Preemption,
            None => SweepKind::Colocation,
        }
    }

    /// The kind in words, for messages.
    pub(super) fn words(self) -> &'static str {
        match self {
            SweepKind::Preemption => "preemption",
            SweepKind::Colocation => "co-location",
        }
    }

    /// Whether a sweep of this kind writes `metric`.
    pub(super) fn writes(self, metric: &str) -> bool {
        match self {
            SweepKind::Preemption => {
                PREEMPTION.contains(&metric) || crate::sim::preemption::is_gang_metric(metric)
            }
            SweepKind::Colocation => COLOCATION.contains(&metric) || is_slo_attainment(metric),
        }
    }

    /// Every metric a sweep of this kind writes, for a refusal that names them.
    pub(super) fn listed(self) -> String {
        match self {
            SweepKind::Preemption => format!(
                "{}, and for gangs {}, {}<level>",
                PREEMPTION.join(", "),
                crate::sim::preemption::GANG_METRICS.join(", "),
                crate::sim::preemption::GANG_HIT_RATE
            ),
            SweepKind::Colocation => format!("{}, {SLO_ATTAINMENT}<k>x", COLOCATION.join(", ")),
        }
    }
}

/// `slo_attainment_<k>x` with `k` a positive number written as `slo_key` writes it (`5x`,
/// `2.5x`), so that the name reads back to the factor it was written for.
fn is_slo_attainment(metric: &str) -> bool {
    metric
        .strip_prefix(SLO_ATTAINMENT)
        .and_then(|k| k.strip_suffix('x'))
        .is_some_and(|k| {
            k.parse::<f64>()
                .is_ok_and(|f| f.is_finite() && f > 0.0 && format!("{f}x") == format!("{k}x"))
        })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::plan::colocation::{ColocationMetrics, slo_key};
    use crate::plan::preemption::PreemptionMetrics;
    use crate::sim::preemption::TIMING_METRICS;

    /// The field names a metrics struct serialises, nested maps flattened as the sweep
    /// flattens them.
    fn fields(value: serde_json::Value) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (k, v) in value.as_object().cloned().unwrap_or_default() {
            match v {
                serde_json::Value::Object(inner) => {
                    out.extend(inner.keys().map(|ik| format!("{k}_{ik}")));
                }
                _ => {
                    out.insert(k);
                }
            }
        }
        out
    }

    #[test]
    fn the_lists_are_the_fields_simulate_writes() {
        let preemption = PreemptionMetrics {
            preemptions: 1,
            placed: 1,
            unplaced: 0,
            hits: 1,
            hit_rate: Some(1.0),
            hit_rate_guaranteed: Some(1.0),
            hit_rate_best_effort: Some(1.0),
            victims: 1,
            victim_priority_sum: 1,
            wasted_evictions: 0,
            slowdown_mean: Some(1.0),
            slowdown_guaranteed: Some(1.0),
            slowdown_best_effort: Some(1.0),
            gpu_hours_evicted: Some(1.0),
            objective: Some(1.0),
            gap: Some(0.0),
            decision_gap: Some(0.0),
            runtime_ms: 1.0,
            subsets_evaluated: 1,
            pdb_violations: 0,
            gangs: None,
        };
        let written: BTreeSet<String> = fields(serde_json::json!(preemption))
            .into_iter()
            .filter(|m| !TIMING_METRICS.contains(&m.as_str()))
            .collect();
        let listed: BTreeSet<String> = PREEMPTION.iter().map(|m| m.to_string()).collect();
        assert_eq!(written, listed);
        let colocation = ColocationMetrics {
            tasks: 1,
            inference_requests: 1,
            throughput_tasks_per_s: 1.0,
            throughput_tokens_per_s: 1.0,
            goodput_rps: 1.0,
            slo_attainment: BTreeMap::from([(slo_key(5.0), 1.0), (slo_key(2.5), 1.0)]),
            ttft_p50_s: Some(1.0),
            ttft_p99_s: Some(1.0),
            tbt_p50_s: Some(1.0),
            tbt_p99_s: Some(1.0),
            gpu_utilization: 1.0,
            transfer_utilization: 1.0,
            throughput_active: 1.0,
            utilization_active: 1.0,
            window_start_s: 0.0,
            window_end_s: 1.0,
            bubble_rate: 0.0,
            makespan_s: 1.0,
            nodes_used: 1,
            dropped: 0,
            offloaded: 0,
            training_tasks_done: 1,
            staleness_mean: Some(0.0),
            objective: 1.0,
        };
        let mut written = fields(serde_json::json!(colocation));
        written.insert("gap".into());
        for metric in &written {
            assert!(SweepKind::Colocation.writes(metric), "{metric}");
        }
        let exact: BTreeSet<&String> = written
            .iter()
            .filter(|m| !m.starts_with(SLO_ATTAINMENT))
            .collect();
        assert_eq!(exact.len(), COLOCATION.len());
    }

    #[test]
    fn metrics_of_the_other_kind_or_misspelt_are_not_written() {
        assert!(SweepKind::Preemption.writes("hit_rate"));
        assert!(!SweepKind::Preemption.writes("gpu_utilization"));
        assert!(!SweepKind::Preemption.writes("runtime_ms"));
        assert!(!SweepKind::Preemption.writes("hit_rate_typo"));
        assert!(SweepKind::Colocation.writes("slo_attainment_5x"));
        assert!(SweepKind::Colocation.writes("slo_attainment_2.5x"));
        for bad in [
            "slo_attainment_x",
            "slo_attainment_05x",
            "slo_attainment_-1x",
            "slo_attainment_NaNx",
            "slo_attainment_5",
            "hits",
        ] {
            assert!(!SweepKind::Colocation.writes(bad), "{bad}");
        }
    }
}
