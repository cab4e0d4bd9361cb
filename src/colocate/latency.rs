//! The profiled latency model of LeMix (DESIGN §6.1) and its fit from measured samples.
//!
//! Per stage: forward Δ_F = δ_F + β_F · C · ℓ + η_F · C · ℓ², backward likewise with δ_B, β_B,
//! η_B (C batch size, ℓ tokens; δ = β = 0 is the paper's model); one decode iteration
//! Δ_D = δ_0 + δ_1 · ctx (ctx = tokens in context over the batch).

use crate::spec::limits::{
    MAX_BATCH, MAX_FACTOR, MAX_GPUS_PER_SERVER, MAX_OPERATION_S, MAX_TOKENS, MIN_SLO_S,
};
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use super::trace::{RowError, csv_records};
use crate::spec::colocation::ModelProfile;

/// Coefficients of the latency model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyModel {
    /// Cost of one forward (prefill) pass through a stage.
    pub forward: PassCost,
    /// Cost of one training backward pass through a stage.
    pub backward: PassCost,
    /// δ_0: fixed seconds of one decode iteration on one stage.
    pub decode_base_s: f64,
    /// δ_1: seconds per token in context (summed over the batch) of one decode iteration on one
    /// stage.
    pub decode_per_token_s: f64,
}

/// The cost of one pass (forward or backward) through a stage: δ + β · C · ℓ + η · C · ℓ².
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassCost {
    /// δ: fixed seconds per pass (0 in the paper's model).
    pub delta_s: f64,
    /// β: seconds per (sequence · token), the linear term (0 in the paper's model).
    pub beta: f64,
    /// η: seconds per (sequence · token²), the quadratic term.
    pub eta: f64,
}

impl PassCost {
    /// The paper's model: η · C · ℓ² only.
    pub fn quadratic(eta: f64) -> Self {
        PassCost {
            delta_s: 0.0,
            beta: 0.0,
            eta,
        }
    }

    /// Seconds for a batch of `batch` sequences of `tokens` tokens (fractional for means).
    pub fn seconds(&self, batch: f64, tokens: f64) -> f64 {
        self.delta_s + self.beta * batch * tokens + self.eta * batch * tokens.powi(2)
    }
}

impl LatencyModel {
    /// The model of a spec's `[model]` profile.
    pub fn from_profile(m: &ModelProfile) -> Self {
        LatencyModel {
            forward: PassCost {
                delta_s: m.delta_forward_s,
                beta: m.beta_forward,
                eta: m.eta_forward,
            },
            backward: PassCost {
                delta_s: m.delta_backward_s,
                beta: m.beta_backward,
                eta: m.eta_backward,
            },
            decode_base_s: m.decode_base_s,
            decode_per_token_s: m.decode_per_token_s,
        }
    }

    /// Seconds of one forward pass through one stage: Δ_F for `batch` sequences of `tokens` tokens.
    pub fn forward_s(&self, batch: u32, tokens: u32) -> f64 {
        self.forward.seconds(batch as f64, tokens as f64)
    }

    /// Seconds of one backward pass through one stage: Δ_B for `batch` sequences of `tokens`
    /// tokens.
    pub fn backward_s(&self, batch: u32, tokens: u32) -> f64 {
        self.backward.seconds(batch as f64, tokens as f64)
    }

    /// Seconds of one decode iteration through one stage with `context_tokens` tokens in context
    /// over the batch: Δ_D = δ_0 + δ_1 · ctx.
    pub fn decode_s(&self, context_tokens: u64) -> f64 {
        self.decode_base_s + self.decode_per_token_s * context_tokens as f64
    }
}

/// What a sample measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleKind {
    /// A forward (prefill) pass through one stage.
    Forward,
    /// A training backward pass through one stage.
    Backward,
    /// One decode iteration through one stage.
    Decode,
}

