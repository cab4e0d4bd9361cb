//! Stage-latency samples from Vidur's measured per-layer operator latencies (Agrawal et al.,
//! "Vidur: A Large-Scale Simulation Framework for LLM Inference", MLSys 2024; MIT licence), in
//! the `kind,batch,tokens,stage_s` form that `profile fit` reads.
//!
//! Vidur's `mlp.csv` holds, per token count and tensor-parallel degree, the latency of every
//! operator of ONE transformer layer except the attention kernel itself. A stage of
//! `layers_per_stage` layers then takes, for a prefill of ℓ tokens:
//! - measured: `layers_per_stage` × the sum of the layer's operator medians (the embedding, once
//!   per model, is left out);
//! - derived, not measured: the attention kernel, 4 · ℓ² · n_embd FLOPs per layer (QKᵀ and AV,
//!   no causal saving) split over the tensor-parallel workers, at a stated efficiency of the
//!   A100's 312 TFLOP/s bf16 peak.
//!
//! A decode iteration of one request with `ctx` tokens of context takes the measured one-token
//! row plus reading its KV cache (2 · ctx · n_kv_head · head_dim · 2 bytes per layer) at the same
//! efficiency of the A100's 2.039 TB/s HBM bandwidth (derived). A backward pass is taken as twice
//! its forward (the usual 2:1 FLOP ratio of backward to forward; assumed, not measured).

use super::latency::{Sample, SampleKind};
use super::trace::RowError;
use crate::spec::limits::{MAX_OPERATION_S, MAX_TOKENS};

/// A100 bf16 dense peak, FLOP/s.
pub const A100_BF16_PEAK_FLOPS: f64 = 312e12;
/// A100 80 GB SXM HBM bandwidth, bytes/s.
pub const A100_HBM_BYTES_PER_S: f64 = 2.039e12;
/// Backward / forward time of a pass (assumed).
pub const BACKWARD_OVER_FORWARD: f64 = 2.0;
/// Contexts (tokens) at which decode samples are derived.
const DECODE_CONTEXTS: [u32; 7] = [128, 256, 512, 1024, 2048, 4096, 8192];

/// How the samples are derived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VidurOptions {
    /// Transformer layers in one pipeline stage; every measured operator and the attention kernel
    /// count once per layer.
    pub layers_per_stage: u32,
    /// Tensor-parallel workers per stage (a row filter: 1, 2, 4 or 8 in Vidur's data).
    pub tensor_parallel: u32,
    /// Fraction of the peak FLOP/s and bandwidth the attention kernel reaches.
    pub attention_efficiency: f64,
    /// Largest prefill length kept.
    pub max_tokens: u32,
}

/// The operators of one layer whose medians are summed (`emb` is once per model).
const LAYER_OPERATORS: [&str; 9] = [
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
];

/// One row of Vidur's table, reduced to what a stage needs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LayerRow {
    /// Its line in the file, for a sample it would make that the latency model refuses.
    line: usize,
    tokens: u32,
    tensor_parallel: u32,
    /// Σ of the layer's operator medians, seconds.
    layer_s: f64,
    n_head: u32,
    n_kv_head: u32,
    n_embd: u32,
}

fn read_rows(text: &str) -> Result<Vec<LayerRow>, RowError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| RowError {
            line: 1,
            message: format!("not a CSV header: {e}"),
        })?
        .clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| RowError {
                line: 1,
                message: format!("missing column `{name}` (expected Vidur's mlp.csv)"),
            })
    };
    let medians: Vec<usize> = LAYER_OPERATORS
        .iter()
        .map(|op| column(&format!("time_stats.{op}.median")))
        .collect::<Result<_, _>>()?;
    let [tokens, tp, n_head, n_kv_head, n_embd] = [
        "num_tokens",
        "num_tensor_parallel_workers",
        "n_head",
        "n_kv_head",
        "n_embd",
    ]
    .map(column);
    let (tokens, tp, n_head, n_kv_head, n_embd) = (tokens?, tp?, n_head?, n_kv_head?, n_embd?);
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| RowError {
            line: e.position().map_or(0, |p| p.line() as usize),
            message: format!("not a CSV row: {e}"),
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let cell = |i: usize, what: &str| -> Result<f64, RowError> {
            record
                .get(i)
                .and_then(|c| c.parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| RowError {
                    line,
                    message: format!("`{what}` is not a non-negative number"),
                })
        };
        // Counts are whole and at least 1: a zero would divide the derived kernels by zero
        // or yield a profile with no sample, and a fraction would be silently truncated.
        let count = |i: usize, what: &str, most: i64| -> Result<u32, RowError> {
            let value = cell(i, what)?;
            if value.fract() != 0.0 || value < 1.0 || value > most as f64 {
                return Err(RowError {
                    line,
                    message: format!("`{what}` must be a whole number in 1..={most}, got {value}"),
                });
            }
            Ok(value as u32)
        };
        let mut layer_ms = 0.0;
        for (i, op) in medians.iter().zip(LAYER_OPERATORS) {
            layer_ms += cell(*i, op)?;
        }
        let layer_s = layer_ms / 1000.0;
        if layer_s > MAX_OPERATION_S {
            return Err(RowError {
                line,
                message: format!(
                    "a layer of {layer_s:e} s is above the limit of {MAX_OPERATION_S:e} s per operation"
                ),
            });
        }
        rows.push(LayerRow {
            line,
            tokens: count(tokens, "num_tokens", MAX_TOKENS)?,
            tensor_parallel: count(tp, "num_tensor_parallel_workers", 4_096)?,
            layer_s,
            n_head: count(n_head, "n_head", 1 << 20)?,
            n_kv_head: count(n_kv_head, "n_kv_head", 1 << 20)?,
            n_embd: count(n_embd, "n_embd", 1 << 24)?,
        });
    }
    Ok(rows)
}

