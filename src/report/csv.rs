//! Long-format CSV (`scenario,planner,seed,metric,value`) of plans, simulations and sweeps,
//! written with the `csv` crate so that names with commas or quotes stay one field.

use serde_json::Value;

use crate::colocate::latency::{Sample, SampleKind};

use crate::plan::colocation::ColocationPlan;
use crate::plan::preemption::PreemptionPlan;
use crate::sim::colocation::ColocationSimulation;
use crate::sim::preemption::{PreemptionSimulation, TIMING_METRICS};
use crate::sim::sweep::{CSV_MAGIC, SweepOutput};

const LONG_HEADER: [&str; 5] = ["scenario", "planner", "seed", "metric", "value"];

/// Collects records and turns them into text; writing into memory cannot fail, so a failure
/// here is reported in the text rather than lost.
struct Sheet(csv::Writer<Vec<u8>>);

impl Sheet {
    fn new(header: &[&str]) -> Self {
        Self::after("", header, 0)
    }

    /// A sheet whose text starts with `preamble` (a comment line), written into the same
    /// buffer, reserved for `capacity` bytes: a merged sweep's text is tens of megabytes, and is
    /// neither copied to prepend a line nor regrown by doubling (a reservation larger than the
    /// text costs address space, not memory: untouched pages are never resident).
    fn after(preamble: &str, header: &[&str], capacity: usize) -> Self {
        let mut buffer = Vec::with_capacity(capacity.max(preamble.len()));
        buffer.extend_from_slice(preamble.as_bytes());
        let mut sheet = Sheet(csv::Writer::from_writer(buffer));
        sheet.row(header);
        sheet
    }

    fn row<I, T>(&mut self, fields: I)
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        // In-memory writes only fail on a bug; the text then shows where it stopped.
        let _ = self.0.write_record(fields);
    }

    fn text(self) -> String {
        match self.0.into_inner() {
            Ok(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            Err(e) => format!("# csv error: {e}\n"),
        }
    }
}

/// A JSON number or string as a CSV value; null is the empty field.
fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One row per metric of a serialised metrics object; nested objects (such as
/// `slo_attainment`) become `outer_inner` metrics.
fn metric_rows(sheet: &mut Sheet, scenario: &str, planner: &str, seed: &str, metrics: &Value) {
    let Some(map) = metrics.as_object() else {
        return;
    };
    // Sorted by name, whatever order the map keeps.
    let map: std::collections::BTreeMap<&String, &Value> = map.iter().collect();
    for (k, v) in map {
        match v {
            Value::Object(inner) => {
                let inner: std::collections::BTreeMap<&String, &Value> = inner.iter().collect();
                for (ik, iv) in inner {
                    let metric = format!("{k}_{ik}");
                    sheet.row([scenario, planner, seed, &metric, &value_text(iv)]);
                }
            }
            other => sheet.row([scenario, planner, seed, k, &value_text(other)]),
        }
    }
}

/// Long-format CSV of a preemption plan: one row per planner and metric (nested metrics flattened
/// to `<metric>_<key>`); the scenario is the workload's name, else `plan`.
pub fn preemption_plan(report: &PreemptionPlan) -> String {
    let mut sheet = Sheet::new(&LONG_HEADER);
    let scenario = report.workload.clone().unwrap_or_else(|| "plan".into());
    let seed = report.seed.map_or(String::new(), |s| s.to_string());
    for r in &report.planners {
        let metrics = serde_json::to_value(&r.metrics).unwrap_or_default();
        metric_rows(&mut sheet, &scenario, &r.name, &seed, &metrics);
    }
    sheet.text()
}

/// Long-format CSV of a co-location plan: one row per planner that ran and metric; the scenario is
/// the workload's name, else `plan`.
pub fn colocation_plan(report: &ColocationPlan) -> String {
    let mut sheet = Sheet::new(&LONG_HEADER);
    let scenario = report.workload.clone().unwrap_or_else(|| "plan".into());
    let seed = report.seed.to_string();
    for p in &report.planners {
        let Some(m) = &p.metrics else { continue };
        let metrics = serde_json::to_value(m).unwrap_or_default();
        metric_rows(&mut sheet, &scenario, &p.name, &seed, &metrics);
    }
    sheet.text()
}

/// JSON's shortest round-trip form of a number: the same text in CSV and JSON Lines.
fn number(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
}

/// Per-seed rows of one planner: its metric values, timings left out (they vary by machine).
fn seed_rows<'a>(
    sheet: &mut Sheet,
    scenario: &str,
    planner: &str,
    seed: u64,
    metrics: impl Iterator<Item = (&'a String, &'a f64)>,
) {
    let seed = seed.to_string();
    for (k, v) in metrics.filter(|(k, _)| !TIMING_METRICS.contains(&k.as_str())) {
        sheet.row([scenario, planner, &seed, k, &number(*v)]);
    }
}

