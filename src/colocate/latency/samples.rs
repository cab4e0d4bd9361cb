//! Measured stage latencies, as a samples file holds them.

use crate::colocate::trace::{RowError, csv_records};
use crate::spec::limits::{MAX_BATCH, MAX_OPERATION_S, MAX_TOKENS};

/// What a sample measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleKind {
    /// A forward (prefill) pass through one stage.
    Forward,
    /// A training backward pass through one stage.
    Backward,
    /// One decode iteration through one stage.
    Decode,
}

/// One measured stage latency: `kind,batch,tokens,stage_s` (for decode, `tokens` is the
/// context length over the batch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Which op was measured.
    pub kind: SampleKind,
    /// Sequences in the batch (≥ 1).
    pub batch: u32,
    /// Tokens per sequence (≥ 1); for decode, the context length over the batch.
    pub tokens: u32,
    /// Measured latency of the op on one stage, in seconds (> 0).
    pub stage_s: f64,
}

/// Parses `kind,batch,tokens,stage_s` (a header line is optional; `#` lines are comments).
pub fn parse_samples(text: &str) -> Result<Vec<Sample>, RowError> {
    Ok(parse_samples_at_lines(text)?
        .into_iter()
        .map(|(_, s)| s)
        .collect())
}

/// [`parse_samples`], each sample with its line (from 1), so that a refused fit can point at
/// the samples it was fitted to.
pub fn parse_samples_at_lines(text: &str) -> Result<Vec<(usize, Sample)>, RowError> {
    let mut out = Vec::new();
    for record in csv_records(text) {
        let (line, cells) = record.map_err(|(line, message)| RowError { line, message })?;
        if line == 1 && cells.first().is_some_and(|c| c.starts_with("kind")) {
            continue;
        }
        let err = |message: String| RowError { line, message };
        if cells.len() != 4 {
            return Err(err(format!(
                "expected 4 columns `kind,batch,tokens,stage_s`, found {}",
                cells.len()
            )));
        }
        let kind = match cells[0].as_str() {
            "forward" => SampleKind::Forward,
            "backward" => SampleKind::Backward,
            "decode" => SampleKind::Decode,
            other => {
                return Err(err(format!(
                    "unknown kind `{other}`: expected forward, backward or decode"
                )));
            }
        };
        let batch: u32 = cells[1]
            .parse()
            .map_err(|_| err(format!("batch `{}` is not a positive integer", &cells[1])))?;
        let tokens: u32 = cells[2]
            .parse()
            .map_err(|_| err(format!("tokens `{}` is not a positive integer", &cells[2])))?;
        let stage_s: f64 = cells[3]
            .parse()
            .map_err(|_| err(format!("stage_s `{}` is not a number", &cells[3])))?;
        if batch == 0 || tokens == 0 || !(stage_s.is_finite() && stage_s > 0.0) {
            return Err(err("batch and tokens must be ≥ 1 and stage_s > 0".into()));
        }
        // Bounded like the specs the fit is written into, so every sum of the fit stays finite.
        if i64::from(batch) > MAX_BATCH
            || i64::from(tokens) > MAX_TOKENS
            || stage_s > MAX_OPERATION_S
        {
            return Err(err(format!(
                "batch ≤ {MAX_BATCH}, tokens ≤ {MAX_TOKENS} and stage_s ≤ {MAX_OPERATION_S:e} are coplan's limits (docs/spec.md, \"Limits\")"
            )));
        }
        out.push((
            line,
            Sample {
                kind,
                batch,
                tokens,
                stage_s,
            },
        ));
    }
    Ok(out)
}

impl SampleKind {
    /// The kind as a samples file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleKind::Forward => "forward",
            SampleKind::Backward => "backward",
            SampleKind::Decode => "decode",
        }
    }
}
