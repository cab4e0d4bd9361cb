//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong together, reject overlaps and missing scenarios, join them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::sweep::{CSV_MAGIC, Row, SweepOutput};

/// A problem with merge inputs (exit 2), naming the file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct MergeError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

fn merr(file: &str, line: usize, message: impl Into<String>) -> MergeError {
    MergeError {
        file: file.into(),
        line,
        message: message.into(),
    }
}

/// Parses one shard output (CSV or JSON Lines, told apart by the first line).
pub fn parse(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
    let first = text.lines().next().unwrap_or("");
    if first.starts_with(CSV_MAGIC) {
        parse_csv(file, text)
    } else if first.starts_with('{') {
        parse_jsonl(file, text)
    } else {
        Err(merr(
            file,
            1,
            "not a coplan sweep output (expected its `# coplan sweep` or JSON Lines header)",
        ))
    }
}

/// Scenario count, shard and swept keys of a shard file.
type Meta = (usize, (usize, usize), Vec<String>);

fn parse_meta(file: &str, first: &str) -> Result<Meta, MergeError> {
    let mut scenarios = None;
    let mut shard = None;
    let mut keys = Vec::new();
    for part in first.trim_start_matches(CSV_MAGIC).split_whitespace() {
        match part.split_once('=') {
            Some(("scenarios", v)) => scenarios = v.parse().ok(),
            Some(("shard", v)) => shard = super::sweep::parse_shard(v).ok(),
            Some(("keys", v)) => {
                keys = v
                    .split(';')
                    .filter(|k| !k.is_empty())
                    .map(String::from)
                    .collect()
            }
            _ => {}
        }
    }
    match (scenarios, shard) {
        (Some(n), Some(s)) => Ok((n, s, keys)),
        _ => Err(merr(
            file,
            1,
            "malformed header: expected scenarios=N shard=I/N keys=…",
        )),
    }
}

fn parse_csv(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
    // The metadata line is a comment of ours, not a CSV record: read it, then the rest as CSV.
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let (scenario_count, shard, keys) = parse_meta(file, first)?;
    let expected = 5 + keys.len();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(rest.as_bytes());
    let mut rows = Vec::new();
    let mut saw_header = false;
    for record in reader.records() {
        // Lines are counted from the CSV part, which starts on line 2.
        let record = record.map_err(|e| {
            let n = e.position().map_or(2, |p| p.line() as usize + 1);
            merr(file, n, format!("not a CSV row: {e}"))
        })?;
        let n = record.position().map_or(2, |p| p.line() as usize + 1);
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        if record.len() != expected {
            return Err(merr(
                file,
                n,
                format!("expected {expected} columns, found {}", record.len()),
            ));
        }
        if !saw_header {
            saw_header = true;
            continue;
        }
        let cell = |i: usize| record.get(i).unwrap_or_default();
        let k = keys.len();
        rows.push(Row {
            scenario: cell(0)
                .parse()
                .map_err(|_| merr(file, n, "scenario is not a number"))?,
            params: keys
                .iter()
                .cloned()
                .zip((1..=k).map(|i| cell(i).to_string()))
                .collect(),
            planner: cell(k + 1).to_string(),
            seed: cell(k + 2)
                .parse()
                .map_err(|_| merr(file, n, "seed is not a number"))?,
            metric: cell(k + 3).to_string(),
            // A sweep writes finite values only (JSON has no other): `inf` or `nan` here
            // could not be written back.
            value: cell(k + 4)
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| merr(file, n, "value is not a finite number"))?,
        });
    }
    if !saw_header {
        return Err(merr(file, 2, "missing the column header"));
    }
    Ok(SweepOutput {
        keys,
        scenario_count,
        shard,
        rows,
    })
}

fn parse_jsonl(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().unwrap_or((0, ""));
    let meta: Value = serde_json::from_str(first).map_err(|e| merr(file, 1, e.to_string()))?;
    let m = &meta["coplan_sweep"];
    let scenario_count = m["scenarios"]
        .as_u64()
        .ok_or_else(|| merr(file, 1, "missing coplan_sweep.scenarios"))?
        as usize;
    let shard = match m["shard"].as_array().map(|a| {
        (
            a.first().and_then(Value::as_u64),
            a.get(1).and_then(Value::as_u64),
        )
    }) {
        Some((Some(i), Some(n))) if i < n => (i as usize, n as usize),
        _ => return Err(merr(file, 1, "missing or bad coplan_sweep.shard")),
    };
    let keys: Vec<String> = m["keys"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let v: Value = serde_json::from_str(line).map_err(|e| merr(file, n, e.to_string()))?;
        let get_str = |k: &str| {
            v[k].as_str()
                .map(String::from)
                .ok_or_else(|| merr(file, n, format!("missing `{k}`")))
        };
        rows.push(Row {
            scenario: v["scenario"]
                .as_u64()
                .ok_or_else(|| merr(file, n, "missing `scenario`"))? as usize,
            params: keys
                .iter()
                .map(|k| get_str(k).map(|val| (k.clone(), val)))
                .collect::<Result<_, _>>()?,
            planner: get_str("planner")?,
            seed: v["seed"]
                .as_u64()
                .ok_or_else(|| merr(file, n, "missing `seed`"))?,
            metric: get_str("metric")?,
            value: v["value"]
                .as_f64()
                .ok_or_else(|| merr(file, n, "missing `value`"))?,
        });
    }
    Ok(SweepOutput {
        keys,
        scenario_count,
        shard,
        rows,
    })
}

