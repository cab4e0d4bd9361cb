//! Medians of timed runs: the figure every bench prints, steadier than a mean against the odd
//! slow run.

use std::time::Instant;

/// The median of `v` (the upper one of an even count); NaN when `v` is empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median seconds of `repeats` runs of `f`.
pub fn median_time(repeats: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..repeats)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}
