//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong to one sweep (the same fingerprint), that no row is there twice and none is
//! missing, and that together they hold every scenario exactly once; join them.
//!
//! A shard can hold millions of rows, each repeating its swept values, planner and metric
//! names: rows are held as numbers (names interned per file, swept values reduced to whether
//! they are their scenario's) and become owned rows only once every check has passed.

mod metrics;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use self::metrics::SweepKind;
use super::fingerprint::{SweepInputs, SweptKey, VERSION, parse_seeds};
use super::sweep::{CSV_MAGIC, Row, SweepOutput};
use crate::spec::limits::{MAX_SCENARIOS, MAX_SEEDS};

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

/// One row as held between reading and joining: 32 bytes, however long its names.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StoredRow {
    seed: u64,
    value: f64,
    /// Its scenario; [`BEYOND_U32`] for one that does not fit (beyond any sweep's scenarios:
    /// the file keeps the first such number, the one a refusal quotes).
    scenario: u32,
    /// Its line in the file from 1, below [`MISMATCH`] (a file within `MAX_DATA_BYTES` has
    /// fewer than 2³⁰ lines), plus [`MISMATCH`] when its swept values are not those of its
    /// scenario in the sweep its header records (or the header records none: such a shard is
    /// refused before its rows).
    line_and_mismatch: u32,
    /// Interned in the file's [`Names`].
    planner: u32,
    /// Interned in the file's [`Names`].
    metric: u32,
}

/// [`StoredRow::scenario`] of a scenario number that does not fit.
const BEYOND_U32: u32 = u32::MAX;

/// The flag of [`StoredRow::line_and_mismatch`].
const MISMATCH: u32 = 1 << 31;

impl StoredRow {
    fn line(&self) -> usize {
        (self.line_and_mismatch & !MISMATCH) as usize
    }

    fn params_match(&self) -> bool {
        self.line_and_mismatch & MISMATCH == 0
    }
}

/// Planner and metric names of one file, each held once however many rows repeat it.
#[derive(Debug, Clone, Default)]
struct Names {
    by_id: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
}

impl Names {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.by_id.len()).unwrap_or(u32::MAX);
        self.by_id.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    fn name(&self, id: u32) -> &str {
        self.by_id.get(id as usize).map_or("", |n| n)
    }
}

/// The scenarios of a sweep by index (the first key varying slowest, as `sweep::scenarios`
/// lists them), read off without listing the product.
#[derive(Clone, Copy)]
struct Grid<'a> {
    sets: &'a [SweptKey],
}

impl<'a> Grid<'a> {
    /// Each key's value in scenario `s`, last key first; `None` when `s` is beyond the product.
    fn values(self, s: u64) -> Option<Vec<(&'a str, &'a str)>> {
        let mut rest = s;
        let mut out = Vec::with_capacity(self.sets.len());
        for set in self.sets.iter().rev() {
            let n = set.values.len() as u64;
            let value = set
                .values
                .get(usize::try_from(rest.checked_rem(n)?).ok()?)?;
            out.push((set.key.as_str(), value.as_str()));
            rest /= n;
        }
        (rest == 0).then_some(out)
    }

    /// Whether `cell(j)`, the value of the j-th key in a row, is scenario `s`'s for every key.
    fn matches<'c>(self, s: u64, cell: impl Fn(usize) -> Option<&'c str>) -> bool {
        let mut rest = s;
        for (j, set) in self.sets.iter().enumerate().rev() {
            let n = set.values.len() as u64;
            let Some(value) = rest
                .checked_rem(n)
                .and_then(|i| set.values.get(usize::try_from(i).ok()?))
            else {
                return false;
            };
            if cell(j) != Some(value.as_str()) {
                return false;
            }
            rest /= n;
        }
        rest == 0
    }

    /// Scenario `s`'s `(key, value)` pairs in `--set` order, as a row holds them.
    fn params(self, s: u64) -> Arc<[(String, String)]> {
        let mut pairs: Vec<(String, String)> = self
            .values(s)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.reverse();
        pairs.into()
    }
}

