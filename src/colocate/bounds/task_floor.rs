//! What every schedule gives a task at least (`TaskFloor`), and the objective's unit of time,
//! which every part of the bounds shares.

use crate::colocate::setup::Setup;

/// What every schedule gives a task at least, measured on an idle cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFloor {
    /// A request's prefill through every stage, S · Δ_F(1, prompt); a training task's S
    /// forwards and S backwards.
    pub first_s: f64,
    /// Per decode iteration k of a request: its full-pipeline latency with the request alone,
    /// S · (δ_0 + δ_1 · (prompt + k)); suffix sums, so `decode_after[k]` is the floor of
    /// iterations k.. (length output + 1).
    pub decode_after: Vec<f64>,
    /// `slo_miss` when the prefill alone exceeds τ_R (a certain miss), else 0.
    pub certain_miss: f64,
    /// The task never fits a GPU's memory (its floors then include the waits and transfers
    /// that forces, `memory_task_floors`).
    pub never_fits: bool,
}

impl TaskFloor {
    /// The idle-cluster time from arrival (release) to completion.
    pub fn total_s(&self) -> f64 {
        self.first_s + self.decode_after.first().copied().unwrap_or(0.0)
    }
}

/// τ_R, the objective's unit of time.
pub(super) fn tau(setup: &Setup) -> f64 {
    (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12)
}
