//! `coplan diff`: reads two simulate outputs and compares them.

use std::path::Path;

use super::error::SessionError;
use super::load::{located_error, read_source};
use crate::sim::diff::{self, DiffError, DiffReport, SimulationInput};

/// What `diff` reads, for help lines.
const DIFF_INPUT_HELP: &str = "diff takes two outputs of `coplan simulate … --format json`";

/// Compares the simulate output `b` with `a`; `fail_on` names the metrics whose regressions
/// `regressions` lists.
pub fn diff_files(a: &Path, b: &Path, fail_on: &[String]) -> Result<DiffReport, SessionError> {
    let a = read_output(a)?;
    let b = read_output(b)?;
    diff::diff(&a, &b, fail_on).map_err(input_error)
}

/// Reads and parses one simulate output; JSON errors point at their line and column.
fn read_output(path: &Path) -> Result<SimulationInput, SessionError> {
    let source = read_source(path).map_err(|e| match e {
        SessionError::Input { message, .. } => {
            SessionError::input(message, Some(DIFF_INPUT_HELP.into()))
        }
        other => other,
    })?;
    diff::parse(&source.name, &source.text).map_err(|e| match e {
        DiffError::Syntax {
            line,
            column,
            message,
            ..
        } => located_error(
            &source,
            (line, Some(column)),
            &format!("invalid JSON: {message}"),
            ("json::syntax", "here"),
            DIFF_INPUT_HELP,
        ),
        DiffError::Shape {
            line,
            column,
            message,
            ..
        } => located_error(
            &source,
            (line, Some(column)),
            &format!("not the shape of a simulate output: {message}"),
            ("diff::shape", "here"),
            DIFF_INPUT_HELP,
        ),
        other => input_error(other),
    })
}

/// Every other refusal is an input error, with what to do about it.
fn input_error(e: DiffError) -> SessionError {
    let help = match &e {
        DiffError::Mismatch { .. } => Some(
            "diff pairs the runs seed by seed: simulate both with the same --seeds and \
             --planners, on workloads of the same kind"
                .into(),
        ),
        DiffError::NoPerSeed { .. } => Some(
            "per-seed values (`planners[].per_seed`) are in the JSON of this version's simulate"
                .into(),
        ),
        DiffError::UnknownMetric { .. } | DiffError::NoDirection { .. } => Some(
            "metric names and which way each is better: docs/simulation.md, `coplan diff`".into(),
        ),
        _ => Some(DIFF_INPUT_HELP.into()),
    };
    SessionError::input(e.to_string(), help)
}
