//! What the benches share: their command-line options, running the `coplan` binary as a
//! user's cold process, medians of timed runs, and their inputs (example specs, the Azure
//! hour).
// Each bench uses part of this module.
#![allow(dead_code, unused_imports)]

pub mod args;
pub mod binary;
pub mod inputs;
pub mod timing;

pub use args::{arg, arg_or, count_arg, flag, number_arg};
pub use binary::{coplan, timed_output, timed_run};
pub use inputs::{HOUR_S, azure_hour, azure_trace_path, example, on_hour, root};
pub use timing::{median, median_time};
