//! The paired-difference statistics: the interval of B_i − A_i over the seeds both outputs
//! share and what it says, the only place where noise is told from change.

use super::direction::Better;
use super::report::Verdict;
use crate::sim::stats::t975;

/// The paired differences' mean and 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Number of pairs (seeds with a value in both outputs).
    pub n: usize,
    /// Mean of the differences B_i − A_i; `None` without any pair.
    pub mean: Option<f64>,
    /// `(low, high)`; `None` with fewer than two pairs.
    pub ci95: Option<(f64, f64)>,
}

/// Mean of `d` ± t_{0.975, n−1} · sd(d) / √n (sample standard deviation, n − 1 in the
/// denominator). Finite differences give a finite mean and interval wherever the result
/// itself is a finite number: the sums that would overflow on the way are taken scaled.
pub fn paired_interval(d: &[f64]) -> Paired {
    let n = d.len();
    if n == 0 {
        return Paired {
            n,
            mean: None,
            ci95: None,
        };
    }
    let sum = d.iter().sum::<f64>();
    let mean = if sum.is_finite() {
        sum / n as f64
    } else {
        d.iter().map(|x| x / n as f64).sum::<f64>()
    };
    let ci95 = (n >= 2).then(|| {
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se = if var.is_finite() {
            (var / n as f64).sqrt()
        } else {
            // Squares of deviations beyond 1e154 overflow: the deviations are scaled to at
            // most 1 first, and the scale put back on the root.
            let scale = d.iter().fold(0.0_f64, |m, x| m.max((x - mean).abs()));
            let scaled =
                d.iter().map(|x| ((x - mean) / scale).powi(2)).sum::<f64>() / (n - 1) as f64;
            scale * (scaled / n as f64).sqrt()
        };
        let half = t975(n - 1) * se;
        (mean - half, mean + half)
    });
    Paired {
        n,
        mean: Some(mean),
        ci95,
    }
}

/// Differences this small against the values compared are rounding (the same quantity summed
/// in another order), not change: they count as 0, so that a refactoring that moves the last
/// bit does not fail a regression gate.
const ROUNDING: f64 = 1e-9;

pub(super) fn paired_difference(a: f64, b: f64) -> f64 {
    let d = b - a;
    if d.abs() <= ROUNDING * a.abs().max(b.abs()).max(1.0) {
        0.0
    } else {
        d
    }
}

/// What an interval says, given which way the metric is better.
pub fn verdict(better: Option<Better>, ci95: Option<(f64, f64)>) -> Verdict {
    let Some((low, high)) = ci95 else {
        return Verdict::NoCi;
    };
    let up = if low > 0.0 {
        true
    } else if high < 0.0 {
        false
    } else {
        return Verdict::NoChange;
    };
    match (better, up) {
        (Some(Better::Higher), true) | (Some(Better::Lower), false) => Verdict::Better,
        (Some(Better::Higher), false) | (Some(Better::Lower), true) => Verdict::Worse,
        (None, true) => Verdict::Increased,
        (None, false) => Verdict::Decreased,
    }
}

#[cfg(test)]
mod tests {
    use super::super::diff;
    use super::super::test_support::{output, some};
    use super::*;

