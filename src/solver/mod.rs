//! A thin wrapper over good_lp: one place that picks the backend, applies the time limit and
//! turns the solver's outcome into a status, values and a best bound.

mod deadline;
#[cfg(feature = "highs")]
mod highs_backend;
mod minimise;
mod model;
mod outcome;

pub use crate::spec::kind::SolverBackend;
pub use deadline::{Deadline, SolverSettings};
pub use minimise::minimise;
pub use model::Model;
pub use outcome::{SolveError, SolveStatus, Solved};
