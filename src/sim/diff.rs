//! `coplan diff`: two `coplan simulate --format json` outputs of the same planners over the
//! same seeds (before and after a change), compared per planner and metric. A change counts
//! only when the 95 % confidence interval of the paired per-seed differences B_i − A_i
//! excludes 0; each metric knows which way is better, so that a CI pipeline can fail on a
//! regression beyond noise. Also the JSON Schemas of the simulate and diff outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::colocation::ColocationSimulation;
use super::preemption::PreemptionSimulation;
use super::stats::t975;
use crate::spec::sorted_keys;

/// The part of a `coplan simulate --format json` output that the comparison reads; every
/// other field is ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SimulationInput {
    /// The file it was read from, for messages.
    #[serde(skip)]
    pub file: String,
    pub kind: String,
    /// `colocation` in co-location outputs; preemption outputs have none.
    #[serde(default)]
    pub workload_kind: Option<String>,
    pub cluster: String,
    #[serde(default)]
    pub workload: Option<String>,
    pub seeds: Vec<u64>,
    /// Cycles per seed (preemption outputs only).
    #[serde(default)]
    pub cycles: Option<u64>,
    pub planners: Vec<PlannerInput>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PlannerInput {
    pub name: String,
    pub metrics: BTreeMap<String, MeanInput>,
    /// Metric → one value per entry of `seeds`, null where the planner had none.
    pub per_seed: BTreeMap<String, Vec<Option<f64>>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MeanInput {
    /// Null only where a simulation wrote a non-finite mean (JSON has no NaN).
    pub mean: Option<f64>,
}

impl SimulationInput {
    /// `preemption` or `colocation`.
    pub fn workload_kind(&self) -> &str {
        self.workload_kind.as_deref().unwrap_or("preemption")
    }
}

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

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

/// Which way is better, by metric name; a name ending in `*` covers every metric it prefixes.
/// Exact names win over prefixes. Timings (`runtime_ms`) are lower-is-better like any cost,
/// but depend on the machine: simulate keeps them out of its per-seed values, and no metric
/// gates a run unless `--fail-on-regression` names it.
pub const DIRECTIONS: &[(&str, Better)] = &[
    // Preemption.
    ("hit_rate*", Better::Higher),
    ("hits", Better::Higher),
    ("placed", Better::Higher),
    ("unplaced", Better::Lower),
    ("victims*", Better::Lower),
    ("victim_priority_sum", Better::Lower),
    ("wasted_evictions", Better::Lower),
    ("slowdown*", Better::Lower),
    ("gpu_hours_evicted", Better::Lower),
    ("decision_gap", Better::Lower),
    ("subsets_evaluated", Better::Lower),
    ("runtime_ms", Better::Lower),
    // Both kinds: the canonical objectives are costs, gaps are distances to the optimum.
    ("objective", Better::Lower),
    ("gap", Better::Lower),
    // Co-location.
    ("throughput*", Better::Higher),
    ("goodput*", Better::Higher),
    ("slo_attainment*", Better::Higher),
    ("gpu_utilization", Better::Higher),
    ("utilization_active", Better::Higher),
    ("training_tasks_done", Better::Higher),
    ("ttft*", Better::Lower),
    ("tbt*", Better::Lower),
    ("jct*", Better::Lower),
    ("bubble_rate", Better::Lower),
    ("makespan_s", Better::Lower),
    ("dropped", Better::Lower),
    ("offloaded", Better::Lower),
    ("staleness_mean", Better::Lower),
];

/// Metrics of the simulate outputs that deliberately have no better direction: sizes of the
/// workload (`preemptions`, `tasks`, `inference_requests`), the measuring window, and shares
/// whose value is good or bad only in context (transfers, nodes used).
pub const UNDIRECTED: &[&str] = &[
    "preemptions",
    "tasks",
    "inference_requests",
    "transfer_utilization",
    "window_start_s",
    "window_end_s",
    "nodes_used",
];

/// Which way `metric` is better; `None` when unknown.
pub fn better(metric: &str) -> Option<Better> {
    if let Some((_, b)) = DIRECTIONS.iter().find(|(name, _)| *name == metric) {
        return Some(*b);
    }
    DIRECTIONS
        .iter()
        .filter_map(|(name, b)| {
            let prefix = name.strip_suffix('*')?;
            metric.starts_with(prefix).then_some((prefix.len(), *b))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, b)| b)
}

/// One side of the comparison, as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffSide {
    /// The path as given on the command line.
    pub file: String,
    pub cluster: String,
    pub workload: Option<String>,
    /// Cycles per seed (preemption outputs; null for co-location).
    pub cycles: Option<u64>,
}

