//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong together, reject overlaps and missing scenarios, join them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde_json::{Value, json};

use super::sweep::{Row, SweepOutput};

const CSV_MAGIC: &str = "# coplan sweep";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn number(v: f64) -> String {
    // JSON's shortest round-trip form: the same text in CSV and JSON Lines.
    serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
}

/// CSV: a metadata comment, a header with one column per swept key, one row per value.
pub fn to_csv(out: &SweepOutput) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{CSV_MAGIC} scenarios={} shard={}/{} keys={}",
        out.scenario_count,
        out.shard.0,
        out.shard.1,
        out.keys.join(";")
    );
    let mut header = vec!["scenario".to_string()];
    header.extend(out.keys.iter().map(|k| csv_field(k)));
    header.extend(["planner", "seed", "metric", "value"].map(String::from));
    let _ = writeln!(s, "{}", header.join(","));
    for r in &out.rows {
        let mut cells = vec![r.scenario.to_string()];
        cells.extend(r.params.iter().map(|(_, v)| csv_field(v)));
        cells.extend([
            csv_field(&r.planner),
            r.seed.to_string(),
            csv_field(&r.metric),
            number(r.value),
        ]);
        let _ = writeln!(s, "{}", cells.join(","));
    }
    s
}

/// JSON Lines: a metadata object, then one object per row.
pub fn to_jsonl(out: &SweepOutput) -> String {
    let mut s = String::new();
    let meta = json!({ "coplan_sweep": { "scenarios": out.scenario_count, "shard": [out.shard.0, out.shard.1], "keys": out.keys } });
    let _ = writeln!(s, "{meta}");
    for r in &out.rows {
        let mut obj = serde_json::Map::new();
        obj.insert("scenario".into(), json!(r.scenario));
        for (k, v) in &r.params {
            obj.insert(k.clone(), json!(v));
        }
        obj.insert("planner".into(), json!(r.planner));
        obj.insert("seed".into(), json!(r.seed));
        obj.insert("metric".into(), json!(r.metric));
        obj.insert("value".into(), json!(r.value));
        let _ = writeln!(s, "{}", Value::Object(obj));
    }
    s
}

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

fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn parse_csv(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().unwrap_or((0, ""));
    let (scenario_count, shard, keys) = parse_meta(file, first)?;
    let (_, header) = lines
        .next()
        .ok_or_else(|| merr(file, 2, "missing the column header"))?;
    let expected = 5 + keys.len();
    if split_csv(header).len() != expected {
        return Err(merr(file, 2, format!("expected {expected} columns")));
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let cells = split_csv(line);
        let n = i + 1;
        if cells.len() != expected {
            return Err(merr(
                file,
                n,
                format!("expected {expected} columns, found {}", cells.len()),
            ));
        }
        let k = keys.len();
        rows.push(Row {
            scenario: cells[0]
                .parse()
                .map_err(|_| merr(file, n, "scenario is not a number"))?,
            params: keys
                .iter()
                .cloned()
                .zip(cells[1..=k].iter().cloned())
                .collect(),
            planner: cells[k + 1].clone(),
            seed: cells[k + 2]
                .parse()
                .map_err(|_| merr(file, n, "seed is not a number"))?,
            metric: cells[k + 3].clone(),
            value: cells[k + 4]
                .parse()
                .map_err(|_| merr(file, n, "value is not a number"))?,
        });
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
                    format!("scenario {s} is out of range 0…{}", out.scenario_count - 1),
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
    let missing: Vec<String> = (0..first.scenario_count)
        .filter(|s| !owner.contains_key(s))
        .map(|s| s.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(merr(
            "merge",
            0,
            format!(
                "scenarios missing from the inputs: {} (a shard failed or was not given)",
                missing.join(", ")
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

/// Parameters, planner name and per-metric values of one (scenario, planner) group.
type Group = (
    Vec<(String, String)>,
    String,
    BTreeMap<&'static str, Vec<f64>>,
);

/// Summary table: per scenario and planner, mean ± 95 % CI over seeds of the key metrics.
pub fn summary_table(out: &SweepOutput) -> String {
    const PREEMPTION: [&str; 6] = [
        "hit_rate",
        "victims",
        "wasted_evictions",
        "slowdown_mean",
        "objective",
        "subsets_evaluated",
    ];
    const COLOCATION: [&str; 6] = [
        "gpu_utilization",
        "throughput_tasks_per_s",
        "throughput_tokens_per_s",
        "slo_attainment_5x",
        "goodput_rps",
        "objective",
    ];
    // The workload kind shows in the metrics the rows carry.
    let columns = if out.rows.iter().any(|r| r.metric == "hit_rate") {
        PREEMPTION
    } else {
        COLOCATION
    };
    let mut groups: BTreeMap<(usize, usize), Group> = BTreeMap::new();
    let mut planner_order: Vec<String> = Vec::new();
    for r in &out.rows {
        if !planner_order.contains(&r.planner) {
            planner_order.push(r.planner.clone());
        }
        let pi = planner_order
            .iter()
            .position(|p| *p == r.planner)
            .unwrap_or(0);
        let entry = groups
            .entry((r.scenario, pi))
            .or_insert_with(|| (r.params.clone(), r.planner.clone(), BTreeMap::new()));
        if let Some(m) = columns.iter().find(|m| **m == r.metric) {
            entry.2.entry(m).or_default().push(r.value);
        }
    }
    let mut header: Vec<String> = vec!["scenario".into()];
    header.extend(out.keys.iter().cloned());
    header.push("planner".into());
    header.extend(columns.iter().map(|m| m.to_string()));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for ((scenario, _), (params, planner, metrics)) in &groups {
        let mut row = vec![scenario.to_string()];
        row.extend(params.iter().map(|(_, v)| v.clone()));
        row.push(planner.clone());
        for m in columns {
            row.push(match metrics.get(m).and_then(|v| super::summarize(v)) {
                Some(s) => match s.ci95 {
                    Some(ci) => format!("{:.3} ± {:.3}", s.mean, ci),
                    None => format!("{:.3}", s.mean),
                },
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    crate::report::plan::render_table(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
    )
}
