//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong to one sweep (the same fingerprint), that no row is there twice and none is
//! missing, and that together they hold every scenario exactly once; join them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::fingerprint::{SweepInputs, VERSION, parse_seeds};
use super::sweep::{CSV_MAGIC, Row, SetArg, SweepOutput, scenarios};

/// A problem with merge inputs (exit 2), naming the file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct MergeError {
    /// The file as named on the command line (`merge` for a problem with the inputs as a whole).
    pub file: String,
    /// 1-based line of the problem (0 when no line is at fault, e.g. no input file at all).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn merr(file: &str, line: usize, message: impl Into<String>) -> MergeError {
    MergeError {
        file: file.into(),
        line,
        message: message.into(),
    }
}

/// One shard file as read: its output, where each row stands and what its header declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardFile {
    /// The shard's header and rows.
    pub output: SweepOutput,
    /// The line of each of `output.rows`, from 1.
    pub lines: Vec<usize>,
    /// The fingerprint the header states (checked against its inputs by `merge`).
    pub fingerprint: Option<String>,
    /// Rows per scenario the header declares; `None` in files written before it did.
    pub declared_rows: Option<BTreeMap<usize, usize>>,
}

/// Parses one shard output (CSV or JSON Lines, told apart by the first line).
pub fn parse(file: &str, text: &str) -> Result<ShardFile, MergeError> {
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

/// What a shard's header says.
struct Header {
    scenario_count: usize,
    shard: (usize, usize),
    keys: Vec<String>,
    declared_rows: Option<BTreeMap<usize, usize>>,
    fingerprint: Option<String>,
    inputs: Option<SweepInputs>,
}

fn inputs_from(file: &str, value: Value) -> Result<SweepInputs, MergeError> {
    serde_json::from_value(value).map_err(|e| {
        merr(
            file,
            1,
            format!("malformed sweep inputs in the header: {e}"),
        )
    })
}

/// `0:36;2:36` (CSV) as scenario → rows.
fn parse_row_counts(file: &str, text: &str) -> Result<BTreeMap<usize, usize>, MergeError> {
    text.split(';')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            pair.split_once(':')
                .and_then(|(s, n)| Some((s.parse().ok()?, n.parse().ok()?)))
                .ok_or_else(|| {
                    merr(
                        file,
                        1,
                        format!("malformed header: `rows={text}` (expected SCENARIO:ROWS;…)"),
                    )
                })
        })
        .collect()
}

fn parse_csv_header(file: &str, first: &str) -> Result<Header, MergeError> {
    let (fields, inputs) = match first.split_once(" inputs=") {
        Some((fields, json)) => (fields, Some(json)),
        None => (first, None),
    };
    let mut scenarios = None;
    let mut shard = None;
    let mut keys = Vec::new();
    let mut declared_rows = None;
    let mut fingerprint = None;
    for part in fields.trim_start_matches(CSV_MAGIC).split_whitespace() {
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
            Some(("rows", v)) => declared_rows = Some(parse_row_counts(file, v)?),
            Some(("fingerprint", v)) => fingerprint = Some(v.to_string()),
            _ => {}
        }
    }
    let inputs = match inputs {
        Some(json) => {
            let value: Value = serde_json::from_str(json).map_err(|e| {
                merr(
                    file,
                    1,
                    format!("malformed sweep inputs in the header: {e}"),
                )
            })?;
            Some(inputs_from(file, value)?)
        }
        None => None,
    };
    match (scenarios, shard) {
        (Some(scenario_count), Some(shard)) => Ok(Header {
            scenario_count,
            shard,
            keys,
            declared_rows,
            fingerprint,
            inputs,
        }),
        _ => Err(merr(
            file,
            1,
            "malformed header: expected scenarios=N shard=I/N keys=…",
        )),
    }
}

