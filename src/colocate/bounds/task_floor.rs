//! What every schedule gives a task at least (`TaskFloor`), which every bound builds on, and
//! whether the spec lets the engine drop tasks, which decides which bounds apply.

use crate::colocate::setup::Setup;
use crate::plan::colocation::{TaskKind, slo_met};
use crate::spec::colocation::MemoryTimeout;

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

/// Per task: its floors (see `TaskFloor`).
pub fn task_floors(setup: &Setup) -> Vec<TaskFloor> {
    let cfg = &setup.config;
    let stages = cfg.stages as f64;
    let tau = setup.objective_unit_s();
    setup
        .tasks
        .iter()
        .map(|task| match task.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                let prefill = stages * cfg.latency.forward_s(1, prompt_tokens);
                let mut decode_after = vec![0.0; output_tokens as usize + 1];
                for k in (0..output_tokens).rev() {
                    decode_after[k as usize] = decode_after[k as usize + 1]
                        + stages * cfg.latency.decode_s(u64::from(prompt_tokens + k));
                }
                TaskFloor {
                    first_s: prefill,
                    decode_after,
                    certain_miss: if slo_met(prefill, tau) {
                        0.0
                    } else {
                        setup.spec.objective.slo_miss
                    },
                    never_fits: false,
                }
            }
            TaskKind::Training { tokens, batch } => TaskFloor {
                first_s: stages
                    * (cfg.latency.forward_s(batch, tokens)
                        + cfg.latency.backward_s(batch, tokens)),
                decode_after: vec![0.0],
                certain_miss: 0.0,
                never_fits: false,
            },
        })
        .collect()
}

/// Whether the engine can drop a task under this spec (memory timeouts drop instead of
/// offloading).
pub(super) fn drops_possible(setup: &Setup) -> bool {
    setup.config.on_timeout == MemoryTimeout::Drop
}