/// One measured stage latency: `kind,batch,tokens,stage_s` (for decode, `tokens` is the
/// context length over the batch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Which op was measured.
    pub kind: SampleKind,
    /// Sequences in the batch (≥ 1).
    pub batch: u32,
    /// Tokens per sequence (≥ 1); for decode, the context length over the batch.
    pub tokens: u32,
    /// Measured latency of the op on one stage, in seconds (> 0).
    pub stage_s: f64,
}

/// Parses `kind,batch,tokens,stage_s` (a header line is optional; `#` lines are comments).
pub fn parse_samples(text: &str) -> Result<Vec<Sample>, RowError> {
    Ok(parse_samples_at_lines(text)?
        .into_iter()
        .map(|(_, s)| s)
        .collect())
}

/// [`parse_samples`], each sample with its line (from 1), so that a refused fit can point at
/// the samples it was fitted to.
pub fn parse_samples_at_lines(text: &str) -> Result<Vec<(usize, Sample)>, RowError> {
    let mut out = Vec::new();
    for record in csv_records(text) {
        let (line, cells) = record.map_err(|(line, message)| RowError { line, message })?;
        if line == 1 && cells.first().is_some_and(|c| c.starts_with("kind")) {
            continue;
        }
        let err = |message: String| RowError { line, message };
        if cells.len() != 4 {
            return Err(err(format!(
                "expected 4 columns `kind,batch,tokens,stage_s`, found {}",
                cells.len()
            )));
        }
        let kind = match cells[0].as_str() {
            "forward" => SampleKind::Forward,
            "backward" => SampleKind::Backward,
            "decode" => SampleKind::Decode,
            other => {
                return Err(err(format!(
                    "unknown kind `{other}`: expected forward, backward or decode"
                )));
            }
        };
        let batch: u32 = cells[1]
            .parse()
            .map_err(|_| err(format!("batch `{}` is not a positive integer", &cells[1])))?;
        let tokens: u32 = cells[2]
            .parse()
            .map_err(|_| err(format!("tokens `{}` is not a positive integer", &cells[2])))?;
        let stage_s: f64 = cells[3]
            .parse()
            .map_err(|_| err(format!("stage_s `{}` is not a number", &cells[3])))?;
        if batch == 0 || tokens == 0 || !(stage_s.is_finite() && stage_s > 0.0) {
            return Err(err("batch and tokens must be ≥ 1 and stage_s > 0".into()));
        }
        // Bounded like the specs the fit is written into, so every sum of the fit stays finite.
        if i64::from(batch) > MAX_BATCH
            || i64::from(tokens) > MAX_TOKENS
            || stage_s > MAX_OPERATION_S
        {
            return Err(err(format!(
                "batch ≤ {MAX_BATCH}, tokens ≤ {MAX_TOKENS} and stage_s ≤ {MAX_OPERATION_S:e} are coplan's limits (docs/spec.md, \"Limits\")"
            )));
        }
        out.push((
            line,
            Sample {
                kind,
                batch,
                tokens,
                stage_s,
            },
        ));
    }
    Ok(out)
}

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

/// The largest `slo_factor` a workload may set and the most pipeline stages it may have (one
/// per GPU of a server): with both, the shortest SLO a `[model]` allows is the longest. A fit
/// whose one-token forward pass is too short even then is refused by every workload.
const MOST_SLO_FACTOR: f64 = MAX_FACTOR;
/// See [`MOST_SLO_FACTOR`].
const MOST_STAGES: f64 = MAX_GPUS_PER_SERVER as f64;

/// Measurements that differ by less than this share of the largest do not vary: R² has no
/// variance to explain (its 1 − SS_res / SS_tot divides by rounding), and a slope fitted to
/// them is noise.
const CONSTANT_SPREAD: f64 = 1e-6;