/// One planner × metric.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffRow {
    pub planner: String,
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
    pub verdict: Verdict,
}

/// A row of a gated metric whose interval lies on the worse side of 0.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Regression {
    pub planner: String,
    pub metric: String,
    pub paired_mean: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

/// `coplan diff` output.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffReport {
    pub schema_version: u32,
    /// Always `diff`.
    pub kind: &'static str,
    /// `preemption` or `colocation`.
    pub workload_kind: String,
    pub a: DiffSide,
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

impl DiffReport {
    /// Why the run fails its regression gate; `None` when it passes.
    pub fn regression_message(&self) -> Option<String> {
        if self.regressions.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .regressions
            .iter()
            .map(|r| {
                format!(
                    "{} {}: B − A = {:+.4}, 95% CI [{:+.4}, {:+.4}]",
                    r.planner, r.metric, r.paired_mean, r.ci95_low, r.ci95_high
                )
            })
            .collect();
        Some(format!(
            "{} regression(s) beyond noise (--fail-on-regression {}): {}",
            self.regressions.len(),
            self.fail_on_regression.join(","),
            list.join("; ")
        ))
    }
}

/// What differs between two outputs that makes them incomparable.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    WorkloadKind {
        a: String,
        b: String,
    },
    Seeds {
        a: Vec<u64>,
        b: Vec<u64>,
    },
    Planners {
        only_a: Vec<String>,
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
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON with a `kind` of `simulation` whose fields have the wrong shape.
    #[error("{file}:{line}:{column}: {message}")]
    Shape {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("`{file}` is not a `coplan simulate --format json` output: {reason}")]
    NotSimulation { file: String, reason: String },
    #[error(
        "`{file}` has no per-seed values (it was written by an older coplan): re-run `coplan simulate … --format json` to compare it"
    )]
    NoPerSeed { file: String },
    #[error("`{file}`: {message}")]
    Inconsistent { file: String, message: String },
    #[error(
        "`{a}` (A) and `{b}` (B) cannot be compared seed by seed: {}",
        differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Mismatch {
        a: String,
        b: String,
        differences: Vec<Difference>,
    },
    #[error(
        "--fail-on-regression: `{metric}` is not a metric of both outputs; they compare {}",
        compared.join(", ")
    )]
    UnknownMetric {
        metric: String,
        compared: Vec<String>,
    },
    #[error(
        "--fail-on-regression: `{metric}` has no known better direction, so it cannot regress; metrics that can: {}",
        gateable.join(", ")
    )]
    NoDirection {
        metric: String,
        gateable: Vec<String>,
    },
}

/// Splits serde_json's message from the position it appends.
fn json_error(file: &str, e: &serde_json::Error) -> (String, usize, usize, String) {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
    (file.to_string(), e.line(), e.column(), message)
}

/// Reads one simulate output. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<SimulationInput, DiffError> {
    // A first pass as plain JSON tells syntax errors, other kinds of output and outputs of
    // older versions apart before the typed read, whose errors then point into a real
    // simulate output.
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let (file, line, column, message) = json_error(file, &e);
        DiffError::Syntax {
            file,
            line,
            column,
            message,
        }
    })?;
    let not_simulation = |reason: String| DiffError::NotSimulation {
        file: file.to_string(),
        reason,
    };
    match value.get("kind") {
        Some(Value::String(k)) if k == "simulation" => {}
        Some(Value::String(k)) => {
            return Err(not_simulation(format!(
                "its `kind` is `{k}`, not `simulation`"
            )));
        }
        _ if value.is_object() => return Err(not_simulation("it has no `kind`".into())),
        _ => return Err(not_simulation("it is not a JSON object".into())),
    }
    if let Some(planners) = value.get("planners").and_then(Value::as_array)
        && planners.iter().any(|p| p.get("per_seed").is_none())
    {
        return Err(DiffError::NoPerSeed { file: file.into() });
    }
    let mut input: SimulationInput = serde_json::from_str(text).map_err(|e| {
        let (file, line, column, message) = json_error(file, &e);
        DiffError::Shape {
            file,
            line,
            column,
            message,
        }
    })?;
    input.file = file.to_string();
    check_consistent(&input)?;
    Ok(input)
}

