//! `coplan plan` printers: a side-by-side table, JSON (the DESIGN §7 contract) and long CSV.

use std::fmt::Write;

use crate::preempt::Status;
use crate::preempt::engine::{PlanReport, PlannerReport};

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.1}%", x * 100.0))
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Heuristic => "heuristic",
        Status::Optimal => "optimal",
        Status::TimeLimit => "time_limit",
        Status::Skipped => "skipped",
    }
}

fn gap_text(r: &PlannerReport) -> String {
    match r.gap {
        None => "-".into(),
        Some(g) => format!(
            "{}{:+.1}%",
            if r.gap_is_bound { "≤" } else { "" },
            g * 100.0
        ),
    }
}

/// Renders rows left-aligned, columns padded to their widest cell.
pub fn render_table(header: &[&str], rows: &[Vec<String>]) -> String {
    table(header, rows, &[])
}

/// Renders rows with columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - c.chars().count();
            if right.get(i).copied().unwrap_or(false) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
            l.push_str("  ");
        }
        l.trim_end().to_string()
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", line(header.to_vec()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// The comparison table, then the events of each planner.
pub fn to_table(report: &PlanReport) -> String {
    let mut out = String::new();
    let n = report.planners.first().map_or(0, |p| p.metrics.preemptions);
    let _ = writeln!(
        out,
        "preemption plan{} on {}{}: {n} preemptors",
        report
            .workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        report.cluster,
        report
            .seed
            .map_or(String::new(), |s| format!(" (fill seed {s})")),
    );
    out.push('\n');
    let rows: Vec<Vec<String>> = report
        .planners
        .iter()
        .map(|r| {
            let m = &r.metrics;
            vec![
                r.name.clone(),
                status(r.status).into(),
                num(r.objective, 3),
                gap_text(r),
                pct(r.decision_gap),
                format!("{}/{}", m.hits, m.preemptions),
                pct(Some(m.hit_rate)),
                m.placed.to_string(),
                m.victims.to_string(),
                m.wasted_evictions.to_string(),
                num(m.slowdown_mean, 3),
                m.subsets_evaluated.to_string(),
                format!("{:.2} ms", r.runtime_ms),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "planner",
            "status",
            "objective",
            "gap",
            "decision gap",
            "hits",
            "hit rate",
            "placed",
            "victims",
            "wasted",
            "slowdown",
            "subsets",
            "time",
        ],
        &rows,
        &[
            false, false, true, true, true, true, true, true, true, true, true, true, true,
        ],
    ));
    if let Some(b) = report.planners.iter().find(|r| r.name == "ilp-batch") {
        let _ = writeln!(
            out,
            "\ngap: against the ilp-batch {} {}; ≤ marks an upper bound (ilp-batch stopped early).",
            if b.status == Status::Optimal {
                "optimum"
            } else {
                "best bound"
            },
            num(b.bound, 3)
        );
    }
    if report.planners.iter().any(|r| r.decision_gap.is_some()) {
        let _ = writeln!(
            out,
            "decision gap: each event against the per-event optimum (ilp) on the state that planner faced."
        );
    }
    if report.planners.iter().any(|r| r.truncated) {
        let _ = writeln!(
            out,
            "truncated: the enumeration budget (max_subset_evaluations) cut a search short."
        );
    }
    for r in &report.planners {
        let _ = writeln!(out, "\n{} events:", r.name);
        let rows: Vec<Vec<String>> = r
            .events
            .iter()
            .map(|e| {
                vec![
                    e.preemptor.clone(),
                    e.topology_qos.as_str().into(),
                    e.node.clone().unwrap_or_else(|| "-".into()),
                    format!(
                        "{}/{}",
                        e.level.map_or("-", |l| l.as_str()),
                        e.required_level.map_or("-", |l| l.as_str())
                    ),
                    match (e.placed, e.hit) {
                        (true, true) => "hit".into(),
                        (true, false) => "miss".into(),
                        (false, _) => match e.outcome {
                            crate::preempt::engine::Outcome::Refused => "refused".into(),
                            _ => "unplaced".into(),
                        },
                    },
                    format!("{:.3}", e.cost),
                    if e.victims.is_empty() {
                        "-".into()
                    } else {
                        e.victims.join(" ")
                    },
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "preemptor",
                "qos",
                "node",
                "level/required",
                "result",
                "cost",
                "victims",
            ],
            &rows,
            &[false, false, false, false, false, true, false],
        ));
    }
    out
}

/// JSON per the DESIGN §7 contract.
pub fn to_json(report: &PlanReport) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// Long format: `scenario,planner,seed,metric,value` (empty value = null).
pub fn to_csv(report: &PlanReport) -> String {
    let mut out = String::from("scenario,planner,seed,metric,value\n");
    let scenario = report.workload.clone().unwrap_or_else(|| "plan".into());
    let seed = report.seed.map_or(String::new(), |s| s.to_string());
    for r in &report.planners {
        let value = serde_json::to_value(&r.metrics).unwrap_or_default();
        if let Some(map) = value.as_object() {
            for (k, v) in map {
                let text = match v {
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                };
                let _ = writeln!(
                    out,
                    "{},{},{},{},{}",
                    csv_field(&scenario),
                    csv_field(&r.name),
                    seed,
                    k,
                    text
                );
            }
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
