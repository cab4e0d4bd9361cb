//! `coplan plan` tables: the planners side by side, then each planner's events.

use std::fmt::Write;

use super::grid::{aligned, gap, num, pct, status};
use crate::plan::preemption::{
    EventOutcome, PreemptionEvent, PreemptionPlan, PreemptionPlannerReport,
};
use crate::plan::{PlanStatus, PlannerRole};
use crate::spec::preemption::TopologyQos;

pub use super::plan_colocation::colocation;

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

/// Events each planner lists under `Worst`: its costliest.
pub const WORST_EVENT_LINES: usize = 10;

/// The comparison table of a preemption plan, then the events of each planner.
pub fn preemption(report: &PreemptionPlan, lines: EventLines) -> String {
    let preemptors = list_length(report);
    let mut out = title(report, preemptors);
    out.push('\n');
    if preemptors == Some(0) {
        // A table of empty sums and 0/0 rates would say nothing: say why there is none.
        let _ = writeln!(
            out,
            "no preemptors: the workload's [[preempt]] list is empty, so no planner had anything to decide."
        );
        return out;
    }
    out.push_str(&comparison(report));
    out.push_str(&notes(report));
    out.push_str(&super::gangs::gang_metrics(report));
    out.push_str(&worst_decisions(report));
    out.push_str(&event_tables(report, lines, preemptors));
    out
}

/// A solver that stopped without an incumbent (`no_solution`) has no plan: no events, and
/// nothing its counts or rates could describe.
fn has_plan(r: &PreemptionPlannerReport) -> bool {
    r.status != PlanStatus::NoSolution && r.objective.is_some()
}

/// The length of the `[[preempt]]` list, as the planners with a plan decided it; `None` when no
/// planner has one (a batch reference without a solution decided nothing).
fn list_length(report: &PreemptionPlan) -> Option<u64> {
    report
        .planners
        .iter()
        .filter(|r| has_plan(r))
        .map(|r| r.metrics.preemptions)
        .max()
}

/// The first line: workload, cluster, fill seed and the number of preemptors.
fn title(report: &PreemptionPlan, preemptors: Option<u64>) -> String {
    format!(
        "preemption plan{} on {}{}: {}\n",
        report
            .workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        report.cluster,
        report
            .seed
            .map_or(String::new(), |s| format!(" (fill seed {s})")),
        match preemptors {
            Some(0) => "no preemptors".to_string(),
            Some(1) => "1 preemptor".to_string(),
            Some(n) => format!("{n} preemptors"),
            None => "no planner found a plan".to_string(),
        }
    )
}

/// Hit rate of the preemptors without topology QoS (`topology_qos = "none"`), which `hits`
/// counts and neither `hit G` nor `hit BE` does; `None` when the plan has none.
fn hit_rate_qos_none(events: &[PreemptionEvent]) -> Option<f64> {
    let qos_none: Vec<&PreemptionEvent> = events
        .iter()
        .filter(|e| e.topology_qos == TopologyQos::None)
        .collect();
    let hits = qos_none.iter().filter(|e| e.hit).count();
    (!qos_none.is_empty()).then(|| hits as f64 / qos_none.len() as f64)
}

/// Whether the table needs a `hit none` column: only then do `hit G` and `hit BE` leave some
/// of `hits` unexplained.
fn any_qos_none(report: &PreemptionPlan) -> bool {
    report
        .planners
        .iter()
        .any(|r| hit_rate_qos_none(&r.events).is_some())
}

/// `x`, or 0 when it prints as zero at `decimals` after scaling: an empty sum is −0.0 and
/// rounding noise is ±1e-17, and neither should print as `-0.000`.
fn zero_when_rounded(x: f64, scale: f64, decimals: usize) -> f64 {
    let shown = format!("{:.decimals$}", (x * scale).abs());
    if shown.bytes().all(|b| b == b'0' || b == b'.') {
        0.0
    } else {
        x
    }
}

/// A number with `digits` decimals, never `-0.000`; `-` when absent.
fn number(v: Option<f64>, digits: usize) -> String {
    num(v.map(|x| zero_when_rounded(x, 1.0, digits)), digits)
}

/// A share in percent, never `-0.0%`; `-` when absent.
fn share(v: Option<f64>) -> String {
    pct(v.map(|x| zero_when_rounded(x, 100.0, 1)))
}

/// A count of a plan, or `-` for a planner without one (0 would read as a plan that did
/// nothing).
fn count(planned: bool, cell: String) -> String {
    if planned { cell } else { "-".into() }
}

/// Whether the table needs a `PDB` column: some plan violates a PodDisruptionBudget.
fn any_pdb_violation(report: &PreemptionPlan) -> bool {
    report.planners.iter().any(|r| r.metrics.pdb_violations > 0)
}

