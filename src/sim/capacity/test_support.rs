//! Helpers shared by the capacity unit tests: summaries built by hand, as seeds would give them.

use super::classify::classify;
use super::report::CapacityProbe;
use super::target::Target;
use crate::sim::stats::Summary;

pub(super) fn summary(mean: f64, ci95: f64) -> Summary {
    Summary {
        mean,
        ci95: Some(ci95),
        min: mean,
        max: mean,
        n: 5,
    }
}

/// A probe at `value` with only its metric known, classified against `target`.
pub(super) fn measured_probe(target: &Target, value: f64, metric: Summary) -> CapacityProbe {
    CapacityProbe {
        value,
        status: classify(target, &metric),
        metric: Some(metric),
        fill_pods: None,
        removed_servers: Vec::new(),
        replaced_pods: None,
        displaced_pods: None,
        displaced: Vec::new(),
        backlog_first: None,
        backlog_last: None,
    }
}