fn parse_csv(file: &str, text: &str) -> Result<ShardFile, MergeError> {
    // The metadata line is a comment of ours, not a CSV record: read it, then the rest as CSV.
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let header = parse_csv_header(file, first)?;
    let keys = header.keys.clone();
    let expected = 5 + keys.len();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(rest.as_bytes());
    let mut rows = Vec::new();
    let mut lines = Vec::new();
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
            value: cell(k + 4)
                .parse()
                .map_err(|_| merr(file, n, "value is not a number"))?,
        });
        lines.push(n);
    }
    if !saw_header {
        return Err(merr(file, 2, "missing the column header"));
    }
    Ok(shard_file(header, rows, lines))
}

fn shard_file(header: Header, rows: Vec<Row>, lines: Vec<usize>) -> ShardFile {
    ShardFile {
        output: SweepOutput {
            keys: header.keys,
            scenario_count: header.scenario_count,
            shard: header.shard,
            rows,
            inputs: header.inputs,
        },
        lines,
        fingerprint: header.fingerprint,
        declared_rows: header.declared_rows,
    }
}

fn parse_jsonl_header(file: &str, first: &str) -> Result<Header, MergeError> {
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
    let declared_rows = match m.get("rows") {
        None => None,
        Some(v) => Some(
            serde_json::from_value::<Vec<(usize, usize)>>(v.clone())
                .map_err(|e| merr(file, 1, format!("malformed coplan_sweep.rows: {e}")))?
                .into_iter()
                .collect(),
        ),
    };
    let inputs = match m.get("inputs") {
        None => None,
        Some(v) => Some(inputs_from(file, v.clone())?),
    };
    Ok(Header {
        scenario_count,
        shard,
        keys,
        declared_rows,
        fingerprint: m["fingerprint"].as_str().map(String::from),
        inputs,
    })
}

fn parse_jsonl(file: &str, text: &str) -> Result<ShardFile, MergeError> {
    let mut numbered = text.lines().enumerate();
    let (_, first) = numbered.next().unwrap_or((0, ""));
    let header = parse_jsonl_header(file, first)?;
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in numbered {
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
            params: header
                .keys
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
        lines.push(n);
    }
    Ok(shard_file(header, rows, lines))
}

/// The sweep a shard's header describes, checked against itself: its fingerprint is the
/// digest of its inputs, its keys and scenario count are those of its swept values.
struct Described<'a> {
    inputs: &'a SweepInputs,
    declared_rows: &'a BTreeMap<usize, usize>,
    seeds: BTreeSet<u64>,
}

fn describe<'a>(file: &str, shard: &'a ShardFile) -> Result<Described<'a>, MergeError> {
    let rerun = format!(
        "re-run its sweep with this coplan ({VERSION}), which records what each shard ran on"
    );
    let (Some(inputs), Some(fingerprint), Some(declared_rows)) = (
        &shard.output.inputs,
        &shard.fingerprint,
        &shard.declared_rows,
    ) else {
        return Err(merr(
            file,
            1,
            format!(
                "this shard has no fingerprint (it was written by an older coplan), so merge cannot check that it belongs with the others: {rerun}"
            ),
        ));
    };
    if *fingerprint != inputs.fingerprint() {
        return Err(merr(
            file,
            1,
            format!(
                "the header's fingerprint {fingerprint} is not that of the inputs it records ({}): the header was edited",
                inputs.fingerprint()
            ),
        ));
    }
    let keys: Vec<&str> = inputs.sets.iter().map(|s| s.key.as_str()).collect();
    let product: usize = inputs.sets.iter().map(|s| s.values.len()).product();
    if shard.output.keys != keys || shard.output.scenario_count != product {
        return Err(merr(
            file,
            1,
            format!(
                "the header's keys [{}] and {} scenarios do not match the sweep it records (keys [{}], {product} scenarios)",
                shard.output.keys.join(", "),
                shard.output.scenario_count,
                keys.join(", ")
            ),
        ));
    }
    let seeds = parse_seeds(&inputs.seeds).ok_or_else(|| {
        merr(
            file,
            1,
            format!("malformed seeds `{}` in the header", inputs.seeds),
        )
    })?;
    Ok(Described {
        inputs,
        declared_rows,
        seeds: seeds.into_iter().collect(),
    })
}

