//! A thin wrapper over good_lp: one place that picks the backend, applies the time limit and
//! turns the solver's outcome into a status, values and a best bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithInitialSolution, WithMipGap, WithTimeLimit, microlp,
};

pub use crate::spec::kind::SolverBackend;

/// When the solves behind one planner must stop, and how they solve: a time budget shared by
/// every solve of the planner (per-server subproblems and per-event MILPs draw from the same
/// budget) and the backend settings.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    started: Instant,
    limit_s: f64,
    settings: SolverSettings,
    /// A flag that, once raised, spends the budget at once (the run was asked to stop).
    stop: Option<&'static AtomicBool>,
    /// The end of the run's budget (`--time-limit`), which caps this one.
    ends_at: Option<Instant>,
}

impl Deadline {
    /// A budget of `limit_s` seconds from now, solved by microlp to proven optimality.
    pub fn after(limit_s: f64) -> Self {
        Deadline {
            started: Instant::now(),
            limit_s,
            settings: SolverSettings::default(),
            stop: None,
            ends_at: None,
        }
    }

    /// The same budget, spent the moment `stop` is raised: searches that check the deadline
    /// stop at their next check, and a solve started afterwards gets no time. A solve already
    /// running is not interrupted (the solvers offer no way to), so its own limit still holds.
    pub fn stopped_by(self, stop: Option<&'static AtomicBool>) -> Self {
        Deadline { stop, ..self }
    }

    /// The same budget, ending no later than `ends_at` (the run's budget; none: no cap).
    pub fn ending_by(self, ends_at: Option<Instant>) -> Self {
        Deadline { ends_at, ..self }
    }

    /// The same budget, solved with `settings`.
    pub fn solving_with(self, settings: SolverSettings) -> Self {
        Deadline { settings, ..self }
    }

    /// The first `fraction` of what is left of this budget, from now: a stage that must leave
    /// the rest to what follows it (the same stop flag, run end and settings).
    pub fn first_part(&self, fraction: f64) -> Self {
        Deadline {
            started: Instant::now(),
            limit_s: self.remaining_s().max(0.0) * fraction,
            ..*self
        }
    }

    /// The backend and MIP gap every solve under this deadline uses.
    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    /// Seconds left; negative once the budget is spent.
    pub fn remaining_s(&self) -> f64 {
        if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return -1.0;
        }
        let own = self.limit_s - self.started.elapsed().as_secs_f64();
        match self.ends_at {
            Some(end) => {
                let now = Instant::now();
                let run = match end.checked_duration_since(now) {
                    Some(left) => left.as_secs_f64(),
                    None => -now.duration_since(end).as_secs_f64() - f64::MIN_POSITIVE,
                };
                own.min(run)
            }
            None => own,
        }
    }

    /// Whether the budget is spent (or a stop was requested).
    pub fn expired(&self) -> bool {
        self.remaining_s() < 0.0
    }
}

/// Which backend solves, and when a MIP may stop short of a proof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverSettings {
    /// The MILP/LP backend.
    pub backend: SolverBackend,
    /// Relative MIP gap at which a solve may stop (0: prove optimality).
    pub mip_gap: f64,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            backend: SolverBackend::Microlp,
            mip_gap: 0.0,
        }
    }
}

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveStatus {
    /// Proven optimal (within the solver's tolerances).
    Optimal,
    /// Stopped by the time limit with an incumbent; `bound` may hold a proven lower bound.
    TimeLimit,
    /// Stopped within the requested relative MIP gap: an incumbent and a proven bound, no proof
    /// of optimality.
    GapLimit,
}

/// The outcome of a solve that produced an incumbent.
#[derive(Debug, Clone)]
pub struct Solved {
    /// How the solve ended.
    pub status: SolveStatus,
    /// Values of the variables asked for, in order.
    pub values: Vec<f64>,
    /// Objective value of the incumbent, constant term included.
    pub objective: f64,
    /// Best proven lower bound (minimisation); equal to the objective when optimal.
    pub bound: Option<f64>,
}