/// Seeds and planners named once each, one per-seed value per seed.
fn check_consistent(input: &SimulationInput) -> Result<(), DiffError> {
    let fail = |message: String| DiffError::Inconsistent {
        file: input.file.clone(),
        message,
    };
    let mut seen = BTreeSet::new();
    if let Some(dup) = input.seeds.iter().find(|s| !seen.insert(**s)) {
        return Err(fail(format!("seed {dup} is listed twice")));
    }
    let mut names = BTreeSet::new();
    for p in &input.planners {
        if !names.insert(p.name.as_str()) {
            return Err(fail(format!("planner `{}` is listed twice", p.name)));
        }
        for (metric, values) in &p.per_seed {
            if values.len() != input.seeds.len() {
                return Err(fail(format!(
                    "planner `{}`: `per_seed.{metric}` has {} values for {} seeds",
                    p.name,
                    values.len(),
                    input.seeds.len()
                )));
            }
        }
    }
    Ok(())
}

/// The paired differences' mean and 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    pub n: usize,
    pub mean: Option<f64>,
    /// `(low, high)`; `None` with fewer than two pairs.
    pub ci95: Option<(f64, f64)>,
}

/// Mean of `d` ± t_{0.975, n−1} · sd(d) / √n (sample standard deviation, n − 1 in the
/// denominator).
pub fn paired_interval(d: &[f64]) -> Paired {
    let n = d.len();
    if n == 0 {
        return Paired {
            n,
            mean: None,
            ci95: None,
        };
    }
    let mean = d.iter().sum::<f64>() / n as f64;
    let ci95 = (n >= 2).then(|| {
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t975(n - 1) * (var / n as f64).sqrt();
        (mean - half, mean + half)
    });
    Paired {
        n,
        mean: Some(mean),
        ci95,
    }
}

/// Differences this small against the values compared are rounding (the same quantity summed
/// in another order), not change: they count as 0, so that a refactoring that moves the last
/// bit does not fail a regression gate.
const ROUNDING: f64 = 1e-9;

fn paired_difference(a: f64, b: f64) -> f64 {
    let d = b - a;
    if d.abs() <= ROUNDING * a.abs().max(b.abs()).max(1.0) {
        0.0
    } else {
        d
    }
}

/// What an interval says, given which way the metric is better.
pub fn verdict(better: Option<Better>, ci95: Option<(f64, f64)>) -> Verdict {
    let Some((low, high)) = ci95 else {
        return Verdict::NoCi;
    };
    let up = if low > 0.0 {
        true
    } else if high < 0.0 {
        false
    } else {
        return Verdict::NoChange;
    };
    match (better, up) {
        (Some(Better::Higher), true) | (Some(Better::Lower), false) => Verdict::Better,
        (Some(Better::Higher), false) | (Some(Better::Lower), true) => Verdict::Worse,
        (None, true) => Verdict::Increased,
        (None, false) => Verdict::Decreased,
    }
}

fn names<T>(items: &[T], name: impl Fn(&T) -> &str) -> BTreeSet<String> {
    items.iter().map(|i| name(i).to_string()).collect()
}

/// What makes the outputs incomparable; empty when they pair up.
fn differences(a: &SimulationInput, b: &SimulationInput) -> Vec<Difference> {
    let mut out = Vec::new();
    if a.workload_kind() != b.workload_kind() {
        out.push(Difference::WorkloadKind {
            a: a.workload_kind().into(),
            b: b.workload_kind().into(),
        });
    }
    let (sa, sb): (BTreeSet<u64>, BTreeSet<u64>) = (
        a.seeds.iter().copied().collect(),
        b.seeds.iter().copied().collect(),
    );
    if sa != sb {
        out.push(Difference::Seeds {
            a: a.seeds.clone(),
            b: b.seeds.clone(),
        });
    }
    let (pa, pb) = (
        names(&a.planners, |p| &p.name),
        names(&b.planners, |p| &p.name),
    );
    if pa != pb {
        out.push(Difference::Planners {
            only_a: pa.difference(&pb).cloned().collect(),
            only_b: pb.difference(&pa).cloned().collect(),
        });
    }
    out
}

