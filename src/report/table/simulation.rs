//! `coplan simulate` tables: key metrics as mean ± 95 % CI over seeds, and totals.

use std::fmt::Write;

use super::grid::{render_table, summary_cell};
use crate::sim::colocation::ColocationSimulation;
use crate::sim::preemption::PreemptionSimulation;
use crate::sim::stats::Summary;

fn cell(s: Option<&Summary>, pct: bool) -> String {
    if pct {
        summary_cell(s, 100.0, "%")
    } else {
        summary_cell(s, 1.0, "")
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
pub fn preemption(r: &PreemptionSimulation) -> String {
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

/// `coplan simulate` on a co-location workload: mean ± 95 % CI over seeds per planner.
pub fn colocation(r: &ColocationSimulation) -> String {
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|p| {
            let m = |k: &str| p.metrics.get(k);
            vec![
                p.name.clone(),
                summary_cell(m("gpu_utilization"), 100.0, "%"),
                summary_cell(m("throughput_tasks_per_s"), 1.0, ""),
                summary_cell(m("throughput_tokens_per_s"), 1.0, ""),
                summary_cell(m("slo_attainment_5x"), 100.0, "%"),
                summary_cell(m("goodput_rps"), 1.0, ""),
                summary_cell(m("objective"), 1.0, ""),
                summary_cell(m("gap"), 100.0, "%"),
            ]
        })
        .collect();
    let mut out = format!(
        "simulation{} on {}: {} seeds; mean ± 95% CI over seeds (t-distribution)\n\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        r.cluster,
        r.seeds.len()
    );
    out.push_str(&render_table(
        &[
            "planner",
            "GPU util",
            "task/s",
            "token/s",
            "SLO 5×",
            "goodput",
            "objective",
            "gap",
        ],
        &rows,
    ));
    out
}
