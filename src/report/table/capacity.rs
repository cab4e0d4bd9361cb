//! `coplan capacity`: the fewest servers of a pool at which a target holds (preemption), or
//! each planner's sustainable request rate (co-location).

use std::fmt::Write;

use super::grid::{aligned, num};
use crate::sim::capacity::{
    CapacityProbe, CapacityReport, Hold, PlannerCapacity, ProbeStatus, Verdict,
};

/// The `coplan capacity` table: the fewest servers per planner for a pool search, else each
/// planner's sustainable request rate.
pub fn capacity(r: &CapacityReport) -> String {
    match r.searched {
        "servers" => pool_size(r),
        _ => request_rate(r),
    }
}

/// The mark of a probe against the target.
fn mark(s: ProbeStatus) -> &'static str {
    match s {
        ProbeStatus::Holds => "✓",
        ProbeStatus::Fails => "✗",
        ProbeStatus::StraddlesAbove | ProbeStatus::StraddlesBelow => "~",
        ProbeStatus::CannotHoldLoad => "✗ load",
    }
}

fn answer(c: &PlannerCapacity, (min, max): (Option<u32>, Option<u32>)) -> (String, String) {
    let min = min.map_or_else(|| "-".into(), |m| m.to_string());
    match (c.verdict, c.answer, c.bracket) {
        (Verdict::Found, Some(a), _) => (format!("{a:.0}"), "found".into()),
        (Verdict::AtMost, Some(a), Some([lo, _])) => (
            format!("≤ {a:.0}"),
            format!(
                "at most: {lo:.0}–{a:.0} do not clearly miss the target and {lo:.0} is the smallest size searched; fewer not tried"
            ),
        ),
        (Verdict::AtMost, Some(_), None) => (
            format!("≤ {min}"),
            format!("at most: holds at {min}, the smallest size searched; fewer not tried"),
        ),
        (Verdict::Bracket, _, Some([lo, hi])) => (
            format!("{lo:.0}–{hi:.0}"),
            "bracket: the CI straddles the target".into(),
        ),
        _ => (
            format!("> {}", max.map_or_else(|| "-".into(), |m| m.to_string())),
            "not reached: raise --max".into(),
        ),
    }
}

fn pool_size(r: &CapacityReport) -> String {
    let mut out = pool_heading(r);
    out.push('\n');
    out.push_str(&pool_answers(r));
    out.push_str(&size_grid(r));
    out.push_str(&non_monotone(r));
    out.push_str(&pool_shrink_notes(r));
    let _ = writeln!(
        out,
        "\nbisection over the pool's size on the mean; where the CI straddles the target the answer is the bracket of sizes the seeds cannot tell apart; \"≤ N\" (at most): the target holds at N and nothing below it down to the smallest size searched failed, so fewer may do."
    );
    out
}

/// What was searched and under which load: the target, the pool, seeds, cycles and sizes.
fn pool_heading(r: &CapacityReport) -> String {
    let mut out = String::new();
    if let (Some(t), Some(p)) = (&r.target, &r.pool) {
        let _ = writeln!(
            out,
            "fewest servers in pool {} (`{}`, {}; {} in the spec) at which {} {} {}, on {}{}",
            p.index,
            p.name_prefix,
            p.server_type,
            p.spec_count,
            t.metric,
            t.op_text(),
            t.value,
            r.cluster,
            r.workload
                .as_ref()
                .map_or(String::new(), |w| format!(" with `{w}`")),
        );
    }
    let held = match r.hold {
        Some(Hold::Utilization) => {
            "load grows with the pool: the fill reaches the spec's GPU utilisation at every size"
                .to_string()
        }
        _ => match (r.held_pods.iter().min(), r.held_pods.iter().max()) {
            (Some(0), Some(0)) => {
                "load held: the [[running]] pods (the [fill] places none), at every size"
                    .to_string()
            }
            (Some(lo), Some(hi)) if lo == hi => format!(
                "load held: the fill places the {lo} pods the spec's cluster holds, at every size"
            ),
            (Some(lo), Some(hi)) => format!(
                "load held: the fill places the {lo}–{hi} pods (per seed) the spec's cluster holds, at every size"
            ),
            _ => "load held: no [fill]; the pool's size adds headroom only".to_string(),
        },
    };
    let _ = writeln!(
        out,
        "{held}; {} seed{} × {} cycle{}; sizes {}–{}",
        r.seeds.len(),
        if r.seeds.len() == 1 { "" } else { "s" },
        r.cycles.unwrap_or(0),
        if r.cycles == Some(1) { "" } else { "s" },
        r.min.unwrap_or(0),
        r.max.unwrap_or(0)
    );
    for note in &r.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// Each planner's fewest servers and its verdict.
fn pool_answers(r: &CapacityReport) -> String {
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|c| {
            let (a, v) = answer(c, (r.min, r.max));
            vec![c.planner.clone(), a, v]
        })
        .collect();
    aligned(
        &["planner", "servers", "verdict"],
        &rows,
        &[false, true, false],
    )
}

/// The first planner's probes: the sizes tried, and what shrinking the pool moved (the same
/// for every planner).
fn first_probes(r: &CapacityReport) -> &[CapacityProbe] {
    r.planners.first().map_or(&[][..], |c| c.probes.as_slice())
}

/// The target's metric, as the headings name it.
fn metric_name(r: &CapacityReport) -> &str {
    r.target.as_ref().map_or("metric", |t| t.metric.as_str())
}

