//! (f) The memory LP: the interval-indexed LP with memory capacity and offloads.

use good_lp::{Constraint, Expression, ProblemVariables, Variable, constraint, variable};

use super::interval_lp::{LpBound, geometric_points, one_way_to_end};
use super::memory_cost::{MemoryCost, memory_costs, memory_room_mib, memory_task_floors};
use super::memory_floors::memory_floors;
use super::memory_stage_relaxation::work_jobs;
use super::task_floor::{TaskFloor, drops_possible, task_floors};
use crate::colocate::setup::Setup;
use crate::plan::colocation::slo_met;
use crate::solver::{self, SolveStatus, SolverSettings};

/// One way a task completes: (earliest completion, certain miss, moved at stage 0).
type Way = (f64, f64, bool);

/// A task's share completing in one interval one way: (interval index, variable, moved at
/// stage 0).
type Share = (usize, Variable, bool);

/// The LP's variables by task and the interval ends they complete by, on N nodes.
#[derive(Clone, Copy)]
struct Grid<'a> {
    /// Per task, its shares.
    x: &'a [Vec<Share>],
    /// The interval ends t_i.
    points: &'a [f64],
    /// N, as a factor of the rows' right-hand sides.
    nodes: f64,
}

/// (f) The memory LP: the interval-indexed LP of (c) over every task (training too, from its
/// submission), each completing in one of three ways — on GPU memory at stage 0 (`held`),
/// offloaded at stage 0 (`moved`: after the memory wait, its transfers on stage 0's GPU; only
/// under `on_memory_timeout = "offload"`), or dropped (only under "drop") — with, per interval
/// end t_i and over the tasks completed by t_i: compute, Σ work ≤ N · t_i (as in (c), a moved
/// task's transfers included); memory, Σ need · hold ≤ N · M · t_i over the held tasks, M =
/// κ · GPU − weights, a held task holding its need from its stage-0 forward to its completion
/// (at least its idle-cluster time); and, for tasks above M / (k + 1), of which a GPU holds k
/// at most, Σ hold ≤ k · N · t_i. Every schedule is a 0/1 point whose LP cost is at most its
/// objective. A task that never fits is moved on every stage (or dropped).
pub fn memory_lp(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> LpBound {
    let tau = setup.objective_unit_s();
    let spec = &setup.spec;
    if setup.tasks.is_empty() {
        return LpBound::Value(0.0);
    }
    let floors = task_floors(setup);
    let forced_floors = memory_task_floors(setup);
    let costs = memory_costs(setup);
    let drops = drops_possible(setup);
    let modes = ways_to_complete(setup, &floors, &forced_floors, &costs);
    let first = modes
        .iter()
        .flatten()
        .map(|m| m.0)
        .fold(f64::INFINITY, f64::min);
    if !first.is_finite() {
        // Every task never fits and is dropped.
        return LpBound::Value(memory_floors(setup));
    }
    let points = geometric_points(first, horizon_s.max(first * 1.01), 1.25);
    let last = points.len() - 1;
    let variables: usize = modes
        .iter()
        .map(|ways| {
            ways.iter()
                .map(|m| points.iter().filter(|&&t| t >= m.0).count().max(1))
                .sum::<usize>()
                + usize::from(drops)
        })
        .sum();
    if variables > spec.planners.bound_lp_max_variables.max(0) as usize {
        return LpBound::TooLarge(variables);
    }
    let mut vars = ProblemVariables::new();
    let mut x: Vec<Vec<Share>> = Vec::with_capacity(modes.len());
    let mut objective = Expression::from(0.0);
    let mut constraints: Vec<Constraint> = Vec::new();
    for (t, ways) in setup.tasks.iter().zip(&modes) {
        let mut own = Vec::new();
        let mut sum = Expression::from(0.0);
        for &(earliest, miss, moved) in ways {
            for (i, &end) in points.iter().enumerate() {
                // The last interval is open-ended: any completion past the horizon falls in it.
                if end < earliest && i < last {
                    continue;
                }
                let v = vars.add(variable().min(0.0).max(1.0));
                let start = if i == 0 {
                    earliest
                } else {
                    points[i - 1].max(earliest)
                };
                objective += ((start - t.arrival_s) / tau + miss) * v;
                sum += v;
                own.push((i, v, moved));
            }
        }
        let dropped = drops.then_some(spec.objective.dropped);
        constraints.push(one_way_to_end(&mut vars, &mut objective, sum, dropped));
        x.push(own);
    }
    let nodes = setup.config.nodes.max(1) as f64;
    let grid = Grid {
        x: &x,
        points: &points,
        nodes,
    };
    constraints.extend(compute_rows(setup, &costs, &grid));
    constraints.extend(memory_rows(setup, &floors, &costs, &grid));
    let deadline = setup.deadline(settings);
    match solver::minimise(vars, objective, constraints, &[], &deadline, None) {
        Ok(solved) if solved.status == SolveStatus::Optimal => LpBound::Value(solved.objective),
        Ok(_) => LpBound::Unsolved("time limit".into()),
        Err(e) => LpBound::Unsolved(e.to_string()),
    }
}

/// Per task, its ways of completing (none for a task that never fits and is dropped).
fn ways_to_complete(
    setup: &Setup,
    floors: &[TaskFloor],
    forced_floors: &[TaskFloor],
    costs: &[MemoryCost],
) -> Vec<Vec<Way>> {
    let tau = setup.objective_unit_s();
    let drops = drops_possible(setup);
    let slo_miss = setup.spec.objective.slo_miss;
    setup
        .tasks
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let (floor, cost) = (&floors[k], &costs[k]);
            if cost.forced {
                if drops {
                    return Vec::new();
                }
                let f = &forced_floors[k];
                return vec![(t.arrival_s + f.total_s(), f.certain_miss, true)];
            }
            let mut ways = vec![(t.arrival_s + floor.total_s(), floor.certain_miss, false)];
            if !drops {
                let miss =
                    if !t.is_training() && !slo_met(floor.first_s + cost.prefill_penalty_s, tau) {
                        slo_miss
                    } else {
                        0.0
                    };
                ways.push((t.arrival_s + floor.total_s() + cost.penalty_s, miss, true));
            }
            ways
        })
        .collect()
}