/// Differences the comparison allows, as notes.
fn allowed_differences(a: &SimulationInput, b: &SimulationInput) -> Vec<String> {
    let mut notes = Vec::new();
    if a.cluster != b.cluster {
        notes.push(format!(
            "the clusters differ: A ran on `{}`, B on `{}`",
            a.cluster, b.cluster
        ));
    }
    if a.workload != b.workload {
        let name = |w: &Option<String>| w.as_ref().map_or("(unnamed)".into(), |w| format!("`{w}`"));
        notes.push(format!(
            "the workloads differ: A is {}, B is {}",
            name(&a.workload),
            name(&b.workload)
        ));
    }
    if a.cycles != b.cycles {
        let cycles = |c: Option<u64>| c.map_or("no".into(), |c| c.to_string());
        notes.push(format!(
            "the cycles per seed differ: A has {}, B has {}",
            cycles(a.cycles),
            cycles(b.cycles)
        ));
    }
    notes
}

/// Per-seed values of one metric, null where absent.
fn values<'a>(p: &'a PlannerInput, metric: &str) -> &'a [Option<f64>] {
    p.per_seed.get(metric).map_or(&[], Vec::as_slice)
}

/// One row: both means and the paired interval over `pairs` (index in A's seeds, in B's).
fn row(a: &PlannerInput, b: &PlannerInput, metric: &str, pairs: &[(usize, usize)]) -> DiffRow {
    let mean = |p: &PlannerInput| p.metrics.get(metric).and_then(|m| m.mean);
    let (a_mean, b_mean) = (mean(a), mean(b));
    let (va, vb) = (values(a, metric), values(b, metric));
    let d: Vec<f64> = pairs
        .iter()
        .filter_map(|&(ia, ib)| {
            let (x, y) = (
                va.get(ia).copied().flatten()?,
                vb.get(ib).copied().flatten()?,
            );
            Some(paired_difference(x, y))
        })
        .collect();
    let paired = paired_interval(&d);
    let better = better(metric);
    DiffRow {
        planner: a.name.clone(),
        metric: metric.to_string(),
        better,
        a_mean,
        b_mean,
        diff: a_mean.zip(b_mean).map(|(x, y)| y - x),
        n: paired.n,
        paired_mean: paired.mean,
        ci95_low: paired.ci95.map(|c| c.0),
        ci95_high: paired.ci95.map(|c| c.1),
        verdict: verdict(better, paired.ci95),
    }
}

/// Metrics a planner holds (a summary or per-seed values).
fn metric_names(p: &PlannerInput) -> BTreeSet<&str> {
    p.metrics
        .keys()
        .chain(p.per_seed.keys())
        .map(String::as_str)
        .collect()
}

/// The note on metrics only one side holds.
fn only_note(side: &str, only: &BTreeMap<String, Vec<String>>, planners: usize) -> Vec<String> {
    only.iter()
        .map(|(metric, who)| {
            if who.len() == planners {
                format!("`{metric}` is only in {side}: not compared")
            } else {
                format!(
                    "`{metric}` is only in {side} for {}: not compared",
                    who.join(", ")
                )
            }
        })
        .collect()
}

