//! The metrics a picture of simulations or sweeps shows, one panel each: the headline columns
//! of the `simulate` and `merge` tables, with the units and bounds of their axes.

use super::style::bounded;

/// One headline metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Headline {
    /// The metric's name in the results.
    pub key: &'static str,
    /// The panel's caption.
    pub title: &'static str,
    /// The value axis' label, with its unit.
    pub axis: &'static str,
    /// What a value is multiplied by on the axis (100 for a share shown in %).
    pub scale: f64,
    /// The range the metric can take (after scaling); intervals are cut at it, since a
    /// t-interval over few seeds can reach past what a share or a count can be.
    pub floor: Option<f64>,
    /// See `floor`.
    pub ceiling: Option<f64>,
}

impl Headline {
    /// `v` scaled, and inside the metric's range (and the page's).
    pub fn clamp(&self, v: f64) -> f64 {
        let v = bounded(v * self.scale);
        let v = self.floor.map_or(v, |f| v.max(f));
        self.ceiling.map_or(v, |c| v.min(c))
    }
}

const fn share(key: &'static str, title: &'static str, axis: &'static str) -> Headline {
    Headline {
        key,
        title,
        axis,
        scale: 100.0,
        floor: Some(0.0),
        ceiling: Some(100.0),
    }
}

const fn amount(key: &'static str, title: &'static str, axis: &'static str) -> Headline {
    Headline {
        key,
        title,
        axis,
        scale: 1.0,
        floor: Some(0.0),
        ceiling: None,
    }
}

/// Headline panels of preemption results: hit rates, victims, wasted evictions, objective.
pub const PREEMPTION: [Headline; 6] = [
    share(
        "hit_rate",
        "hit rate, all preemptors",
        "hits (% of preemptors)",
    ),
    share(
        "hit_rate_guaranteed",
        "hit rate, guaranteed",
        "hits (% of guaranteed)",
    ),
    share(
        "hit_rate_best_effort",
        "hit rate, best-effort",
        "hits (% of best-effort)",
    ),
    amount("victims", "victims per cycle", "evicted pods per cycle"),
    amount(
        "wasted_evictions",
        "wasted evictions per cycle",
        "pods per cycle",
    ),
    amount(
        "objective",
        "objective per cycle (lower is better)",
        "cost per cycle",
    ),
];

/// Headline panels of co-location results: utilisation, throughputs, SLO attainment at 5×, goodput,
/// objective.
pub const COLOCATION: [Headline; 6] = [
    share("gpu_utilization", "GPU utilisation", "busy GPU time (%)"),
    amount("throughput_tasks_per_s", "task throughput", "tasks/s"),
    amount("throughput_tokens_per_s", "token throughput", "tokens/s"),
    share(
        "slo_attainment_5x",
        "SLO attainment, R ≤ 5 × base",
        "requests within (%)",
    ),
    amount("goodput_rps", "goodput", "requests/s within SLO"),
    amount("objective", "objective (lower is better)", "cost"),
];

/// The headlines of the workload kind whose metrics these are: preemption results carry a
/// hit rate, co-location results never do.
pub fn for_metrics<'a>(mut names: impl Iterator<Item = &'a str>) -> &'static [Headline] {
    if names.any(|n| n == "hit_rate") {
        &PREEMPTION
    } else {
        &COLOCATION
    }
}
