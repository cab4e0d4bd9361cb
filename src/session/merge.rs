//! `coplan merge`: join sweep shard outputs, refusing overlaps and missing scenarios.

use std::path::PathBuf;

use super::args::{MergeFormat, Written};
use super::error::SessionError;
use super::load::{located_error, read_source};
use crate::sim::merge;
use crate::sim::sweep::SweepOutput;

/// `coplan merge`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// Shard outputs of one `coplan sweep` run (CSV or JSON Lines).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = MergeFormat::Table)]
    pub format: MergeFormat,
    /// Where the output and its chart go.
    #[command(flatten)]
    pub written: Written,
}

/// Merged rows, and how they are to be written.
pub struct MergeOutcome {
    /// The joined rows.
    pub output: SweepOutput,
    /// The output format.
    pub format: MergeFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// Where the chart goes, when asked for.
    pub plot: Option<PathBuf>,
    /// "N shards merged", the chart's title.
    pub subject: String,
}

/// Reads and joins the shards.
pub fn run(args: &MergeArgs) -> Result<MergeOutcome, SessionError> {
    Ok(MergeOutcome {
        output: merge_files(&args.files)?,
        format: args.format,
        out: args.written.out.out.clone(),
        plot: args.written.plot.plot.clone(),
        subject: format!("{} shards merged", args.files.len()),
    })
}

/// about (the header, or the row).
pub fn merge_files(files: &[PathBuf]) -> Result<SweepOutput, SessionError> {
    // Each file's text is dropped once it is parsed (a shard of a million rows is tens of
    // megabytes; its parsed rows take 32 bytes each); a refusal reads the file it names again
    // to show its line.
    let located = |e: merge::MergeError, help: &str| {
        let source = files
            .iter()
            .find(|p| p.display().to_string() == e.file)
            .and_then(|p| read_source(p).ok());
        match source {
            Some(source) if e.line > 0 => located_error(
                &source,
                (e.line, None),
                &e.message,
                ("merge::shard", "this line"),
                help,
            ),
            _ => SessionError::input(e.to_string(), Some(help.into())),
        }
    };
    let mut inputs = Vec::new();
    for path in files {
        let source = read_source(path)?;
        let parsed = merge::parse(&source.name, &source.text).map_err(|e| {
            located(
                e,
                "merge takes the CSV or JSON Lines files of `coplan sweep`",
            )
        })?;
        inputs.push((source.name, parsed));
    }
    merge::merge(&inputs).map_err(|e| {
        located(
            e,
            "merge joins the shards of one `coplan sweep` run: the same files, `--set` values, seeds, cycles, planners and coplan version, each shard once",
        )
    })
}
