//! (d) The memory floors: the request floors once memory is seen.

use super::memory_cost::{memory_costs, memory_task_floors};
use super::task_floor::drops_possible;
use crate::colocate::setup::Setup;

/// (d) Per task, the least its term can be once memory is seen: `request_floors` with every
/// task that never fits offloaded on every stage (`memory_task_floors`), or, where memory
/// timeouts drop, dropped (its term is then exactly `dropped`).
pub fn memory_floors(setup: &Setup) -> f64 {
    let tau = setup.objective_unit_s();
    let dropped = setup.spec.objective.dropped;
    let drops = drops_possible(setup);
    memory_task_floors(setup)
        .iter()
        .zip(memory_costs(setup))
        .map(|(f, cost)| {
            let term = f.certain_miss + f.total_s() / tau;
            match (drops, cost.forced) {
                (true, true) => dropped,
                (true, false) => term.min(dropped),
                (false, _) => term,
            }
        })
        .sum()
}
