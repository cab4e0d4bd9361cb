//! The `--target` a search aims at: which metrics it may name, how it is written, and which
//! side of its value meets it, kept apart so that classifying a size reads one definition.

use serde::Serialize;

use super::error::CapacityError;

/// Metrics a target may name: the per-cycle metrics `simulate` reports (means over a seed's
/// cycles) and the ratios derived from them here.
pub const TARGET_METRICS: [&str; 14] = [
    "decision_gap",
    "gap",
    "gpu_hours_evicted",
    "hit_rate",
    "hit_rate_best_effort",
    "hit_rate_guaranteed",
    "hits",
    "objective",
    "placed",
    "slowdown_best_effort",
    "slowdown_guaranteed",
    "slowdown_mean",
    "unplaced",
    "victims_per_preemption",
];
/// Per-cycle counts that are also valid targets.
pub const COUNT_METRICS: [&str; 6] = [
    "pdb_violations",
    "preemptions",
    "subsets_evaluated",
    "victim_priority_sum",
    "victims",
    "wasted_evictions",
];

/// `>=` or `<=`: which side of the value meets the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TargetOp {
    /// The metric meets the target at or above the value.
    #[serde(rename = ">=")]
    AtLeast,
    /// The metric meets the target at or below the value.
    #[serde(rename = "<=")]
    AtMost,
}

/// `METRIC>=X` or `METRIC<=X`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    /// The metric's name in the simulation results (e.g. `hit_rate`).
    pub metric: String,
    /// Which side of `value` meets the target.
    pub op: TargetOp,
    /// The threshold, in the metric's own unit (a share as a fraction: `0.99`).
    pub value: f64,
}

impl Target {
    /// The operator as written on the command line: `>=` or `<=`.
    pub fn op_text(&self) -> &'static str {
        match self.op {
            TargetOp::AtLeast => ">=",
            TargetOp::AtMost => "<=",
        }
    }

    /// Whether a value meets the target (a tolerance of 1e-9 absorbs the rounding of means).
    pub fn met_by(&self, x: f64) -> bool {
        match self.op {
            TargetOp::AtLeast => x + 1e-9 >= self.value,
            TargetOp::AtMost => x - 1e-9 <= self.value,
        }
    }

    /// How much better `a` is than `b` in the target's direction.
    pub(super) fn improvement(&self, a: f64, b: f64) -> f64 {
        match self.op {
            TargetOp::AtLeast => a - b,
            TargetOp::AtMost => b - a,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}{}", self.metric, self.op_text(), self.value)
    }
}

/// Parses `METRIC>=X` / `METRIC<=X` and checks the metric name.
pub fn parse_target(text: &str) -> Result<Target, CapacityError> {
    let bad = || CapacityError::TargetSyntax(text.into());
    let (metric, op, value) = if let Some((m, v)) = text.split_once(">=") {
        (m, TargetOp::AtLeast, v)
    } else if let Some((m, v)) = text.split_once("<=") {
        (m, TargetOp::AtMost, v)
    } else {
        return Err(bad());
    };
    let metric = metric.trim();
    let value: f64 = value.trim().parse().map_err(|_| bad())?;
    if metric.is_empty() || !value.is_finite() {
        return Err(bad());
    }
    if !TARGET_METRICS.contains(&metric) && !COUNT_METRICS.contains(&metric) {
        let mut valid: Vec<&str> = TARGET_METRICS
            .iter()
            .chain(&COUNT_METRICS)
            .copied()
            .collect();
        valid.sort_unstable();
        return Err(CapacityError::UnknownMetric {
            metric: metric.into(),
            valid: valid.join(", "),
        });
    }
    Ok(Target {
        metric: metric.into(),
        op,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_name_valid_metrics() {
        let t = parse_target("hit_rate>=0.99").expect("valid");
        assert_eq!(
            (t.metric.as_str(), t.op, t.value),
            ("hit_rate", TargetOp::AtLeast, 0.99)
        );
        let t = parse_target(" unplaced <= 0 ").expect("valid");
        assert_eq!((t.metric.as_str(), t.op), ("unplaced", TargetOp::AtMost));
        assert!(matches!(
            parse_target("hit_rate>0.9"),
            Err(CapacityError::TargetSyntax(_))
        ));
        assert!(matches!(
            parse_target("hit_rate>=x"),
            Err(CapacityError::TargetSyntax(_))
        ));
        match parse_target("hitrate>=0.9") {
            Err(CapacityError::UnknownMetric { valid, .. }) => assert!(valid.contains("hit_rate")),
            other => panic!("{other:?}"),
        }
    }
}