/// One planner's row of the comparison table.
fn comparison_row(r: &PreemptionPlannerReport, with_qos_none: bool, with_pdb: bool) -> Vec<String> {
    let m = &r.metrics;
    let planned = has_plan(r);
    let rate = |v: Option<f64>| count(planned, share(v));
    let mut row = vec![
        r.name.clone(),
        status(r.status).into(),
        number(r.objective, 3),
        gap(
            r.gap.map(|g| zero_when_rounded(g, 100.0, 1)),
            r.gap_is_bound,
        ),
        share(r.decision_gap),
        count(planned, format!("{}/{}", m.hits, m.preemptions)),
        rate(m.hit_rate_guaranteed),
        rate(m.hit_rate_best_effort),
    ];
    if with_qos_none {
        row.push(rate(hit_rate_qos_none(&r.events)));
    }
    row.extend([
        count(planned, m.placed.to_string()),
        count(planned, m.victims.to_string()),
        count(planned, m.wasted_evictions.to_string()),
    ]);
    if with_pdb {
        row.push(count(planned, m.pdb_violations.to_string()));
    }
    row.extend([
        count(planned, number(m.slowdown_guaranteed, 3)),
        count(planned, number(m.slowdown_best_effort, 3)),
        m.subsets_evaluated.to_string(),
        format!("{:.2} ms", r.runtime_ms),
    ]);
    row
}

/// The planners side by side.
fn comparison(report: &PreemptionPlan) -> String {
    let with_qos_none = any_qos_none(report);
    let with_pdb = any_pdb_violation(report);
    let rows: Vec<Vec<String>> = report
        .planners
        .iter()
        .map(|r| comparison_row(r, with_qos_none, with_pdb))
        .collect();
    let mut header = vec![
        "planner",
        "status",
        "objective",
        "gap",
        "decision gap",
        "hits",
        "hit G",
        "hit BE",
    ];
    if with_qos_none {
        header.push("hit none");
    }
    header.extend(["placed", "victims", "wasted"]);
    if with_pdb {
        header.push("PDB");
    }
    header.extend(["slowdown G", "slowdown BE", "subsets", "time"]);
    // Every column but the first two holds a number.
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 2).collect();
    aligned(&header, &rows, &right)
}

/// What the columns mean, the reference of the gaps, and the marks the table uses.
fn notes(report: &PreemptionPlan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nhit G / hit BE: hit rate of the guaranteed / best-effort preemptors; slowdown G / BE: mean penalty of that class's placed pods."
    );
    if any_pdb_violation(report) {
        let _ = writeln!(
            out,
            "PDB: PodDisruptionBudgets the plan evicts more pods of than they allow ([planners] respect_pdb makes them hard)."
        );
    }
    if any_qos_none(report) {
        let _ = writeln!(
            out,
            "hit none: hit rate of the preemptors without topology QoS (topology_qos = \"none\"): hits counts them, hit G and hit BE do not."
        );
    }
    if let Some(b) = report
        .planners
        .iter()
        .find(|r| r.role == PlannerRole::BatchReference)
    {
        let any_bound = report.planners.iter().any(|r| r.gap_is_bound);
        let marks = match (any_bound, b.status == PlanStatus::Optimal) {
            (false, _) => "every gap is exact",
            (true, false) if b.status == PlanStatus::GapLimit => {
                "≤ marks an upper bound (ilp-batch proved a bound below its plan, not an optimum)"
            }
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
                number(Some(bound), 3)
            ),
        };
    }
    if report.planners.iter().any(|r| r.decision_gap.is_some()) {
        let _ = writeln!(
            out,
            "decision gap: each event against the per-event optimum (ilp) on the state that planner faced."
        );
    }
    let truncated: Vec<&str> = report
        .planners
        .iter()
        .filter(|r| r.truncated)
        .map(|r| r.name.as_str())
        .collect();
    if !truncated.is_empty() {
        let _ = writeln!(
            out,
            "truncated ({}): the enumeration budget (max_subset_evaluations) or the run's time budget (--time-limit; the later events are then sourced as flextopo-imp sources them) cut a search short.",
            truncated.join(", ")
        );
    }
    out
}

/// `Auto` decided by the plan's size; the other choices as asked.
fn resolved(lines: EventLines, preemptors: Option<u64>) -> EventLines {
    match lines {
        EventLines::Auto if preemptors.is_some_and(|n| n > AUTO_EVENT_LINES as u64) => {
            EventLines::Worst
        }
        EventLines::Auto => EventLines::All,
        chosen => chosen,
    }
}

