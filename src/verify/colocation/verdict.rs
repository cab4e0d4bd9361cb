//! The verifier's verdict on a run: the linear pass where it can certify, the full replay
//! otherwise.

use super::certify::certify;
use super::reference::verify_run_reference;
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
