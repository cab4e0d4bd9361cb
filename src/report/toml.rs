//! Generated TOML: workloads written by importers and the `[model]` fragment of a latency fit,
//! serialised with the `toml` crate (comments, which TOML serialisers do not write, go first).

use serde::Serialize;

use crate::colocate::latency::{Fit, FitQuality};
use crate::spec::ColocationSpec;

fn with_comments(comments: &[String], body: Result<String, toml::ser::Error>) -> String {
    let mut out: String = comments.iter().map(|c| format!("{c}\n")).collect();
    match body {
        Ok(text) => out.push_str(&text),
        Err(e) => out.push_str(&format!("# cannot serialise: {e}\n")),
    }
    out
}

/// A co-location workload spec, after its comment lines.
pub fn colocation_workload(comments: &[String], spec: &ColocationSpec) -> String {
    with_comments(comments, toml::to_string(spec))
}

/// The fitted keys of a workload's `[model]` section.
#[derive(Serialize)]
struct FittedModel {
    #[serde(skip_serializing_if = "Option::is_none")]
    eta_forward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eta_backward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decode_base_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decode_per_token_s: Option<f64>,
}

#[derive(Serialize)]
struct ModelFragment {
    model: FittedModel,
}

fn quality_line(name: &str, q: &FitQuality) -> String {
    format!(
        "# {name}: {} samples, R² = {:.4}, residual mean {:.3e} s, max |residual| {:.3e} s, median relative {:.2} %",
        q.samples,
        q.r2,
        q.residual_mean_s,
        q.residual_max_abs_s,
        q.residual_median_rel * 100.0
    )
}

/// The fit as a `[model]` fragment, its quality as comments above it.
pub fn model_fit(fit: &Fit) -> String {
    let mut comments =
        vec!["# Fitted by `coplan profile fit`; merge into the workload's [model] section.".into()];
    if let Some((_, q)) = &fit.eta_forward {
        comments.push(quality_line("forward", q));
    }
    if let Some((_, q)) = &fit.eta_backward {
        comments.push(quality_line("backward", q));
    }
    if let Some((_, q)) = &fit.decode {
        comments.push(quality_line("decode", q));
    }
    let fragment = ModelFragment {
        model: FittedModel {
            eta_forward: fit.eta_forward.map(|(eta, _)| eta),
            eta_backward: fit.eta_backward.map(|(eta, _)| eta),
            decode_base_s: fit.decode.map(|((d0, _), _)| d0),
            decode_per_token_s: fit.decode.map(|((_, d1), _)| d1),
        },
    };
    with_comments(&comments, toml::to_string(&fragment))
}
