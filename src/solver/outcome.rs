//! How a solve ended: a status, values and a bound, or why there is no incumbent.

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
