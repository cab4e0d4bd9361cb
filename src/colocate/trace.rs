//! Inference traces: the Azure LLM inference trace 2023 (`TIMESTAMP,ContextTokens,GeneratedTokens`,
//! CC-BY 4.0; Patel et al., Splitwise, ISCA 2024).

use crate::calendar::{epoch_days, is_date};
use crate::spec::ColocationSpec;
use crate::spec::colocation::{
    ColocationObjective, ColocationPlanners, InferenceSpec, LemixSettings, ModelProfile,
    RequestSpec, TrainingSpec,
};
use crate::spec::kind::SpecKind;
use crate::spec::limits::{MAX_REQUESTS, MAX_SECONDS, MAX_TOKENS};

/// One request of a trace, with its arrival relative to the trace's first request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceRequest {
    /// Arrival in seconds after the trace's first request (≥ 0).
    pub arrival_s: f64,
    /// Prompt (context) tokens of the request: its prefill length.
    pub prompt_tokens: u32,
    /// Tokens the request generates: its decode iterations.
    pub output_tokens: u32,
}

/// A malformed row of a data file (a trace, a samples CSV): its line and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RowError {
    /// 1-based line of the file.
    pub line: usize,
    /// What was wrong and what was expected.
    pub message: String,
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` → seconds since the epoch.
fn parse_timestamp(text: &str) -> Option<f64> {
    let (date, time) = text.trim().split_once(' ')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let (h, min, sec) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<f64>().ok()?,
    );
    // Four-digit years only: the day count of a larger one overflows.
    if !(1..=9999).contains(&y)
        || !is_date(y, m, day)
        || !(0..=23).contains(&h)
        || !(0..=59).contains(&min)
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    Some(epoch_days(y, m, day) as f64 * 86_400.0 + (h * 3600 + min * 60) as f64 + sec)
}

/// Parses the Azure LLM trace: arrivals relative to the first row, divided by `rate_scale`
/// (2 = twice the request rate), at most `limit` rows. A trace without a request row is an
/// error (line 1): it would plan nothing and say nothing.
pub fn parse_azure(
    text: &str,
    rate_scale: f64,
    limit: Option<usize>,
) -> Result<Vec<TraceRequest>, RowError> {
    let mut out = Vec::new();
    let mut first: Option<f64> = None;
    let mut any_row = false;
    for record in csv_records(text) {
        let (line, cells) = record.map_err(|(line, message)| RowError { line, message })?;
        if line == 1 && cells.first().is_some_and(|c| c.starts_with("TIMESTAMP")) {
            continue;
        }
        any_row = true;
        if limit.is_some_and(|n| out.len() >= n) {
            break;
        }
        let err = |message: String| RowError { line, message };
        if cells.len() != 3 {
            return Err(err(format!(
                "expected 3 columns `TIMESTAMP,ContextTokens,GeneratedTokens`, found {}",
                cells.len()
            )));
        }
        let t = parse_timestamp(&cells[0]).ok_or_else(|| {
            err(format!(
                "`{}` is not a timestamp `YYYY-MM-DD HH:MM:SS.fffffff`",
                &cells[0]
            ))
        })?;
        let prompt: u32 = cells[1].parse().map_err(|_| {
            err(format!(
                "ContextTokens `{}` is not a non-negative integer",
                &cells[1]
            ))
        })?;
        let output: u32 = cells[2].parse().map_err(|_| {
            err(format!(
                "GeneratedTokens `{}` is not a non-negative integer",
                &cells[2]
            ))
        })?;
        for (column, tokens) in [("ContextTokens", prompt), ("GeneratedTokens", output)] {
            if i64::from(tokens) > MAX_TOKENS {
                return Err(err(format!(
                    "{column} {tokens} is above the limit of {MAX_TOKENS} tokens (docs/spec.md, \"Limits\")"
                )));
            }
        }
        if out.len() as i64 >= MAX_REQUESTS {
            return Err(err(format!(
                "more than {MAX_REQUESTS} requests, coplan's limit for one workload (docs/spec.md, \"Limits\"); read a part of the trace"
            )));
        }
        let t0 = *first.get_or_insert(t);
        if t < t0 {
            return Err(err(
                "timestamps must not go back before the first request".into()
            ));
        }
        let arrival_s = (t - t0) / rate_scale;
        if arrival_s.is_nan() || arrival_s > MAX_SECONDS {
            return Err(err(format!(
                "this request arrives {arrival_s:e} s after the first (at rate scale {rate_scale}), above the limit of {MAX_SECONDS:e} s (docs/spec.md, \"Limits\")"
            )));
        }
        out.push(TraceRequest {
            arrival_s,
            prompt_tokens: prompt.max(1),
            output_tokens: output,
        });
    }
    if !any_row {
        return Err(RowError {
            line: 1,
            message: "no requests: expected rows `TIMESTAMP,ContextTokens,GeneratedTokens` after the header".into(),
        });
    }
    Ok(out)
}

/// The rows of a small CSV file with their line numbers, fields trimmed; empty lines and
/// `#` comments skipped. A row the CSV reader cannot read is an error at its line.
pub fn csv_records(
    text: &str,
) -> impl Iterator<Item = Result<(usize, Vec<String>), (usize, String)>> + '_ {
    let reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    reader.into_records().map(|r| match r {
        Ok(record) => {
            let line = record.position().map_or(0, |p| p.line() as usize);
            Ok((line, record.iter().map(str::to_string).collect()))
        }
        Err(e) => {
            let line = e.position().map_or(0, |p| p.line() as usize);
            Err((line, format!("not a CSV row: {e}")))
        }
    })
}