/// Compares B with A; `fail_on` names the metrics whose worse-side intervals are regressions.
pub fn diff(
    a: &SimulationInput,
    b: &SimulationInput,
    fail_on: &[String],
) -> Result<DiffReport, DiffError> {
    let differences = differences(a, b);
    if !differences.is_empty() {
        return Err(DiffError::Mismatch {
            a: a.file.clone(),
            b: b.file.clone(),
            differences,
        });
    }
    let b_index: BTreeMap<u64, usize> = b.seeds.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let pairs: Vec<(usize, usize)> = a
        .seeds
        .iter()
        .enumerate()
        .filter_map(|(ia, s)| b_index.get(s).map(|ib| (ia, *ib)))
        .collect();
    let mut rows = Vec::new();
    let (mut only_in_a, mut only_in_b) = (BTreeMap::new(), BTreeMap::new());
    for pa in &a.planners {
        let Some(pb) = b.planners.iter().find(|p| p.name == pa.name) else {
            continue;
        };
        let (ma, mb) = (metric_names(pa), metric_names(pb));
        for metric in ma.union(&mb) {
            match (ma.contains(metric), mb.contains(metric)) {
                (true, true) => rows.push(row(pa, pb, metric, &pairs)),
                (true, false) => only_in_a
                    .entry(metric.to_string())
                    .or_insert_with(Vec::new)
                    .push(pa.name.clone()),
                _ => only_in_b
                    .entry(metric.to_string())
                    .or_insert_with(Vec::new)
                    .push(pa.name.clone()),
            }
        }
    }
    let mut notes = allowed_differences(a, b);
    if pairs.len() < 2 {
        notes.push(format!(
            "{} seed(s) paired: no confidence interval, so no verdict and no regression",
            pairs.len()
        ));
    }
    notes.extend(only_note("A", &only_in_a, a.planners.len()));
    notes.extend(only_note("B", &only_in_b, a.planners.len()));
    let fail_on_regression = gated_metrics(fail_on, &rows)?;
    let regressions = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Worse && fail_on_regression.contains(&r.metric))
        .filter_map(|r| {
            Some(Regression {
                planner: r.planner.clone(),
                metric: r.metric.clone(),
                paired_mean: r.paired_mean?,
                ci95_low: r.ci95_low?,
                ci95_high: r.ci95_high?,
            })
        })
        .collect();
    let side = |s: &SimulationInput| DiffSide {
        file: s.file.clone(),
        cluster: s.cluster.clone(),
        workload: s.workload.clone(),
        cycles: s.cycles,
    };
    Ok(DiffReport {
        schema_version: 1,
        kind: "diff",
        workload_kind: a.workload_kind().to_string(),
        a: side(a),
        b: side(b),
        seeds: pairs.iter().map(|&(ia, _)| a.seeds[ia]).collect(),
        notes,
        only_in_a,
        only_in_b,
        rows,
        fail_on_regression,
        regressions,
    })
}

/// The metrics of `--fail-on-regression`, each compared and with a better direction; empty
/// names (`a,,b`) are skipped, repeated ones kept once.
fn gated_metrics(fail_on: &[String], rows: &[DiffRow]) -> Result<Vec<String>, DiffError> {
    let compared: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    let mut gated: Vec<String> = Vec::new();
    for metric in fail_on.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
        if !compared.contains(metric) {
            return Err(DiffError::UnknownMetric {
                metric: metric.into(),
                compared: compared.iter().map(|m| m.to_string()).collect(),
            });
        }
        if better(metric).is_none() {
            return Err(DiffError::NoDirection {
                metric: metric.into(),
                gateable: compared
                    .iter()
                    .filter(|m| better(m).is_some())
                    .map(|m| m.to_string())
                    .collect(),
            });
        }
        if !gated.iter().any(|g| g == metric) {
            gated.push(metric.into());
        }
    }
    Ok(gated)
}

/// The output of `coplan simulate --format json`: a preemption or a co-location simulation.
// Never built: it exists for its schema.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
enum SimulationOutput {
    Preemption(PreemptionSimulation),
    Colocation(ColocationSimulation),
}

/// The JSON Schema of `coplan simulate --format json` (`schemas/simulation.schema.json`),
/// keys sorted so that the text is byte-stable.
pub fn simulation_schema() -> Value {
    sorted_keys(schemars::schema_for!(SimulationOutput).to_value())
}

