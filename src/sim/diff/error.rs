//! Why two outputs cannot be compared, in words: the messages name both files and what
//! differs (seeds as ranges), so that a refused diff says how to fix its inputs.

use std::collections::BTreeSet;
use std::fmt;

/// What differs between two outputs that makes them incomparable.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// A preemption output compared with a co-location one.
    WorkloadKind {
        /// A's workload kind.
        a: String,
        /// B's workload kind.
        b: String,
    },
    /// The two outputs ran different seeds, so they cannot be paired.
    Seeds {
        /// A's seeds, in its order.
        a: Vec<u64>,
        /// B's seeds, in its order.
        b: Vec<u64>,
    },
    /// The two outputs compared different planners.
    Planners {
        /// Planners only A has.
        only_a: Vec<String>,
        /// Planners only B has.
        only_b: Vec<String>,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::WorkloadKind { a, b } => {
                write!(f, "workload kinds: A is {a}, B is {b}")
            }
            Difference::Seeds { a, b } => {
                write!(
                    f,
                    "seeds: A has {} ({}), B has {} ({})",
                    a.len(),
                    seed_ranges(a),
                    b.len(),
                    seed_ranges(b)
                )?;
                let (sa, sb): (BTreeSet<u64>, BTreeSet<u64>) =
                    (a.iter().copied().collect(), b.iter().copied().collect());
                let only_a: Vec<u64> = sa.difference(&sb).copied().collect();
                let only_b: Vec<u64> = sb.difference(&sa).copied().collect();
                if !only_a.is_empty() {
                    write!(f, "; only in A: {}", seed_ranges(&only_a))?;
                }
                if !only_b.is_empty() {
                    write!(f, "; only in B: {}", seed_ranges(&only_b))?;
                }
                Ok(())
            }
            Difference::Planners { only_a, only_b } => {
                write!(f, "planners:")?;
                if !only_a.is_empty() {
                    write!(f, " only in A: {}", only_a.join(", "))?;
                }
                if !only_a.is_empty() && !only_b.is_empty() {
                    write!(f, ";")?;
                }
                if !only_b.is_empty() {
                    write!(f, " only in B: {}", only_b.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

/// Seeds as sorted ranges: `1-3, 7`.
pub fn seed_ranges(seeds: &[u64]) -> String {
    let sorted: BTreeSet<u64> = seeds.iter().copied().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u64, u64)> = None;
    for s in sorted {
        run = match run {
            Some((lo, hi)) if hi.checked_add(1) == Some(s) => Some((lo, s)),
            Some(done) => {
                parts.push(range_text(done));
                Some((s, s))
            }
            None => Some((s, s)),
        };
    }
    if let Some(done) = run {
        parts.push(range_text(done));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn range_text((lo, hi): (u64, u64)) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

/// Why two outputs cannot be compared (all input errors).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiffError {
    /// Not JSON.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file as named on the command line.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's message, without the position it appends.
        message: String,
    },
    /// JSON with a `kind` of `simulation` whose fields have the wrong shape.
    #[error("{file}:{line}:{column}: {message}")]
    Shape {
        /// The file as named on the command line.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's message, without the position it appends.
        message: String,
    },
    /// A per-seed value or mean beyond `MAX_COMPARABLE`, whose differences would overflow.
    #[error("{file}:{line}:{column}: {message}")]
    TooLarge {
        /// The file as named on the command line.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// 1-based column just after the value.
        column: usize,
        /// The value and why it cannot be compared.
        message: String,
    },
    /// JSON that is not a `coplan simulate` output (another `kind`, no `kind`, not an object).
    #[error("`{file}` is not a `coplan simulate --format json` output: {reason}")]
    NotSimulation {
        /// The file as named on the command line.
        file: String,
        /// What it is instead.
        reason: String,
    },
    /// A simulate output without `per_seed` values, written by an older coplan.
    #[error(
        "`{file}` has no per-seed values (it was written by an older coplan): re-run `coplan simulate … --format json` to compare it"
    )]
    NoPerSeed {
        /// The file as named on the command line.
        file: String,
    },
    /// A simulate output that lists a seed or a planner twice, or whose `per_seed` values do not
    /// match its seeds.
    #[error("`{file}`: {message}")]
    Inconsistent {
        /// The file as named on the command line.
        file: String,
        /// What is listed twice or does not match.
        message: String,
    },
    /// The two outputs cannot be paired seed by seed.
    #[error(
        "`{a}` (A) and `{b}` (B) cannot be compared seed by seed: {}",
        differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Mismatch {
        /// A's file name.
        a: String,
        /// B's file name.
        b: String,
        /// Everything that differs (workload kind, seeds, planners).
        differences: Vec<Difference>,
    },
    /// `--fail-on-regression` with an empty metric name (`''`, `a,,b`): it would gate nothing
    /// in its place, and a gate that silently gates less lets a regression pass.
    #[error(
        "--fail-on-regression {}: {}; name each metric to gate, e.g. `--fail-on-regression hit_rate,victims`",
        if given.trim().is_empty() { "was given an empty value".to_string() } else { format!("`{given}`") },
        if given.trim().is_empty() { "it names no metric, so it would gate nothing" } else { "an empty metric name (between two commas, or at an end) names nothing to gate" }
    )]
    EmptyMetric {
        /// The metrics as given, joined by commas again.
        given: String,
    },
    /// `--fail-on-regression` names a metric that is not in both outputs.
    #[error(
        "--fail-on-regression: `{metric}` is not a metric of both outputs; they compare {}",
        compared.join(", ")
    )]
    UnknownMetric {
        /// The metric named.
        metric: String,
        /// The metrics both outputs carry.
        compared: Vec<String>,
    },
    /// `--fail-on-regression` names a metric with no known better direction.
    #[error(
        "--fail-on-regression: `{metric}` has no known better direction, so it cannot regress; metrics that can: {}",
        gateable.join(", ")
    )]
    NoDirection {
        /// The metric named.
        metric: String,
        /// The metrics that have a direction and can gate.
        gateable: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_compress_runs() {
        assert_eq!(seed_ranges(&[3, 1, 2, 7, 9, 8, 11]), "1-3, 7-9, 11");
        assert_eq!(seed_ranges(&[]), "none");
        assert_eq!(
            seed_ranges(&[u64::MAX, u64::MAX - 1]),
            format!("{}-{}", u64::MAX - 1, u64::MAX)
        );
    }
}