    #[test]
    fn paired_interval_matches_the_hand_computation() {
        // A = [0.90, 0.80, 0.70, 0.95], B = [0.92, 0.85, 0.71, 0.99]
        // d = [0.02, 0.05, 0.01, 0.04], mean 0.03
        // deviations −0.01, 0.02, −0.02, 0.01 → squares sum 0.001 → var 0.001/3 = 3.3333e-4
        // sd 0.0182574, se = sd/√4 = 0.0091287, t(0.975, 3) = 3.182446
        // half-width 3.182446 × 0.0091287 = 0.0290515 → CI [0.0009485, 0.0590515]
        let a = some(&[0.90, 0.80, 0.70, 0.95]);
        let b = some(&[0.92, 0.85, 0.71, 0.99]);
        let sa = output("a.json", &[1, 2, 3, 4], &["p"], &[("hit_rate", &a)]);
        let sb = output("b.json", &[1, 2, 3, 4], &["p"], &[("hit_rate", &b)]);
        let r = diff(&sa, &sb, &[]).expect("comparable");
        let row = &r.rows[0];
        assert_eq!(row.n, 4);
        assert!((row.paired_mean.unwrap_or(0.0) - 0.03).abs() < 1e-12);
        assert!((t975(3) - 3.182446).abs() < 1e-6);
        let (low, high) = (row.ci95_low.unwrap_or(0.0), row.ci95_high.unwrap_or(0.0));
        assert!((0.03 - low - 0.0290515).abs() < 1e-6, "{low}");
        assert!((high - 0.03 - 0.0290515).abs() < 1e-6, "{high}");
        assert!((row.diff.unwrap_or(0.0) - 0.03).abs() < 1e-12);
        assert_eq!(row.verdict, Verdict::Better);
        // The same change on a lower-is-better metric is a regression, when gated.
        let sa = output("a.json", &[1, 2, 3, 4], &["p"], &[("victims", &a)]);
        let sb = output("b.json", &[1, 2, 3, 4], &["p"], &[("victims", &b)]);
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::Worse);
        assert_eq!(r.regressions.len(), 1);
        assert!(
            r.regression_message()
                .is_some_and(|m| m.contains("p victims"))
        );
    }

    #[test]
    fn rounding_noise_is_no_change_but_a_constant_shift_is_one() {
        let a = some(&[0.1 + 0.2, 0.7, 1e6]);
        let b = some(&[0.3, 0.7 + 1e-15, 1e6 + 1e-6]);
        let sa = output("a.json", &[1, 2, 3], &["p"], &[("victims", &a)]);
        let sb = output("b.json", &[1, 2, 3], &["p"], &[("victims", &b)]);
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::NoChange);
        // Every seed one victim more: zero spread, the interval is the point +1.
        let sb = output(
            "b.json",
            &[1, 2, 3],
            &["p"],
            &[("victims", &some(&[1.3, 1.7, 1e6 + 1.0]))],
        );
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::Worse);
    }

    #[test]
    fn differences_near_the_largest_values_keep_a_finite_interval() {
        // Deviations of 2e300: their squares overflow, the interval must not.
        let p = paired_interval(&[2e300, -2e300]);
        let (low, high) = p.ci95.expect("two pairs");
        assert_eq!(p.mean, Some(0.0));
        assert!(low.is_finite() && high.is_finite(), "{low} {high}");
        // sd = 2e300 · √2, se = sd / √2 = 2e300, half = t(0.975, 1) · 2e300.
        assert!((high / (t975(1) * 2e300) - 1.0).abs() < 1e-12, "{high}");
        assert_eq!(low, -high);
        // A sum that overflows on the way to a finite mean.
        let p = paired_interval(&[1.5e308, 1.5e308, 1.5e308]);
        let close = |x: f64| (x / 1.5e308 - 1.0).abs() < 1e-12;
        assert!(p.mean.is_some_and(close), "{p:?}");
        assert!(p.ci95.is_some_and(|(l, h)| close(l) && close(h)), "{p:?}");
        // The largest values diff reads give finite rows end to end.
        let a = some(&[-1e300, 1e300, -1e300]);
        let b = some(&[1e300, -1e300, 1e300]);
        let sa = output("a.json", &[1, 2, 3], &["p"], &[("victims", &a)]);
        let sb = output("b.json", &[1, 2, 3], &["p"], &[("victims", &b)]);
        let r = diff(&sa, &sb, &[]).expect("comparable");
        let row = &r.rows[0];
        for x in [row.paired_mean, row.ci95_low, row.ci95_high, row.diff] {
            assert!(x.is_some_and(f64::is_finite), "{row:?}");
        }
    }

    #[test]
    fn verdicts_follow_the_interval_and_the_direction() {
        let up = Some((0.1, 0.2));
        let down = Some((-0.2, -0.1));
        let across = Some((-0.1, 0.2));
        assert_eq!(verdict(Some(Better::Higher), up), Verdict::Better);
        assert_eq!(verdict(Some(Better::Higher), down), Verdict::Worse);
        assert_eq!(verdict(Some(Better::Lower), up), Verdict::Worse);
        assert_eq!(verdict(Some(Better::Lower), down), Verdict::Better);
        assert_eq!(verdict(Some(Better::Lower), across), Verdict::NoChange);
        assert_eq!(verdict(None, up), Verdict::Increased);
        assert_eq!(verdict(None, down), Verdict::Decreased);
        assert_eq!(verdict(None, None), Verdict::NoCi);
    }
}