/// One row per planner, seed and metric.
pub fn preemption_simulation(r: &PreemptionSimulation) -> String {
    let mut sheet = Sheet::new(&LONG_HEADER);
    let scenario = r.workload.clone().unwrap_or_else(|| "simulate".into());
    for p in &r.planners {
        for sr in &r.per_seed {
            if let Some((_, metrics, _)) = sr.per_planner.iter().find(|(n, _, _)| *n == p.name) {
                seed_rows(&mut sheet, &scenario, &p.name, sr.seed, metrics.iter());
            }
        }
    }
    sheet.text()
}

/// One row per planner, seed and metric.
pub fn colocation_simulation(r: &ColocationSimulation) -> String {
    let mut sheet = Sheet::new(&LONG_HEADER);
    let scenario = r.workload.clone().unwrap_or_else(|| "simulate".into());
    for p in &r.planners {
        for (seed, ps) in &r.per_seed {
            if let Some((_, metrics)) = ps.iter().find(|(n, _)| *n == p.name) {
                seed_rows(&mut sheet, &scenario, &p.name, *seed, metrics.iter());
            }
        }
    }
    sheet.text()
}

/// `coplan diff`: one row per planner and metric, numbers in JSON's shortest form, empty
/// fields for null; the notes are in the table and JSON outputs.
pub fn diff(report: &crate::sim::diff::DiffReport) -> String {
    let mut sheet = Sheet::new(&[
        "planner",
        "metric",
        "better",
        "a_mean",
        "b_mean",
        "diff",
        "n",
        "paired_mean",
        "ci95_low",
        "ci95_high",
        "verdict",
    ]);
    let cell = |v: Option<f64>| v.map_or_else(String::new, number);
    for r in &report.rows {
        sheet.row([
            r.planner.clone(),
            r.metric.clone(),
            r.better.map_or("", |b| b.as_str()).to_string(),
            cell(r.a_mean),
            cell(r.b_mean),
            cell(r.diff),
            r.n.to_string(),
            cell(r.paired_mean),
            cell(r.ci95_low),
            cell(r.ci95_high),
            r.verdict.as_str().to_string(),
        ]);
    }
    sheet.text()
}

/// A sweep shard: a metadata comment line (what `merge` checks: scenarios, shard, keys, rows
/// per scenario, the fingerprint and the inputs behind it), a header with one column per
/// swept key, one row per value.
pub fn sweep(out: &SweepOutput) -> String {
    let rows: Vec<String> = out
        .rows_per_scenario()
        .iter()
        .map(|(s, n)| format!("{s}:{n}"))
        .collect();
    // The inputs go last: their JSON is the one field that may hold spaces.
    let provenance = out.inputs.as_ref().map_or_else(String::new, |inputs| {
        format!(
            " fingerprint={} inputs={}",
            inputs.fingerprint(),
            serde_json::to_string(inputs).unwrap_or_default()
        )
    });
    let meta = format!(
        "{CSV_MAGIC} scenarios={} shard={}/{} keys={} rows={}{provenance}\n",
        out.scenario_count,
        out.shard.0,
        out.shard.1,
        out.keys.join(";"),
        rows.join(";")
    );
    let mut header: Vec<&str> = vec!["scenario"];
    header.extend(out.keys.iter().map(String::as_str));
    header.extend(["planner", "seed", "metric", "value"]);
    // Each row's text is about the longest of the first rows' (its value varies most).
    let row_bytes = out
        .rows
        .iter()
        .take(256)
        .map(|r| {
            let params: usize = r.params.iter().map(|(_, v)| v.len() + 1).sum();
            params + r.planner.len() + r.metric.len() + 3 * 20 + 5
        })
        .max()
        .unwrap_or(0);
    let capacity = meta.len() + out.rows.len().saturating_mul(row_bytes);
    let mut sheet = Sheet::after(&meta, &header, capacity);
    for r in &out.rows {
        let mut cells = vec![r.scenario.to_string()];
        cells.extend(r.params.iter().map(|(_, v)| v.clone()));
        cells.extend([
            r.planner.to_string(),
            r.seed.to_string(),
            r.metric.to_string(),
            number(r.value),
        ]);
        sheet.row(&cells);
    }
    sheet.text()
}

/// Stage-latency samples (`kind,batch,tokens,stage_s`, what `profile fit` reads) after their
/// comment lines.
pub fn latency_samples(comments: &[String], samples: &[Sample]) -> String {
    let mut sheet = Sheet::new(&["kind", "batch", "tokens", "stage_s"]);
    for s in samples {
        let kind = match s.kind {
            SampleKind::Forward => "forward",
            SampleKind::Backward => "backward",
            SampleKind::Decode => "decode",
        };
        sheet.row([
            kind.to_string(),
            s.batch.to_string(),
            s.tokens.to_string(),
            number(s.stage_s),
        ]);
    }
    let mut out: String = comments.iter().map(|c| format!("{c}\n")).collect();
    out.push_str(&sheet.text());
    out
}
