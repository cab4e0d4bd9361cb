//! The profiled latency model of LeMix (DESIGN §6.1) and its fit from measured samples.
//!
//! Per stage: forward Δ_F = η_F · C · ℓ², backward Δ_B = η_B · C · ℓ² (C batch size, ℓ tokens);
//! one decode iteration Δ_D = δ_0 + δ_1 · ctx (ctx = tokens in context over the batch).

use super::trace::{RowError, csv_records};
use crate::spec::colocation::ModelProfile;

/// Coefficients of the latency model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyModel {
    pub eta_forward: f64,
    pub eta_backward: f64,
    pub decode_base_s: f64,
    pub decode_per_token_s: f64,
}

impl LatencyModel {
    pub fn from_profile(m: &ModelProfile) -> Self {
        LatencyModel {
            eta_forward: m.eta_forward,
            eta_backward: m.eta_backward,
            decode_base_s: m.decode_base_s,
            decode_per_token_s: m.decode_per_token_s,
        }
    }

    pub fn forward_s(&self, batch: u32, tokens: u32) -> f64 {
        self.eta_forward * batch as f64 * (tokens as f64).powi(2)
    }

    pub fn backward_s(&self, batch: u32, tokens: u32) -> f64 {
        self.eta_backward * batch as f64 * (tokens as f64).powi(2)
    }

    pub fn decode_s(&self, context_tokens: u64) -> f64 {
        self.decode_base_s + self.decode_per_token_s * context_tokens as f64
    }
}

/// What a sample measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleKind {
    Forward,
    Backward,
    Decode,
}

/// One measured stage latency: `kind,batch,tokens,stage_s` (for decode, `tokens` is the
/// context length over the batch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub kind: SampleKind,
    pub batch: u32,
    pub tokens: u32,
    pub stage_s: f64,
}

/// Parses `kind,batch,tokens,stage_s` (a header line is optional; `#` lines are comments).
pub fn parse_samples(text: &str) -> Result<Vec<Sample>, RowError> {
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
        out.push(Sample {
            kind,
            batch,
            tokens,
            stage_s,
        });
    }
    Ok(out)
}

/// Goodness of one fitted relation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitQuality {
    pub samples: usize,
    /// 1 − SS_res / SS_tot (about the mean of the measurements).
    pub r2: f64,
    /// Mean and largest absolute residual, seconds.
    pub residual_mean_s: f64,
    pub residual_max_abs_s: f64,
    /// Median of |residual| / measurement.
    pub residual_median_rel: f64,
}

/// Fitted coefficients with their quality; `None` where no sample of that kind was given.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub eta_forward: Option<(f64, FitQuality)>,
    pub eta_backward: Option<(f64, FitQuality)>,
    /// (δ_0, δ_1).
    pub decode: Option<((f64, f64), FitQuality)>,
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

/// Least squares through the origin for η (x = C·ℓ²); ordinary least squares for δ.
pub fn fit(samples: &[Sample]) -> Fit {
    let through_origin = |kind: SampleKind| {
        let pairs: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| (s.batch as f64 * (s.tokens as f64).powi(2), s.stage_s))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        let sxy: f64 = pairs.iter().map(|(x, y)| x * y).sum();
        let sxx: f64 = pairs.iter().map(|(x, _)| x * x).sum();
        let eta = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        Some((eta, quality(&pairs, |x| eta * x)))
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
        eta_forward: through_origin(SampleKind::Forward),
        eta_backward: through_origin(SampleKind::Backward),
        decode,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_known_coefficients() {
        let truth = LatencyModel {
            eta_forward: 2.0e-6,
            eta_backward: 1.0e-6,
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
        let (eta_f, qf) = f.eta_forward.expect("forward samples");
        assert!((eta_f - 2.0e-6).abs() < 1e-15 && (qf.r2 - 1.0).abs() < 1e-12);
        assert!((f.eta_backward.expect("backward").0 - 1.0e-6).abs() < 1e-15);
        let ((d0, d1), _) = f.decode.expect("decode");
        assert!((d0 - 0.012).abs() < 1e-12 && (d1 - 2.0e-6).abs() < 1e-15);
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
