//! A thin wrapper over good_lp: one place that picks the backend, applies the time limit and
//! turns the solver's outcome into a status, values and a best bound.

use std::time::Instant;

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithInitialSolution, WithTimeLimit, microlp,
};

/// When the solves behind one planner must stop: a time budget shared by every solve of the
/// planner (per-server subproblems and per-event MILPs draw from the same budget).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    started: Instant,
    limit_s: f64,
}

impl Deadline {
    /// A budget of `limit_s` seconds from now.
    pub fn after(limit_s: f64) -> Self {
        Deadline {
            started: Instant::now(),
            limit_s,
        }
    }

    /// Seconds left; negative once the budget is spent.
    pub fn remaining_s(&self) -> f64 {
        self.limit_s - self.started.elapsed().as_secs_f64()
    }

    pub fn expired(&self) -> bool {
        self.remaining_s() < 0.0
    }
}

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveStatus {
    Optimal,
    TimeLimit,
}

/// The outcome of a solve that produced an incumbent.
#[derive(Debug, Clone)]
pub struct Solved {
    pub status: SolveStatus,
    /// Values of the variables asked for, in order.
    pub values: Vec<f64>,
    pub objective: f64,
    /// Best proven lower bound (minimisation); equal to the objective when optimal.
    pub bound: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    #[error("the time limit was reached before any feasible solution was found")]
    NoIncumbent,
    #[error("the model is infeasible")]
    Infeasible,
    #[error("{0}")]
    Other(String),
}

/// The all-zero assignment: evaluating an expression at it gives its constant term.
struct Zero;

impl Solution for Zero {
    fn status(&self) -> SolutionStatus {
        SolutionStatus::Optimal
    }

    fn value(&self, _: Variable) -> f64 {
        0.0
    }
}

/// Minimises `objective` with microlp (the embedded backend) within what is left of
/// `deadline` (at least a millisecond, so a late solve still reports what it has).
pub fn minimise(
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    keep: &[Variable],
    deadline: &Deadline,
    warm_start: Option<Vec<(Variable, f64)>>,
) -> Result<Solved, SolveError> {
    let mut model = vars
        .minimise(objective.clone())
        .using(microlp)
        .with_time_limit(deadline.remaining_s().max(0.001));
    if let Some(start) = warm_start {
        model = model.with_initial_solution(start);
    }
    let solution = model.with_all(constraints).solve().map_err(|e| match e {
        ResolutionError::Infeasible => SolveError::Infeasible,
        ResolutionError::Other(msg) if msg.contains("Time limit") => SolveError::NoIncumbent,
        other => SolveError::Other(other.to_string()),
    })?;
    let status = match solution.status() {
        SolutionStatus::Optimal => SolveStatus::Optimal,
        _ => SolveStatus::TimeLimit,
    };
    let values: Vec<f64> = keep.iter().map(|v| solution.value(*v)).collect();
    let value = solution.eval(&objective);
    let inner = solution.into_inner();
    // microlp optimises the linear part only: its bound lacks the objective's constant.
    let constant = objective.eval_with(&Zero);
    let bound = match status {
        SolveStatus::Optimal => Some(value),
        SolveStatus::TimeLimit => inner.stats().best_bound.map(|b| b + constant),
    };
    Ok(Solved {
        status,
        values,
        objective: value,
        bound,
    })
}
