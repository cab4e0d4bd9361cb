//! HiGHS through good_lp's model builder, solved on the `highs` model directly so that its
//! proven dual bound (`mip_dual_bound`) can be read back.

use std::collections::HashMap;

use good_lp::solvers::highs::highs;
use good_lp::{SolverModel, Variable};
use highs::{HighsModelStatus, HighsSolutionStatus};

use super::deadline::Deadline;
use super::model::{Model, Zero};
use super::outcome::{SolveError, SolveStatus, Solved};

/// [`minimise`](super::minimise()) on HiGHS.
pub(super) fn minimise(m: Model<'_>, deadline: &Deadline) -> Result<Solved, SolveError> {
    let mip_gap = deadline.settings().mip_gap;
    let (vars, objective) = (m.vars, m.objective);
    // good_lp adds one HiGHS column per variable, in creation order.
    let column: HashMap<Variable, usize> = vars
        .iter_variables_with_def()
        .enumerate()
        .map(|(i, (v, _))| (v, i))
        .collect();
    let columns = column.len();
    let constant = good_lp::Solution::eval(&Zero, &objective);
    let mut problem = vars.minimise(objective).using(highs);
    for c in m.constraints {
        problem.add_constraint(c);
    }
    let mut model = problem
        .try_into_inner()
        .map_err(|e| SolveError::Other(e.to_string()))?;
    model.make_quiet();
    model.set_option("time_limit", deadline.remaining_s().max(0.001));
    model.set_option("mip_rel_gap", mip_gap.max(0.0));
    model.set_option("threads", 1);
    if let Some(start) = m.warm_start {
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
    let values = m
        .keep
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
