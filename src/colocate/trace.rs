//! Inference traces: the Azure LLM inference trace 2023 (`TIMESTAMP,ContextTokens,GeneratedTokens`,
//! CC-BY 4.0; Patel et al., Splitwise, ISCA 2024).

/// One request of a trace, with its arrival relative to the trace's first request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceRequest {
    pub arrival_s: f64,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
}

/// A malformed trace row.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || h > 23
        || min > 59
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    Some(days_from_civil(y, m, day) as f64 * 86_400.0 + (h * 3600 + min * 60) as f64 + sec)
}

/// Parses the Azure LLM trace: arrivals relative to the first row, divided by `rate_scale`
/// (2 = twice the request rate), at most `limit` rows.
pub fn parse_azure(
    text: &str,
    rate_scale: f64,
    limit: Option<usize>,
) -> Result<Vec<TraceRequest>, TraceError> {
    let mut out = Vec::new();
    let mut first: Option<f64> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || (line == 1 && l.starts_with("TIMESTAMP")) {
            continue;
        }
        if limit.is_some_and(|n| out.len() >= n) {
            break;
        }
        let err = |message: String| TraceError { line, message };
        let cells: Vec<&str> = l.split(',').collect();
        if cells.len() != 3 {
            return Err(err(format!(
                "expected 3 columns `TIMESTAMP,ContextTokens,GeneratedTokens`, found {}",
                cells.len()
            )));
        }
        let t = parse_timestamp(cells[0]).ok_or_else(|| {
            err(format!(
                "`{}` is not a timestamp `YYYY-MM-DD HH:MM:SS.fffffff`",
                cells[0]
            ))
        })?;
        let prompt: u32 = cells[1].trim().parse().map_err(|_| {
            err(format!(
                "ContextTokens `{}` is not a non-negative integer",
                cells[1]
            ))
        })?;
        let output: u32 = cells[2].trim().parse().map_err(|_| {
            err(format!(
                "GeneratedTokens `{}` is not a non-negative integer",
                cells[2]
            ))
        })?;
        let t0 = *first.get_or_insert(t);
        if t < t0 {
            return Err(err(
                "timestamps must not go back before the first request".into()
            ));
        }
        out.push(TraceRequest {
            arrival_s: (t - t0) / rate_scale,
            prompt_tokens: prompt.max(1),
            output_tokens: output,
        });
    }
    Ok(out)
}

/// A co-location workload with these requests inline (the model, training and LeMix settings
/// are the example's defaults, to be edited).
pub fn to_workload_toml(rows: &[TraceRequest], source: &str, rate_scale: f64) -> String {
    use std::fmt::Write;
    let span = rows.last().map_or(0.0, |r| r.arrival_s);
    let mut out = String::new();
    let _ = writeln!(out, "#:schema ../../schemas/colocation.schema.json");
    let _ = writeln!(
        out,
        "# {} requests imported by `coplan import azure-llm` from {source} (rate scale {rate_scale}),",
        rows.len()
    );
    let _ = writeln!(
        out,
        "# spanning {span:.1} s. Azure LLM inference trace 2023, CC-BY 4.0: Patel et al.,"
    );
    let _ = writeln!(
        out,
        "# \"Splitwise: Efficient generative LLM inference using phase splitting\", ISCA 2024."
    );
    out.push_str(
        "kind = \"colocation\"\nname = \"azure-llm\"\nnodes = 4\n\n[model]\nname = \"llama-8b\"\nstages = 2\n\
         eta_forward = 2.0e-6\neta_backward = 1.0e-6\ndecode_base_s = 0.012\ndecode_per_token_s = 2.0e-6\n\
         weights_mib = 8000\nkv_mib_per_token = 0.125\nactivation_mib_per_token = 0.5\n\n[inference]\n",
    );
    let _ = writeln!(out, "count = {}", rows.len());
    out.push_str("slo_factor = 5.0\nrequests = [\n");
    for r in rows {
        let _ = writeln!(
            out,
            "  {{ arrival_s = {:.6}, prompt_tokens = {}, output_tokens = {} }},",
            r.arrival_s,
            r.prompt_tokens.max(1),
            r.output_tokens
        );
    }
    out.push_str("]\n\n[training]\nrate = 0.3\n");
    out
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
}
