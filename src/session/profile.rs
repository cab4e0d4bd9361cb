//! `coplan profile fit`: the latency model fitted to measured stage latencies.

use std::path::{Path, PathBuf};

use super::args::OutFile;
use super::error::SessionError;
use super::load::{line_error, located_error, read_source};
use crate::colocate::latency::{self, Fit};

/// `coplan profile`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ProfileCommand {
    /// Fit η_F, η_B (and δ_0, δ_1) from measured stage latencies `kind,batch,tokens,stage_s`
    /// (kind = forward | backward | decode; for decode, tokens = context over the batch); print
    /// R² and residual statistics and the `[model]` section.
    Fit {
        /// The samples CSV (`kind,batch,tokens,stage_s`).
        samples: PathBuf,
        /// Where the output goes.
        #[command(flatten)]
        out: OutFile,
    },
}

/// A fit, and where it goes.
pub struct FitOutcome {
    /// The fit.
    pub fit: Fit,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
}

/// Runs a `profile` subcommand.
pub fn run(command: &ProfileCommand) -> Result<FitOutcome, SessionError> {
    match command {
        ProfileCommand::Fit { samples, out } => Ok(FitOutcome {
            fit: profile_fit(samples)?,
            out: out.out.clone(),
        }),
    }
}

/// Fits the latency model to a samples CSV.
pub fn profile_fit(path: &Path) -> Result<Fit, SessionError> {
    let source = read_source(path)?;
    let samples = latency::parse_samples_at_lines(&source.text).map_err(|e| {
        line_error(
            &source,
            e.line,
            &e.message,
            "expected rows `kind,batch,tokens,stage_s`, kind = forward | backward | decode",
        )
    })?;
    if samples.is_empty() {
        return Err(SessionError::input(
            format!("{}: no samples", source.name),
            None,
        ));
    }
    // A fit no workload's `[model]` accepts must not be printed as one: refused at the first
    // sample of the kind it was fitted to.
    latency::fit_for_spec(&samples).map_err(|e| {
        located_error(
            &source,
            (e.line, None),
            &e.message,
            ("profile::unfittable", &format!("the first {} sample", e.kind.as_str())),
            "a workload's [model] rules: docs/spec.md, \"Co-location workload\"; samples of several batch sizes, lengths and contexts, whose latency grows with them, fit",
        )
    })
}
