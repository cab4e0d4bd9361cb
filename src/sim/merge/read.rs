//! Reading one shard file, CSV or JSON Lines, into rows of 32 bytes: its header, its rows
//! checked against the header's own scenarios as they are read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::rows::*;
use crate::sim::fingerprint::{SweepInputs, SweptKey};
use crate::sim::sweep::CSV_MAGIC;

/// One shard file as read: what its header declares and its rows.
#[derive(Debug, Clone)]
pub struct ShardFile {
    pub(super) header: Header,
    pub(super) rows: Vec<StoredRow>,
    pub(super) names: Names,
    /// The first scenario number beyond `u32` (rows hold [`BEYOND_U32`] for it).
    pub(super) beyond_u32: Option<u64>,
}

impl ShardFile {
    /// A row's scenario as the file wrote it.
    pub(super) fn scenario(&self, row: &StoredRow) -> u64 {
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
pub(super) struct Header {
    pub(super) scenario_count: usize,
    pub(super) shard: (usize, usize),
    pub(super) keys: Vec<String>,
    pub(super) declared_rows: Option<BTreeMap<usize, usize>>,
    pub(super) fingerprint: Option<String>,
    pub(super) inputs: Option<SweepInputs>,
}

impl Header {
    /// The scenarios its recorded inputs list, when they list the keys its rows carry.
    pub(super) fn grid(&self) -> Option<Grid<'_>> {
        self.inputs
            .as_ref()
            .filter(|i| i.sets.iter().map(|s| &s.key).eq(self.keys.iter()))
            .map(|i| Grid { sets: &i.sets })
    }
}

/// Rows as they are read, checked against the header's own scenarios (its swept values,
/// copied: a handful of strings).
pub(super) struct Reading {
    pub(super) sets: Option<Vec<SweptKey>>,
    pub(super) rows: Vec<StoredRow>,
    pub(super) names: Names,
    pub(super) beyond_u32: Option<u64>,
}

/// One row's fields as read, names borrowed from the file where they need no unescaping.
pub(super) struct ReadRow<'r> {
    pub(super) line: usize,
    pub(super) scenario: u64,
    pub(super) params_match: bool,
    pub(super) planner: &'r str,
    pub(super) seed: u64,
    pub(super) metric: &'r str,
    pub(super) value: f64,
}

impl Reading {
    /// Rows of `text`, at most one per line: held in one allocation of that size rather than
    /// one grown by doubling, which can hold twice the rows' size and copy them on the way.
    pub(super) fn new(header: &Header, text: &str) -> Self {
        let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
        Reading {
            sets: header.grid().map(|g| g.sets.to_vec()),
            rows: Vec::with_capacity(lines),
            names: Names::default(),
            beyond_u32: None,
        }
    }

    pub(super) fn params_match<'c>(
        &self,
        scenario: u64,
        cell: impl Fn(usize) -> Option<&'c str>,
    ) -> bool {
        self.sets
            .as_deref()
            .is_some_and(|sets| Grid { sets }.matches(scenario, cell))
    }

    pub(super) fn push(&mut self, row: ReadRow<'_>) {
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

    pub(super) fn finish(self, header: Header) -> ShardFile {
        ShardFile {
            header,
            rows: self.rows,
            names: self.names,
            beyond_u32: self.beyond_u32,
        }
    }
}

pub(super) fn inputs_from(file: &str, value: Value) -> Result<SweepInputs, MergeError> {
    serde_json::from_value(value).map_err(|e| {
        merr(
            file,
            1,
            format!("malformed sweep inputs in the header: {e}"),
        )
    })
}

/// `0:36;2:36` (CSV) as scenario → rows.
pub(super) fn parse_row_counts(
    file: &str,
    text: &str,
) -> Result<BTreeMap<usize, usize>, MergeError> {
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

pub(super) fn parse_csv_header(file: &str, first: &str) -> Result<Header, MergeError> {
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
            Some(("shard", v)) => shard = crate::sim::sweep::parse_shard(v).ok(),
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

pub(super) fn parse_csv(file: &str, text: &str) -> Result<ShardFile, MergeError> {
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

pub(super) fn parse_jsonl_header(file: &str, first: &str) -> Result<Header, MergeError> {
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
pub(super) enum Cell<'a> {
    Str(Cow<'a, str>),
    Unsigned(u64),
    Number(f64),
    Other,
}

impl<'a> Cell<'a> {
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Cell::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn as_u64(&self) -> Option<u64> {
        match self {
            Cell::Unsigned(n) => Some(*n),
            _ => None,
        }
    }

    pub(super) fn as_f64(&self) -> Option<f64> {
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

pub(super) struct CellVisitor;

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
pub(super) struct JsonRow<'a> {
    pub(super) scenario: Option<Cell<'a>>,
    pub(super) params: Vec<Option<Cell<'a>>>,
    pub(super) planner: Option<Cell<'a>>,
    pub(super) seed: Option<Cell<'a>>,
    pub(super) metric: Option<Cell<'a>>,
    pub(super) value: Option<Cell<'a>>,
}

/// Reads a [`JsonRow`] with the header's swept keys.
pub(super) struct JsonRowSeed<'k> {
    pub(super) keys: &'k [String],
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

pub(super) fn parse_jsonl(file: &str, text: &str) -> Result<ShardFile, MergeError> {
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
