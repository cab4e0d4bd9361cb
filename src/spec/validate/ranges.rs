//! Range rules as data: each spec kind lists its numeric fields in tables of [`Field`] rows
//! (key, how to read the value, the range it must lie in, its name in messages), and
//! [`Findings::fields`] walks a table in row order. The wording of every range error stays in
//! `findings`; a table only says which rule a field follows.

use std::fmt;

use super::findings::Findings;
use crate::spec::limits::MAX_TIME_LIMIT_S;

/// The range an integer field must lie in.
#[derive(Debug, Clone, Copy)]
pub(super) enum IntRange {
    /// At least the bound.
    AtLeast(i64),
    /// At most the bound (a documented limit).
    AtMost(i64),
    /// At least the first bound, then at most the second.
    Between(i64, i64),
}

/// The range a real field must lie in.
#[derive(Debug, Clone, Copy)]
pub(super) enum RealRange {
    /// Finite and above 0.
    Positive,
    /// Finite and not negative.
    NonNegative,
    /// Above 0, at most the limit.
    PositiveAtMost(f64),
    /// Not negative, at most the limit.
    NonNegativeAtMost(f64),
    /// A time in seconds: not negative, at most the limit.
    Seconds(f64),
    /// An objective weight (`Findings::weight`).
    Weight,
    /// In the closed interval.
    Within(f64, f64),
}

/// `ilp_time_limit_s` of either workload kind.
pub(super) const ILP_TIME_LIMIT: RealRange = RealRange::PositiveAtMost(MAX_TIME_LIMIT_S);

/// `ilp_mip_gap` of either workload kind: a gap of 1 or more would accept any incumbent.
pub(super) const MIP_GAP: RealRange = RealRange::Within(0.0, 0.99);

/// How a row reads its value from the section it describes.
#[derive(Clone, Copy)]
enum Read<T> {
    Int(fn(&T) -> i64, IntRange),
    Real(fn(&T) -> f64, RealRange),
    /// An optional key: checked only when given.
    MaybeInt(fn(&T) -> Option<i64>, IntRange),
    /// An optional key: checked only when given.
    MaybeReal(fn(&T) -> Option<f64>, RealRange),
}

/// One row of a range table: a key of section `T` and the rule its value follows.
#[derive(Clone, Copy)]
pub(super) struct Field<T> {
    key: &'static str,
    read: Read<T>,
    /// What the field is, before its key in messages (`pool` `count`); absent: the key alone.
    title: Option<&'static str>,
}

/// `row`, named in messages by its key after `title` (`weight `unplaced``).
pub(super) const fn titled<T>(title: &'static str, row: Field<T>) -> Field<T> {
    Field {
        title: Some(title),
        ..row
    }
}

/// An integer key.
pub(super) const fn int<T>(key: &'static str, read: fn(&T) -> i64, range: IntRange) -> Field<T> {
    Field {
        key,
        read: Read::Int(read, range),
        title: None,
    }
}

/// A real key.
pub(super) const fn real<T>(key: &'static str, read: fn(&T) -> f64, range: RealRange) -> Field<T> {
    Field {
        key,
        read: Read::Real(read, range),
        title: None,
    }
}

/// An optional integer key.
pub(super) const fn maybe_int<T>(
    key: &'static str,
    read: fn(&T) -> Option<i64>,
    range: IntRange,
) -> Field<T> {
    Field {
        key,
        read: Read::MaybeInt(read, range),
        title: None,
    }
}

/// An optional real key.
pub(super) const fn maybe_real<T>(
    key: &'static str,
    read: fn(&T) -> Option<f64>,
    range: RealRange,
) -> Field<T> {
    Field {
        key,
        read: Read::MaybeReal(read, range),
        title: None,
    }
}

/// A field's name in messages, written only when a finding is made.
struct Name<'a> {
    key: &'a str,
    title: Option<&'a str>,
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.title {
            Some(title) => write!(f, "{title} `{}`", self.key),
            None => write!(f, "`{}`", self.key),
        }
    }
}

impl Findings {
    /// Checks every row of `table` against `section` (found at `prefix`, empty at the top of
    /// the file), in row order.
    pub(super) fn fields<T>(&mut self, prefix: &str, section: &T, table: &[Field<T>]) {
        for row in table {
            let path = if prefix.is_empty() {
                row.key.to_string()
            } else {
                format!("{prefix}.{}", row.key)
            };
            let name = Name {
                key: row.key,
                title: row.title,
            };
            match row.read {
                Read::Int(read, range) => self.int(path, read(section), range, name),
                Read::Real(read, range) => self.real(path, read(section), range, name),
                Read::MaybeInt(read, range) => {
                    if let Some(value) = read(section) {
                        self.int(path, value, range, name);
                    }
                }
                Read::MaybeReal(read, range) => {
                    if let Some(value) = read(section) {
                        self.real(path, value, range, name);
                    }
                }
            }
        }
    }

    /// One integer against its range.
    pub(super) fn int(
        &mut self,
        path: String,
        value: i64,
        range: IntRange,
        what: impl fmt::Display,
    ) {
        match range {
            IntRange::AtLeast(min) => self.at_least(path, value, min, what),
            IntRange::AtMost(max) => self.at_most(path, value, max, what),
            IntRange::Between(min, max) => {
                self.at_least(path.clone(), value, min, &what);
                self.at_most(path, value, max, what);
            }
        }
    }

    /// One real against its range.
    pub(super) fn real(
        &mut self,
        path: String,
        value: f64,
        range: RealRange,
        what: impl fmt::Display,
    ) {
        match range {
            RealRange::Positive => self.positive(path, value, what),
            RealRange::NonNegative => self.non_negative(path, value, what),
            RealRange::PositiveAtMost(max) => self.positive_at_most(path, value, max, what),
            RealRange::NonNegativeAtMost(max) => self.non_negative_at_most(path, value, max, what),
            RealRange::Seconds(max) => self.seconds(path, value, max, what),
            RealRange::Weight => self.weight(path, value, what),
            RealRange::Within(lo, hi) => self.in_range(path, value, lo, hi, what),
        }
    }
}
