//! Which way each metric is better: one table, so that verdicts, the regression gate and the
//! test that every simulate metric has a direction all read the same answer.

use schemars::JsonSchema;
use serde::Serialize;

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// A larger value is better (hit rate, throughput, goodput, …).
    Higher,
    /// A smaller value is better (victims, objective, gap, latency, …).
    Lower,
}

impl Better {
    /// The direction as JSON and the tables write it: `higher` or `lower`.
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// Which way is better, by metric name; a name ending in `*` covers every metric it prefixes.
/// Exact names win over prefixes. Timings (`runtime_ms`) are lower-is-better like any cost,
/// but depend on the machine: simulate keeps them out of its per-seed values, and no metric
/// gates a run unless `--fail-on-regression` names it.
pub const DIRECTIONS: &[(&str, Better)] = &[
    // Preemption.
    ("hit_rate*", Better::Higher),
    ("hits", Better::Higher),
    ("placed", Better::Higher),
    ("unplaced", Better::Lower),
    ("victims*", Better::Lower),
    ("victim_priority_sum", Better::Lower),
    ("wasted_evictions", Better::Lower),
    ("pdb_violations", Better::Lower),
    ("slowdown*", Better::Lower),
    ("gpu_hours_evicted", Better::Lower),
    ("decision_gap", Better::Lower),
    ("subsets_evaluated", Better::Lower),
    ("runtime_ms", Better::Lower),
    // Both kinds: the canonical objectives are costs, gaps are distances to the optimum.
    ("objective", Better::Lower),
    ("gap", Better::Lower),
    // Co-location.
    ("throughput*", Better::Higher),
    ("goodput*", Better::Higher),
    ("slo_attainment*", Better::Higher),
    ("gpu_utilization", Better::Higher),
    ("utilization_active", Better::Higher),
    ("training_tasks_done", Better::Higher),
    ("ttft*", Better::Lower),
    ("tbt*", Better::Lower),
    ("jct*", Better::Lower),
    ("bubble_rate", Better::Lower),
    ("makespan_s", Better::Lower),
    ("dropped", Better::Lower),
    ("offloaded", Better::Lower),
    ("staleness_mean", Better::Lower),
];

/// Metrics of the simulate outputs that deliberately have no better direction: sizes of the
/// workload (`preemptions`, `tasks`, `inference_requests`), the measuring window, and shares
/// whose value is good or bad only in context (transfers, nodes used).
pub const UNDIRECTED: &[&str] = &[
    "preemptions",
    "tasks",
    "inference_requests",
    "transfer_utilization",
    "window_start_s",
    "window_end_s",
    "nodes_used",
];

/// Which way `metric` is better; `None` when unknown.
pub fn better(metric: &str) -> Option<Better> {
    if let Some((_, b)) = DIRECTIONS.iter().find(|(name, _)| *name == metric) {
        return Some(*b);
    }
    DIRECTIONS
        .iter()
        .filter_map(|(name, b)| {
            let prefix = name.strip_suffix('*')?;
            metric.starts_with(prefix).then_some((prefix.len(), *b))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_follow_the_table() {
        for (metric, expected) in [
            ("hit_rate", Some(Better::Higher)),
            ("hit_rate_guaranteed", Some(Better::Higher)),
            ("victims", Some(Better::Lower)),
            ("wasted_evictions", Some(Better::Lower)),
            ("slowdown_best_effort", Some(Better::Lower)),
            ("objective", Some(Better::Lower)),
            ("gap", Some(Better::Lower)),
            ("decision_gap", Some(Better::Lower)),
            ("slo_attainment_5x", Some(Better::Higher)),
            ("throughput_tokens_per_s", Some(Better::Higher)),
            ("goodput_rps", Some(Better::Higher)),
            ("ttft_p99_s", Some(Better::Lower)),
            ("gpu_utilization", Some(Better::Higher)),
            ("preemptions", None),
            ("transfer_utilization", None),
            ("something_new", None),
        ] {
            assert_eq!(better(metric), expected, "{metric}");
        }
        for metric in UNDIRECTED {
            assert_eq!(better(metric), None, "{metric}");
        }
    }
}
