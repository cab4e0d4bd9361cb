//! `coplan simulate` printers: a summary table, JSON (summaries and totals) and long CSV.

use std::fmt::Write;

use crate::report::plan::render_table;
use crate::sim::{SimReport, Summary, TIMING_METRICS};

/// `mean ± ci95` of a summary, scaled (100 for percentages) and with a unit; `-` when absent.
pub fn summary_cell(s: Option<&Summary>, scale: f64, unit: &str) -> String {
    let Some(s) = s else { return "-".into() };
    match s.ci95 {
        Some(ci) => format!("{}{unit} ± {}", fixed(s.mean * scale), fixed(ci * scale)),
        None => format!("{}{unit}", fixed(s.mean * scale)),
    }
}

fn cell(s: Option<&Summary>, pct: bool) -> String {
    if pct {
        summary_cell(s, 100.0, "%")
    } else {
        summary_cell(s, 1.0, "")
    }
}

/// Two decimals, without the sign of a value that rounds to zero (rounding noise like −1e-17).
fn fixed(x: f64) -> String {
    let text = format!("{x:.2}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

fn ratio(hits: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{hits}/{of} ({:.1}%)", 100.0 * hits as f64 / of as f64)
    }
}

/// Per planner: key metrics as mean ± 95 % CI over seeds, and paper-style totals.
pub fn to_table(r: &SimReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "simulation{} on {}: {} seeds × {} cycles; mean ± 95% CI over seeds (t-distribution)\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        r.cluster,
        r.seeds.len(),
        r.cycles
    );
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|p| {
            let m = |k: &str| p.metrics.get(k);
            vec![
                p.name.clone(),
                cell(m("hit_rate"), true),
                cell(m("victims"), false),
                cell(m("wasted_evictions"), false),
                cell(m("slowdown_mean"), false),
                cell(m("objective"), false),
                cell(m("gap"), true),
                cell(m("subsets_evaluated"), false),
            ]
        })
        .collect();
    out.push_str(&render_table(
        &[
            "planner",
            "hit rate",
            "victims/cycle",
            "wasted/cycle",
            "slowdown",
            "objective/cycle",
            "gap",
            "subsets/cycle",
        ],
        &rows,
    ));
    out.push_str("\ntotals over all cycles and seeds:\n");
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|p| {
            let t = &p.totals;
            vec![
                p.name.clone(),
                format!("hits {}", ratio(t.hits, t.preemptions)),
                ratio(t.hits_guaranteed, t.preemptions_guaranteed),
                ratio(t.hits_best_effort, t.preemptions_best_effort),
                format!("{}/{}", t.placed, t.preemptions),
                t.victims.to_string(),
                t.wasted_evictions.to_string(),
                t.subsets_evaluated.to_string(),
                format!("{:.1} ms", t.runtime_ms),
            ]
        })
        .collect();
    out.push_str(&render_table(
        &[
            "planner",
            "hits",
            "guaranteed hits",
            "best-effort hits",
            "placed",
            "victims",
            "wasted",
            "subsets",
            "time",
        ],
        &rows,
    ));
    out
}

pub fn to_json(r: &SimReport) -> String {
    let mut s =
        serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// Long format, one row per planner, seed and metric (timings left out: they vary by machine).
pub fn to_csv(r: &SimReport) -> String {
    let mut out = String::from("scenario,planner,seed,metric,value\n");
    let scenario = r.workload.clone().unwrap_or_else(|| "simulate".into());
    for p in &r.planners {
        for sr in &r.per_seed {
            let Some((_, metrics, _)) = sr.per_planner.iter().find(|(n, _, _)| *n == p.name) else {
                continue;
            };
            for (k, v) in metrics {
                if TIMING_METRICS.contains(&k.as_str()) {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "{scenario},{},{},{k},{}",
                    p.name,
                    sr.seed,
                    serde_json::to_string(v).unwrap_or_default()
                );
            }
        }
    }
    out
}