/// One shard file as read: what its header declares and its rows.
#[derive(Debug, Clone)]
pub struct ShardFile {
    header: Header,
    rows: Vec<StoredRow>,
    names: Names,
    /// The first scenario number beyond `u32` (rows hold [`BEYOND_U32`] for it).
    beyond_u32: Option<u64>,
}

impl ShardFile {
    /// A row's scenario as the file wrote it.
    fn scenario(&self, row: &StoredRow) -> u64 {
        match (row.scenario, self.beyond_u32) {
            (BEYOND_U32, Some(s)) => s,
            (s, _) => u64::from(s),
        }
    }
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
#[derive(Debug, Clone)]
struct Header {
    scenario_count: usize,
    shard: (usize, usize),
    keys: Vec<String>,
    declared_rows: Option<BTreeMap<usize, usize>>,
    fingerprint: Option<String>,
    inputs: Option<SweepInputs>,
}

impl Header {
    /// The scenarios its recorded inputs list, when they list the keys its rows carry.
    fn grid(&self) -> Option<Grid<'_>> {
        self.inputs
            .as_ref()
            .filter(|i| i.sets.iter().map(|s| &s.key).eq(self.keys.iter()))
            .map(|i| Grid { sets: &i.sets })
    }
}

/// Rows as they are read, checked against the header's own scenarios (its swept values,
/// copied: a handful of strings).
struct Reading {
    sets: Option<Vec<SweptKey>>,
    rows: Vec<StoredRow>,
    names: Names,
    beyond_u32: Option<u64>,
}

/// One row's fields as read, names borrowed from the file where they need no unescaping.
struct ReadRow<'r> {
    line: usize,
    scenario: u64,
    params_match: bool,
    planner: &'r str,
    seed: u64,
    metric: &'r str,
    value: f64,
}

impl Reading {
    /// Rows of `text`, at most one per line: held in one allocation of that size rather than
    /// one grown by doubling, which can hold twice the rows' size and copy them on the way.
    fn new(header: &Header, text: &str) -> Self {
        let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
        Reading {
            sets: header.grid().map(|g| g.sets.to_vec()),
            rows: Vec::with_capacity(lines),
            names: Names::default(),
            beyond_u32: None,
        }
    }

    fn params_match<'c>(&self, scenario: u64, cell: impl Fn(usize) -> Option<&'c str>) -> bool {
        self.sets
            .as_deref()
            .is_some_and(|sets| Grid { sets }.matches(scenario, cell))
    }

    fn push(&mut self, row: ReadRow<'_>) {
        let planner = self.names.id(row.planner);
        let metric = self.names.id(row.metric);
        let scenario = match u32::try_from(row.scenario) {
            Ok(s) if s != BEYOND_U32 => s,
            _ => {
                self.beyond_u32.get_or_insert(row.scenario);
                BEYOND_U32
            }
        };
        let line = u32::try_from(row.line)
            .unwrap_or(MISMATCH - 1)
            .min(MISMATCH - 1);
        self.rows.push(StoredRow {
            seed: row.seed,
            value: row.value,
            scenario,
            line_and_mismatch: if row.params_match {
                line
            } else {
                line | MISMATCH
            },
            planner,
            metric,
        });
    }

    fn finish(self, header: Header) -> ShardFile {
        ShardFile {
            header,
            rows: self.rows,
            names: self.names,
            beyond_u32: self.beyond_u32,
        }
    }
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
    let k = header.keys.len();
    let expected = 5 + k;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(rest.as_bytes());
    let mut reading = Reading::new(&header, text);
    let mut saw_header = false;
    // One record, refilled row after row: nothing of a row outlives its checks but numbers.
    let mut record = csv::StringRecord::new();
    loop {
        // Lines are counted from the CSV part, which starts on line 2.
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let n = e.position().map_or(2, |p| p.line() as usize + 1);
                return Err(merr(file, n, format!("not a CSV row: {e}")));
            }
        }
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
        let scenario: u64 = cell(0)
            .parse()
            .map_err(|_| merr(file, n, "scenario is not a number"))?;
        let seed = cell(k + 2)
            .parse()
            .map_err(|_| merr(file, n, "seed is not a number"))?;
        // A sweep writes finite values only (JSON has no other): `inf` or `nan` here could not
        // be written back.
        let value = cell(k + 4)
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| merr(file, n, "value is not a finite number"))?;
        let params_match = reading.params_match(scenario, |j| record.get(1 + j));
        reading.push(ReadRow {
            line: n,
            scenario,
            params_match,
            planner: cell(k + 1),
            seed,
            metric: cell(k + 3),
            value,
        });
    }
    if !saw_header {
        return Err(merr(file, 2, "missing the column header"));
    }
    Ok(reading.finish(header))
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

