//! The model fitted to samples: both forms of each pass, the F-test between them, and the
//! decode iteration's least squares.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use super::model::PassCost;
use super::samples::{Sample, SampleKind};

/// Goodness of one fitted relation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitQuality {
    /// Number of samples the relation was fitted to.
    pub samples: usize,
    /// 1 − SS_res / SS_tot (about the mean of the measurements).
    pub r2: f64,
    /// Mean and largest absolute residual, seconds.
    pub residual_mean_s: f64,
    /// See `residual_mean_s`.
    pub residual_max_abs_s: f64,
    /// Median of |residual| / measurement.
    pub residual_median_rel: f64,
}

/// Both fits of one pass (forward or backward) and which the data support.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassFit {
    /// The paper's form, η · C · ℓ² (least squares through the origin).
    pub paper: (f64, FitQuality),
    /// δ + β · C · ℓ + η · C · ℓ² (non-negative least squares); `None` with fewer than four
    /// samples.
    pub extended: Option<(PassCost, FitQuality)>,
    /// p-value of the F-test of the extended form against the paper's (nested models): a small
    /// value says the extra terms explain variance the paper's form leaves.
    pub p_value: Option<f64>,
}

/// Significance level at which the extended form is preferred.
pub const EXTENDED_FORM_ALPHA: f64 = 0.05;

impl PassFit {
    /// Whether the data support the extended form (F-test at [`EXTENDED_FORM_ALPHA`]).
    pub fn extended_supported(&self) -> bool {
        self.extended.is_some() && self.p_value.is_some_and(|p| p < EXTENDED_FORM_ALPHA)
    }

    /// The coefficients of the supported form.
    pub fn chosen(&self) -> PassCost {
        match self.extended {
            Some((cost, _)) if self.extended_supported() => cost,
            _ => PassCost::quadratic(self.paper.0),
        }
    }
}

/// Fitted coefficients with their quality; `None` where no sample of that kind was given.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Fit of the forward pass, when forward samples were given.
    pub forward: Option<PassFit>,
    /// Fit of the backward pass, when backward samples were given.
    pub backward: Option<PassFit>,
    /// (δ_0, δ_1).
    pub decode: Option<((f64, f64), FitQuality)>,
}

/// (C · ℓ, C · ℓ², seconds) of the samples of one pass.
type PassPoint = (f64, f64, f64);

/// Least squares of `y` on the chosen columns of (1, C·ℓ, C·ℓ²), coefficients held ≥ 0 by
/// dropping a column whose coefficient comes out negative and solving again.
fn non_negative_least_squares(points: &[PassPoint], mut use_col: [bool; 3]) -> [f64; 3] {
    let col = |p: &PassPoint, c: usize| match c {
        0 => 1.0,
        1 => p.0,
        _ => p.1,
    };
    loop {
        let cols: Vec<usize> = (0..3).filter(|&c| use_col[c]).collect();
        // Columns scaled to a maximum of 1, so the normal equations stay well conditioned.
        let scale: Vec<f64> = cols
            .iter()
            .map(|&c| {
                points
                    .iter()
                    .map(|p| col(p, c).abs())
                    .fold(0.0, f64::max)
                    .max(1e-300)
            })
            .collect();
        let k = cols.len();
        let mut a = vec![vec![0.0; k + 1]; k];
        for p in points {
            for r in 0..k {
                let xr = col(p, cols[r]) / scale[r];
                for c in 0..k {
                    a[r][c] += xr * col(p, cols[c]) / scale[c];
                }
                a[r][k] += xr * p.2;
            }
        }
        let solved = solve_linear(a);
        let mut coef = [0.0; 3];
        for (i, &c) in cols.iter().enumerate() {
            coef[c] = solved.get(i).copied().unwrap_or(0.0) / scale[i];
        }
        match (0..3).find(|&c| use_col[c] && coef[c] < 0.0) {
            Some(negative) if cols.len() > 1 => use_col[negative] = false,
            _ => return coef.map(|x| x.max(0.0)),
        }
    }
}

