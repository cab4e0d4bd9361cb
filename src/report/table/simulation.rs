//! `coplan simulate` tables: key metrics as mean ± 95 % CI over seeds, and totals.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::grid::{render_table, summary_cell};
use crate::sim::colocation::ColocationSimulation;
use crate::sim::preemption::PreemptionSimulation;
use crate::sim::stats::Summary;

/// A column of a summary table: metric, header, scale (100 for a share) and unit.
type Column = (&'static str, &'static str, f64, &'static str);

/// Per-class columns only where classes differ in the pods they cover: a mean slowdown over
/// all placed pods would compare different sets of pods between planners.
const PREEMPTION_COLUMNS: [Column; 10] = [
    ("hit_rate", "hit rate", 100.0, "%"),
    ("hit_rate_guaranteed", "hit G", 100.0, "%"),
    ("hit_rate_best_effort", "hit BE", 100.0, "%"),
    ("slowdown_guaranteed", "slowdown G", 1.0, ""),
    ("slowdown_best_effort", "slowdown BE", 1.0, ""),
    ("victims", "victims/cycle", 1.0, ""),
    ("wasted_evictions", "wasted/cycle", 1.0, ""),
    ("objective", "objective/cycle", 1.0, ""),
    ("gap", "gap", 100.0, "%"),
    ("subsets_evaluated", "subsets/cycle", 1.0, ""),
];

const COLOCATION_COLUMNS: [Column; 9] = [
    ("gpu_utilization", "GPU util", 100.0, "%"),
    ("utilization_active", "util act", 100.0, "%"),
    ("throughput_tasks_per_s", "task/s", 1.0, ""),
    ("throughput_active", "task/s act", 1.0, ""),
    ("throughput_tokens_per_s", "token/s", 1.0, ""),
    ("slo_attainment_5x", "SLO 5×", 100.0, "%"),
    ("goodput_rps", "goodput", 1.0, ""),
    ("objective", "objective", 1.0, ""),
    ("gap", "gap", 100.0, "%"),
];

/// One row per planner: its name, then `mean ± ci95` of each column's metric.
fn summary_table<'a>(
    planners: impl Iterator<Item = (&'a str, &'a BTreeMap<String, Summary>)>,
    columns: &[Column],
) -> String {
    let rows: Vec<Vec<String>> = planners
        .map(|(name, metrics)| {
            std::iter::once(name.to_string())
                .chain(
                    columns
                        .iter()
                        .map(|(k, _, scale, unit)| summary_cell(metrics.get(*k), *scale, unit)),
                )
                .collect()
        })
        .collect();
    let header: Vec<&str> = std::iter::once("planner")
        .chain(columns.iter().map(|c| c.1))
        .collect();
    render_table(&header, &rows)
}

fn ratio(hits: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{hits}/{of} ({:.1}%)", 100.0 * hits as f64 / of as f64)
    }
}

/// The gang metrics of a simulation of gangs (DESIGN §12.3), per cycle: gangs placed, partial
/// and split gangs, victims per gang, over-eviction and the hit rate per required level;
/// nothing for a workload without gangs.
fn gang_table(r: &PreemptionSimulation) -> String {
    use crate::sim::preemption::{GANG_HIT_RATE, GANG_METRICS};
    if !r
        .planners
        .iter()
        .any(|p| p.metrics.keys().any(|k| GANG_METRICS.contains(&k.as_str())))
    {
        return String::new();
    }
    let levels: std::collections::BTreeSet<&str> = r
        .planners
        .iter()
        .flat_map(|p| p.metrics.keys())
        .filter_map(|k| k.strip_prefix(GANG_HIT_RATE))
        .collect();
    let fixed: [(&str, &str); 5] = [
        ("gangs.placed", "gangs placed"),
        ("gangs.partial", "partial"),
        ("gangs.split", "split"),
        ("gangs.victims_per_gang", "victims/gang"),
        ("gangs.over_eviction", "over-eviction"),
    ];
    let mut header: Vec<String> = vec!["planner".into()];
    header.extend(fixed.iter().map(|(_, h)| h.to_string()));
    header.extend(levels.iter().map(|l| format!("hit {l}")));
    let rows: Vec<Vec<String>> =
        r.planners
            .iter()
            .map(|p| {
                let mut row = vec![p.name.clone()];
                row.extend(
                    fixed
                        .iter()
                        .map(|(k, _)| summary_cell(p.metrics.get(*k), 1.0, "")),
                );
                row.extend(levels.iter().map(|l| {
                    summary_cell(p.metrics.get(&format!("{GANG_HIT_RATE}{l}")), 100.0, "%")
                }));
                row
            })
            .collect();
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    format!("\ngangs, per cycle:\n{}", render_table(&head, &rows))
}

/// Per planner: key metrics as mean ± 95 % CI over seeds, and paper-style totals.
pub fn preemption(r: &PreemptionSimulation) -> String {
    let mut out = String::new();
    let name = r
        .workload
        .as_ref()
        .map_or(String::new(), |w| format!(" `{w}`"));
    if r.nothing_random {
        // One seed: a "± 0" would claim an interval the run never measured.
        let _ = writeln!(
            out,
            "simulation{name} on {}: 1 seed × {} cycles; values exact, CI not applicable",
            r.cluster, r.cycles
        );
    } else {
        let _ = writeln!(
            out,
            "simulation{name} on {}: {} seeds × {} cycles; mean ± 95% CI over seeds (t-distribution)",
            r.cluster,
            r.seeds.len(),
            r.cycles
        );
    }
    for note in &r.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push('\n');
    let planners = r.planners.iter().map(|p| (p.name.as_str(), &p.metrics));
    out.push_str(&summary_table(planners, &PREEMPTION_COLUMNS));
    out.push_str(&gang_table(r));
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
    let mut out = format!(
        "simulation{} on {}: {} seeds; mean ± 95% CI over seeds (t-distribution)\n\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        r.cluster,
        r.seeds.len()
    );
    let planners = r.planners.iter().map(|p| (p.name.as_str(), &p.metrics));
    out.push_str(&summary_table(planners, &COLOCATION_COLUMNS));
    out
}
