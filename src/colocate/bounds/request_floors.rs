//! (a) The request floors: every task's idle-cluster floor, summed.

use super::task_floor::task_floors;
use crate::colocate::setup::Setup;

/// (a) Σ over tasks of min(`dropped`, certain miss + idle-cluster time / τ_R).
pub fn request_floors(setup: &Setup) -> f64 {
    let tau = setup.objective_unit_s();
    let dropped = setup.spec.objective.dropped;
    task_floors(setup)
        .iter()
        .map(|f| dropped.min(f.certain_miss + f.total_s() / tau))
        .sum()
}