/// The compute rows: per interval end t_i, the work of the tasks completed by t_i fits in
/// N · t_i.
fn compute_rows(setup: &Setup, costs: &[MemoryCost], grid: &Grid<'_>) -> Vec<Constraint> {
    let Grid { x, points, nodes } = *grid;
    let last = points.len() - 1;
    let mut constraints = Vec::new();
    // Every stage's work is the same (`work_jobs` counts a forward, a backward and a decode
    // share alike on each), and stage 0 also runs the transfers of the tasks moved there:
    // its rows imply the other stages'.
    let jobs = work_jobs(setup, 0, costs, None);
    for (i, &end) in points.iter().enumerate().take(last) {
        let done: Expression = x
            .iter()
            .zip(&jobs)
            .zip(costs)
            .flat_map(|((own, job), cost)| {
                own.iter()
                    .filter(move |(ii, _, _)| *ii <= i)
                    .map(move |(_, v, moved)| {
                        // `work_jobs` already holds a forced task's transfers; another task
                        // moved at stage 0 adds its own there.
                        let extra = if *moved && !cost.forced {
                            cost.transfer_s
                        } else {
                            0.0
                        };
                        (job.work_s + extra) * *v
                    })
            })
            .sum();
        constraints.push(constraint!(done <= nodes * end));
    }
    constraints
}

/// The memory rows: per interval end t_i, the holds of the tasks completed by t_i on GPU
/// memory fit the room of N GPUs, and those of the tasks too big to share a GPU with k others
/// fit k · N · t_i.
fn memory_rows(
    setup: &Setup,
    floors: &[TaskFloor],
    costs: &[MemoryCost],
    grid: &Grid<'_>,
) -> Vec<Constraint> {
    let Grid { x, points, nodes } = *grid;
    let last = points.len() - 1;
    let mut constraints = Vec::new();
    let room = memory_room_mib(setup) * (1.0 + 1e-9);
    for (i, &end) in points.iter().enumerate().take(last) {
        let held: Expression = x
            .iter()
            .zip(floors)
            .zip(costs)
            .flat_map(|((own, floor), cost)| {
                let area = cost.need_mib * floor.total_s();
                own.iter()
                    .filter(move |(ii, _, moved)| *ii <= i && !*moved)
                    .map(move |(_, v, _)| area * *v)
            })
            .sum();
        constraints.push(constraint!(held <= nodes * room * end));
    }
    // Tasks whose need exceeds room / (k + 1) fit at most k at a time on a GPU: their holds
    // on stage 0 complete by t_i fit in k · N · t_i (k = 1: such tasks hold it in turn).
    for k in 1..=EXCLUSIVE_ROWS {
        let big: Vec<bool> = costs
            .iter()
            .map(|c| !c.forced && c.need_mib * (k as f64 + 1.0) > room)
            .collect();
        if !big.contains(&true) {
            continue;
        }
        for (i, &end) in points.iter().enumerate().take(last) {
            let held: Expression = x
                .iter()
                .zip(floors)
                .zip(&big)
                .filter(|(_, big)| **big)
                .flat_map(|((own, floor), _)| {
                    let hold = floor.total_s();
                    own.iter()
                        .filter(move |(ii, _, moved)| *ii <= i && !*moved)
                        .map(move |(_, v, _)| hold * *v)
                })
                .sum();
            constraints.push(constraint!(held <= k as f64 * nodes * end));
        }
    }
    constraints
}

/// The memory LP's rows for tasks of which at most k fit on a GPU at once, k = 1 … this.
const EXCLUSIVE_ROWS: usize = 3;
