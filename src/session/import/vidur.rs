//! `coplan import vidur-profile`: Vidur's per-layer latencies as stage-latency samples.

use std::path::{Path, PathBuf};

use crate::colocate::latency::Sample;
use crate::colocate::vidur::{self, VidurOptions};
use crate::session::args::OutFile;
use crate::session::error::SessionError;
use crate::session::load::{line_error, read_source};

/// `coplan import vidur-profile`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct VidurArgs {
    /// Vidur's `mlp.csv` of one model on one GPU.
    pub file: PathBuf,
    /// Transformer layers per pipeline stage.
    #[arg(long)]
    pub layers_per_stage: u32,
    /// Tensor-parallel workers per stage (Vidur measured 1, 2, 4 and 8).
    #[arg(long, default_value_t = 1)]
    pub tp: u32,
    /// Fraction of the A100's peak FLOP/s and HBM bandwidth the attention kernel reaches.
    #[arg(long, default_value_t = 0.5)]
    pub attention_efficiency: f64,
    /// Longest prefill (tokens) to keep.
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: u32,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
}

/// Samples, with the comment lines saying what is measured and what derived, and where they go.
pub struct VidurOutcome {
    /// The samples.
    pub samples: Vec<Sample>,
    /// Comment lines written above them.
    pub comments: Vec<String>,
    /// Where they go (`None`: stdout).
    pub out: Option<PathBuf>,
}

/// Reads Vidur's table and derives the samples.
pub fn run(args: &VidurArgs) -> Result<VidurOutcome, SessionError> {
    let options = VidurOptions {
        layers_per_stage: args.layers_per_stage,
        tensor_parallel: args.tp,
        attention_efficiency: args.attention_efficiency,
        max_tokens: args.max_tokens,
    };
    let (samples, comments) = import_vidur(&args.file, &options)?;
    Ok(VidurOutcome {
        samples,
        comments,
        out: args.out.out.clone(),
    })
}

/// Stage-latency samples derived from Vidur's per-layer table, with comment lines saying what
/// is measured and what derived.
pub fn import_vidur(
    path: &Path,
    options: &VidurOptions,
) -> Result<(Vec<Sample>, Vec<String>), SessionError> {
    let bad = |what: &str| Err(SessionError::input(what.to_string(), None));
    if options.layers_per_stage == 0 {
        return bad("--layers-per-stage must be at least 1");
    }
    if options.tensor_parallel == 0 {
        return bad("--tp must be at least 1");
    }
    if !(options.attention_efficiency > 0.0 && options.attention_efficiency <= 1.0) {
        return bad("--attention-efficiency must be in (0, 1]");
    }
    if options.max_tokens == 0 {
        return bad("--max-tokens must be at least 1");
    }
    let source = read_source(path)?;
    vidur::stage_samples(&source.text, options).map_err(|e| {
        line_error(
            &source,
            e.line,
            &e.message,
            "expected Vidur's mlp.csv (time_stats.<op>.median columns, num_tokens, \
             num_tensor_parallel_workers, n_head, n_kv_head, n_embd)",
        )
    })
}