/// A JSON value of a row as far as merge reads it: what `Value::as_str`, `as_u64` and
/// `as_f64` would see, without building a `Value`.
enum Cell<'a> {
    Str(Cow<'a, str>),
    Unsigned(u64),
    Number(f64),
    Other,
}

impl<'a> Cell<'a> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Cell::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_u64(&self) -> Option<u64> {
        match self {
            Cell::Unsigned(n) => Some(*n),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Unsigned(n) => Some(*n as f64),
            Cell::Number(x) => Some(*x),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Cell<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cell<'de>, E> {
        Ok(Cell::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cell<'de>, E> {
        Ok(Cell::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Cell<'de>, E> {
        Ok(Cell::Str(Cow::Owned(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Cell<'de>, E> {
        Ok(Cell::Unsigned(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Cell<'de>, E> {
        Ok(u64::try_from(v).map_or(Cell::Number(v as f64), Cell::Unsigned))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Cell<'de>, E> {
        Ok(Cell::Number(v))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Cell<'de>, E> {
        Ok(Cell::Other)
    }

    fn visit_unit<E>(self) -> Result<Cell<'de>, E> {
        Ok(Cell::Other)
    }

    fn visit_none<E>(self) -> Result<Cell<'de>, E> {
        Ok(Cell::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Cell::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Cell::Other)
    }
}

/// The fields of one JSON Lines row that merge reads (a later copy of a field wins, as in a
/// `Value`).
struct JsonRow<'a> {
    scenario: Option<Cell<'a>>,
    params: Vec<Option<Cell<'a>>>,
    planner: Option<Cell<'a>>,
    seed: Option<Cell<'a>>,
    metric: Option<Cell<'a>>,
    value: Option<Cell<'a>>,
}

/// Reads a [`JsonRow`] with the header's swept keys.
struct JsonRowSeed<'k> {
    keys: &'k [String],
}

impl<'de> DeserializeSeed<'de> for JsonRowSeed<'_> {
    type Value = JsonRow<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsonRow<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for JsonRowSeed<'_> {
    type Value = JsonRow<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sweep row object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonRow<'de>, A::Error> {
        let mut row = JsonRow {
            scenario: None,
            params: self.keys.iter().map(|_| None).collect(),
            planner: None,
            seed: None,
            metric: None,
            value: None,
        };
        while let Some(key) = map.next_key::<Cell<'de>>()? {
            let slot = match key.as_str() {
                Some("scenario") => &mut row.scenario,
                Some("planner") => &mut row.planner,
                Some("seed") => &mut row.seed,
                Some("metric") => &mut row.metric,
                Some("value") => &mut row.value,
                Some(k) => match self.keys.iter().position(|key| key == k) {
                    Some(i) => match row.params.get_mut(i) {
                        Some(slot) => slot,
                        None => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    },
                    None => {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                },
                None => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value::<Cell<'de>>()?);
        }
        Ok(row)
    }
}

fn parse_jsonl(file: &str, text: &str) -> Result<ShardFile, MergeError> {
    let mut numbered = text.lines().enumerate();
    let (_, first) = numbered.next().unwrap_or((0, ""));
    let header = parse_jsonl_header(file, first)?;
    let mut reading = Reading::new(&header, text);
    for (i, line) in numbered {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let mut de = serde_json::Deserializer::from_str(line);
        let row = JsonRowSeed { keys: &header.keys }
            .deserialize(&mut de)
            .and_then(|row| de.end().map(|()| row))
            .map_err(|e| merr(file, n, e.to_string()))?;
        let missing = |k: &str| merr(file, n, format!("missing `{k}`"));
        let scenario = row
            .scenario
            .as_ref()
            .and_then(Cell::as_u64)
            .ok_or_else(|| missing("scenario"))?;
        for (key, cell) in header.keys.iter().zip(&row.params) {
            if cell.as_ref().and_then(Cell::as_str).is_none() {
                return Err(missing(key));
            }
        }
        let planner = row
            .planner
            .as_ref()
            .and_then(Cell::as_str)
            .ok_or_else(|| missing("planner"))?;
        let seed = row
            .seed
            .as_ref()
            .and_then(Cell::as_u64)
            .ok_or_else(|| missing("seed"))?;
        let metric = row
            .metric
            .as_ref()
            .and_then(Cell::as_str)
            .ok_or_else(|| missing("metric"))?;
        let value = row
            .value
            .as_ref()
            .and_then(Cell::as_f64)
            .ok_or_else(|| missing("value"))?;
        let params_match = reading.params_match(scenario, |j| {
            row.params
                .get(j)
                .and_then(|c| c.as_ref())
                .and_then(Cell::as_str)
        });
        reading.push(ReadRow {
            line: n,
            scenario,
            params_match,
            planner,
            seed,
            metric,
            value,
        });
    }
    Ok(reading.finish(header))
}

/// The sweep a shard's header describes, checked against itself: its fingerprint is the
/// digest of its inputs, its keys and scenario count are those of its swept values.
struct Described<'a> {
    inputs: &'a SweepInputs,
    declared_rows: &'a BTreeMap<usize, usize>,
    seeds: BTreeSet<u64>,
}

fn describe<'a>(file: &str, shard: &'a ShardFile) -> Result<Described<'a>, MergeError> {
    let header = &shard.header;
    let rerun = format!(
        "re-run its sweep with this coplan ({VERSION}), which records what each shard ran on"
    );
    let (Some(inputs), Some(fingerprint), Some(declared_rows)) =
        (&header.inputs, &header.fingerprint, &header.declared_rows)
    else {
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
    let product: usize = inputs
        .sets
        .iter()
        .fold(1usize, |n, s| n.saturating_mul(s.values.len()));
    if header.keys != keys || header.scenario_count != product {
        return Err(merr(
            file,
            1,
            format!(
                "the header's keys [{}] and {} scenarios do not match the sweep it records (keys [{}], {product} scenarios)",
                header.keys.join(", "),
                header.scenario_count,
                keys.join(", ")
            ),
        ));
    }
    Ok(Described {
        inputs,
        declared_rows,
        seeds: sweep_seeds(file, &inputs.seeds)?,
    })
}