/// A derived sample the latency model prices, or the row that makes one it would refuse: a
/// stage of many layers of a wide model at a long prompt can pass `MAX_OPERATION_S` even when
/// each measured layer is within it, and `profile fit` would then refuse the written samples.
fn within_operation_limit(
    row: &LayerRow,
    what: &str,
    tokens: u32,
    stage_s: f64,
) -> Result<(), RowError> {
    if stage_s.is_finite() && stage_s <= MAX_OPERATION_S {
        return Ok(());
    }
    Err(RowError {
        line: row.line,
        message: format!(
            "{what} of {tokens} tokens on the stage would take {stage_s:e} s (measured layers plus the derived kernels), above the limit of {MAX_OPERATION_S:e} s per operation"
        ),
    })
}

/// Forward, backward and decode samples of one pipeline stage, and comment lines that say what
/// is measured and what is derived.
pub fn stage_samples(
    text: &str,
    options: &VidurOptions,
) -> Result<(Vec<Sample>, Vec<String>), RowError> {
    let rows: Vec<LayerRow> = read_rows(text)?
        .into_iter()
        .filter(|r| r.tensor_parallel == options.tensor_parallel)
        .collect();
    let Some(first) = rows.first().copied() else {
        return Err(RowError {
            line: 1,
            message: format!(
                "no rows with num_tensor_parallel_workers = {}",
                options.tensor_parallel
            ),
        });
    };
    let layers = options.layers_per_stage as f64;
    let tp = options.tensor_parallel.max(1) as f64;
    let flops_per_s = options.attention_efficiency * A100_BF16_PEAK_FLOPS;
    let bytes_per_s = options.attention_efficiency * A100_HBM_BYTES_PER_S;
    let head_dim = first.n_embd as f64 / first.n_head.max(1) as f64;
    let attention_prefill_s =
        |l: f64| layers * 4.0 * l * l * first.n_embd as f64 / tp / flops_per_s;
    let kv_read_s =
        |ctx: f64| layers * 2.0 * ctx * first.n_kv_head as f64 * head_dim * 2.0 / tp / bytes_per_s;
    let mut samples = Vec::new();
    let mut kept: Vec<&LayerRow> = rows
        .iter()
        .filter(|r| r.tokens >= 1 && r.tokens <= options.max_tokens)
        .collect();
    if kept.is_empty() {
        return Err(RowError {
            line: 1,
            message: format!(
                "no row with num_tensor_parallel_workers = {} has 1 ≤ num_tokens ≤ {} (--max-tokens)",
                options.tensor_parallel, options.max_tokens
            ),
        });
    }
    kept.sort_by_key(|r| r.tokens);
    for r in &kept {
        let l = r.tokens as f64;
        let forward = layers * r.layer_s + attention_prefill_s(l);
        within_operation_limit(
            r,
            "a backward pass",
            r.tokens,
            BACKWARD_OVER_FORWARD * forward,
        )?;
        samples.push(Sample {
            kind: SampleKind::Forward,
            batch: 1,
            tokens: r.tokens,
            stage_s: forward,
        });
        samples.push(Sample {
            kind: SampleKind::Backward,
            batch: 1,
            tokens: r.tokens,
            stage_s: BACKWARD_OVER_FORWARD * forward,
        });
    }
    if let Some(one) = rows.iter().find(|r| r.tokens == 1) {
        for ctx in DECODE_CONTEXTS {
            let stage_s = layers * one.layer_s + kv_read_s(ctx as f64);
            within_operation_limit(one, "a decode iteration", ctx, stage_s)?;
            samples.push(Sample {
                kind: SampleKind::Decode,
                batch: 1,
                tokens: ctx,
                stage_s,
            });
        }
    }
    let comments = vec![
        "# Stage latency samples derived by `coplan import vidur-profile` from Vidur's measured A100"
            .to_string(),
        "# per-layer operator latencies (Agrawal et al., MLSys 2024; MIT licence)."
            .to_string(),
        format!(
            "# {} layers per stage, tensor parallel {}, prefill lengths 1..={} tokens.",
            options.layers_per_stage, options.tensor_parallel, options.max_tokens
        ),
        "# forward = measured (Σ operator medians of a layer × layers) + DERIVED attention kernel:"
            .to_string(),
        format!(
            "#   4·ℓ²·n_embd FLOPs per layer at {:.0} % of 312 TFLOP/s bf16 (not measured).",
            options.attention_efficiency * 100.0
        ),
        format!(
            "# backward = {BACKWARD_OVER_FORWARD} × forward (ASSUMED FLOP ratio, not measured)."
        ),
        format!(
            "# decode (tokens = context) = measured one-token layer × layers + DERIVED KV read at {:.0} % of 2.039 TB/s.",
            options.attention_efficiency * 100.0
        ),
    ];
    Ok((samples, comments))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> String {
        let mut header: Vec<String> = LAYER_OPERATORS
            .iter()
            .map(|op| format!("time_stats.{op}.median"))
            .collect();
        header.extend(
            [
                "n_head",
                "n_kv_head",
                "n_embd",
                "num_tokens",
                "num_tensor_parallel_workers",
            ]
            .map(String::from),
        );
        let row = |tokens: u32, tp: u32, op_ms: f64| {
            let mut cells: Vec<String> = (0..9).map(|_| op_ms.to_string()).collect();
            cells.extend(["32", "8", "4096"].map(String::from));
            cells.push(tokens.to_string());
            cells.push(tp.to_string());
            cells.join(",")
        };
        [
            header.join(","),
            row(1, 1, 0.1),
            row(1000, 1, 1.0),
            row(1000, 2, 0.5),
        ]
        .join("\n")
    }

    #[test]
    fn stage_time_is_layers_times_operators_plus_attention() {
        let options = VidurOptions {
            layers_per_stage: 16,
            tensor_parallel: 1,
            attention_efficiency: 0.5,
            max_tokens: 4096,
        };
        let (samples, comments) = stage_samples(&table(), &options).expect("valid");
        // 1000 tokens: 16 layers × 9 ops × 1 ms = 144 ms measured, plus attention
        // 16 × 4 × 1000² × 4096 / 156e12 = 1.68 ms derived.
        let forward = samples
            .iter()
            .find(|s| s.kind == SampleKind::Forward && s.tokens == 1000)
            .expect("a forward sample");
        let attention = 16.0 * 4.0 * 1e6 * 4096.0 / 156e12;
        assert!((forward.stage_s - (0.144 + attention)).abs() < 1e-12);
        let backward = samples
            .iter()
            .find(|s| s.kind == SampleKind::Backward && s.tokens == 1000)
            .expect("a backward sample");
        assert!((backward.stage_s - 2.0 * forward.stage_s).abs() < 1e-12);
        // Decode at 1024 tokens of context: 16 × 9 × 0.1 ms + KV read of
        // 16 × 2 × 1024 × 8 × 128 × 2 bytes at 1.0195 TB/s.
        let decode = samples
            .iter()
            .find(|s| s.kind == SampleKind::Decode && s.tokens == 1024)
            .expect("a decode sample");
        let kv = 16.0 * 2.0 * 1024.0 * 8.0 * 128.0 * 2.0 / (0.5 * 2.039e12);
        assert!((decode.stage_s - (0.0144 + kv)).abs() < 1e-12);
        assert!(comments.iter().any(|c| c.contains("DERIVED")));
        let tp2 = VidurOptions {
            tensor_parallel: 2,
            ..options
        };
        let (samples, _) = stage_samples(&table(), &tp2).expect("valid");
        assert_eq!(
            samples
                .iter()
                .filter(|s| s.kind == SampleKind::Forward)
                .count(),
            1
        );
        let tp4 = VidurOptions {
            tensor_parallel: 4,
            ..options
        };
        assert!(stage_samples(&table(), &tp4).is_err());
    }

    #[test]
    fn a_stage_the_latency_model_would_refuse_is_an_error_at_its_row() {
        // A model of 2^24-wide layers at 2^20 tokens: each layer is measured in time, but the
        // derived attention of the stage is years long.
        let wide = table()
            .replace(",32,8,4096,1000,1", ",32,8,16777216,1048576,1")
            .replace(",32,8,4096,1,1", ",32,8,16777216,1,1");
        let options = VidurOptions {
            layers_per_stage: 80,
            tensor_parallel: 1,
            attention_efficiency: 0.5,
            max_tokens: 1 << 20,
        };
        let e = stage_samples(&wide, &options).expect_err("above the operation limit");
        assert_eq!(e.line, 3, "{}", e.message);
        assert!(
            e.message.contains("above the limit of 1e6 s"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_missing_column_or_bad_cell_is_an_error_at_its_line() {
        let e = stage_samples(
            "num_tokens\n1\n",
            &VidurOptions {
                layers_per_stage: 1,
                tensor_parallel: 1,
                attention_efficiency: 0.5,
                max_tokens: 10,
            },
        )
        .expect_err("not Vidur's table");
        assert_eq!(e.line, 1);
        let bad = table().replace("\n1000,", "\nx,");
        let bad = bad.replacen("0.1,", "slow,", 1);
        let e = stage_samples(
            &bad,
            &VidurOptions {
                layers_per_stage: 1,
                tensor_parallel: 1,
                attention_efficiency: 0.5,
                max_tokens: 10,
            },
        )
        .expect_err("bad cell");
        assert_eq!(e.line, 2);
    }
}
