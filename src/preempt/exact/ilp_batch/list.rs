//! What the batch knows of its list before any MILP of the whole batch: its servers grouped by
//! identical state, their floors, and the proven bounds that need no such MILP.

use super::classes::{Class, classes};
use super::lagrangian::lagrangian;
use super::placement_floor::{placement_floor, server_floor};
use super::state_classes::{StateClass, state_classes};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::state::ClusterState;
use rayon::prelude::*;

/// What the batch knows of its list before any MILP: its servers grouped by identical state,
/// each state's per-instance floors, and the placement floor they sum to.
pub struct ListStructure {
    /// Servers in identical states (`state_classes`).
    pub states: Vec<StateClass>,
    /// Per state, per class: the floor of one instance by GPUs and by cores.
    pub floors: Vec<Vec<[f64; 2]>>,
    /// The placement floor of the whole list (a proven lower bound).
    pub floor: f64,
}

impl ListStructure {
    /// Groups the servers and prices their floors (one pass per state, not per server).
    pub fn new(
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        classes: &[Class],
    ) -> Self {
        let Some(top) = preemptors.iter().map(|p| p.priority).max() else {
            return ListStructure {
                states: Vec::new(),
                floors: Vec::new(),
                floor: 0.0,
            };
        };
        let states = state_classes(problem, initial, preemptors, classes, top);
        let floors: Vec<Vec<[f64; 2]>> = states
            .par_iter()
            .map(|s| {
                let server = s.representative().server;
                server_floor(problem, (initial, preemptors, classes), server, top)
            })
            .collect();
        let floor = placement_floor(problem, classes, &floors);
        ListStructure {
            states,
            floors,
            floor,
        }
    }
}

/// The proven lower bounds of a list that need no MILP of the whole batch: the placement
/// floor, and the best Lagrangian bound found by `deadline` (`None` if no iteration completed).
pub fn list_bounds(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    deadline: &Deadline,
) -> Result<(f64, Option<f64>), PlanningError> {
    let classes = classes(preemptors);
    let list = ListStructure::new(problem, initial, preemptors, &classes);
    let relaxed = lagrangian(
        problem,
        (initial, preemptors, &classes),
        (&list.states, &list.floors),
        None,
        deadline,
    )?;
    Ok((list.floor, relaxed.bound))
}