/// Why a solve produced no incumbent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// The time limit fired before any feasible solution was found.
    #[error("the time limit was reached before any feasible solution was found")]
    NoIncumbent,
    /// The model has no feasible solution.
    #[error("the model is infeasible")]
    Infeasible,
    /// The requested backend was not compiled in; holds its name (the cargo feature).
    #[error(
        "the solver `{0}` is not built into this binary (rebuild with `cargo build --release --features {0}`)"
    )]
    NotBuilt(&'static str),
    /// Any other solver failure, with the solver's message.
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

/// A model to minimise: its variables, objective and constraints, the variables whose values
/// are wanted back (in order) and an optional warm start.
pub struct Model<'a> {
    /// The decision variables.
    pub vars: ProblemVariables,
    /// The linear expression to minimise.
    pub objective: Expression,
    /// The constraints.
    pub constraints: Vec<Constraint>,
    /// Variables whose values are returned in [`Solved::values`], in this order.
    pub keep: &'a [Variable],
    /// A feasible assignment to start the search from (variable, value).
    pub warm_start: Option<Vec<(Variable, f64)>>,
}

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
    let solved = match deadline.settings.backend {
        SolverBackend::Microlp => minimise_microlp(model, deadline),
        #[cfg(feature = "highs")]
        SolverBackend::Highs => highs_backend::minimise(model, deadline),
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
    let Model {
        vars,
        objective,
        constraints,
        keep,
        warm_start,
    } = m;
    let mip_gap = deadline.settings.mip_gap;
    let mut model = vars
        .minimise(objective.clone())
        .using(microlp)
        .with_time_limit(deadline.remaining_s().max(0.001));
    if mip_gap > 0.0 {
        model = model
            .with_mip_gap(mip_gap as f32)
            .map_err(|e| SolveError::Other(e.to_string()))?;
    }
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
        SolutionStatus::GapLimit => SolveStatus::GapLimit,
        _ => SolveStatus::TimeLimit,
    };
    let values: Vec<f64> = keep.iter().map(|v| solution.value(*v)).collect();
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

#[cfg(feature = "highs")]
mod highs_backend {
    //! HiGHS through good_lp's model builder, solved on the `highs` model directly so that its
    //! proven dual bound (`mip_dual_bound`) can be read back.

    use std::collections::HashMap;

    use good_lp::solvers::highs::highs;
    use good_lp::{SolverModel, Variable};
    use highs::{HighsModelStatus, HighsSolutionStatus};

    use super::{Deadline, Model, SolveError, SolveStatus, Solved, Zero};

    pub fn minimise(m: Model<'_>, deadline: &Deadline) -> Result<Solved, SolveError> {
        let Model {
            vars,
            objective,
            constraints,
            keep,
            warm_start,
        } = m;
        let mip_gap = deadline.settings.mip_gap;
        // good_lp adds one HiGHS column per variable, in creation order.
        let column: HashMap<Variable, usize> = vars
            .iter_variables_with_def()
            .enumerate()
            .map(|(i, (v, _))| (v, i))
            .collect();
        let columns = column.len();
        let constant = good_lp::Solution::eval(&Zero, &objective);
        let mut problem = vars.minimise(objective).using(highs);
        for c in constraints {
            problem.add_constraint(c);
        }
        let mut model = problem
            .try_into_inner()
            .map_err(|e| SolveError::Other(e.to_string()))?;
        model.make_quiet();
        model.set_option("time_limit", deadline.remaining_s().max(0.001));
        model.set_option("mip_rel_gap", mip_gap.max(0.0));
        model.set_option("threads", 1);
        if let Some(start) = warm_start {
            let mut values = vec![0.0; columns];
            for (v, x) in start {
                if let Some(&i) = column.get(&v) {
                    values[i] = x;
                }
            }
            model.set_solution(Some(&values), None, None, None);
        }
        let solved = model
            .try_solve()
            .map_err(|e| SolveError::Other(format!("HiGHS: {e:?}")))?;
        let status = match solved.status() {
            HighsModelStatus::Infeasible | HighsModelStatus::UnboundedOrInfeasible => {
                return Err(SolveError::Infeasible);
            }
            HighsModelStatus::Optimal => {
                let gap = solved.mip_gap();
                // An LP leaves HiGHS's MIP information unset (infinite gap and bound).
                if gap.is_finite() && gap > 1e-9 {
                    SolveStatus::GapLimit
                } else {
                    SolveStatus::Optimal
                }
            }
            HighsModelStatus::ReachedTimeLimit
            | HighsModelStatus::ReachedIterationLimit
            | HighsModelStatus::ReachedSolutionLimit
            | HighsModelStatus::ReachedInterrupt
            | HighsModelStatus::ReachedMemoryLimit => SolveStatus::TimeLimit,
            other => return Err(SolveError::Other(format!("HiGHS status {other:?}"))),
        };
        if solved.primal_solution_status() != HighsSolutionStatus::Feasible {
            return Err(SolveError::NoIncumbent);
        }
        let solution = solved.get_solution();
        let x = solution.columns();
        let values = keep
            .iter()
            .map(|v| column.get(v).map_or(0.0, |&i| x[i]))
            .collect();
        let value = solved.objective_value() + constant;
        let bound = match status {
            SolveStatus::Optimal => Some(value),
            // Only a MIP has a dual bound (an LP stopped early proves nothing: infinite).
            _ => solved
                .double_info_value(c"mip_dual_bound")
                .ok()
                .filter(|b| b.is_finite())
                .map(|b| b + constant),
        };
        Ok(Solved {
            status,
            values,
            objective: value,
            bound,
        })
    }
}
