//! Minimising a linear model with the chosen backend within a deadline, falling back on the
//! warm start when the backend stops before an incumbent of its own.

use std::collections::HashMap;

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithInitialSolution, WithMipGap, WithTimeLimit, microlp,
};

use super::deadline::Deadline;
use super::model::{Model, Zero};
use super::outcome::{SolveError, SolveStatus, Solved};
use crate::spec::kind::SolverBackend;

/// Minimises `objective` with the chosen backend within what is left of `deadline` (at least
/// a millisecond, so a late solve still reports what it has). A warm start is a feasible
/// assignment, so it is an incumbent: when the backend stops before one of its own (an
/// embedded solver may not finish the root relaxation of a large model), the warm start is
/// returned with status `TimeLimit` and no bound.
pub fn minimise(
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    keep: &[Variable],
    deadline: &Deadline,
    warm_start: Option<Vec<(Variable, f64)>>,
) -> Result<Solved, SolveError> {
    let fallback = warm_start
        .as_ref()
        .map(|start| (start.clone(), objective.clone()));
    let model = Model {
        vars,
        objective,
        constraints,
        keep,
        warm_start,
    };
    let solved = match deadline.settings().backend {
        SolverBackend::Microlp => minimise_microlp(model, deadline),
        #[cfg(feature = "highs")]
        SolverBackend::Highs => super::highs_backend::minimise(model, deadline),
        #[cfg(not(feature = "highs"))]
        SolverBackend::Highs => Err(SolveError::NotBuilt("highs")),
    };
    match (solved, fallback) {
        (Err(SolveError::NoIncumbent), Some((start, objective))) => {
            let values: HashMap<Variable, f64> = start.into_iter().collect();
            Ok(Solved {
                status: SolveStatus::TimeLimit,
                values: keep
                    .iter()
                    .map(|v| values.get(v).copied().unwrap_or(0.0))
                    .collect(),
                objective: objective.eval_with(&values),
                bound: None,
            })
        }
        (solved, _) => solved,
    }
}

fn minimise_microlp(m: Model<'_>, deadline: &Deadline) -> Result<Solved, SolveError> {
    let mip_gap = deadline.settings().mip_gap;
    let objective = m.objective;
    let mut model = m
        .vars
        .minimise(objective.clone())
        .using(microlp)
        .with_time_limit(deadline.remaining_s().max(0.001));
    if mip_gap > 0.0 {
        model = model
            .with_mip_gap(mip_gap as f32)
            .map_err(|e| SolveError::Other(e.to_string()))?;
    }
    if let Some(start) = m.warm_start {
        model = model.with_initial_solution(start);
    }
    let solution = model.with_all(m.constraints).solve().map_err(|e| match e {
        ResolutionError::Infeasible => SolveError::Infeasible,
        ResolutionError::Other(msg) if msg.contains("Time limit") => SolveError::NoIncumbent,
        other => SolveError::Other(other.to_string()),
    })?;
    let status = match solution.status() {
        SolutionStatus::Optimal => SolveStatus::Optimal,
        SolutionStatus::GapLimit => SolveStatus::GapLimit,
        _ => SolveStatus::TimeLimit,
    };
    let values: Vec<f64> = m.keep.iter().map(|v| solution.value(*v)).collect();
    let value = solution.eval(&objective);
    let inner = solution.into_inner();
    // microlp optimises the linear part only: its bound lacks the objective's constant.
    let constant = objective.eval_with(&Zero);
    let bound = match status {
        SolveStatus::Optimal => Some(value),
        _ => inner.stats().best_bound.map(|b| b + constant),
    };
    Ok(Solved {
        status,
        values,
        objective: value,
        bound,
    })
}