/// Missing scenarios named in the error; the rest are counted.
const MISSING_NAMED: usize = 20;

/// Joins shard outputs: all must sweep the same keys over the same number of scenarios; no
/// scenario may appear in two files; together they must cover every scenario.
pub fn merge(inputs: &[(String, SweepOutput)]) -> Result<SweepOutput, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(merr("merge", 0, "no input files"));
    };
    let mut owner: BTreeMap<usize, &str> = BTreeMap::new();
    let mut rows = Vec::new();
    for (file, out) in inputs {
        if out.keys != first.keys || out.scenario_count != first.scenario_count {
            return Err(merr(
                file,
                1,
                format!(
                    "sweeps {} scenarios of [{}], but {first_file} sweeps {} of [{}]",
                    out.scenario_count,
                    out.keys.join(", "),
                    first.scenario_count,
                    first.keys.join(", ")
                ),
            ));
        }
        let scenarios: BTreeSet<usize> = out.rows.iter().map(|r| r.scenario).collect();
        for s in &scenarios {
            if *s >= out.scenario_count {
                return Err(merr(
                    file,
                    1,
                    // The header may declare no scenario at all: no `count − 1` here.
                    format!(
                        "scenario {s} is out of range: the header declares {} scenario(s)",
                        out.scenario_count
                    ),
                ));
            }
            if let Some(other) = owner.insert(*s, file) {
                return Err(merr(
                    file,
                    1,
                    format!("scenario {s} also appears in {other} (overlapping shards)"),
                ));
            }
        }
        rows.extend(out.rows.iter().cloned());
    }
    // Every owned scenario is in range, so the count is exact; only the first few are named,
    // and the scan for them stops there: a header may claim billions of scenarios.
    let missing_count = first.scenario_count - owner.len();
    if missing_count > 0 {
        let named: Vec<String> = (0..first.scenario_count)
            .filter(|s| !owner.contains_key(s))
            .take(MISSING_NAMED)
            .map(|s| s.to_string())
            .collect();
        let more = if missing_count > named.len() {
            format!(" and {} more", missing_count - named.len())
        } else {
            String::new()
        };
        return Err(merr(
            "merge",
            0,
            format!(
                "scenarios missing from the inputs: {}{more} (a shard failed or was not given)",
                named.join(", ")
            ),
        ));
    }
    // Each scenario's rows come from one file in run order: a stable sort by scenario restores
    // the unsharded order.
    rows.sort_by_key(|r| r.scenario);
    Ok(SweepOutput {
        keys: first.keys.clone(),
        scenario_count: first.scenario_count,
        shard: (0, 1),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARD: &str = "# coplan sweep scenarios=1 shard=0/1 keys=a\n\
        scenario,a,planner,seed,metric,value\n\
        0,1,k8s-default,1,hit_rate,VALUE\n";

    #[test]
    fn billions_of_missing_scenarios_are_counted_not_listed() {
        let shard = SHARD
            .replace("scenarios=1 shard=0/1", "scenarios=4294967296 shard=0/2")
            .replace("VALUE", "0.5");
        let parsed = parse("s.csv", &shard).expect("parses");
        let e = merge(&[("s.csv".into(), parsed)]).unwrap_err();
        assert!(
            e.message
                .starts_with("scenarios missing from the inputs: 1, 2, 3,"),
            "{}",
            e.message
        );
        assert!(e.message.contains(" and 4294967275 more"), "{}", e.message);
    }

    #[test]
    fn a_row_under_a_header_of_no_scenarios_is_out_of_range() {
        let shard = SHARD
            .replace("scenarios=1", "scenarios=0")
            .replace("VALUE", "0.5");
        let parsed = parse("s.csv", &shard).expect("parses");
        let e = merge(&[("s.csv".into(), parsed)]).unwrap_err();
        assert!(e.message.contains("declares 0 scenario"), "{}", e.message);
    }

    #[test]
    fn non_finite_values_are_refused_where_they_stand() {
        assert!(parse("s.csv", &SHARD.replace("VALUE", "0.5")).is_ok());
        for v in ["inf", "-inf", "nan", "NaN", "1e400"] {
            let e = parse("s.csv", &SHARD.replace("VALUE", v)).unwrap_err();
            assert_eq!((e.file.as_str(), e.line), ("s.csv", 3), "{v}");
            assert!(e.message.contains("finite"), "{v}: {}", e.message);
        }
    }
}
