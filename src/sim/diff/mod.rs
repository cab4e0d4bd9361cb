//! `coplan diff`: two `coplan simulate --format json` outputs of the same planners over the
//! same seeds (before and after a change), compared per planner and metric. A change counts
//! only when the 95 % confidence interval of the paired per-seed differences B_i − A_i
//! excludes 0; each metric knows which way is better, so that a CI pipeline can fail on a
//! regression beyond noise. Also the JSON Schemas of the simulate and diff outputs.

mod comparable;
mod compare;
mod direction;
mod error;
mod gate;
mod input;
mod paired;
mod report;
mod schema;

pub use compare::diff;
pub use direction::{Better, DIRECTIONS, UNDIRECTED, better};
pub use error::{DiffError, Difference, seed_ranges};
pub use gate::check_gate_names;
pub use input::{MeanInput, PlannerInput, SimulationInput, parse};
pub use paired::{Paired, paired_interval, verdict};
pub use report::{DiffReport, DiffRow, DiffSide, Regression, Verdict};
pub use schema::{diff_schema, simulation_schema};

#[cfg(test)]
mod test_support;