/// Positions of the `k` costliest events (the earlier on a tie), in list order.
fn costliest(events: &[PreemptionEvent], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| events[b].cost.total_cmp(&events[a].cost).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order
}

/// `n` with a comma between groups of three digits (`1,213`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One event's line.
fn event_row(e: &PreemptionEvent) -> Vec<String> {
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
            (true, false) if e.outcome == EventOutcome::PlacedMiss => "placed-miss".into(),
            (true, false) => "miss".into(),
            (false, _) => match e.outcome {
                EventOutcome::Refused => "refused".into(),
                _ => "unplaced".into(),
            },
        },
        format!("{:.3}", zero_when_rounded(e.cost, 1.0, 3)),
        if e.victims.is_empty() {
            "-".into()
        } else {
            e.victims.join(" ")
        },
    ]
}

/// One planner's events: all of them, or under `Worst` its costliest.
fn event_table(r: &PreemptionPlannerReport, lines: EventLines) -> String {
    let mut out = String::new();
    if !has_plan(r) {
        let _ = writeln!(
            out,
            "\n{} events: none ({}: no plan)",
            r.name,
            status(r.status)
        );
        return out;
    }
    let listed: Vec<&PreemptionEvent> = if lines == EventLines::Worst
        && r.events.len() > WORST_EVENT_LINES
    {
        let _ = writeln!(
            out,
            "\n{} events (the {WORST_EVENT_LINES} costliest of {}; --events all lists every one):",
            r.name,
            thousands(r.events.len() as u64)
        );
        costliest(&r.events, WORST_EVENT_LINES)
            .into_iter()
            .filter_map(|i| r.events.get(i))
            .collect()
    } else {
        let _ = writeln!(out, "\n{} events:", r.name);
        r.events.iter().collect()
    };
    if listed.first().is_some_and(|e| e.gang.is_some()) {
        let rows: Vec<Vec<String>> = listed
            .into_iter()
            .filter_map(|e| {
                let cost = format!("{:.3}", zero_when_rounded(e.cost, 1.0, 3));
                super::gangs::gang_event_row(e, cost)
            })
            .collect();
        out.push_str(&aligned(
            &super::gangs::GANG_EVENT_HEADER,
            &rows,
            &super::gangs::GANG_EVENT_RIGHT,
        ));
        return out;
    }
    let rows: Vec<Vec<String>> = listed.into_iter().map(event_row).collect();
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
    out
}

/// Every planner's event table, as `--events` asks; JSON always carries every event.
fn event_tables(report: &PreemptionPlan, lines: EventLines, preemptors: Option<u64>) -> String {
    let shown = resolved(lines, preemptors);
    let mut out = String::new();
    if shown == EventLines::None {
        return out;
    }
    if let (EventLines::Auto, EventLines::Worst, Some(n)) = (lines, shown, preemptors) {
        let _ = writeln!(
            out,
            "\nevents: the plan has {} preemptors (more than {AUTO_EVENT_LINES}), so each planner lists only its {WORST_EVENT_LINES} costliest events; --events all prints every one.",
            thousands(n)
        );
    }
    for r in &report.planners {
        out.push_str(&event_table(r, shown));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_that_round_to_zero_print_without_a_sign() {
        assert_eq!(number(Some(-0.0), 3), "0.000");
        assert_eq!(number(Some(-1e-17), 3), "0.000");
        assert_eq!(number(Some(-0.0004), 3), "0.000");
        assert_eq!(number(Some(-0.0006), 3), "-0.001");
        assert_eq!(number(None, 3), "-");
        assert_eq!(share(Some(-0.0)), "0.0%");
        assert_eq!(share(Some(-1e-12)), "0.0%");
        assert_eq!(share(Some(0.5)), "50.0%");
        assert_eq!(
            gap(Some(zero_when_rounded(-1e-9, 100.0, 1)), false),
            "+0.0%"
        );
        assert_eq!(
            gap(Some(zero_when_rounded(-0.01, 100.0, 1)), true),
            "≤-1.0%"
        );
    }

    #[test]
    fn thousands_are_grouped_by_commas() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_213), "1,213");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn auto_lists_every_event_up_to_the_threshold_and_the_worst_above() {
        let at = Some(AUTO_EVENT_LINES as u64);
        let above = Some(AUTO_EVENT_LINES as u64 + 1);
        assert_eq!(resolved(EventLines::Auto, at), EventLines::All);
        assert_eq!(resolved(EventLines::Auto, above), EventLines::Worst);
        assert_eq!(resolved(EventLines::Auto, None), EventLines::All);
        assert_eq!(resolved(EventLines::All, above), EventLines::All);
        assert_eq!(resolved(EventLines::None, at), EventLines::None);
    }
}
