//! The session layer between the command line and the core: one file per command, each with
//! its arguments (shared ones flattened from `args`), its option checks and one function that
//! reads the files, runs the per-file and cross-file checks, loads traces, resolves planner
//! names, dispatches on the workload kind and returns one typed outcome (or one typed error).
//! It renders nothing: `report::render` does; `emit` writes what was rendered.

pub mod args;
pub mod capacity;
pub mod command;
pub mod diff;
pub mod emit;
pub mod error;
pub mod explain;
pub mod explain_colocation;
pub mod import;
pub mod interrupt;
pub mod load;
pub mod merge;
pub mod plan;
pub mod profile;
pub mod progress;
pub mod simulate;
pub mod sweep;
pub mod timeline;
pub mod topology;
pub mod validate;

pub use command::{Command, Outcome, run};
