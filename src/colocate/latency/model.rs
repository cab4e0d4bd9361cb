//! The latency model's coefficients and what a pass costs under them.

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
