//! `coplan explain --task ID` tables of a co-location workload: per planner, each offer of the
//! task with the per-node terms the planner compared and its answer; then one row per planner
//! (and `ilp`) of how the task ran. Also the `--worst K` lists.

use std::fmt::Write;

use super::grid::{aligned, num, status};
use crate::plan::explain_colocation::{
    ExplainedOffer, OfferAnswer, OfferTerms, PlannerColumn, TaskExplanation, TaskFacts, WorstTasks,
};

/// The explanation of one co-location task.
pub fn colocation_task(e: &TaskExplanation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "task {} of co-location plan{} on {} (seed {}, {} nodes × {} stages, SLO τ_R {:.4} s): {}",
        e.task.id,
        workload(&e.workload),
        e.cluster,
        e.seed,
        e.nodes,
        e.stages,
        e.slo_s,
        task_line(&e.task),
    );
    for c in &e.planners {
        out.push('\n');
        out.push_str(&planner_block(c));
    }
    out.push('\n');
    out.push_str(&summary(e));
    if let Some(reason) = &e.ilp.reason {
        let _ = writeln!(out, "ilp: {reason}");
    }
    for c in e.planners.iter().filter(|c| c.reason.is_some()) {
        let _ = writeln!(out, "{}: {}", c.name, c.reason.as_deref().unwrap_or(""));
    }
    out
}

fn workload(w: &Option<String>) -> String {
    w.as_ref().map_or(String::new(), |w| format!(" `{w}`"))
}

fn task_line(t: &TaskFacts) -> String {
    match (t.prompt_tokens, t.output_tokens, t.training_tokens, t.batch) {
        (Some(p), Some(o), _, _) => format!(
            "inference request arriving at {:.4} s, {p} prompt and {o} output tokens",
            t.arrival_s
        ),
        (_, _, Some(tokens), Some(batch)) => format!(
            "training task submitted at {:.4} s, batch {batch} × {tokens} tokens",
            t.arrival_s
        ),
        _ => format!("{} task at {:.4} s", t.kind, t.arrival_s),
    }
}

/// One planner's offers of the task, each with its per-node terms.
fn planner_block(c: &PlannerColumn) -> String {
    let mut out = format!("{} ({}):\n", c.name, status(c.status));
    if c.offers.is_empty() {
        out.push_str("  no offer recorded\n");
    }
    for o in &c.offers {
        let _ = writeln!(out, "  offer at {:.4} s: {}", o.time_s, answer(o.answer));
        let _ = writeln!(out, "  why: {}", o.why);
        let table = terms_table(o);
        for line in table.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

fn answer(a: OfferAnswer) -> String {
    match a {
        OfferAnswer::Node(n) => format!("node {n}"),
        OfferAnswer::Defer => "defer".into(),
    }
}

/// The per-node terms of an offer (`*` marks the node answered or, when deferred, the best);
/// empty for a planner that compares no per-node terms.
fn terms_table(o: &ExplainedOffer) -> String {
    let marked = |node: usize, best: usize| {
        let mark = if node == best { "*" } else { "" };
        format!("{mark}{node}")
    };
    match &o.terms {
        OfferTerms::Lemix(l) => {
            let header = ["node", "II (s)", "IP", "R (s)", "LC", "score"];
            let rows: Vec<Vec<String>> = l
                .nodes
                .iter()
                .map(|n| {
                    vec![
                        marked(n.node, l.best),
                        format!("{:.4}", n.idleness_increase_s),
                        format!("{:.4}", n.ip),
                        format!("{:.4}", n.response_s),
                        format!("{:.4}", n.length_consistency),
                        format!("{:.4}", n.score),
                    ]
                })
                .collect();
            let mut text = format!(
                "{} score, λ1 {}, λ2 {}, τ {}\n",
                l.score, l.lambda1, l.lambda2, l.tau
            );
            text.push_str(&aligned(&header, &rows, &[true; 6]));
            text
        }
        OfferTerms::LeastUtilized { nodes } => {
            let chosen = match o.answer {
                OfferAnswer::Node(n) => n,
                OfferAnswer::Defer => usize::MAX,
            };
            let rows: Vec<Vec<String>> = nodes
                .iter()
                .map(|u| {
                    vec![
                        marked(u.node, chosen),
                        format!("{:.4}", u.memory_utilization),
                    ]
                })
                .collect();
            aligned(&["node", "memory utilisation"], &rows, &[true, true])
        }
        OfferTerms::RoundRobin { .. } | OfferTerms::RoleSplit { .. } => String::new(),
    }
}

/// One row per planner and `ilp`: how the task ran.
fn summary(e: &TaskExplanation) -> String {
    let header = [
        "planner",
        "status",
        "node",
        "deferrals",
        "R (s)",
        "TTFT (s)",
        "TBT mean (s)",
        "TBT max (s)",
        "completion (s)",
        "SLO met",
        "term",
    ];
    let rows: Vec<Vec<String>> = e
        .planners
        .iter()
        .chain(std::iter::once(&e.ilp))
        .map(summary_row)
        .collect();
    let mut right = [true; 11];
    right[0] = false;
    right[1] = false;
    aligned(&header, &rows, &right)
}

fn summary_row(c: &PlannerColumn) -> Vec<String> {
    let mut row = vec![c.name.clone(), status(c.status).into()];
    match &c.run {
        Some(r) => row.extend([
            r.node.map_or("-".into(), |n| n.to_string()),
            r.deferrals.to_string(),
            num(r.response_s, 4),
            num(r.ttft_s, 4),
            num(r.tbt_mean_s, 4),
            num(r.tbt_max_s, 4),
            num(r.completion_s, 4),
            r.slo_met
                .map_or("-", |m| if m { "yes" } else { "no" })
                .into(),
            format!("{:.4}", r.objective_term),
        ]),
        None => row.extend(std::iter::repeat_n("-".to_string(), 9)),
    }
    row
}

/// Each planner's tasks whose response differs most from `ilp`'s schedule.
pub fn colocation_worst(w: &WorstTasks) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "co-location plan{} on {} (seed {}): per planner, the {} tasks whose response differs \
         most from ilp's ({})",
        workload(&w.workload),
        w.cluster,
        w.seed,
        w.k,
        status(w.ilp_status),
    );
    let header = [
        "task",
        "kind",
        "node",
        "ilp node",
        "R (s)",
        "ilp R (s)",
        "|ΔR| (s)",
    ];
    for p in &w.planners {
        let _ = writeln!(out, "\n{}:", p.planner);
        if p.tasks.is_empty() {
            out.push_str("  no task with a response in both runs\n");
            continue;
        }
        let rows: Vec<Vec<String>> = p
            .tasks
            .iter()
            .map(|t| {
                vec![
                    t.task.to_string(),
                    t.kind.into(),
                    t.node.map_or("-".into(), |n| n.to_string()),
                    t.ilp_node.map_or("-".into(), |n| n.to_string()),
                    format!("{:.4}", t.response_s),
                    format!("{:.4}", t.ilp_response_s),
                    format!("{:.4}", t.difference_s),
                ]
            })
            .collect();
        let right = [true, false, true, true, true, true, true];
        for line in aligned(&header, &rows, &right).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
