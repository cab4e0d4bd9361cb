//! The serialised form of `coplan diff`: what the comparison fills in and the JSON Schema
//! describes, kept apart from how the values are computed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::direction::Better;

/// What the paired interval says about a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval excludes 0 on the better side.
    Better,
    /// The interval excludes 0 on the worse side.
    Worse,
    /// The interval contains 0: no change beyond noise.
    NoChange,
    /// The interval lies above 0, for a metric without a better direction.
    Increased,
    /// The interval lies below 0, for a metric without a better direction.
    Decreased,
    /// Fewer than two seeds with values in both outputs: no interval.
    NoCi,
}

impl Verdict {
    /// The verdict as JSON and the tables write it (`better`, `no_change`, `no_ci`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoChange => "no_change",
            Verdict::Increased => "increased",
            Verdict::Decreased => "decreased",
            Verdict::NoCi => "no_ci",
        }
    }
}

/// One side of the comparison, as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffSide {
    /// The path as given on the command line.
    pub file: String,
    /// Name of the cluster the output was simulated on.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Cycles per seed (preemption outputs; null for co-location).
    pub cycles: Option<u64>,
}

/// One planner × metric.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffRow {
    /// The planner's registry name.
    pub planner: String,
    /// The metric's name in the simulate output (e.g. `hit_rate`, `slo_attainment_5x`).
    pub metric: String,
    /// Which way is better: `higher`, `lower`, or null when the metric has no known direction.
    pub better: Option<Better>,
    /// A's mean over its seeds.
    pub a_mean: Option<f64>,
    /// B's mean over its seeds.
    pub b_mean: Option<f64>,
    /// B's mean − A's mean.
    pub diff: Option<f64>,
    /// Seeds with a value in both outputs: the pairs behind the interval.
    pub n: usize,
    /// Mean of the paired differences B_i − A_i (equals `diff` when every seed has both values).
    pub paired_mean: Option<f64>,
    /// Lower end of the 95 % confidence interval of the paired mean; null with n < 2.
    pub ci95_low: Option<f64>,
    /// Upper end of the 95 % confidence interval of the paired mean; null with n < 2.
    pub ci95_high: Option<f64>,
    /// What the interval says: better, worse, no change, increased, decreased, or no interval.
    pub verdict: Verdict,
}

/// A row of a gated metric whose interval lies on the worse side of 0.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Regression {
    /// The planner's registry name.
    pub planner: String,
    /// The regressed metric.
    pub metric: String,
    /// Mean of the paired differences B_i − A_i.
    pub paired_mean: f64,
    /// Lower end of its 95 % confidence interval.
    pub ci95_low: f64,
    /// Upper end of its 95 % confidence interval.
    pub ci95_high: f64,
}

/// `coplan diff` output.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffReport {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `diff`.
    pub kind: &'static str,
    /// `preemption` or `colocation`.
    pub workload_kind: String,
    /// The baseline output (A).
    pub a: DiffSide,
    /// The compared output (B): differences are B − A.
    pub b: DiffSide,
    /// The seeds of both outputs, in A's order.
    pub seeds: Vec<u64>,
    /// Differences the comparison allows (cluster or workload names, cycles) and metrics it
    /// leaves out, one sentence each.
    pub notes: Vec<String>,
    /// Metrics only A holds → the planners holding them; not compared.
    pub only_in_a: BTreeMap<String, Vec<String>>,
    /// Metrics only B holds → the planners holding them; not compared.
    pub only_in_b: BTreeMap<String, Vec<String>>,
    /// Planners in A's order, metrics by name.
    pub rows: Vec<DiffRow>,
    /// The metrics `--fail-on-regression` names (empty without it).
    pub fail_on_regression: Vec<String>,
    /// Rows of those metrics whose interval excludes 0 on the worse side.
    pub regressions: Vec<Regression>,
}
