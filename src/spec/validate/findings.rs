//! The located-finding collector every kind's checks report through, with the range, duplicate
//! and planner-name checks they share, so one rule is worded the same in every spec kind.

use std::collections::BTreeSet;
use std::fmt;

use crate::p;
use crate::spec::limits::MAX_OBJECTIVE_WEIGHT;
use crate::spec::source::Finding;

#[derive(Default)]
pub(super) struct Findings(pub(super) Vec<Finding>);

impl Findings {
    pub(super) fn push(&mut self, f: Finding) {
        self.0.push(f);
    }

    pub(super) fn at_least(&mut self, path: String, value: i64, min: i64, what: impl fmt::Display) {
        if value < min {
            let label = if value <= 0 && min >= 1 {
                "must be positive"
            } else {
                "too small"
            };
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be at least {min}, got {value}"),
                    label,
                )
                .help(format!("use an integer ≥ {min}")),
            );
        }
    }

    /// An integer above a documented limit (`spec::limits`).
    pub(super) fn at_most(&mut self, path: String, value: i64, max: i64, what: impl fmt::Display) {
        if value > max {
            self.above_limit(path, what, &max.to_string(), &value.to_string(), "");
        }
    }

    /// A positive number up to a documented limit (`spec::limits`).
    pub(super) fn positive_at_most(
        &mut self,
        path: String,
        value: f64,
        max: f64,
        what: impl fmt::Display,
    ) {
        if !(value.is_finite() && value > 0.0) {
            self.positive(path, value, what);
        } else if value > max {
            self.above_limit(path, what, &max.to_string(), &value.to_string(), "");
        }
    }

    pub(super) fn in_range(
        &mut self,
        path: String,
        value: f64,
        lo: f64,
        hi: f64,
        what: impl fmt::Display,
    ) {
        if !(value.is_finite() && value >= lo && value <= hi) {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be in [{lo}, {hi}], got {value}"),
                    "out of range",
                )
                .help(format!("use a number between {lo} and {hi}")),
            );
        }
    }

    pub(super) fn positive(&mut self, path: String, value: f64, what: impl fmt::Display) {
        if !(value.is_finite() && value > 0.0) {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be positive, got {value}"),
                    "must be positive",
                )
                .help("use a number > 0"),
            );
        }
    }

    pub(super) fn non_negative(&mut self, path: String, value: f64, what: impl fmt::Display) {
        if !value.is_finite() {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be a finite number, got {value}"),
                    "not finite",
                )
                .help("use a number ≥ 0"),
            );
        } else if value < 0.0 {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must not be negative, got {value}"),
                    "must be ≥ 0",
                )
                .help("use a number ≥ 0"),
            );
        }
    }

    /// A time in seconds: finite, not negative, at most `max`.
    pub(super) fn seconds(&mut self, path: String, value: f64, max: f64, what: impl fmt::Display) {
        if !(value.is_finite() && value >= 0.0) {
            self.non_negative(path, value, what);
        } else if value > max {
            self.above_limit(path, what, &format!("{max:e} s"), &format!("{value:e}"), "");
        }
    }

    /// A non-negative number up to a documented limit (`spec::limits`).
    pub(super) fn non_negative_at_most(
        &mut self,
        path: String,
        value: f64,
        max: f64,
        what: impl fmt::Display,
    ) {
        if !(value.is_finite() && value >= 0.0) {
            self.non_negative(path, value, what);
        } else if value > max {
            self.above_limit(path, what, &format!("{max:e}"), &format!("{value:e}"), "");
        }
    }

    /// An objective weight: ≥ 0 and at most `MAX_OBJECTIVE_WEIGHT` (`spec::limits`).
    pub(super) fn weight(&mut self, path: String, value: f64, what: impl fmt::Display) {
        if !(value.is_finite() && value >= 0.0) {
            self.non_negative(path, value, what);
        } else if value > MAX_OBJECTIVE_WEIGHT {
            self.above_limit(
                path,
                what,
                &format!("{MAX_OBJECTIVE_WEIGHT:e}"),
                &format!("{value:e}"),
                "; only the weights' ratios matter",
            );
        }
    }

    /// A value above a documented limit (`spec::limits`): one wording for every limit.
    fn above_limit(
        &mut self,
        path: String,
        what: impl fmt::Display,
        max: &str,
        value: &str,
        note: &str,
    ) {
        self.push(
            Finding::new(
                "spec::out-of-range",
                path,
                format!("{what} must be at most {max}, got {value}"),
                "above the limit",
            )
            .help(format!(
                "coplan's limit is {max} (docs/spec.md, \"Limits\"){note}"
            )),
        );
    }

    pub(super) fn duplicate(&mut self, path: String, what: &str, name: &str, first: &str) {
        self.push(
            Finding::new(
                "spec::duplicate-name",
                path,
                format!("duplicate {what} name `{name}`"),
                "defined again here",
            )
            .help(format!(
                "names must be unique; `{name}` is first defined at {first}"
            )),
        );
    }

    pub(super) fn planner_names(&mut self, section: &str, run: &[String], known: &[&str]) {
        if run.is_empty() {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    p![section, "run"],
                    "`run` names no planner",
                    "empty",
                )
                .help(format!("name at least one of {}", known.join(", "))),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, name) in run.iter().enumerate() {
            if !known.contains(&name.as_str()) {
                self.push(
                    Finding::new(
                        "spec::unknown-planner",
                        p![section, "run", i],
                        format!("unknown planner `{name}`"),
                        "unknown planner",
                    )
                    .help(format!("expected one of {}", known.join(", "))),
                );
            } else if !seen.insert(name.as_str()) {
                self.push(Finding::new(
                    "spec::duplicate-name",
                    p![section, "run", i],
                    format!("planner `{name}` is listed twice"),
                    "listed again here",
                ));
            }
        }
    }
}