/// Which row of which file: for a refusal that points at both copies.
type RowKey = (usize, String, u64, String);

/// Joins shard outputs. All must carry the same fingerprint (the same inputs, swept values,
/// seeds, cycles, planners, solvers and version); every row must be its scenario's (its swept
/// values, a seed of the sweep) and appear once; every scenario must be in exactly one file,
/// with as many rows as its shard's header counts.
pub fn merge(inputs: &[(String, ShardFile)]) -> Result<SweepOutput, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(merr("merge", 0, "no input files"));
    };
    let reference = describe(first_file, first)?;
    let all_scenarios = scenarios(
        &reference
            .inputs
            .sets
            .iter()
            .map(|s| SetArg {
                key: s.key.clone(),
                values: s.values.clone(),
            })
            .collect::<Vec<_>>(),
    );
    let scenario_count = all_scenarios.len();
    // Scenario → the file (and row line) it came from.
    let mut owner: BTreeMap<usize, (&str, usize)> = BTreeMap::new();
    let mut rows = Vec::new();
    for (file, shard) in inputs {
        let described = describe(file, shard)?;
        if let Some((mine, theirs)) = described
            .inputs
            .differences(reference.inputs)
            .into_iter()
            .next()
        {
            return Err(merr(
                file,
                1,
                format!("not a shard of the same sweep: `{file}` {mine}; `{first_file}` {theirs}"),
            ));
        }
        let (index, count) = shard.output.shard;
        let mut seen: BTreeMap<RowKey, usize> = BTreeMap::new();
        let mut per_scenario: BTreeMap<usize, Vec<&Row>> = BTreeMap::new();
        for (row, &line) in shard.output.rows.iter().zip(&shard.lines) {
            let s = row.scenario;
            let Some(scenario) = all_scenarios.get(s) else {
                return Err(merr(
                    file,
                    line,
                    format!(
                        "scenario {s} is out of range 0…{}",
                        scenario_count.saturating_sub(1)
                    ),
                ));
            };
            if s % count != index {
                return Err(merr(
                    file,
                    line,
                    format!("scenario {s} does not belong to this file's shard {index}/{count}"),
                ));
            }
            if row.params != scenario.params {
                let expected: Vec<String> = scenario
                    .params
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect();
                return Err(merr(
                    file,
                    line,
                    format!(
                        "scenario {s} of this sweep is {}; this row says otherwise",
                        expected.join(", ")
                    ),
                ));
            }
            if !described.seeds.contains(&row.seed) {
                return Err(merr(
                    file,
                    line,
                    format!(
                        "seed {} is not among the sweep's seeds {}",
                        row.seed, described.inputs.seeds
                    ),
                ));
            }
            if let Some((other_file, other_line)) = owner.get(&s) {
                return Err(merr(
                    file,
                    line,
                    format!(
                        "scenario {s} also appears in {other_file} (line {other_line}): overlapping shards"
                    ),
                ));
            }
            let key = (s, row.planner.clone(), row.seed, row.metric.clone());
            if let Some(earlier) = seen.insert(key, line) {
                return Err(merr(
                    file,
                    line,
                    format!(
                        "duplicate row: scenario {s}, planner {}, seed {}, metric {} is already on line {earlier}",
                        row.planner, row.seed, row.metric
                    ),
                ));
            }
            per_scenario.entry(s).or_default().push(row);
        }
        check_row_counts(file, shard, &described, &per_scenario)?;
        for (row, &line) in shard.output.rows.iter().zip(&shard.lines) {
            owner.entry(row.scenario).or_insert((file.as_str(), line));
        }
        rows.extend(shard.output.rows.iter().cloned());
    }
    let missing: Vec<String> = (0..scenario_count)
        .filter(|s| !owner.contains_key(s))
        .map(|s| s.to_string())
        .collect();
    if !missing.is_empty() {
        let which = match missing.as_slice() {
            [one] => format!("scenario {one} is"),
            many => format!("scenarios {} are", many.join(", ")),
        };
        return Err(merr(
            first_file,
            1,
            format!(
                "the sweep has {scenario_count} scenarios; {which} in none of the inputs (a shard failed or was not given)"
            ),
        ));
    }
    // Each scenario's rows come from one file in run order: a stable sort by scenario restores
    // the unsharded order.
    rows.sort_by_key(|r| r.scenario);
    Ok(SweepOutput {
        keys: first.output.keys.clone(),
        scenario_count,
        shard: (0, 1),
        rows,
        inputs: Some(reference.inputs.clone()),
    })
}

