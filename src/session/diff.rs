//! `coplan diff`: reads two simulate outputs and compares them.

use std::path::{Path, PathBuf};

use super::args::{DiffFormat, OutFile};
use super::error::SessionError;
use super::load::{located_error, read_source};
use crate::sim::diff::{self, DiffError, DiffReport, SimulationInput};

/// `coplan diff`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct DiffArgs {
    /// The baseline simulate output (JSON).
    pub a: PathBuf,
    /// The simulate output to compare with it (JSON).
    pub b: PathBuf,
    /// The output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Table)]
    pub format: DiffFormat,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
    /// Exit with code 3 (after writing the output) when the interval of any planner
    /// excludes 0 on the worse side for one of these metrics.
    #[arg(long, value_name = "METRIC[,METRIC]", value_delimiter = ',')]
    pub fail_on_regression: Vec<String>,
}

/// A comparison, and how it is to be written.
pub struct DiffOutcome {
    /// The comparison.
    pub report: DiffReport,
    /// The output format.
    pub format: DiffFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
}

impl DiffOutcome {
    /// Exit status: infeasible (3) when a gated metric regressed.
    pub fn verdict(&self) -> Result<(), SessionError> {
        match self.report.regression_message() {
            Some(message) => Err(SessionError::Infeasible(message)),
            None => Ok(()),
        }
    }
}

/// Reads both outputs and compares them.
pub fn run(args: &DiffArgs) -> Result<DiffOutcome, SessionError> {
    Ok(DiffOutcome {
        report: diff_files(&args.a, &args.b, &args.fail_on_regression)?,
        format: args.format,
        out: args.out.out.clone(),
    })
}

/// What `diff` reads, for help lines.
const DIFF_INPUT_HELP: &str = "diff takes two outputs of `coplan simulate … --format json`";

/// Compares the simulate output `b` with `a`; `fail_on` names the metrics whose regressions
/// `regressions` lists.
pub fn diff_files(a: &Path, b: &Path, fail_on: &[String]) -> Result<DiffReport, SessionError> {
    diff::check_gate_names(fail_on).map_err(input_error)?;
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
    diff::parse(&source.name, &source.text).map_err(|e| match &e {
        DiffError::Syntax {
            line,
            column,
            message,
            ..
        }
        | DiffError::Shape {
            line,
            column,
            message,
            ..
        } => {
            let (what, code) = if matches!(e, DiffError::Syntax { .. }) {
                ("invalid JSON", "json::syntax")
            } else {
                ("not the shape of a simulate output", "diff::shape")
            };
            located_error(
                &source,
                (*line, Some(*column)),
                &format!("{what}: {message}"),
                (code, "here"),
                DIFF_INPUT_HELP,
            )
        }
        DiffError::TooLarge {
            line,
            column,
            message,
            ..
        } => located_error(
            &source,
            (*line, Some(number_start(&source.text, *line, *column))),
            message,
            ("diff::value", "this value"),
            DIFF_INPUT_HELP,
        ),
        _ => input_error(e),
    })
}

/// The column where the number at or just before `column` of `line` starts (both from 1):
/// serde_json places an error raised as a number is read after the number, and the
/// diagnostic should underline the number itself.
fn number_start(text: &str, line: usize, column: usize) -> usize {
    let is_number = |c: &char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
    let Some(chars) = text
        .lines()
        .nth(line.saturating_sub(1))
        .map(|l| l.chars().collect::<Vec<char>>())
    else {
        return column;
    };
    let from = column.min(chars.len());
    let Some(end) = (0..from)
        .rev()
        .find(|&i| chars.get(i).is_some_and(is_number))
    else {
        return column;
    };
    let start = (0..end)
        .rev()
        .take_while(|&i| chars.get(i).is_some_and(is_number))
        .last()
        .unwrap_or(end);
    start + 1
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
        DiffError::EmptyMetric { .. }
        | DiffError::UnknownMetric { .. }
        | DiffError::NoDirection { .. } => Some(
            "metric names and which way each is better: docs/simulation.md, `coplan diff`".into(),
        ),
        _ => Some(DIFF_INPUT_HELP.into()),
    };
    SessionError::input(e.to_string(), help)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_number_is_pointed_at_from_its_first_character() {
        let text = "{\n  \"v\": [1.0,\n    -1e308, 2]\n}";
        // After the number, on the comma, or on its last character: column 5 either way.
        for column in [10, 11, 8] {
            assert_eq!(number_start(text, 3, column), 5, "{column}");
        }
        assert_eq!(number_start(text, 9, 3), 3);
    }
}
