//! The timeline of one planner's run: its ops and what happened to each task.

use serde::Serialize;

use super::op_log::OpLog;
use super::slo::slo_met;
use super::task::TaskId;

/// What happened to one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskOutcome {
    /// The task this outcome is of.
    pub task: TaskId,
    /// Whether it is a training task (else an inference request).
    pub training: bool,
    /// Node the planner assigned it to; `None` if it was never placed.
    pub node: Option<usize>,
    /// When the task was submitted: a request's arrival, a training task's submission. The
    /// canonical objective counts every task's time from here.
    pub arrival_s: f64,
    /// When A-PP first offered a training task to the planners (at or after its submission);
    /// `None` for a request and for a training task never released.
    pub released_s: Option<f64>,
    /// Start of its first forward on stage 0 (seconds); `None` if it never started.
    pub start_s: Option<f64>,
    /// End of the last stage's forward (inference: the response time R is this − arrival).
    pub prefill_end_s: Option<f64>,
    /// Completion: an inference request's last decode iteration, a training task's stage-0
    /// backward; `None` if it did not complete.
    pub end_s: Option<f64>,
    /// Whether it was dropped after waiting `max_wait_s` for memory (`on_memory_timeout = "drop"`).
    pub dropped: bool,
    /// Whether its memory was moved to the host after waiting `max_wait_s` (`on_memory_timeout =
    /// "offload"`).
    pub offloaded: bool,
    /// Times of the decoded tokens.
    #[serde(skip)]
    pub token_times: Vec<f64>,
    /// Training tasks complete cluster-wide that the serving replica had not seen at prefill.
    pub staleness: Option<u64>,
    /// Times a training task was deprioritised (deferred to the next inference arrival) before it
    /// was placed.
    pub deferrals: u32,
}

impl TaskOutcome {
    /// A request's verdict against an SLO of `slo_s` seconds: served (not dropped) with its
    /// first token within it. `None` for a training task, which has no SLO.
    pub fn slo_met(&self, slo_s: f64) -> Option<bool> {
        (!self.training).then(|| {
            !self.dropped
                && self
                    .prefill_end_s
                    .is_some_and(|e| slo_met(e - self.arrival_s, slo_s))
        })
    }
}

/// The timeline of one planner's run on the discrete-event engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ColocationRun {
    /// Every op executed, in the order they ended.
    pub ops: OpLog,
    /// One outcome per task, indexed by `TaskId`.
    pub outcomes: Vec<TaskOutcome>,
}

/// What the run verifier needs of the engine's configuration: the cluster's shape and the
/// memory model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBounds {
    /// Co-location nodes the run may use.
    pub nodes: usize,
    /// Pipeline stages per node (one GPU each).
    pub stages: usize,
    /// Memory of one GPU, in MiB.
    pub gpu_memory_mib: f64,
    /// Model weights held on every stage, in MiB.
    pub weights_mib: f64,
    /// KV cache per token in context of an active request, per stage, in MiB.
    pub kv_mib_per_token: f64,
    /// Activations per token of an in-flight training task, per stage, in MiB.
    pub activation_mib_per_token: f64,
}