/// The seeds a header records, no more than a sweep may run: a run `1..=N` is counted
/// before it is listed.
fn sweep_seeds(file: &str, text: &str) -> Result<BTreeSet<u64>, MergeError> {
    let too_many = || {
        merr(
            file,
            1,
            format!("the header's seeds `{text}` are more than the {MAX_SEEDS} a sweep may run"),
        )
    };
    if let Some((first, last)) = text.split_once("..=")
        && let (Ok(first), Ok(last)) = (first.parse::<u64>(), last.parse::<u64>())
        && last.saturating_sub(first) >= MAX_SEEDS
    {
        return Err(too_many());
    }
    let seeds = parse_seeds(text)
        .ok_or_else(|| merr(file, 1, format!("malformed seeds `{text}` in the header")))?;
    if seeds.len() as u64 > MAX_SEEDS {
        return Err(too_many());
    }
    Ok(seeds.into_iter().collect())
}

/// Joins shard outputs. All must carry the same fingerprint (the same inputs, swept values,
/// seeds, cycles, planners, solvers and version); every row must be its scenario's (its swept
/// values, a seed, planner and metric of the sweep) and appear once; every scenario must be in
/// exactly one file, with as many rows as its shard's header counts.
pub fn merge(inputs: &[(String, ShardFile)]) -> Result<SweepOutput, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(merr("merge", 0, "no input files"));
    };
    let reference = describe(first_file, first)?;
    // A header may claim any product: it is counted before any scenario is read off it,
    // against the limit a sweep itself keeps to.
    let claimed = reference
        .inputs
        .sets
        .iter()
        .fold(1u64, |n, s| n.saturating_mul(s.values.len() as u64));
    if claimed > MAX_SCENARIOS {
        return Err(merr(
            first_file,
            1,
            format!(
                "the header's --set values make {claimed} scenarios, above the limit of {MAX_SCENARIOS} a sweep keeps to"
            ),
        ));
    }
    let grid = Grid {
        sets: &reference.inputs.sets,
    };
    let scenario_count = claimed;
    let kind = SweepKind::of(reference.inputs.cycles);
    // Scenario → the file (and row line) it came from.
    let mut owner: BTreeMap<u64, (&str, usize)> = BTreeMap::new();
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
        check_rows(file, shard, &described, (kind, scenario_count), &owner)?;
        check_row_counts(file, shard, &described, kind)?;
        for row in &shard.rows {
            owner
                .entry(shard.scenario(row))
                .or_insert((file.as_str(), row.line()));
        }
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
    // Each scenario's rows come from one file in run order: ordered by scenario, then file and
    // row, they are the unsharded output. Scenarios are below `MAX_SCENARIOS` (checked above),
    // so the order is 12 bytes a row; a scenario's values and each name are held once.
    let mut order: Vec<(u32, u32, u32)> = inputs
        .iter()
        .enumerate()
        .flat_map(|(f, (_, shard))| {
            shard.rows.iter().enumerate().map(move |(i, r)| {
                (
                    r.scenario,
                    u32::try_from(f).unwrap_or(u32::MAX),
                    u32::try_from(i).unwrap_or(u32::MAX),
                )
            })
        })
        .collect();
    order.sort_unstable();
    let names: Vec<Vec<Arc<str>>> = inputs
        .iter()
        .map(|(_, shard)| shard.names.by_id.iter().map(|n| Arc::from(&**n)).collect())
        .collect();
    let mut params: BTreeMap<u32, Arc<[(String, String)]>> = BTreeMap::new();
    let mut rows = Vec::with_capacity(order.len());
    for (s, f, i) in order {
        let (Some((_, shard)), Some(names)) = (inputs.get(f as usize), names.get(f as usize))
        else {
            continue;
        };
        let Some(r) = shard.rows.get(i as usize) else {
            continue;
        };
        let (Some(planner), Some(metric)) =
            (names.get(r.planner as usize), names.get(r.metric as usize))
        else {
            continue;
        };
        rows.push(Row {
            scenario: s as usize,
            params: Arc::clone(params.entry(s).or_insert_with(|| grid.params(u64::from(s)))),
            planner: Arc::clone(planner),
            seed: r.seed,
            metric: Arc::clone(metric),
            value: r.value,
        });
    }
    Ok(SweepOutput {
        keys: first.header.keys.clone(),
        scenario_count: usize::try_from(scenario_count).unwrap_or(usize::MAX),
        shard: (0, 1),
        rows,
        inputs: Some(reference.inputs.clone()),
    })
}