/// Whether some size tried re-placed or displaced a `[[running]]` pod.
fn moved_pods(first: &[CapacityProbe]) -> bool {
    first
        .iter()
        .any(|p| p.replaced_pods.unwrap_or(0) > 0 || p.displaced_pods.unwrap_or(0) > 0)
}

/// The metric at every size tried, one column per planner.
fn size_grid(r: &CapacityReport) -> String {
    let mut out = String::new();
    let sizes: Vec<f64> = r
        .planners
        .first()
        .map(|c| c.probes.iter().map(|p| p.value).collect())
        .unwrap_or_default();
    let metric = metric_name(r);
    let _ = writeln!(
        out,
        "\n{metric} at every size tried (mean ± 95% CI over seeds; ✓ the whole CI meets the target, ✗ misses it, ~ straddles it, ✗ load: the pool cannot hold the load):"
    );
    // Where a smaller pool moved `[[running]]` pods, how many went where, size by size.
    let first = first_probes(r);
    let moved = moved_pods(first);
    let mut header: Vec<String> = vec!["servers".into(), "fill pods".into()];
    if moved {
        header.extend(["re-placed".into(), "displaced".into()]);
    }
    let fixed = header.len();
    header.extend(r.planners.iter().map(|c| c.planner.clone()));
    let count = |v: Option<usize>| v.map_or_else(|| "-".into(), |n| n.to_string());
    let grid: Vec<Vec<String>> = sizes
        .iter()
        .enumerate()
        .map(|(i, size)| {
            let mut row = vec![
                format!("{size:.0}"),
                num(first.get(i).and_then(|p| p.fill_pods), 1),
            ];
            if moved {
                row.push(count(first.get(i).and_then(|p| p.replaced_pods)));
                row.push(count(first.get(i).and_then(|p| p.displaced_pods)));
            }
            for c in &r.planners {
                let p = &c.probes[i];
                row.push(match &p.metric {
                    Some(s) => format!(
                        "{} {}",
                        match s.ci95 {
                            Some(ci) => format!("{:.4} ± {ci:.4}", s.mean),
                            None => format!("{:.4}", s.mean),
                        },
                        mark(p.status)
                    ),
                    None => format!("- {}", mark(p.status)),
                });
            }
            row
        })
        .collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i < fixed).collect();
    out.push_str(&aligned(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &grid,
        &right,
    ));
    out
}

/// Sizes where more servers did worse, per planner.
fn non_monotone(r: &CapacityReport) -> String {
    let mut out = String::new();
    let metric = metric_name(r);
    for c in &r.planners {
        for rev in &c.non_monotone {
            let _ = writeln!(
                out,
                "not monotone: {} {} {:.4} at {:.0} servers but {:.4} at {:.0}{}",
                c.planner,
                metric,
                rev.mean_from,
                rev.from,
                rev.mean_to,
                rev.to,
                if rev.target_lost {
                    " (the target is lost with more servers): the answer is the bisection's, a smaller size may hold"
                } else {
                    " (the CIs do not overlap)"
                }
            );
        }
    }
    out
}

/// How a pool below its spec size was shrunk, and which pods found no server.
fn pool_shrink_notes(r: &CapacityReport) -> String {
    let mut out = String::new();
    let first = first_probes(r);
    let moved = moved_pods(first);
    if let Some(p) = &r.pool {
        let below = first.iter().any(|q| q.value < f64::from(p.spec_count));
        if moved {
            let _ = writeln!(
                out,
                "below {} servers the emptiest go (fewest GPUs, then pods, held by [[running]] pods; ties: the later name); their pods are re-placed by the node allocator on the remaining servers, or displaced where none takes them{}",
                p.spec_count,
                if r.hold == Some(Hold::Utilization) {
                    ""
                } else {
                    " (a size that displaces a pod cannot hold the load: ✗ load)"
                }
            );
        } else if below {
            let _ = writeln!(
                out,
                "below {} servers the emptiest go; none of them held a [[running]] pod",
                p.spec_count
            );
        }
        let displaced: Vec<String> = first
            .iter()
            .filter(|q| !q.displaced.is_empty())
            .map(|q| format!("{:.0}: {}", q.value, q.displaced.join(", ")))
            .collect();
        if !displaced.is_empty() {
            let _ = writeln!(out, "displaced pods by size: {}", displaced.join("; "));
        }
    }
    out
}

fn request_rate(r: &CapacityReport) -> String {
    let mut out = format!(
        "sustainable request rate{} on {}: {} requests per probe, seed {}\n\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" of `{w}`")),
        r.cluster,
        r.requests.unwrap_or(0),
        r.seeds.first().copied().unwrap_or(0)
    );
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|c| {
            vec![
                c.planner.clone(),
                num(c.answer, 2),
                num(c.load_of_spec_rate, 2),
                c.probes.len().to_string(),
            ]
        })
        .collect();
    out.push_str(&aligned(
        &[
            "planner",
            "capacity (rps)",
            "load at the spec's rate",
            "probes",
        ],
        &rows,
        &[false, true, true, true],
    ));
    let _ = writeln!(
        out,
        "\ncapacity: the highest arrival rate (the spec's process at that rate, or its trace's or listed requests'\narrivals scaled to it) at which the backlog of requests not yet done (prefill and decode) stays bounded\n(mean over the window's last third ≤ 2 × its first third + one request per node), bracketed from the\nworkload's own rate, then by bisection."
    );
    out
}
