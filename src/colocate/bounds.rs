//! Lower bounds on the canonical co-location objective that hold for every schedule the engine
//! can run, computed without a solver (DESIGN §10.3, bound (a): per-request floors).
//!
//! Validity. The objective is a sum over tasks, so a lower bound of each task's term bounds
//! the sum. A task is either dropped (it pays `dropped`) or completes. A completing task's
//! term is (completion − arrival) / τ_R plus, for a request, `slo_miss` when R > τ_R. Whatever
//! else shares its node, a task's own ops run one after another in pipeline order, each at
//! least as long as the engine makes it on an idle cluster:
//! - a request's prefill takes S · Δ_F(1, prompt) (forwards are never shortened; offloads and
//!   waits only add), so R ≥ S · Δ_F, and a request with S · Δ_F > τ_R misses for certain;
//! - its k-th decode iteration (k = 0 … output − 1) passes every stage and lasts at least
//!   δ_0 + δ_1 · (prompt + k) on each (the iteration's context sums over its group, which
//!   contains the request; reloads only add);
//! - a training task runs S forwards and S backwards after its release, which is its arrival.
//!
//! So each task's term is at least min(`dropped`, miss + floor / τ_R), and their sum is a
//! lower bound of every planner's objective.

use super::setup::Setup;
use crate::plan::colocation::TaskKind;

/// Σ over tasks of their per-task floor.
pub fn request_floors(setup: &Setup) -> f64 {
    let cfg = &setup.config;
    let stages = cfg.stages as f64;
    let weights = &setup.spec.objective;
    let tau = (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12);
    setup
        .tasks
        .iter()
        .map(|task| {
            let (miss, time) = match task.kind {
                TaskKind::Inference {
                    prompt_tokens,
                    output_tokens,
                } => {
                    let prefill = stages * cfg.latency.forward_s(1, prompt_tokens);
                    let decode: f64 = (0..output_tokens)
                        .map(|k| stages * cfg.latency.decode_s(u64::from(prompt_tokens + k)))
                        .sum();
                    let miss = if prefill > tau + 1e-12 {
                        weights.slo_miss
                    } else {
                        0.0
                    };
                    (miss, prefill + decode)
                }
                TaskKind::Training { tokens, batch } => (
                    0.0,
                    stages
                        * (cfg.latency.forward_s(batch, tokens)
                            + cfg.latency.backward_s(batch, tokens)),
                ),
            };
            weights.dropped.min(miss + time / tau)
        })
        .sum()
}
