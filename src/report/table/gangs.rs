//! The gang parts of a preemption plan's table (DESIGN §12.3): each planner's gang metrics,
//! and a gang's event line (its domain and spread instead of one node and level).

use std::fmt::Write;

use super::grid::aligned;
use crate::plan::preemption::{EventOutcome, PreemptionEvent, PreemptionPlan};

fn number(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Each planner's gang metrics, when the plan is of gangs.
pub fn gang_metrics(report: &PreemptionPlan) -> String {
    let with: Vec<_> = report
        .planners
        .iter()
        .filter_map(|r| r.metrics.gangs.as_ref().map(|g| (r, g)))
        .collect();
    let Some((_, first)) = with.first() else {
        return String::new();
    };
    let levels: Vec<&String> = first.hit_rate_by_level.keys().collect();
    let mut header: Vec<String> = vec![
        "planner".into(),
        "gangs placed".into(),
        "partial".into(),
        "split".into(),
        "preferred".into(),
        "victims/gang".into(),
        "over-eviction".into(),
    ];
    header.extend(levels.iter().map(|l| format!("hit {l}")));
    header.extend(
        first
            .largest_free_domain
            .keys()
            .map(|l| format!("free/{l}")),
    );
    let rows: Vec<Vec<String>> = with
        .iter()
        .map(|(r, g)| {
            let mut row = vec![
                r.name.clone(),
                format!("{}/{}", g.placed, g.gangs),
                g.partial.to_string(),
                g.split.to_string(),
                g.preferred_hits.to_string(),
                number(g.victims_per_gang, 2),
                number(g.over_eviction, 3),
            ];
            row.extend(levels.iter().map(|l| {
                g.hit_rate_by_level
                    .get(*l)
                    .map_or("-".into(), |h| format!("{:.1}%", h * 100.0))
            }));
            row.extend(g.largest_free_domain.values().map(u32::to_string));
            row
        })
        .collect();
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut right = vec![false];
    right.resize(head.len(), true);
    let mut out = String::from("\ngangs:\n");
    out.push_str(&aligned(&head, &rows, &right));
    let _ = writeln!(
        out,
        "partial / split: gangs left part-placed, or placed across domains of their required level (only gang-blind planners do either); over-eviction: victims' cost beyond the per-event optimum on the same state; free/<level>: most GPUs free in one domain of that level after the plan."
    );
    out
}

/// The header of a gang event table.
pub const GANG_EVENT_HEADER: [&str; 8] = [
    "gang",
    "qos",
    "pods",
    "domain",
    "spread/required",
    "result",
    "cost",
    "victims",
];

/// Which columns of [`GANG_EVENT_HEADER`] are right-aligned.
pub const GANG_EVENT_RIGHT: [bool; 8] = [false, false, true, false, false, false, true, false];

/// One gang event's line.
pub fn gang_event_row(e: &PreemptionEvent, cost: String) -> Option<Vec<String>> {
    let g = e.gang.as_ref()?;
    let result = match e.outcome {
        EventOutcome::Placed if e.hit => "hit",
        EventOutcome::Placed | EventOutcome::PlacedMiss => "placed-miss",
        EventOutcome::Refused => "refused",
        EventOutcome::NoCandidate => "unplaced",
        EventOutcome::Partial => "partial",
        EventOutcome::Split => "split",
    };
    Some(vec![
        e.preemptor.clone(),
        e.topology_qos.as_str().into(),
        format!("{}/{}", g.pods_placed, g.pods),
        g.domain.clone().unwrap_or_else(|| "-".into()),
        format!(
            "{}/{}",
            g.spread_level.as_deref().unwrap_or("-"),
            g.required_level
        ),
        result.into(),
        cost,
        if e.victims.is_empty() {
            "-".into()
        } else {
            e.victims.join(" ")
        },
    ])
}
