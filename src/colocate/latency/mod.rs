//! The profiled latency model of LeMix (DESIGN §6.1) and its fit from measured samples.
//!
//! Per stage: forward Δ_F = δ_F + β_F · C · ℓ + η_F · C · ℓ², backward likewise with δ_B, β_B,
//! η_B (C batch size, ℓ tokens; δ = β = 0 is the paper's model); one decode iteration
//! Δ_D = δ_0 + δ_1 · ctx (ctx = tokens in context over the batch).

mod fit;
mod model;
mod refusal;
mod samples;
#[cfg(test)]
mod tests;

pub use self::fit::{EXTENDED_FORM_ALPHA, Fit, FitQuality, PassFit, fit};
pub use self::model::{LatencyModel, PassCost};
pub use self::refusal::{FitRefusal, fit_for_spec};
pub use self::samples::{Sample, SampleKind, parse_samples, parse_samples_at_lines};
