//! `coplan import azure-llm`: the Azure LLM inference trace as a co-location workload.

use std::path::PathBuf;

use super::checks::{ImportSummary, import_azure};
use crate::session::args::{ImportFormat, OutFile};
use crate::session::error::SessionError;
use crate::spec::ColocationSpec;

/// `coplan import azure-llm`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct AzureArgs {
    /// The trace CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`).
    pub file: PathBuf,
    /// A co-location workload whose arrivals the trace's requests replace; its model,
    /// training, LeMix and planner settings are kept.
    #[arg(long, value_name = "W.toml")]
    pub base: Option<PathBuf>,
    /// The summary: text on stderr, or JSON on stdout (needs --out).
    #[arg(long, value_enum, default_value_t = ImportFormat::Text)]
    pub format: ImportFormat,
    /// Divide inter-arrival times by X (2 = twice the request rate).
    #[arg(long, default_value_t = 1.0)]
    pub rate_scale: f64,
    /// At most N requests (the first N rows).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
}

/// The workload read from a trace, and where it and its summary go.
pub struct AzureOutcome {
    /// The workload.
    pub spec: ColocationSpec,
    /// Comment lines written above it (where it came from, what was kept).
    pub comments: Vec<String>,
    /// What was read.
    pub summary: ImportSummary,
    /// The summary's format.
    pub format: ImportFormat,
    /// Where the workload goes (`None`: stdout).
    pub out: Option<PathBuf>,
}

/// Checks the options and reads the trace.
pub fn run(args: &AzureArgs) -> Result<AzureOutcome, SessionError> {
    if args.format == ImportFormat::Json && args.out.out.is_none() {
        return Err(SessionError::input(
            "--format json prints the summary on stdout, where the workload goes without --out",
            Some("add --out W.toml".into()),
        ));
    }
    let (spec, comments, summary) = import_azure(
        &args.file,
        args.rate_scale,
        args.limit,
        args.base.as_deref(),
    )?;
    Ok(AzureOutcome {
        spec,
        comments,
        summary,
        format: args.format,
        out: args.out.out.clone(),
    })
}
