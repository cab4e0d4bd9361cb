//! Generated TOML: clusters and workloads written by importers and the `[model]` fragment of a latency fit,
//! serialised with the `toml` crate (comments, which TOML serialisers do not write, go first).

use serde::Serialize;

use crate::colocate::latency::{Fit, FitQuality, PassCost, PassFit};
use crate::spec::{ClusterSpec, ColocationSpec, PreemptionSpec};

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

/// A cluster spec (what `coplan import` writes), after its comment lines.
pub fn cluster(comments: &[String], spec: &ClusterSpec) -> String {
    with_comments(comments, toml::to_string(spec))
}

/// A preemption workload spec, after its comment lines.
pub fn preemption_workload(comments: &[String], spec: &PreemptionSpec) -> String {
    with_comments(comments, toml::to_string(spec))
}

/// The fitted keys of a workload's `[model]` section; the extended terms only where the data
/// support them.
#[derive(Serialize)]
struct FittedModel {
    #[serde(skip_serializing_if = "Option::is_none")]
    eta_forward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_forward_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beta_forward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eta_backward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_backward_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beta_backward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decode_base_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decode_per_token_s: Option<f64>,
}

#[derive(Serialize)]
struct ModelFragment {
    model: FittedModel,
}

fn quality_text(q: &FitQuality) -> String {
    format!(
        "{} samples, R² = {:.4}, residual mean {:.3e} s, max |residual| {:.3e} s, median relative {:.2} %",
        q.samples,
        q.r2,
        q.residual_mean_s,
        q.residual_max_abs_s,
        q.residual_median_rel * 100.0
    )
}

/// Comment lines of one pass: both forms, the test between them, the verdict.
fn pass_comments(name: &str, f: &PassFit) -> Vec<String> {
    let mut out = vec![format!(
        "# {name}, paper form η·C·ℓ² (η = {:.4e}): {}",
        f.paper.0,
        quality_text(&f.paper.1)
    )];
    match (&f.extended, f.p_value) {
        (Some((c, q)), p) => {
            out.push(format!(
                "# {name}, extended form δ + β·C·ℓ + η·C·ℓ² (δ = {:.4e} s, β = {:.4e}, η = {:.4e}): {}",
                c.delta_s,
                c.beta,
                c.eta,
                quality_text(q)
            ));
            out.push(format!(
                "# {name}: F-test of the extended against the paper form, p = {}; the data support the {} form",
                p.map_or("-".into(), |p| format!("{p:.3e}")),
                if f.extended_supported() {
                    "extended"
                } else {
                    "paper"
                }
            ));
        }
        (None, _) => out.push(format!(
            "# {name}: too few samples for the extended form; the paper form is used"
        )),
    }
    out
}

/// The fit as a `[model]` fragment, its quality as comments above it.
pub fn model_fit(fit: &Fit) -> String {
    let mut comments =
        vec!["# Fitted by `coplan profile fit`; merge into the workload's [model] section.".into()];
    if let Some(f) = &fit.forward {
        comments.extend(pass_comments("forward", f));
    }
    if let Some(f) = &fit.backward {
        comments.extend(pass_comments("backward", f));
    }
    if let Some((_, q)) = &fit.decode {
        comments.push(format!("# decode: {}", quality_text(q)));
    }
    let extra = |f: &Option<PassFit>, pick: fn(&PassCost) -> f64| {
        f.as_ref()
            .filter(|f| f.extended_supported())
            .map(|f| pick(&f.chosen()))
    };
    let fragment = ModelFragment {
        model: FittedModel {
            eta_forward: fit.forward.map(|f| f.chosen().eta),
            delta_forward_s: extra(&fit.forward, |c| c.delta_s),
            beta_forward: extra(&fit.forward, |c| c.beta),
            eta_backward: fit.backward.map(|f| f.chosen().eta),
            delta_backward_s: extra(&fit.backward, |c| c.delta_s),
            beta_backward: extra(&fit.backward, |c| c.beta),
            decode_base_s: fit.decode.map(|((d0, _), _)| d0),
            decode_per_token_s: fit.decode.map(|((_, d1), _)| d1),
        },
    };
    with_comments(&comments, toml::to_string(&fragment))
}
