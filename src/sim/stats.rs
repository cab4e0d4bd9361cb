//! Summary statistics over seeds: mean, 95 % confidence half-width (Student t), min, max.

use serde::Serialize;

/// One metric summarised over seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub mean: f64,
    /// Half-width of the 95 % confidence interval of the mean (t-distribution, n − 1 degrees of
    /// freedom); null with fewer than two seeds.
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// Two-sided 97.5 % quantiles of Student's t for 1 … 30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile for a 95 % two-sided interval with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        31..=40 => 2.021,
        41..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
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
        // mean 3, sample sd sqrt(2.5) = 1.5811, se = 0.7071, t(4) = 2.776 → 1.963
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).expect("values");
        assert!((s.mean - 3.0).abs() < 1e-12);
        assert!((s.ci95.expect("n ≥ 2") - 2.776 * (2.5f64 / 5.0).sqrt()).abs() < 1e-12);
        assert!((s.ci95.unwrap_or(0.0) - 1.9629).abs() < 1e-3);
        assert_eq!((s.min, s.max, s.n), (1.0, 5.0, 5));
        // Two seeds: t(1) = 12.706; values 0.4, 0.6 → sd 0.1414, se 0.1 → 1.2706
        let two = summarize(&[0.4, 0.6]).expect("values");
        assert!((two.ci95.unwrap_or(0.0) - 1.2706).abs() < 1e-9);
        let one = summarize(&[7.0]).expect("value");
        assert_eq!(one.ci95, None);
        assert!(summarize(&[]).is_none());
        // Identical values: zero width.
        assert_eq!(summarize(&[2.0, 2.0, 2.0]).and_then(|s| s.ci95), Some(0.0));
    }

    #[test]
    fn t_quantiles_decrease_towards_the_normal() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(9), 2.262);
        assert!(t975(30) > t975(100) && t975(100) > t975(1000));
        assert_eq!(t975(1000), 1.960);
    }
}
