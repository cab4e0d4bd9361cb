//! The order in which the search tries nodes, and the answers it tries for an offer.

use crate::colocate::engine::{Assignment, DiscreteEventEngine, View};
use crate::plan::colocation::Task;

/// Nodes in the order the search tries them: the least busy first (latest stage backlog,
/// then memory, then index), one of each set of interchangeable nodes.
pub(super) fn least_backlog(view: &View<'_>, _task: &Task) -> Vec<usize> {
    let mut nodes: Vec<(f64, f64, usize)> = (0..view.config.nodes)
        .map(|n| {
            let end = view
                .stage_backlog_end(n)
                .into_iter()
                .fold(view.now, f64::max);
            (end, view.memory_utilization(n), n)
        })
        .collect();
    nodes.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    nodes.into_iter().map(|(_, _, n)| n).collect()
}

/// The answers tried for an offered task: one node of each set of interchangeable nodes,
/// least busy first, and with `defer`, deferral of a training task while an inference
/// arrival is ahead (the engine refuses it otherwise).
pub(super) fn branches(
    engine: &DiscreteEventEngine<'_>,
    task: &Task,
    defer: bool,
) -> Vec<Assignment> {
    let view = engine.view();
    let ordered = least_backlog(&view, task);
    let mut kept: Vec<usize> = Vec::new();
    for n in ordered {
        if !kept.iter().any(|&k| engine.interchangeable(k, n)) {
            kept.push(n);
        }
    }
    let mut answers: Vec<Assignment> = kept.into_iter().map(Assignment::Node).collect();
    if defer && task.is_training() && view.next_inference_arrival.is_some() {
        answers.push(Assignment::Defer);
    }
    answers
}