/// The assumed model of a workload imported without `--base`: Llama-3-8B on 2 A100 stages,
/// the fit of `examples/profiles/llama-3-8b-a100-2-stages.csv` (Vidur's measured latencies)
/// and the memory of `examples/workloads/colocation-small.toml`.
fn assumed_model() -> ModelProfile {
    ModelProfile {
        name: "llama-3-8b".into(),
        stages: 2,
        eta_forward: 1.487e-9,
        eta_backward: 2.973e-9,
        delta_forward_s: 2.694e-3,
        beta_forward: 3.413e-5,
        delta_backward_s: 5.388e-3,
        beta_backward: 6.826e-5,
        decode_base_s: 4.848e-3,
        decode_per_token_s: 6.428e-8,
        weights_mib: 7660.0,
        kv_mib_per_token: 0.0625,
        activation_mib_per_token: 2.125,
    }
}

/// A co-location workload with these requests inline. With a `base` workload the requests
/// replace its arrivals (`arrival`, `trace`, `load`) and everything else is the base's;
/// without one the model, training and planner settings are the assumed defaults, to be
/// edited, and `nodes` is absent (every server of the cluster it is planned on). Returns the
/// spec and the comment lines that say where it came from and what was assumed.
pub fn workload_from_trace(
    rows: &[TraceRequest],
    source: &str,
    rate_scale: f64,
    base: Option<(&ColocationSpec, &str)>,
) -> (ColocationSpec, Vec<String>) {
    let span = rows.last().map_or(0.0, |r| r.arrival_s);
    let mut header = vec![
        "#:schema ../../schemas/colocation.schema.json".to_string(),
        format!(
            "# {} requests imported by `coplan import azure-llm` from {source} (rate scale {rate_scale}),",
            rows.len()
        ),
        format!("# spanning {span:.1} s. Azure LLM inference trace 2023, CC-BY 4.0: Patel et al.,"),
        "# \"Splitwise: Efficient generative LLM inference using phase splitting\", ISCA 2024."
            .to_string(),
    ];
    let requests: Vec<RequestSpec> = rows
        .iter()
        .map(|r| RequestSpec {
            // Microseconds: the trace's own resolution is finer than any stage latency.
            arrival_s: (r.arrival_s * 1e6).round() / 1e6,
            prompt_tokens: i64::from(r.prompt_tokens.max(1)),
            output_tokens: i64::from(r.output_tokens),
        })
        .collect();
    let spec = match base {
        Some((base, base_name)) => {
            header.push(format!(
                "# Everything but the requests comes from the base workload {base_name}."
            ));
            let mut spec = base.clone();
            spec.inference.arrival = None;
            spec.inference.trace = None;
            spec.inference.format = None;
            spec.inference.load = None;
            spec.inference.count = requests.len() as i64;
            spec.inference.requests = Some(requests);
            spec
        }
        None => {
            header.push(
                "# Assumed (no --base): Llama-3-8B on 2 A100 stages per node, the fit of".into(),
            );
            header.push(
                "# examples/profiles/llama-3-8b-a100-2-stages.csv, training rate 0.3; no `nodes`:"
                    .into(),
            );
            header.push("# every server of the cluster it is planned on is a node.".into());
            ColocationSpec {
                kind: SpecKind::Colocation,
                name: Some("azure-llm".into()),
                nodes: None,
                model: assumed_model(),
                inference: InferenceSpec::from_requests(requests),
                training: TrainingSpec {
                    rate: 0.3,
                    ..TrainingSpec::default()
                },
                lemix: LemixSettings::default(),
                objective: ColocationObjective::default(),
                planners: ColocationPlanners::default(),
            }
        }
    };
    (spec, header)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "TIMESTAMP,ContextTokens,GeneratedTokens\n\
        2023-11-16 18:15:46.6805900,374,44\n\
        2023-11-16 18:15:50.9951690,396,109\n\
        2023-11-16 18:15:51.2224670,879,55\n";

    #[test]
    fn arrivals_are_relative_and_scaled() {
        let r = parse_azure(SAMPLE, 1.0, None).expect("valid");
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].arrival_s, 0.0);
        assert!((r[1].arrival_s - 4.314579).abs() < 1e-6);
        assert_eq!((r[2].prompt_tokens, r[2].output_tokens), (879, 55));
        let fast = parse_azure(SAMPLE, 2.0, Some(2)).expect("valid");
        assert_eq!(fast.len(), 2);
        assert!((fast[1].arrival_s - 4.314579 / 2.0).abs() < 1e-6);
    }

    #[test]
    fn an_arrival_beyond_the_time_limit_is_a_row_error() {
        let text = "TIMESTAMP,ContextTokens,GeneratedTokens\n\
            2023-11-16 18:15:46.0000000,10,1\n\
            2223-11-16 18:15:46.0000000,10,1\n";
        let e = parse_azure(text, 1.0, None).unwrap_err();
        assert_eq!(e.line, 3, "{}", e.message);
        assert!(e.message.contains("above the limit"), "{}", e.message);
    }

    #[test]
    fn midnight_and_malformed_rows() {
        let r = parse_azure(
            "2023-11-16 23:59:59.5,1,1\n2023-11-17 00:00:00.5,1,1\n",
            1.0,
            None,
        )
        .expect("valid");
        assert!((r[1].arrival_s - 1.0).abs() < 1e-9);
        let e = parse_azure(
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374\n",
            1.0,
            None,
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_azure("2023-13-16 18:15:46.68,374,3\n", 1.0, None).unwrap_err();
        assert!(e.message.contains("timestamp"));
        let e = parse_azure("2023-11-16 18:15:46.68,x,3\n", 1.0, None).unwrap_err();
        assert!(e.message.contains("ContextTokens"));
    }

    #[test]
    fn out_of_range_fields_are_row_errors_not_overflows() {
        for row in [
            "2023-11-16 -9223372036854775808:00:00,1,1\n",
            "2023-11-16 00:-9223372036854775808:00,1,1\n",
            "9223372036854775807-11-16 00:00:00,1,1\n",
            "-9223372036854775808-11-16 00:00:00,1,1\n",
        ] {
            let e = parse_azure(row, 1.0, None).unwrap_err();
            assert_eq!(e.line, 1, "{row}");
            assert!(e.message.contains("timestamp"), "{row}: {}", e.message);
        }
    }
}
