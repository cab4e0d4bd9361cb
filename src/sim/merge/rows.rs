//! What reading and checking share: the error a refusal is, a row as held (32 bytes), a file's
//! interned names, and the sweep's scenarios read off its swept values.

use std::collections::HashMap;
use std::sync::Arc;

use crate::sim::fingerprint::SweptKey;

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

pub(super) fn merr(file: &str, line: usize, message: impl Into<String>) -> MergeError {
    MergeError {
        file: file.into(),
        line,
        message: message.into(),
    }
}

/// One row as held between reading and joining: 32 bytes, however long its names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StoredRow {
    pub(super) seed: u64,
    pub(super) value: f64,
    /// Its scenario; [`BEYOND_U32`] for one that does not fit (beyond any sweep's scenarios:
    /// the file keeps the first such number, the one a refusal quotes).
    pub(super) scenario: u32,
    /// Its line in the file from 1, below [`MISMATCH`] (a file within `MAX_DATA_BYTES` has
    /// fewer than 2³⁰ lines), plus [`MISMATCH`] when its swept values are not those of its
    /// scenario in the sweep its header records (or the header records none: such a shard is
    /// refused before its rows).
    pub(super) line_and_mismatch: u32,
    /// Interned in the file's [`Names`].
    pub(super) planner: u32,
    /// Interned in the file's [`Names`].
    pub(super) metric: u32,
}

/// [`StoredRow::scenario`] of a scenario number that does not fit.
pub(super) const BEYOND_U32: u32 = u32::MAX;

/// The flag of [`StoredRow::line_and_mismatch`].
pub(super) const MISMATCH: u32 = 1 << 31;

impl StoredRow {
    pub(super) fn line(&self) -> usize {
        (self.line_and_mismatch & !MISMATCH) as usize
    }

    pub(super) fn params_match(&self) -> bool {
        self.line_and_mismatch & MISMATCH == 0
    }
}

/// Planner and metric names of one file, each held once however many rows repeat it.
#[derive(Debug, Clone, Default)]
pub(super) struct Names {
    pub(super) by_id: Vec<Box<str>>,
    pub(super) ids: HashMap<Box<str>, u32>,
}

impl Names {
    pub(super) fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.by_id.len()).unwrap_or(u32::MAX);
        self.by_id.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    pub(super) fn name(&self, id: u32) -> &str {
        self.by_id.get(id as usize).map_or("", |n| n)
    }
}

/// The scenarios of a sweep by index (the first key varying slowest, as `sweep::scenarios`
/// lists them), read off without listing the product.
#[derive(Clone, Copy)]
pub(super) struct Grid<'a> {
    pub(super) sets: &'a [SweptKey],
}

impl<'a> Grid<'a> {
    /// Each key's value in scenario `s`, last key first; `None` when `s` is beyond the product.
    pub(super) fn values(self, s: u64) -> Option<Vec<(&'a str, &'a str)>> {
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
    pub(super) fn matches<'c>(self, s: u64, cell: impl Fn(usize) -> Option<&'c str>) -> bool {
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
    pub(super) fn params(self, s: u64) -> Arc<[(String, String)]> {
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
