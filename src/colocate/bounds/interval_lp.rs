//! (c) The interval-indexed LP relaxation over the requests' completion times.

use good_lp::{Constraint, Expression, ProblemVariables, constraint, variable};

use super::request_floors::request_floors;
use super::stage_relaxation::stage_jobs;
use super::task_floor::{drops_possible, task_floors};
use crate::colocate::setup::Setup;
use crate::plan::colocation::Task;
use crate::solver::{self, SolveStatus, SolverSettings};

/// Geometric interval ends t_0 < t_1 < … covering `[first, horizon]`.
pub(super) fn geometric_points(first: f64, horizon: f64, ratio: f64) -> Vec<f64> {
    let mut points = vec![first.max(1e-6)];
    while *points.last().unwrap_or(&horizon) < horizon {
        let last = points[points.len() - 1];
        points.push(last * ratio);
    }
    points
}

/// A task's row of an LP: its completion shares `ways`, with a drop variable costing
/// `dropped` where the spec lets tasks be dropped, sum to one.
pub(super) fn one_way_to_end(
    vars: &mut ProblemVariables,
    objective: &mut Expression,
    mut ways: Expression,
    dropped: Option<f64>,
) -> Constraint {
    if let Some(weight) = dropped {
        let dv = vars.add(variable().min(0.0).max(1.0));
        *objective += weight * dv;
        ways += dv;
    }
    constraint!(ways == 1.0)
}

/// How the LP bound ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LpBound {
    /// The LP's proven optimum: a lower bound on the canonical co-location objective.
    Value(f64),
    /// Its variable count is above `bound_lp_max_variables`.
    TooLarge(usize),
    /// The solver did not prove its optimum in time (an LP's incumbent bounds nothing).
    Unsolved(String),
}

/// (c) The interval-indexed LP: x_{j,i} = share of request j completing in (t_{i−1}, t_i]
/// (geometric t_i), d_j = dropped (when drops are possible). Σ_i x_{j,i} + d_j = 1; x_{j,i} = 0
/// where t_i is before the request's idle-cluster completion; per stage and interval, the work
/// of requests completed by t_i (their completion less their tail) fits in N · t_i. Each
/// completion costs at least (max(t_{i−1}, floor) − arrival) / τ_R.
pub fn interval_lp(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> LpBound {
    let tau = setup.objective_unit_s();
    let cfg = &setup.config;
    let spec = &setup.spec;
    let floors = task_floors(setup);
    let requests: Vec<(usize, &Task)> = setup
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_training())
        .collect();
    if requests.is_empty() {
        return LpBound::Value(request_floors(setup));
    }
    let earliest: Vec<f64> = requests
        .iter()
        .map(|(k, t)| t.arrival_s + floors[*k].total_s())
        .collect();
    let first = earliest.iter().copied().fold(f64::INFINITY, f64::min);
    let points = geometric_points(first, horizon_s.max(first * 1.01), 1.25);
    let variables: usize = earliest
        .iter()
        .map(|&e| points.iter().filter(|&&t| t >= e).count().max(1) + 1)
        .sum();
    if variables > spec.planners.bound_lp_max_variables.max(0) as usize {
        return LpBound::TooLarge(variables);
    }
    let drops = drops_possible(setup);
    let mut vars = ProblemVariables::new();
    // Per request: (interval index, variable) pairs, and the drop variable.
    let mut x: Vec<Vec<(usize, good_lp::Variable)>> = Vec::new();
    let mut objective = Expression::from(0.0);
    let mut constraints = Vec::new();
    let last = points.len() - 1;
    for (r, (k, t)) in requests.iter().enumerate() {
        let e = earliest[r];
        let mut own = Vec::new();
        for (i, &end) in points.iter().enumerate() {
            // The last interval is open-ended: any completion past the horizon falls in it.
            if end < e && i < last {
                continue;
            }
            let v = vars.add(variable().min(0.0).max(1.0));
            let start = if i == 0 { e } else { points[i - 1].max(e) };
            objective += ((start - t.arrival_s) / tau + floors[*k].certain_miss) * v;
            own.push((i, v));
        }
        let sum: Expression = own.iter().map(|(_, v)| Expression::from(*v)).sum();
        let dropped = drops.then_some(spec.objective.dropped);
        constraints.push(one_way_to_end(&mut vars, &mut objective, sum, dropped));
        x.push(own);
    }
    let nodes = cfg.nodes.max(1) as f64;
    for stage in 0..cfg.stages {
        let jobs = stage_jobs(setup, stage);
        for (i, &end) in points.iter().enumerate().take(last) {
            let done: Expression = x
                .iter()
                .zip(&jobs)
                .flat_map(|(own, job)| {
                    own.iter()
                        .filter(move |(ii, _)| *ii <= i)
                        .map(move |(_, v)| job.work_s * *v)
                })
                .sum();
            constraints.push(constraint!(done <= nodes * end));
        }
    }
    let training: f64 = setup
        .tasks
        .iter()
        .zip(&floors)
        .filter(|(t, _)| t.is_training())
        .map(|(_, f)| {
            if drops {
                spec.objective.dropped.min(f.total_s() / tau)
            } else {
                f.total_s() / tau
            }
        })
        .sum();
    let deadline = setup.deadline(settings);
    match solver::minimise(vars, objective, constraints, &[], &deadline, None) {
        Ok(solved) if solved.status == SolveStatus::Optimal => {
            LpBound::Value(solved.objective + training)
        }
        Ok(_) => LpBound::Unsolved("time limit".into()),
        Err(e) => LpBound::Unsolved(e.to_string()),
    }
}
