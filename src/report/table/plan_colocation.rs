//! `coplan plan` table of a co-location plan: the planners side by side, the bound they are
//! measured against, and the metrics' definitions.

use std::fmt::Write;

use super::grid::{gap, num, render_table, status};
use crate::plan::PlanStatus;
use crate::plan::colocation::{ColocationPlan, slo_key};

/// The comparison table of a co-location plan.
pub fn colocation(r: &ColocationPlan) -> String {
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
                status(p.status).into(),
                p.skipped.clone().unwrap_or_default(),
            ],
            Some(m) => vec![
                p.name.clone(),
                status(p.status).into(),
                num(p.objective, 3),
                gap(p.gap, p.gap_is_bound),
                format!("{:.2}", m.throughput_tasks_per_s),
                format!("{:.2}", m.throughput_active),
                format!("{:.0}", m.throughput_tokens_per_s),
                format!("{:.2}", m.goodput_rps),
                format!(
                    "{:.1}%",
                    100.0
                        * m.slo_attainment
                            .get(&slo_key(r.slo_factor))
                            .copied()
                            .unwrap_or(0.0)
                ),
                num(m.ttft_p99_s, 3),
                num(m.tbt_p50_s, 4),
                format!("{:.1}%", 100.0 * m.gpu_utilization),
                format!("{:.1}%", 100.0 * m.utilization_active),
                format!("{:.1}%", 100.0 * m.bubble_rate),
                format!("{:.1}", m.makespan_s),
                m.nodes_used.to_string(),
                m.dropped.to_string(),
                m.offloaded.to_string(),
                m.training_tasks_done.to_string(),
                num(m.staleness_mean, 1),
                format!("{:.1} ms", p.runtime_ms),
            ],
        })
        .collect();
    let slo_header = format!("SLO {}×", r.slo_factor);
    out.push_str(&render_table(
        &[
            "planner",
            "status",
            "objective",
            "gap",
            "task/s",
            "task/s act",
            "token/s",
            "goodput",
            &slo_header,
            "TTFT p99",
            "TBT p50",
            "GPU util",
            "util act",
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
    if let Some(b) = r.bound {
        if r.bound_source == "ilp" {
            let _ = writeln!(
                out,
                "\ngap: against the optimum {b:.3} that ilp proved over every decision a planner can make (exact)."
            );
        } else {
            let _ = writeln!(
                out,
                "\ngap: against the lower bound {b:.3} from {} (≤: an upper bound on the distance to the optimum).",
                r.bound_source
            );
        }
        let parts: Vec<String> = r
            .bounds
            .iter()
            .map(|p| match (p.value, &p.reason) {
                (Some(v), _) => format!("{} {v:.3}", p.name),
                (None, Some(why)) => format!("{} - ({why})", p.name),
                (None, None) => format!("{} -", p.name),
            })
            .collect();
        let _ = writeln!(out, "bounds: {}.", parts.join("; "));
    }
    if r.planners.iter().any(|p| p.status == PlanStatus::Windowed) {
        out.push_str("windowed: the exact search over rolling windows of tasks, a feasible schedule, not an optimum.\n");
    }
    out.push_str("\ntask/s, GPU util: over the cluster and the makespan; task/s act, util act: the paper's definitions, over\nthe used nodes' active spans (compute only). SLO k×: share of the window's requests whose prefill response\nR ≤ τ_R = k × SLO base; goodput: those requests per second from the window's start to their last\nresponse; TBT per generated token; staleness: training tasks the serving replica had not received (a proxy\nfor the paper's inference loss).\n");
    if let Some(m) = r.planners.iter().find_map(|p| p.metrics.as_ref()) {
        let _ = writeln!(
            out,
            "request metrics over arrivals in [{:.1}, {:.1}] s.",
            m.window_start_s, m.window_end_s
        );
    }
    // `plan --worst K`: the tasks furthest from `ilp`'s schedule.
    if let Some(w) = &r.worst {
        out.push('\n');
        out.push_str(&super::explain_colocation::colocation_worst(w));
    }
    out
}
