//! The independent checker of a co-location run: it reads only the op timeline and the task
//! set, and checks that no stage runs two ops at once, that every task's ops respect pipeline
//! order on one node, that memory never exceeds a GPU's capacity (offloaded forwards excepted),
//! and that the counted outcomes match the timeline.
//!
//! The full replay (`reference`) is the checker of record; the linear pass (`certify`, with its
//! memory replay in `memory`) exists only to spare long runs the replay's sorts and may only
//! say yes where the replay does, so the two sit in separate files to be read side by side.
//! Re-deriving the reported metrics (`metrics`) judges the numbers, not the timeline, and
//! shares no code with either.

mod certify;
mod memory;
mod metrics;
mod reference;

pub use self::certify::{certify, certify_scanning_halves_from};
pub use self::metrics::{MetricBasis, verify_metrics};
pub use self::reference::verify_run_reference;

use crate::plan::colocation::{ColocationRun, RunBounds, Task};

/// Checks a run; `Err` names the first violation.
///
/// A run the engine produced has millions of ops (a decode iteration per token and stage), so
/// the checks first run in one linear pass that exploits the order the timeline is normally in
/// (`certify`); it accepts only runs that the full replay (`verify_run_reference`) accepts,
/// and anything it cannot certify — a violation, or a timeline out of its usual order — goes to
/// that replay, which names the first violation exactly as before.
pub fn verify_run(cfg: &RunBounds, tasks: &[Task], run: &ColocationRun) -> Result<(), String> {
    if run.ops.overflowed() {
        return Err(
            "the op log overflowed (more than 65 536 nodes, 2 048 stages or 2^32 task \
             lists): the timeline is incomplete"
                .into(),
        );
    }
    if certify(cfg, tasks, run) {
        return Ok(());
    }
    verify_run_reference(cfg, tasks, run)
}