/// The JSON Schema of `coplan diff --format json` (`schemas/diff.schema.json`).
pub fn diff_schema() -> Value {
    sorted_keys(schemars::schema_for!(DiffReport).to_value())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A simulate output of `planners` over `seeds`, every planner with the per-seed values
    /// `metrics` and their means.
    fn output(
        file: &str,
        seeds: &[u64],
        planners: &[&str],
        metrics: &[(&str, &[Option<f64>])],
    ) -> SimulationInput {
        let planner = |name: &str| {
            let mut m = serde_json::Map::new();
            let mut per_seed = serde_json::Map::new();
            for (metric, vals) in metrics {
                let present: Vec<f64> = vals.iter().flatten().copied().collect();
                if !present.is_empty() {
                    let mean = present.iter().sum::<f64>() / present.len() as f64;
                    m.insert(metric.to_string(), json!({ "mean": mean }));
                }
                per_seed.insert(metric.to_string(), json!(vals));
            }
            json!({ "name": name, "metrics": m, "per_seed": per_seed })
        };
        let v = json!({
            "schema_version": 1,
            "kind": "simulation",
            "cluster": "c",
            "workload": "w",
            "seeds": seeds,
            "cycles": 2,
            "planners": planners.iter().map(|p| planner(p)).collect::<Vec<_>>(),
        });
        parse(file, &v.to_string()).expect("a valid simulate output")
    }

    fn some(v: &[f64]) -> Vec<Option<f64>> {
        v.iter().copied().map(Some).collect()
    }

    #[test]
    fn paired_interval_matches_the_hand_computation() {
        // A = [0.90, 0.80, 0.70, 0.95], B = [0.92, 0.85, 0.71, 0.99]
        // d = [0.02, 0.05, 0.01, 0.04], mean 0.03
        // deviations −0.01, 0.02, −0.02, 0.01 → squares sum 0.001 → var 0.001/3 = 3.3333e-4
        // sd 0.0182574, se = sd/√4 = 0.0091287, t(0.975, 3) = 3.182446
        // half-width 3.182446 × 0.0091287 = 0.0290515 → CI [0.0009485, 0.0590515]
        let a = some(&[0.90, 0.80, 0.70, 0.95]);
        let b = some(&[0.92, 0.85, 0.71, 0.99]);
        let sa = output("a.json", &[1, 2, 3, 4], &["p"], &[("hit_rate", &a)]);
        let sb = output("b.json", &[1, 2, 3, 4], &["p"], &[("hit_rate", &b)]);
        let r = diff(&sa, &sb, &[]).expect("comparable");
        let row = &r.rows[0];
        assert_eq!(row.n, 4);
        assert!((row.paired_mean.unwrap_or(0.0) - 0.03).abs() < 1e-12);
        assert!((t975(3) - 3.182446).abs() < 1e-6);
        let (low, high) = (row.ci95_low.unwrap_or(0.0), row.ci95_high.unwrap_or(0.0));
        assert!((0.03 - low - 0.0290515).abs() < 1e-6, "{low}");
        assert!((high - 0.03 - 0.0290515).abs() < 1e-6, "{high}");
        assert!((row.diff.unwrap_or(0.0) - 0.03).abs() < 1e-12);
        assert_eq!(row.verdict, Verdict::Better);
        // The same change on a lower-is-better metric is a regression, when gated.
        let sa = output("a.json", &[1, 2, 3, 4], &["p"], &[("victims", &a)]);
        let sb = output("b.json", &[1, 2, 3, 4], &["p"], &[("victims", &b)]);
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::Worse);
        assert_eq!(r.regressions.len(), 1);
        assert!(
            r.regression_message()
                .is_some_and(|m| m.contains("p victims"))
        );
    }

    #[test]
    fn identical_outputs_show_no_change_and_no_regression() {
        let v = some(&[0.5, 0.7, 0.6]);
        let w = some(&[3.0, 5.0, 4.0]);
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["x", "y"],
            &[("hit_rate", &v), ("victims", &w)],
        );
        let r = diff(&a, &a, &["hit_rate".into(), "victims".into()]).expect("comparable");
        assert_eq!(r.rows.len(), 4);
        for row in &r.rows {
            assert_eq!(row.verdict, Verdict::NoChange);
            assert_eq!(
                (row.diff, row.ci95_low, row.ci95_high),
                (Some(0.0), Some(0.0), Some(0.0))
            );
        }
        assert!(r.regressions.is_empty() && r.regression_message().is_none());
        assert!(r.notes.is_empty());
        // Planners in A's order, metrics by name.
        let order: Vec<(&str, &str)> = r
            .rows
            .iter()
            .map(|r| (r.planner.as_str(), r.metric.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("x", "hit_rate"),
                ("x", "victims"),
                ("y", "hit_rate"),
                ("y", "victims")
            ]
        );
    }

    #[test]
    fn one_common_seed_has_no_interval() {
        let a = output("a.json", &[7], &["p"], &[("hit_rate", &[Some(0.5)])]);
        let b = output("b.json", &[7], &["p"], &[("hit_rate", &[Some(0.9)])]);
        let r = diff(&a, &b, &["hit_rate".into()]).expect("comparable");
        let row = &r.rows[0];
        assert_eq!((row.n, row.ci95_low, row.ci95_high), (1, None, None));
        assert_eq!(row.verdict, Verdict::NoCi);
        assert!(r.regressions.is_empty());
        assert_eq!(
            r.notes,
            ["1 seed(s) paired: no confidence interval, so no verdict and no regression"]
        );
    }

    #[test]
    fn seeds_without_a_value_on_either_side_leave_the_pairs() {
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["p"],
            &[("slowdown_guaranteed", &[Some(1.0), None, Some(1.2)])],
        );
        let b = output(
            "b.json",
            &[1, 2, 3],
            &["p"],
            &[("slowdown_guaranteed", &[Some(1.0), Some(1.5), None])],
        );
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows[0].n, 1);
        assert_eq!(r.rows[0].verdict, Verdict::NoCi);
    }

    #[test]
    fn seeds_pair_by_value_whatever_their_order() {
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["p"],
            &[("victims", &some(&[1.0, 2.0, 3.0]))],
        );
        let b = output(
            "b.json",
            &[3, 1, 2],
            &["p"],
            &[("victims", &some(&[3.0, 1.0, 2.0]))],
        );
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows[0].ci95_high, Some(0.0));
        assert_eq!(r.seeds, [1, 2, 3]);
    }

    #[test]
    fn rounding_noise_is_no_change_but_a_constant_shift_is_one() {
        let a = some(&[0.1 + 0.2, 0.7, 1e6]);
        let b = some(&[0.3, 0.7 + 1e-15, 1e6 + 1e-6]);
        let sa = output("a.json", &[1, 2, 3], &["p"], &[("victims", &a)]);
        let sb = output("b.json", &[1, 2, 3], &["p"], &[("victims", &b)]);
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::NoChange);
        // Every seed one victim more: zero spread, the interval is the point +1.
        let sb = output(
            "b.json",
            &[1, 2, 3],
            &["p"],
            &[("victims", &some(&[1.3, 1.7, 1e6 + 1.0]))],
        );
        let r = diff(&sa, &sb, &["victims".into()]).expect("comparable");
        assert_eq!(r.rows[0].verdict, Verdict::Worse);
    }

    #[test]
    fn directions_follow_the_table() {
        for (metric, expected) in [
            ("hit_rate", Some(Better::Higher)),
            ("hit_rate_guaranteed", Some(Better::Higher)),
            ("victims", Some(Better::Lower)),
            ("wasted_evictions", Some(Better::Lower)),
            ("slowdown_best_effort", Some(Better::Lower)),
            ("objective", Some(Better::Lower)),
            ("gap", Some(Better::Lower)),
            ("decision_gap", Some(Better::Lower)),
            ("slo_attainment_5x", Some(Better::Higher)),
            ("throughput_tokens_per_s", Some(Better::Higher)),
            ("goodput_rps", Some(Better::Higher)),
            ("ttft_p99_s", Some(Better::Lower)),
            ("gpu_utilization", Some(Better::Higher)),
            ("preemptions", None),
            ("transfer_utilization", None),
            ("something_new", None),
        ] {
            assert_eq!(better(metric), expected, "{metric}");
        }
        for metric in UNDIRECTED {
            assert_eq!(better(metric), None, "{metric}");
        }
        let up = Some((0.1, 0.2));
        let down = Some((-0.2, -0.1));
        let across = Some((-0.1, 0.2));
        assert_eq!(verdict(Some(Better::Higher), up), Verdict::Better);
        assert_eq!(verdict(Some(Better::Higher), down), Verdict::Worse);
        assert_eq!(verdict(Some(Better::Lower), up), Verdict::Worse);
        assert_eq!(verdict(Some(Better::Lower), down), Verdict::Better);
        assert_eq!(verdict(Some(Better::Lower), across), Verdict::NoChange);
        assert_eq!(verdict(None, up), Verdict::Increased);
        assert_eq!(verdict(None, down), Verdict::Decreased);
        assert_eq!(verdict(None, None), Verdict::NoCi);
    }

    #[test]
    fn mismatched_seeds_planners_and_kinds_are_refused_naming_both_files() {
        let v = some(&[1.0, 2.0, 3.0]);
        let a = output("a.json", &[1, 2, 3], &["p", "q"], &[("victims", &v)]);
        let b = output("b.json", &[1, 2], &["p"], &[("victims", &v[..2])]);
        let e = diff(&a, &b, &[]).expect_err("mismatch");
        let text = e.to_string();
        assert!(text.contains("`a.json` (A) and `b.json` (B)"), "{text}");
        assert!(
            text.contains("seeds: A has 3 (1-3), B has 2 (1-2); only in A: 3"),
            "{text}"
        );
        assert!(text.contains("planners: only in A: q"), "{text}");
        let mut c = a.clone();
        c.workload_kind = Some("colocation".into());
        let text = diff(&a, &c, &[]).expect_err("kinds").to_string();
        assert!(
            text.contains("workload kinds: A is preemption, B is colocation"),
            "{text}"
        );
    }

    #[test]
    fn allowed_differences_and_one_sided_metrics_are_noted() {
        let v = some(&[1.0, 2.0]);
        let a = output("a.json", &[1, 2], &["p"], &[("victims", &v), ("gap", &v)]);
        let mut b = output("b.json", &[1, 2], &["p"], &[("victims", &v), ("hits", &v)]);
        b.cycles = Some(5);
        b.cluster = "other".into();
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows.len(), 1);
        assert_eq!(
            r.notes,
            [
                "the clusters differ: A ran on `c`, B on `other`",
                "the cycles per seed differ: A has 2, B has 5",
                "`gap` is only in A: not compared",
                "`hits` is only in B: not compared",
            ]
        );
        assert_eq!(r.only_in_a["gap"], ["p"]);
        // A metric only one side holds cannot gate.
        let e = diff(&a, &b, &["gap".into()]).expect_err("not compared");
        assert!(matches!(e, DiffError::UnknownMetric { .. }), "{e}");
        assert!(e.to_string().contains("they compare victims"), "{e}");
    }

    #[test]
    fn gating_needs_a_compared_metric_with_a_direction() {
        let v = some(&[1.0, 2.0]);
        let a = output(
            "a.json",
            &[1, 2],
            &["p"],
            &[("victims", &v), ("preemptions", &v)],
        );
        let e = diff(&a, &a, &["nope".into()]).expect_err("unknown");
        assert!(
            e.to_string().contains("compare preemptions, victims"),
            "{e}"
        );
        let e = diff(&a, &a, &["preemptions".into()]).expect_err("no direction");
        assert!(matches!(e, DiffError::NoDirection { .. }), "{e}");
        assert!(e.to_string().contains("metrics that can: victims"), "{e}");
        let r = diff(&a, &a, &["victims".into(), String::new(), "victims".into()]).expect("ok");
        assert_eq!(r.fail_on_regression, ["victims"]);
    }

    #[test]
    fn inputs_that_are_not_comparable_simulate_outputs_are_refused() {
        let e = parse("x.json", "{\n  \"kind\": \"simulation\",\n  oops\n}").expect_err("syntax");
        assert!(
            matches!(
                &e,
                DiffError::Syntax {
                    line: 3,
                    column: 3,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = parse("x.json", r#"{"kind": "preemption", "planners": []}"#).expect_err("plan");
        assert!(e.to_string().contains("its `kind` is `preemption`"), "{e}");
        let e = parse("x.json", "[1, 2]").expect_err("array");
        assert!(matches!(e, DiffError::NotSimulation { .. }), "{e}");
        let old = r#"{"kind": "simulation", "cluster": "c", "seeds": [1],
            "planners": [{"name": "p", "metrics": {"victims": {"mean": 1.0}}}]}"#;
        let e = parse("x.json", old).expect_err("old");
        assert!(matches!(e, DiffError::NoPerSeed { .. }), "{e}");
        assert!(e.to_string().contains("re-run `coplan simulate"), "{e}");
        let short = r#"{"kind": "simulation", "cluster": "c", "seeds": [1, 2],
            "planners": [{"name": "p", "metrics": {}, "per_seed": {"victims": [1.0]}}]}"#;
        let e = parse("x.json", short).expect_err("short");
        assert!(e.to_string().contains("1 values for 2 seeds"), "{e}");
        let typed = r#"{"kind": "simulation", "cluster": "c", "seeds": "all",
            "planners": []}"#;
        let e = parse("x.json", typed).expect_err("type");
        assert!(matches!(e, DiffError::Shape { line: 1, .. }), "{e:?}");
    }

    #[test]
    fn seed_ranges_compress_runs() {
        assert_eq!(seed_ranges(&[3, 1, 2, 7, 9, 8, 11]), "1-3, 7-9, 11");
        assert_eq!(seed_ranges(&[]), "none");
        assert_eq!(
            seed_ranges(&[u64::MAX, u64::MAX - 1]),
            format!("{}-{}", u64::MAX - 1, u64::MAX)
        );
    }

    #[test]
    fn schemas_describe_both_outputs() {
        let s = simulation_schema();
        assert!(s["anyOf"].as_array().is_some_and(|a| a.len() == 2), "{s}");
        let d = diff_schema();
        assert!(d["properties"]["rows"].is_object(), "{d}");
    }
}
