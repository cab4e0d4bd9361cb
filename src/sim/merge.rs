//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong to one sweep (the same fingerprint), that no row is there twice and none is
//! missing, and that together they hold every scenario exactly once; join them.
//!
//! A shard can hold millions of rows, each repeating its swept values, planner and metric
//! names: rows are held as numbers (names interned per file, swept values reduced to whether
//! they are their scenario's) and become owned rows only once every check has passed.

mod checks;
mod metrics;
mod read;

use self::checks::{check_row_counts, check_rows, describe};
pub use self::read::{ShardFile, parse};

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

#[cfg(test)]
mod tests {
    use super::StoredRow;

    #[test]
    fn a_row_is_held_in_32_bytes() {
        assert_eq!(std::mem::size_of::<StoredRow>(), 32);
    }
}