/// Gaussian elimination with partial pivoting of an augmented k × (k + 1) system; a singular
/// column gets 0.
fn solve_linear(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let k = a.len();
    for c in 0..k {
        let pivot = (c..k)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap_or(c);
        a.swap(c, pivot);
        if a[c][c].abs() < 1e-12 {
            continue;
        }
        let pivot_row = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot_row[c];
                for (x, p) in row[c..].iter_mut().zip(&pivot_row[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..k)
        .map(|c| {
            if a[c][c].abs() < 1e-12 {
                0.0
            } else {
                a[c][k] / a[c][c]
            }
        })
        .collect()
}

fn residual_sum_of_squares(points: &[PassPoint], cost: &PassCost) -> f64 {
    points
        .iter()
        .map(|p| (p.2 - (cost.delta_s + cost.beta * p.0 + cost.eta * p.1)).powi(2))
        .sum()
}

/// Both forms of one pass, and the F-test between them.
fn fit_pass(points: &[PassPoint]) -> Option<PassFit> {
    if points.is_empty() {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| p.1 * p.2).sum();
    let sxx: f64 = points.iter().map(|p| p.1 * p.1).sum();
    let eta = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let paper_cost = PassCost::quadratic(eta);
    let pairs: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.2)).collect();
    let paper = (eta, quality(&pairs, |x| eta * x));
    let n = points.len();
    if n < 4 {
        return Some(PassFit {
            paper,
            extended: None,
            p_value: None,
        });
    }
    let [delta_s, beta, eta_x] = non_negative_least_squares(points, [true; 3]);
    let cost = PassCost {
        delta_s,
        beta,
        eta: eta_x,
    };
    let predicted: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (cost.delta_s + cost.beta * p.0 + cost.eta * p.1, p.2))
        .collect();
    let extended = (cost, quality(&predicted, |x| x));
    let (rss_paper, rss_extended) = (
        residual_sum_of_squares(points, &paper_cost),
        residual_sum_of_squares(points, &cost),
    );
    let df = (n - 3) as f64;
    let p_value = if rss_extended <= 0.0 {
        Some(if rss_paper > 0.0 { 0.0 } else { 1.0 })
    } else {
        let f = ((rss_paper - rss_extended).max(0.0) / 2.0) / (rss_extended / df);
        FisherSnedecor::new(2.0, df).ok().map(|d| 1.0 - d.cdf(f))
    };
    Some(PassFit {
        paper,
        extended: Some(extended),
        p_value,
    })
}

fn quality(pairs: &[(f64, f64)], predict: impl Fn(f64) -> f64) -> FitQuality {
    let n = pairs.len() as f64;
    let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let residuals: Vec<f64> = pairs.iter().map(|&(x, y)| y - predict(x)).collect();
    let ss_res: f64 = residuals.iter().map(|r| r * r).sum();
    let ss_tot: f64 = pairs.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let mut rel: Vec<f64> = residuals
        .iter()
        .zip(pairs)
        .map(|(r, p)| (r / p.1).abs())
        .collect();
    rel.sort_by(f64::total_cmp);
    FitQuality {
        samples: pairs.len(),
        r2: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        },
        residual_mean_s: residuals.iter().sum::<f64>() / n,
        residual_max_abs_s: residuals.iter().fold(0.0, |m, r| m.max(r.abs())),
        residual_median_rel: rel[rel.len() / 2],
    }
}

/// Both forms for forward and backward passes (see [`PassFit`]); ordinary least squares for
/// the decode iteration's δ_0 and δ_1.
pub fn fit(samples: &[Sample]) -> Fit {
    let points = |kind: SampleKind| -> Vec<PassPoint> {
        samples
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| {
                let (c, l) = (s.batch as f64, s.tokens as f64);
                (c * l, c * l * l, s.stage_s)
            })
            .collect()
    };
    let decode_pairs: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.kind == SampleKind::Decode)
        .map(|s| (s.tokens as f64, s.stage_s))
        .collect();
    let decode = (!decode_pairs.is_empty()).then(|| {
        let n = decode_pairs.len() as f64;
        let mx = decode_pairs.iter().map(|p| p.0).sum::<f64>() / n;
        let my = decode_pairs.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = decode_pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = decode_pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let d1 = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let d0 = my - d1 * mx;
        ((d0, d1), quality(&decode_pairs, |x| d0 + d1 * x))
    });
    Fit {
        forward: fit_pass(&points(SampleKind::Forward)),
        backward: fit_pass(&points(SampleKind::Backward)),
        decode,
    }
}
