//! The `coplan` binary end to end: every example and fixture against its snapshot in the
//! top-level `snapshots/` folder, the commands' outputs and refusals, imports, diffs, merges,
//! pictures, capacity searches and explanations, the committed schemas and the scale-out files.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

#[path = "../common/mod.rs"]
mod common;

mod capacity;
mod diff;
mod examples;
mod explain;
mod gangs;
mod generated;
mod import;
mod imported;
mod integrity;
mod invalid;
mod plan;
mod scale_out;
mod schemas;
mod support;
mod svg;
mod sweep;
mod topology;
mod traces;
