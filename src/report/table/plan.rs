//! `coplan plan` tables: the planners side by side, then each planner's events.

use std::fmt::Write;

use super::grid::{aligned, gap, num, pct, render_table, status};
use crate::plan::colocation::{ColocationPlan, slo_key};
use crate::plan::preemption::{EventOutcome, PreemptionPlan};
use crate::plan::{PlanStatus, PlannerRole};

/// `plan --worst K`: each planner's decisions furthest from the per-event optimum.
fn worst_decisions(report: &PreemptionPlan) -> String {
    let mut out = String::new();
    let listed: Vec<_> = report
        .planners
        .iter()
        .filter_map(|r| Some((r, r.worst.as_ref()?)))
        .collect();
    if listed.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nworst decisions (excess over the per-event optimum on the state each planner faced; `coplan explain --event N` shows one):"
    );
    for (r, worst) in listed {
        if worst.is_empty() {
            let _ = writeln!(
                out,
                "\n{}: every decision costs the per-event optimum on its state",
                r.name
            );
            continue;
        }
        let _ = writeln!(out, "\n{}:", r.name);
        let rows: Vec<Vec<String>> = worst
            .iter()
            .map(|w| {
                vec![
                    w.event.to_string(),
                    w.preemptor.clone(),
                    w.server.clone().unwrap_or_else(|| "-".into()),
                    w.optimum_server.clone().unwrap_or_else(|| "-".into()),
                    format!("{:+.3}", w.excess),
                    w.deciding_term.unwrap_or("-").into(),
                ]
            })
            .collect();
        out.push_str(&aligned(
            &[
                "event",
                "preemptor",
                "server",
                "optimum's server",
                "excess",
                "deciding term",
            ],
            &rows,
            &[true, false, false, false, true, false],
        ));
    }
    out
}

/// Which event lines a preemption table prints (`plan --events`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventLines {
    /// Every event up to a plan of [`AUTO_EVENT_LINES`] preemptors, else the worst.
    #[default]
    Auto,
    /// No event lines.
    None,
    /// The costliest events of each planner.
    Worst,
    /// Every event.
    All,
}

/// Above this many preemptors the default (`Auto`) prints the worst events only.
pub const AUTO_EVENT_LINES: usize = 50;

/// The comparison table of a preemption plan, then the events of each planner.
pub fn preemption(report: &PreemptionPlan, _lines: EventLines) -> String {
    let mut out = String::new();
    // A batch reference without a solution decided nothing: the list's length is what the
    // other planners decided.
    let n = report
        .planners
        .iter()
        .map(|p| p.metrics.preemptions)
        .max()
        .unwrap_or(0);
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
                gap(r.gap, r.gap_is_bound),
                pct(r.decision_gap),
                format!("{}/{}", m.hits, m.preemptions),
                pct(m.hit_rate_guaranteed),
                pct(m.hit_rate_best_effort),
                m.placed.to_string(),
                m.victims.to_string(),
                m.wasted_evictions.to_string(),
                num(m.slowdown_guaranteed, 3),
                num(m.slowdown_best_effort, 3),
                m.subsets_evaluated.to_string(),
                format!("{:.2} ms", r.runtime_ms),
            ]
        })
        .collect();
    out.push_str(&aligned(
        &[
            "planner",
            "status",
            "objective",
            "gap",
            "decision gap",
            "hits",
            "hit G",
            "hit BE",
            "placed",
            "victims",
            "wasted",
            "slowdown G",
            "slowdown BE",
            "subsets",
            "time",
        ],
        &rows,
        &[
            false, false, true, true, true, true, true, true, true, true, true, true, true, true,
            true,
        ],
    ));
    let _ = writeln!(
        out,
        "\nhit G / hit BE: hit rate of the guaranteed / best-effort preemptors; slowdown G / BE: mean penalty of that class's placed pods."
    );
    if let Some(b) = report
        .planners
        .iter()
        .find(|r| r.role == PlannerRole::BatchReference)
    {
        let any_bound = report.planners.iter().any(|r| r.gap_is_bound);
        let marks = match (any_bound, b.status == PlanStatus::Optimal) {
            (false, _) => "every gap is exact",
            (true, false) => "≤ marks an upper bound (ilp-batch stopped early)",
            // Proven, yet some gap is only a bound: the replay of its plan in list order cost
            // more than the optimum it proved.
            (true, true) => {
                "≤ marks an upper bound (ilp-batch's plan, replayed in list order, costs more than its proven optimum)"
            }
        };
        let _ = match b.bound {
            None => writeln!(
                out,
                "gap: none (ilp-batch proved no bound: {}).",
                status(b.status)
            ),
            Some(bound) => writeln!(
                out,
                "gap: against the ilp-batch {} {}; {marks}.",
                if b.status == PlanStatus::Optimal {
                    "optimum"
                } else {
                    "best bound"
                },
                num(Some(bound), 3)
            ),
        };
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
    out.push_str(&worst_decisions(report));
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
                        (true, false) if e.outcome == EventOutcome::PlacedMiss => {
                            "placed-miss".into()
                        }
                        (true, false) => "miss".into(),
                        (false, _) => match e.outcome {
                            EventOutcome::Refused => "refused".into(),
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
        out.push_str(&aligned(
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
