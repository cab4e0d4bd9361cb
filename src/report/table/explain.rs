//! `coplan explain` tables: one column per decision, one row per fact and cost term, then the
//! term that decides each planner's difference from the optimum.

use std::fmt::Write;

use super::grid::aligned;
use crate::plan::explain::{ColumnKind, DecisionColumn, EventExplanation};

/// The explanation of one preemption event.
pub fn preemption_event(e: &EventExplanation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "event {} of preemption plan{} on {}{}: {} ({}, priority {}, {} GPUs, {} cores, {}, needs {})",
        e.event,
        e.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" `{w}`")),
        e.cluster,
        e.seed
            .map_or(String::new(), |s| format!(" (fill seed {s})")),
        e.preemptor,
        e.class,
        e.priority,
        e.gpus,
        e.cores,
        e.topology_qos.as_str(),
        e.required_level.map_or("no server type", |l| l.as_str()),
    );
    if e.preemption_policy == crate::spec::eligibility::PreemptionPolicy::Never {
        out.push_str("preemption policy `never`: placed where it fits, evicts nobody\n");
    }
    out.push_str(&filtered_lines(e));
    out.push('\n');
    let mut header = vec![String::new()];
    header.extend(e.columns.iter().map(heading));
    let rows: Vec<Vec<String>> = ROWS
        .iter()
        .map(|(label, cell)| {
            let mut row = vec![(*label).to_string()];
            row.extend(e.columns.iter().map(cell));
            row
        })
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = std::iter::once(false)
        .chain(e.columns.iter().map(|_| true))
        .collect();
    out.push_str(&aligned(&header_refs, &rows, &right));
    out.push('\n');
    for c in &e.columns {
        let _ = match c.column {
            ColumnKind::Planner => writeln!(out, "{}: {}", heading(c), search(c)),
            ColumnKind::Optimum => writeln!(
                out,
                "{}: the per-event optimum on the state {} faced; {}",
                heading(c),
                names(&c.state_of),
                search(c)
            ),
        };
    }
    let gangs = gang_lines(e);
    if !gangs.is_empty() {
        out.push_str("\ngang placements:\n");
        out.push_str(&gangs);
    }
    let victims = victim_lines(e);
    if !victims.is_empty() {
        out.push_str("\nvictims:\n");
        out.push_str(&victims);
    }
    out.push('\n');
    for d in &e.differences {
        let _ = match d.deciding_term {
            None => writeln!(out, "{}: costs the optimum on its state", d.planner),
            Some(term) => {
                let value = d
                    .delta
                    .named()
                    .into_iter()
                    .find(|(n, _)| *n == term)
                    .map_or(0.0, |(_, v)| v);
                writeln!(
                    out,
                    "{}: {:+.3} over the optimum on its state; the deciding term is {term} ({value:+.3})",
                    d.planner, d.excess
                )
            }
        };
    }
    for n in &e.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// A column's heading: the planner, or `ilp@` the first planner whose state it decided on.
fn heading(c: &DecisionColumn) -> String {
    match (c.column, c.state_of.first()) {
        (ColumnKind::Optimum, Some(first)) if *first != c.name => format!("ilp@{first}"),
        _ => c.name.clone(),
    }
}

fn names(list: &[String]) -> String {
    list.join(", ")
}

/// Where the column's search stopped, and whether its budget cut it short.
fn search(c: &DecisionColumn) -> String {
    let mut s = c.search.stopped.clone();
    if c.search.truncated {
        s.push_str(" (the subset budget cut it short)");
    }
    s
}

type Cell = fn(&DecisionColumn) -> String;

/// Above this many victims a column counts them; the list below names each.
const LISTED_VICTIMS: usize = 6;

