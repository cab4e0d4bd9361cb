//! Helpers shared by the capacity unit tests: summaries built by hand, as seeds would give them.

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
