//! Text tables for terminals, one file per result, all drawn on one grid.

pub mod capacity;
pub mod diff;
pub mod explain;
pub mod explain_colocation;
pub mod gangs;
pub mod grid;
pub mod import;
pub mod plan;
pub mod plan_colocation;
pub mod simulation;
pub mod summary;
pub mod sweep;
pub mod topology;