/// Why a fit cannot be written as a `[model]` section: the coefficient, its value and what a
/// workload requires of it (or why the samples cannot be fitted at all).
#[derive(Debug, Clone, PartialEq)]
pub struct FitRefusal {
    /// The line of the first sample of the kind at fault.
    pub line: usize,
    /// The kind of sample at fault.
    pub kind: SampleKind,
    /// What is wrong and what to do.
    pub message: String,
}

impl SampleKind {
    /// The kind as a samples file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleKind::Forward => "forward",
            SampleKind::Backward => "backward",
            SampleKind::Decode => "decode",
        }
    }
}

/// [`fit`] of samples read with their lines, refused where a workload's `[model]` would refuse
/// a fitted coefficient (`eta_*` > 0, every other coefficient ≥ 0, all finite, a forward pass
/// no workload's SLO is too short for), or where the measurements of a kind do not vary (R²
/// is then undefined, and what the fit says of growth is rounding).
pub fn fit_for_spec(samples: &[(usize, Sample)]) -> Result<Fit, FitRefusal> {
    let kinds = [
        SampleKind::Forward,
        SampleKind::Backward,
        SampleKind::Decode,
    ];
    let first_line = |kind: SampleKind| {
        samples
            .iter()
            .find(|(_, s)| s.kind == kind)
            .map_or(1, |(line, _)| *line)
    };
    for kind in kinds {
        let measured: Vec<f64> = samples
            .iter()
            .filter(|(_, s)| s.kind == kind)
            .map(|(_, s)| s.stage_s)
            .collect();
        let (low, high) = measured
            .iter()
            .fold((f64::MAX, 0.0_f64), |(lo, hi), &y| (lo.min(y), hi.max(y)));
        if !measured.is_empty() && high - low <= CONSTANT_SPREAD * high {
            let grows_with = match kind {
                SampleKind::Decode => "the context (`decode_per_token_s`)".to_string(),
                _ => format!(
                    "the batch and the tokens (`eta_{}`, which a workload's [model] requires > 0)",
                    kind.as_str()
                ),
            };
            let what = match measured.len() {
                1 => format!("the one {} sample measures {high} s", kind.as_str()),
                n => format!("the {n} {} samples all measure {high} s", kind.as_str()),
            };
            return Err(FitRefusal {
                line: first_line(kind),
                kind,
                message: format!(
                    "{what}: measurements that do not vary cannot be fitted (R² is undefined: there is no variance to explain) and cannot tell how the latency grows with {grows_with}; measure several sizes"
                ),
            });
        }
    }
    let fit = fit(&samples.iter().map(|(_, s)| *s).collect::<Vec<_>>());
    let refuse = |kind: SampleKind, message: String| FitRefusal {
        line: first_line(kind),
        kind,
        message,
    };
    for (kind, pass) in [
        (SampleKind::Forward, &fit.forward),
        (SampleKind::Backward, &fit.backward),
    ] {
        let Some(pass) = pass else { continue };
        let cost = pass.chosen();
        let name = kind.as_str();
        let form = if pass.extended_supported() {
            "the extended form δ + β·C·ℓ + η·C·ℓ², which the F-test prefers,"
        } else {
            "the paper form η·C·ℓ²"
        };
        for (key, value) in [
            (format!("delta_{name}_s"), cost.delta_s),
            (format!("beta_{name}"), cost.beta),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(refuse(
                    kind,
                    format!(
                        "{form} fits these samples with {key} = {}, but a workload's [model] requires {key} ≥ 0",
                        number(value)
                    ),
                ));
            }
        }
        if !(cost.eta.is_finite() && cost.eta > 0.0) {
            let points: Vec<(f64, f64)> = samples
                .iter()
                .filter(|(_, s)| s.kind == kind)
                .map(|(_, s)| {
                    let (c, l) = (f64::from(s.batch), f64::from(s.tokens));
                    (c * l * l, s.stage_s)
                })
                .collect();
            let trend = if covariance(&points) < 0.0 {
                "they take less time as C·ℓ² grows"
            } else {
                "they do not grow with C·ℓ²"
            };
            return Err(refuse(
                kind,
                format!(
                    "{form} fits these samples with eta_{name} = {} ({trend}), but a workload's [model] requires eta_{name} > 0",
                    number(cost.eta)
                ),
            ));
        }
    }
    if let Some(pass) = &fit.forward {
        let cost = pass.chosen();
        let base = cost.delta_s + cost.beta + cost.eta;
        let longest = MOST_SLO_FACTOR * MOST_STAGES * base;
        if longest < MIN_SLO_S {
            return Err(refuse(
                SampleKind::Forward,
                format!(
                    "a one-token forward pass takes δ_F + β_F + η_F = {} s on a stage: even at `slo_factor` {MOST_SLO_FACTOR:e} over {MOST_STAGES} stages its SLO would be {} s, below the limit of {MIN_SLO_S:e} s every workload's [model] keeps to",
                    number(base),
                    number(longest)
                ),
            ));
        }
    }
    if let Some(((d0, d1), _)) = fit.decode {
        if !(d1.is_finite() && d1 >= 0.0) {
            return Err(refuse(
                SampleKind::Decode,
                format!(
                    "the decode samples' line has decode_per_token_s = {} (they take less time as the context grows), but a workload's [model] requires decode_per_token_s ≥ 0",
                    number(d1)
                ),
            ));
        }
        if !(d0.is_finite() && d0 >= 0.0) {
            return Err(refuse(
                SampleKind::Decode,
                format!(
                    "the decode samples' line has decode_base_s = {} (it crosses 0 s at a context above zero), but a workload's [model] requires decode_base_s ≥ 0",
                    number(d0)
                ),
            ));
        }
    }
    Ok(fit)
}

