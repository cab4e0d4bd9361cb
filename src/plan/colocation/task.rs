//! The task set of a co-location workload: what each task computes and when it is submitted.

use serde::Serialize;

/// Index of a task in the task set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TaskId(pub u32);

impl TaskId {
    /// The task's position in the task set, for indexing per-task vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a task computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TaskKind {
    /// Prefill of `prompt_tokens`, then `output_tokens` decode iterations on the same node.
    Inference {
        /// Tokens of the prompt, processed by the prefill forward.
        prompt_tokens: u32,
        /// Tokens to generate: one decode iteration each.
        output_tokens: u32,
    },
    /// Forward through all stages, then backward from the last stage to the first.
    Training {
        /// Tokens per sequence.
        tokens: u32,
        /// Sequences per batch (C in Δ = η · C · ℓ²).
        batch: u32,
    },
}

/// One task of the task set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    /// The task's index in the task set.
    pub id: TaskId,
    /// Inference request or training task, with its size.
    pub kind: TaskKind,
    /// Submission: an inference request's arrival; a training task's submission (every
    /// training task is submitted at 0 and released by A-PP at run time).
    pub arrival_s: f64,
}

impl Task {
    /// Whether this is a training task (forward then backward) rather than an inference request.
    pub fn is_training(&self) -> bool {
        matches!(self.kind, TaskKind::Training { .. })
    }

    /// (prompt, output) tokens of an inference request; `None` for a training task.
    pub fn inference_tokens(&self) -> Option<(u32, u32)> {
        match self.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => Some((prompt_tokens, output_tokens)),
            TaskKind::Training { .. } => None,
        }
    }

    /// (batch, tokens) of the task's forward pass.
    pub fn forward_shape(&self) -> (u32, u32) {
        match self.kind {
            TaskKind::Inference { prompt_tokens, .. } => (1, prompt_tokens),
            TaskKind::Training { tokens, batch } => (batch, tokens),
        }
    }
}
