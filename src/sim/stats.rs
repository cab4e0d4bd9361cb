//! Summary statistics over seeds: mean, 95 % confidence half-width (Student t), min, max.

use schemars::JsonSchema;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// One metric summarised over seeds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Summary {
    /// Mean of the values.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval of the mean (t-distribution, n − 1 degrees of
    /// freedom); null with fewer than two seeds.
    pub ci95: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Number of values (seeds) summarised, ≥ 1.
    pub n: usize,
}

/// The t quantile for a 95 % two-sided interval (the 97.5 % quantile of Student's t) with
/// `df` degrees of freedom; NaN without any.
pub fn t975(df: usize) -> f64 {
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(t) if df > 0 => t.inverse_cdf(0.975),
        _ => f64::NAN,
    }
}

/// Summarises values (one per seed); `None` when there are none.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ci95 = (n >= 2).then(|| {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    });
    Some(Summary {
        mean,
        ci95,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_matches_hand_computed_values() {
        // mean 3, sample sd sqrt(2.5) = 1.5811, se = 0.7071, t(4) = 2.7764 → 1.9632
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).expect("values");
        assert!((s.mean - 3.0).abs() < 1e-12);
        assert!((s.ci95.expect("n ≥ 2") - t975(4) * (2.5f64 / 5.0).sqrt()).abs() < 1e-12);
        assert!((s.ci95.unwrap_or(0.0) - 1.9632).abs() < 1e-3);
        assert_eq!((s.min, s.max, s.n), (1.0, 5.0, 5));
        // Two seeds: t(1) = 12.7062; values 0.4, 0.6 → sd 0.1414, se 0.1 → 1.27062
        let two = summarize(&[0.4, 0.6]).expect("values");
        assert!((two.ci95.unwrap_or(0.0) - 1.270620).abs() < 1e-6);
        let one = summarize(&[7.0]).expect("value");
        assert_eq!(one.ci95, None);
        assert!(summarize(&[]).is_none());
        // Identical values: zero width.
        assert_eq!(summarize(&[2.0, 2.0, 2.0]).and_then(|s| s.ci95), Some(0.0));
    }

    #[test]
    fn t_quantiles_match_the_tables_and_decrease_towards_the_normal() {
        // Published two-sided 95 % values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
        for (df, table) in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)] {
            assert!((t975(df) - table).abs() < 5e-4, "df {df}: {}", t975(df));
        }
        assert!(t975(30) > t975(100) && t975(100) > t975(1000));
        assert!((t975(100_000) - 1.95996).abs() < 1e-4);
        assert!(t975(0).is_nan());
    }
}