/// Every row of one file in order: its scenario in range and in the file's shard, its swept
/// values its scenario's, its seed, planner and metric the sweep's, its scenario in no earlier
/// file, and no row twice. The first row that is not is refused at its line.
fn check_rows(
    file: &str,
    shard: &ShardFile,
    described: &Described<'_>,
    (kind, scenario_count): (SweepKind, u64),
    owner: &BTreeMap<u64, (&str, usize)>,
) -> Result<(), MergeError> {
    let (index, count) = shard.header.shard;
    let planners = &described.inputs.planners;
    let names = &shard.names;
    let planner_ok: Vec<bool> = names
        .by_id
        .iter()
        .map(|n| planners.iter().any(|p| **p == **n))
        .collect();
    let metric_ok: Vec<bool> = names.by_id.iter().map(|n| kind.writes(n)).collect();
    let duplicate = first_duplicate(&shard.rows);
    for (i, row) in shard.rows.iter().enumerate() {
        let (s, line) = (shard.scenario(row), row.line());
        if s >= scenario_count {
            return Err(merr(
                file,
                line,
                format!(
                    "scenario {s} is out of range 0…{}",
                    scenario_count.saturating_sub(1)
                ),
            ));
        }
        if s % count as u64 != index as u64 {
            return Err(merr(
                file,
                line,
                format!("scenario {s} does not belong to this file's shard {index}/{count}"),
            ));
        }
        if !row.params_match() {
            let expected: Vec<String> = Grid {
                sets: &described.inputs.sets,
            }
            .params(s)
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
        if !planner_ok
            .get(row.planner as usize)
            .copied()
            .unwrap_or(false)
        {
            return Err(merr(
                file,
                line,
                format!(
                    "planner `{}` is not among the sweep's planners ({}): this row was not written by the sweep its header records",
                    names.name(row.planner),
                    planners.join(", ")
                ),
            ));
        }
        if !metric_ok.get(row.metric as usize).copied().unwrap_or(false) {
            return Err(merr(
                file,
                line,
                format!(
                    "metric `{}` is not one a {} sweep writes ({})",
                    names.name(row.metric),
                    kind.words(),
                    kind.listed()
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
        if let Some((_, earlier)) = duplicate.filter(|(d, _)| *d == i) {
            return Err(merr(
                file,
                line,
                format!(
                    "duplicate row: scenario {s}, planner {}, seed {}, metric {} is already on line {earlier}",
                    names.name(row.planner),
                    row.seed,
                    names.name(row.metric)
                ),
            ));
        }
    }
    Ok(())
}

/// The first row (by position) that repeats an earlier one's scenario, planner, seed and
/// metric, with the line of the copy before it; found by sorting positions rather than by a
/// set of every row, which would hold as much again as the rows.
fn first_duplicate(rows: &[StoredRow]) -> Option<(usize, usize)> {
    let key = |r: &StoredRow| (r.scenario, r.planner, r.seed, r.metric);
    // Positions fit in u32 as lines do; a row past them (none in a file merge reads) is left
    // out rather than wrapped.
    let mut order: Vec<u32> = (0..rows.len())
        .filter_map(|i| u32::try_from(i).ok())
        .collect();
    order.sort_unstable_by_key(|&i| rows.get(i as usize).map(|r| (key(r), i)));
    order
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (rows.get(w[0] as usize)?, rows.get(w[1] as usize)?);
            (key(a) == key(b)).then_some((w[1] as usize, a.line()))
        })
        .min()
}

/// Every scenario of the file's shard is there, with the rows its header counts; when one is
/// short, names the first row that is missing.
fn check_row_counts(
    file: &str,
    shard: &ShardFile,
    described: &Described<'_>,
    kind: SweepKind,
) -> Result<(), MergeError> {
    let (index, count) = shard.header.shard;
    let scenario_count = shard.header.scenario_count;
    let mut found_rows: BTreeMap<u32, usize> = BTreeMap::new();
    for row in &shard.rows {
        *found_rows.entry(row.scenario).or_insert(0) += 1;
    }
    for s in (index..scenario_count).step_by(count.max(1)) {
        let declared = described.declared_rows.get(&s).copied();
        let found = u32::try_from(s)
            .ok()
            .and_then(|s| found_rows.get(&s))
            .copied()
            .unwrap_or(0);
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
                let which = first_missing_row(shard, s as u64, described, kind).map_or_else(
                    String::new,
                    |(planner, seed, metric)| {
                        format!(" (planner {planner}, seed {seed}, metric {metric})")
                    },
                );
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

/// The first (planner, seed, metric) scenario `s` lacks, where a planner reports the metrics
/// it reports anywhere in the file for every seed: the row a short scenario most likely lost.
/// A preemption planner reports on every seed, so one of the sweep's planners with no row
/// left in the scenario is looked for too (a co-location planner that could not run has none).
fn first_missing_row(
    shard: &ShardFile,
    s: u64,
    described: &Described<'_>,
    kind: SweepKind,
) -> Option<(String, u64, String)> {
    let names = &shard.names;
    let present: BTreeSet<(&str, u64, &str)> = shard
        .rows
        .iter()
        .filter(|r| u64::from(r.scenario) == s)
        .map(|r| (names.name(r.planner), r.seed, names.name(r.metric)))
        .collect();
    let mut planners: BTreeSet<&str> = present.iter().map(|(p, _, _)| *p).collect();
    if kind == SweepKind::Preemption {
        planners.extend(described.inputs.planners.iter().map(String::as_str));
    }
    let in_scenario: BTreeSet<&str> = present.iter().map(|(_, _, m)| *m).collect();
    let metrics_of = |planner: &str| {
        let metrics: BTreeSet<&str> = shard
            .rows
            .iter()
            .filter(|r| names.name(r.planner) == planner)
            .map(|r| names.name(r.metric))
            .collect();
        if metrics.is_empty() {
            in_scenario.clone()
        } else {
            metrics
        }
    };
    // The seeds the scenario ran first: a workload with nothing random runs only the first of
    // the sweep's seeds, and its other seeds lack nothing.
    let ran: BTreeSet<u64> = present.iter().map(|(_, seed, _)| *seed).collect();
    for seeds in [&ran, &described.seeds] {
        for &planner in &planners {
            let metrics = metrics_of(planner);
            for &seed in seeds {
                for &metric in &metrics {
                    if !present.contains(&(planner, seed, metric)) {
                        return Some((planner.to_string(), seed, metric.to_string()));
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{csv, json};
    use crate::sim::fingerprint::content_hash;

    /// A preemption sweep over alpha = 0, 1 with two planners and seeds 1..=2, every planner
    /// reporting `hits` and `victims` on every seed.
    fn whole() -> SweepOutput {
        let inputs = SweepInputs {
            version: VERSION.into(),
            cluster: content_hash("c"),
            workload: content_hash("w"),
            sets: vec![SweptKey {
                key: "flextopo.alpha".into(),
                values: vec!["0".into(), "1".into()],
            }],
            seeds: "1..=2".into(),
            cycles: Some(1),
            planners: vec!["k8s-default".into(), "flextopo-imp".into()],
            solver: None,
            event_solver: None,
            time_limit: None,
        };
        let mut rows = Vec::new();
        for (scenario, alpha) in ["0", "1"].iter().enumerate() {
            for planner in &inputs.planners {
                for seed in 1..=2 {
                    for metric in ["hits", "victims"] {
                        rows.push(Row {
                            scenario,
                            params: vec![("flextopo.alpha".into(), alpha.to_string())].into(),
                            planner: planner.as_str().into(),
                            seed,
                            metric: metric.into(),
                            value: scenario as f64 + seed as f64 / 10.0,
                        });
                    }
                }
            }
        }
        SweepOutput {
            keys: vec!["flextopo.alpha".into()],
            scenario_count: 2,
            shard: (0, 1),
            rows,
            inputs: Some(inputs),
        }
    }

    fn merged(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
        merge(&[(file.into(), parse(file, text)?)])
    }

    /// The CSV text with every occurrence of `from` on line `line` replaced by `to`.
    fn edited(text: &str, line: usize, from: &str, to: &str) -> String {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == line {
                    l.replace(from, to)
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn shards_written_by_sweep_merge_back_row_for_row() {
        let out = whole();
        for text in [csv::sweep(&out), json::sweep_lines(&out)] {
            assert_eq!(merged("w", &text), Ok(out.clone()));
        }
        let shard = |i: usize| SweepOutput {
            shard: (i, 2),
            rows: out
                .rows
                .iter()
                .filter(|r| r.scenario % 2 == i)
                .cloned()
                .collect(),
            ..out.clone()
        };
        let (b, a) = (json::sweep_lines(&shard(1)), csv::sweep(&shard(0)));
        let inputs = [
            ("b".to_string(), parse("b", &b).expect("b")),
            ("a".to_string(), parse("a", &a).expect("a")),
        ];
        assert_eq!(merge(&inputs), Ok(out));
    }

    #[test]
    fn a_phantom_planner_is_refused_at_its_line() {
        let text = csv::sweep(&whole());
        // Line 3 is the first row: k8s-default, seed 1, hits.
        let phantom = edited(&text, 3, "k8s-default", "phantom");
        let e = merged("s.csv", &phantom).expect_err("phantom");
        assert_eq!((e.file.as_str(), e.line), ("s.csv", 3), "{e}");
        assert!(
            e.message.starts_with(
                "planner `phantom` is not among the sweep's planners (k8s-default, flextopo-imp)"
            ),
            "{e}"
        );
        let lines = json::sweep_lines(&whole());
        // Line 6 is flextopo-imp's first row.
        let phantom = edited(&lines, 6, "flextopo-imp", "phantom");
        let e = merged("s.jsonl", &phantom).expect_err("phantom");
        assert_eq!(e.line, 6, "{e}");
    }

    #[test]
    fn a_metric_the_sweep_does_not_write_is_refused_at_its_line() {
        let text = csv::sweep(&whole());
        for metric in ["gpu_utilization", "runtime_ms", "hits_total"] {
            let bad = edited(&text, 4, "victims", metric);
            let e = merged("s.csv", &bad).expect_err("unknown metric");
            assert_eq!(e.line, 4, "{e}");
            assert!(
                e.message.starts_with(&format!(
                    "metric `{metric}` is not one a preemption sweep writes (preemptions, placed"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn a_planner_whose_rows_are_gone_is_named_as_missing() {
        let mut out = whole();
        out.rows
            .retain(|r| !(r.scenario == 1 && &*r.planner == "flextopo-imp"));
        let mut text = csv::sweep(&out);
        // The header still counts the rows the sweep wrote.
        text = text.replacen("rows=0:8;1:4", "rows=0:8;1:8", 1);
        let e = merged("s.csv", &text).expect_err("missing");
        assert_eq!(e.line, 1);
        assert_eq!(
            e.message,
            "missing rows: the header counts 8 rows for scenario 1, 4 are in the file (planner flextopo-imp, seed 1, metric hits)"
        );
    }

    #[test]
    fn a_header_claiming_more_seeds_than_a_sweep_runs_is_refused_before_listing_them() {
        let mut out = whole();
        if let Some(inputs) = out.inputs.as_mut() {
            inputs.seeds = format!("1..={}", u64::MAX);
        }
        let e = merged("s.csv", &csv::sweep(&out)).expect_err("too many seeds");
        assert_eq!(e.line, 1);
        assert!(
            e.message
                .contains("are more than the 10000 a sweep may run"),
            "{e}"
        );
    }

    #[test]
    fn a_scenario_beyond_any_sweep_is_quoted_as_written() {
        let text = csv::sweep(&whole());
        let big = edited(&text, 5, "0,0,k8s", "99999999999,0,k8s");
        let e = merged("s.csv", &big).expect_err("out of range");
        assert_eq!(
            (e.line, e.message.as_str()),
            (5, "scenario 99999999999 is out of range 0…1")
        );
    }

    #[test]
    fn the_first_repeated_row_is_refused_naming_the_copy_before_it() {
        let text = csv::sweep(&whole());
        let lines: Vec<&str> = text.lines().collect();
        // Line 4 again after line 6, and line 3 again after that.
        let mut edited: Vec<&str> = lines[..6].to_vec();
        edited.extend([lines[3], lines[2]]);
        edited.extend(&lines[6..]);
        let e = merged("s.csv", &edited.join("\n")).expect_err("duplicate");
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.ends_with("is already on line 4"), "{e}");
    }

    #[test]
    fn a_row_is_held_in_32_bytes() {
        assert_eq!(std::mem::size_of::<StoredRow>(), 32);
    }
}
