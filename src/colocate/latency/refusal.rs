//! A fit checked against what a workload's `[model]` accepts.

use super::fit::{Fit, fit};
use super::samples::{Sample, SampleKind};
use crate::spec::limits::{MAX_FACTOR, MAX_GPUS_PER_SERVER, MIN_SLO_S};

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