/// The table's rows: a label and how each column fills it.
const ROWS: &[(&str, Cell)] = &[
    ("server", |c| c.server.clone().unwrap_or_else(|| "-".into())),
    ("victims", |c| {
        if c.victims.is_empty() {
            "none".into()
        } else if c.victims.len() > LISTED_VICTIMS {
            format!("{} pods (listed below)", c.victims.len())
        } else {
            c.victims
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    }),
    ("level", |c| {
        let level = c.level.map_or("-", |l| l.as_str());
        match c.server_required_level {
            Some(r) => format!("{level} (needs {})", r.as_str()),
            None => level.into(),
        }
    }),
    ("outcome", |c| c.outcome.as_str().into()),
    ("QoS met", |c| yes_no(c.qos_met)),
    ("cost: victims", |c| fixed(c.terms.victims)),
    ("cost: priority", |c| fixed(c.terms.priority)),
    ("cost: topology", |c| fixed(c.terms.topology)),
    ("cost: unplaced", |c| fixed(c.terms.unplaced)),
    ("cost: total", |c| fixed(c.terms.total)),
    ("FlexTopo α", |c| score(c, |s| s.alpha)),
    ("FlexTopo P", |c| score(c, |s| s.priority_term)),
    ("FlexTopo T", |c| score(c, |s| s.topology_term)),
    ("FlexTopo S", |c| score(c, |s| s.score)),
    ("subsets evaluated", |c| {
        c.search.subsets_evaluated.to_string()
    }),
];

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Three decimals, without the sign of a value that rounds to zero.
fn fixed(x: f64) -> String {
    let text = format!("{x:.3}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

fn score(c: &DecisionColumn, term: fn(&crate::plan::explain::ScoreRecord) -> f64) -> String {
    c.flextopo_score
        .as_ref()
        .map_or("-".into(), |s| fixed(term(s)))
}

/// The servers the scheduler's filter keeps the preemptor off: a count per rule, then each
/// server with its reason (the first ten per rule; the JSON lists all).
fn filtered_lines(e: &EventExplanation) -> String {
    const SHOWN: usize = 10;
    let mut by_rule: std::collections::BTreeMap<&str, Vec<&crate::plan::explain::FilteredServer>> =
        std::collections::BTreeMap::new();
    for f in &e.filtered_out {
        by_rule.entry(f.rule).or_default().push(f);
    }
    let mut out = String::new();
    for (rule, servers) in by_rule {
        let _ = writeln!(out, "filtered out by {rule}: {} servers", servers.len());
        for f in servers.iter().take(SHOWN) {
            let _ = writeln!(out, "  {}: {}", f.server, f.reason);
        }
        if servers.len() > SHOWN {
            let _ = writeln!(
                out,
                "  … {} more (see --format json)",
                servers.len() - SHOWN
            );
        }
    }
    out
}

/// Every victim of any column once, in name order: class, priority and QoS.
fn victim_lines(e: &EventExplanation) -> String {
    let mut seen = std::collections::BTreeMap::new();
    for v in e.columns.iter().flat_map(|c| &c.victims) {
        seen.entry(v.name.as_str()).or_insert(v);
    }
    let mut out = String::new();
    for (name, v) in seen {
        let _ = writeln!(
            out,
            "  {name}: {}, priority {}, {}",
            v.class,
            v.priority,
            v.topology_qos.as_str()
        );
    }
    out
}

/// Where each column's gang landed: its domain and spread, and every pod's server.
pub fn gang_lines(e: &EventExplanation) -> String {
    let mut out = String::new();
    for c in &e.columns {
        let Some(g) = &c.gang else { continue };
        let pods: Vec<String> = g
            .placements
            .iter()
            .map(|p| format!("{}@{}", p.pod.rsplit('/').next().unwrap_or(&p.pod), p.node))
            .collect();
        let _ = writeln!(
            out,
            "{}: {}/{} pods, {} {} (required {}{}){}",
            heading(c),
            g.pods_placed,
            g.pods,
            g.spread_level.as_deref().unwrap_or("no domain:"),
            g.domain.as_deref().unwrap_or("-"),
            g.required_level,
            g.preferred_level
                .as_ref()
                .map_or(String::new(), |p| format!(", preferred {p}")),
            if pods.is_empty() {
                String::new()
            } else {
                format!(": {}", pods.join(" "))
            },
        );
    }
    out
}
