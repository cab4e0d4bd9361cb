//! The `coplan merge` summary table.

use std::collections::BTreeMap;

use super::grid::render_table;
use crate::sim::stats::summarize;
use crate::sim::sweep::SweepOutput;

/// Parameters, planner name and per-metric values of one (scenario, planner) group.
type Group = (
    Vec<(String, String)>,
    String,
    BTreeMap<&'static str, Vec<f64>>,
);

/// The summary of merged sweep rows: per scenario and planner, key metrics as mean ± 95 % CI
/// over seeds.
pub fn sweep(out: &SweepOutput) -> String {
    const PREEMPTION: [&str; 9] = [
        "hit_rate",
        "hit_rate_guaranteed",
        "hit_rate_best_effort",
        "slowdown_guaranteed",
        "slowdown_best_effort",
        "victims",
        "wasted_evictions",
        "objective",
        "subsets_evaluated",
    ];
    const COLOCATION: [&str; 6] = [
        "gpu_utilization",
        "throughput_tasks_per_s",
        "throughput_tokens_per_s",
        "slo_attainment_5x",
        "goodput_rps",
        "objective",
    ];
    // The workload kind shows in the metrics the rows carry.
    let columns: &[&'static str] = if out.rows.iter().any(|r| &*r.metric == "hit_rate") {
        &PREEMPTION
    } else {
        &COLOCATION
    };
    let mut groups: BTreeMap<(usize, usize), Group> = BTreeMap::new();
    let mut planner_order: Vec<String> = Vec::new();
    for r in &out.rows {
        let pi = match planner_order.iter().position(|p| **p == *r.planner) {
            Some(pi) => pi,
            None => {
                planner_order.push(r.planner.to_string());
                planner_order.len() - 1
            }
        };
        let entry = groups
            .entry((r.scenario, pi))
            .or_insert_with(|| (r.params.to_vec(), r.planner.to_string(), BTreeMap::new()));
        if let Some(m) = columns.iter().find(|m| **m == &*r.metric) {
            entry.2.entry(m).or_default().push(r.value);
        }
    }
    let mut header: Vec<String> = vec!["scenario".into()];
    header.extend(out.keys.iter().cloned());
    header.push("planner".into());
    header.extend(columns.iter().map(|m| m.to_string()));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for ((scenario, _), (params, planner, metrics)) in &groups {
        let mut row = vec![scenario.to_string()];
        row.extend(params.iter().map(|(_, v)| v.clone()));
        row.push(planner.clone());
        for m in columns {
            row.push(match metrics.get(m).and_then(|v| summarize(v)) {
                Some(s) => match s.ci95 {
                    Some(ci) => format!("{:.3} ± {:.3}", s.mean, ci),
                    None => format!("{:.3}", s.mean),
                },
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    render_table(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
    )
}
