//! The session layer between the command line and the core: it reads the files, runs the
//! per-file and cross-file checks, loads traces, resolves planner names, dispatches on the
//! workload kind and returns one typed result (or one typed error) per command. It renders
//! nothing; the binary renders its results with `report`.

pub mod commands;
pub mod diff;
pub mod error;
pub mod explain_colocation;
pub mod import;
pub mod load;
