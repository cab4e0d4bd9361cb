//! Co-location plan printers: a side-by-side table, JSON and long CSV.

use std::fmt::Write;

use crate::colocate::plan::ColocationReport;
use crate::colocate::sim::SimReport as CoSimReport;
use crate::report::plan::render_table;
use crate::report::sim::summary_cell;

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

pub fn to_table(r: &ColocationReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "co-location plan{} on {}: {} nodes × {} stages, seed {}, τ_R = {:.3} s\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        r.cluster,
        r.nodes,
        r.stages,
        r.seed,
        r.slo_s
    );
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|p| match &p.metrics {
            None => vec![
                p.name.clone(),
                "skipped".into(),
                p.skipped.clone().unwrap_or_default(),
            ],
            Some(m) => vec![
                p.name.clone(),
                f(p.objective, 3),
                p.gap.map_or_else(
                    || "-".into(),
                    |g| {
                        format!(
                            "{}{:+.1}%",
                            if p.gap_is_bound { "≤" } else { "" },
                            g * 100.0
                        )
                    },
                ),
                format!("{:.2}", m.throughput_tasks_per_s),
                format!("{:.0}", m.throughput_tokens_per_s),
                format!("{:.2}", m.goodput_rps),
                format!(
                    "{:.1}%",
                    100.0 * m.slo_attainment.get("5x").copied().unwrap_or(0.0)
                ),
                f(m.ttft_p99_s, 3),
                f(m.tbt_p50_s, 4),
                format!("{:.1}%", 100.0 * m.gpu_utilization),
                format!("{:.1}%", 100.0 * m.bubble_rate),
                format!("{:.1}", m.makespan_s),
                m.nodes_used.to_string(),
                m.dropped.to_string(),
                m.offloaded.to_string(),
                m.training_tasks_done.to_string(),
                f(m.staleness_mean, 1),
                format!("{:.1} ms", p.runtime_ms),
            ],
        })
        .collect();
    out.push_str(&render_table(
        &[
            "planner",
            "objective",
            "gap",
            "task/s",
            "token/s",
            "goodput",
            "SLO 5×",
            "TTFT p99",
            "TBT p50",
            "GPU util",
            "bubbles",
            "makespan",
            "nodes",
            "dropped",
            "offloaded",
            "trained",
            "staleness",
            "time",
        ],
        &rows,
    ));
    if let Some(b) = r
        .planners
        .iter()
        .find(|p| p.name == "ilp")
        .and_then(|p| p.bound)
    {
        let _ = writeln!(
            out,
            "\ngap: against the ILP's lower bound {b:.3} (≤: an upper bound on the distance to the optimum)."
        );
    }
    out.push_str("\nSLO 5×: share of inference requests whose prefill response R ≤ τ_R; staleness: training tasks\nthe serving replica had not received (a proxy for the paper's inference loss).\n");
    out
}

pub fn to_json(r: &ColocationReport) -> String {
    let mut s =
        serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

pub fn to_csv(r: &ColocationReport) -> String {
    let mut out = String::from("scenario,planner,seed,metric,value\n");
    let scenario = r.workload.clone().unwrap_or_else(|| "plan".into());
    for p in &r.planners {
        let Some(m) = &p.metrics else { continue };
        let value = serde_json::to_value(m).unwrap_or_default();
        let Some(map) = value.as_object() else {
            continue;
        };
        for (k, v) in map {
            match v {
                serde_json::Value::Object(inner) => {
                    for (ik, iv) in inner {
                        let _ = writeln!(out, "{scenario},{},{},{k}_{ik},{iv}", p.name, r.seed);
                    }
                }
                serde_json::Value::Null => {
                    let _ = writeln!(out, "{scenario},{},{},{k},", p.name, r.seed);
                }
                other => {
                    let _ = writeln!(out, "{scenario},{},{},{k},{other}", p.name, r.seed);
                }
            }
        }
    }
    out
}

/// `coplan simulate` on a co-location workload: mean ± 95 % CI over seeds per planner.
pub fn sim_table(r: &CoSimReport) -> String {
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
    out.push_str(&crate::report::plan::render_table(
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

pub fn sim_json(r: &CoSimReport) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

/// Long format, one per-seed value per row.
pub fn sim_csv(r: &CoSimReport) -> String {
    let mut out = String::from("scenario,planner,seed,metric,value\n");
    let scenario = r.workload.clone().unwrap_or_else(|| "simulate".into());
    for p in &r.planners {
        for (seed, ps) in &r.per_seed {
            if let Some((_, m)) = ps.iter().find(|(n, _)| *n == p.name) {
                for (k, v) in m {
                    if k == "runtime_ms" {
                        continue;
                    }
                    let _ = writeln!(
                        out,
                        "{scenario},{},{seed},{k},{}",
                        p.name,
                        serde_json::to_string(v).unwrap_or_default()
                    );
                }
            }
        }
    }
    out
}
