//! What a backend is given to solve: a model to minimise, and the all-zero assignment that
//! reads an expression's constant term.

use good_lp::{Constraint, Expression, ProblemVariables, Solution, SolutionStatus, Variable};

/// The all-zero assignment: evaluating an expression at it gives its constant term.
pub(super) struct Zero;

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
    /// Variables whose values are returned in [`Solved::values`](super::Solved::values), in this order.
    pub keep: &'a [Variable],
    /// A feasible assignment to start the search from (variable, value).
    pub warm_start: Option<Vec<(Variable, f64)>>,
}