/// Every scenario of the file's shard is there, with the rows its header counts; when one is
/// short, names the first row that is missing.
fn check_row_counts(
    file: &str,
    shard: &ShardFile,
    described: &Described<'_>,
    per_scenario: &BTreeMap<usize, Vec<&Row>>,
) -> Result<(), MergeError> {
    let (index, count) = shard.output.shard;
    let scenario_count = shard.output.scenario_count;
    for s in (index..scenario_count).step_by(count.max(1)) {
        let declared = described.declared_rows.get(&s).copied();
        let found = per_scenario.get(&s).map_or(0, Vec::len);
        match declared {
            None => {
                return Err(merr(
                    file,
                    1,
                    format!(
                        "scenario {s} belongs to shard {index}/{count}, but the header counts no rows for it: the shard is incomplete"
                    ),
                ));
            }
            Some(n) if n == found => {}
            Some(n) if found < n => {
                let which = per_scenario
                    .get(&s)
                    .and_then(|rows| first_missing_row(rows, &shard.output.rows, &described.seeds))
                    .map_or_else(String::new, |(planner, seed, metric)| {
                        format!(" (planner {planner}, seed {seed}, metric {metric})")
                    });
                return Err(merr(
                    file,
                    1,
                    format!(
                        "missing rows: the header counts {n} rows for scenario {s}, {found} are in the file{which}"
                    ),
                ));
            }
            Some(n) => {
                return Err(merr(
                    file,
                    1,
                    format!(
                        "the header counts {n} rows for scenario {s}, but the file has {found}: rows were added"
                    ),
                ));
            }
        }
    }
    if let Some((&s, _)) = described
        .declared_rows
        .iter()
        .find(|(s, _)| **s >= scenario_count || **s % count != index)
    {
        return Err(merr(
            file,
            1,
            format!(
                "the header counts rows for scenario {s}, which is not in shard {index}/{count}"
            ),
        ));
    }
    Ok(())
}

/// The first (planner, seed, metric) a scenario's `rows` lack, where a planner reports the
/// metrics it reports anywhere in the file for every seed: the row a short scenario most
/// likely lost.
fn first_missing_row(
    rows: &[&Row],
    file_rows: &[Row],
    seeds: &BTreeSet<u64>,
) -> Option<(String, u64, String)> {
    let present: BTreeSet<(&str, u64, &str)> = rows
        .iter()
        .map(|r| (r.planner.as_str(), r.seed, r.metric.as_str()))
        .collect();
    let planners: BTreeSet<&str> = rows.iter().map(|r| r.planner.as_str()).collect();
    for planner in planners {
        let metrics: BTreeSet<&str> = file_rows
            .iter()
            .filter(|r| r.planner == planner)
            .map(|r| r.metric.as_str())
            .collect();
        for &seed in seeds {
            for &metric in &metrics {
                if !present.contains(&(planner, seed, metric)) {
                    return Some((planner.to_string(), seed, metric.to_string()));
                }
            }
        }
    }
    None
}