/// A coefficient as a refusal quotes it: `0`, or with an exponent (`-1.2e-4`).
fn number(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v:e}")
    }
}

/// The sample covariance of (x, y): its sign says whether y rises or falls with x.
fn covariance(points: &[(f64, f64)]) -> f64 {
    let n = points.len().max(1) as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_known_coefficients() {
        let truth = LatencyModel {
            forward: PassCost::quadratic(2.0e-6),
            backward: PassCost::quadratic(1.0e-6),
            decode_base_s: 0.012,
            decode_per_token_s: 2.0e-6,
        };
        let mut samples = Vec::new();
        for (batch, tokens) in [(1, 128), (1, 512), (2, 256), (4, 1024), (8, 64)] {
            samples.push(Sample {
                kind: SampleKind::Forward,
                batch,
                tokens,
                stage_s: truth.forward_s(batch, tokens),
            });
            samples.push(Sample {
                kind: SampleKind::Backward,
                batch,
                tokens,
                stage_s: truth.backward_s(batch, tokens),
            });
            samples.push(Sample {
                kind: SampleKind::Decode,
                batch,
                tokens,
                stage_s: truth.decode_s(tokens as u64),
            });
        }
        let f = fit(&samples);
        let forward = f.forward.expect("forward samples");
        let (eta_f, qf) = forward.paper;
        assert!((eta_f - 2.0e-6).abs() < 1e-15 && (qf.r2 - 1.0).abs() < 1e-12);
        assert!(
            !forward.extended_supported(),
            "exact quadratic data: the paper's form"
        );
        assert_eq!(forward.chosen(), PassCost::quadratic(eta_f));
        assert!((f.backward.expect("backward").paper.0 - 1.0e-6).abs() < 1e-15);
        let ((d0, d1), _) = f.decode.expect("decode");
        assert!((d0 - 0.012).abs() < 1e-12 && (d1 - 2.0e-6).abs() < 1e-15);
    }

    fn at_lines(rows: &[(SampleKind, u32, u32, f64)]) -> Vec<(usize, Sample)> {
        rows.iter()
            .enumerate()
            .map(|(i, &(kind, batch, tokens, stage_s))| {
                (
                    i + 2,
                    Sample {
                        kind,
                        batch,
                        tokens,
                        stage_s,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn constant_samples_are_refused_saying_r2_is_undefined() {
        use SampleKind::*;
        // 0.1 is not a binary fraction: the mean of the copies is off by rounding, and the old
        // R² divided by that rounding.
        for y in [0.5, 0.1] {
            let samples = at_lines(&[
                (Decode, 1, 64, 0.01),
                (Decode, 1, 128, 0.02),
                (Forward, 1, 128, y),
                (Forward, 2, 256, y),
                (Forward, 4, 512, y),
                (Forward, 8, 1024, y),
                (Forward, 1, 64, y),
            ]);
            let e = fit_for_spec(&samples).expect_err("constant");
            assert_eq!((e.line, e.kind), (4, Forward), "{e:?}");
            assert!(
                e.message
                    .starts_with(&format!("the 5 forward samples all measure {y} s"))
            );
            assert!(e.message.contains("R² is undefined"), "{e:?}");
        }
        let one = at_lines(&[(Backward, 1, 128, 0.2)]);
        let e = fit_for_spec(&one).expect_err("one sample");
        assert!(
            e.message
                .starts_with("the one backward sample measures 0.2 s"),
            "{e:?}"
        );
    }

    #[test]
    fn declining_samples_whose_fit_a_workload_refuses_are_refused() {
        use SampleKind::*;
        let mut rows = Vec::new();
        for (i, tokens) in [64u32, 128, 256, 512, 1024, 2048, 4096, 8192]
            .iter()
            .enumerate()
        {
            rows.push((Forward, 1, *tokens, 0.9 - 0.1 * i as f64));
        }
        let e = fit_for_spec(&at_lines(&rows)).expect_err("declining forward");
        assert_eq!(e.kind, Forward);
        assert!(
            e.message
                .contains("eta_forward = 0 (they take less time as C·ℓ² grows)")
                && e.message.contains("requires eta_forward > 0"),
            "{e:?}"
        );
        let decode = at_lines(&[
            (Decode, 1, 100, 0.03),
            (Decode, 1, 200, 0.02),
            (Decode, 1, 300, 0.01),
        ]);
        let e = fit_for_spec(&decode).expect_err("declining decode");
        assert!(e.message.contains("decode_per_token_s = -1e-4"), "{e:?}");
        let steep = at_lines(&[(Decode, 1, 100, 0.01), (Decode, 1, 200, 0.03)]);
        let e = fit_for_spec(&steep).expect_err("negative base");
        assert!(e.message.contains("decode_base_s = -1"), "{e:?}");
    }

    #[test]
    fn a_forward_pass_too_short_for_any_slo_is_refused() {
        use SampleKind::*;
        let tiny = at_lines(&[(Forward, 1, 128, 1e-30), (Forward, 1, 256, 4e-30)]);
        let e = fit_for_spec(&tiny).expect_err("too short");
        assert!(e.message.contains("below the limit of 1e-9 s"), "{e:?}");
    }

    #[test]
    fn measured_profiles_fit() {
        let text = std::fs::read_to_string("examples/profiles/llama-3-8b-a100-2-stages.csv")
            .expect("example profile");
        let samples = parse_samples_at_lines(&text).expect("valid samples");
        let fit = fit_for_spec(&samples).expect("a fit a workload accepts");
        assert!(fit.forward.is_some_and(|f| f.extended_supported()));
    }

    #[test]
    fn malformed_rows_name_their_line() {
        let e = parse_samples("kind,batch,tokens,stage_s\nforward,1,128,0.03\nforwrd,1,2,0.1\n")
            .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("unknown kind"));
        let e = parse_samples("forward,1,x,0.1").unwrap_err();
        assert_eq!((e.line, e.message.contains("tokens")), (1, true));
        assert!(parse_samples("forward,1,2").is_err());
    }
}
