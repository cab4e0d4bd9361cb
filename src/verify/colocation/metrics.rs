//! Re-deriving a run's reported metrics and objective with the checker's own formula. It
//! judges the reported numbers rather than the timeline's feasibility, so it shares nothing
//! with the replays.

use std::collections::BTreeMap;

use crate::plan::colocation::{ColocationMetrics, ColocationRun, OpKind, slo_met};
use crate::spec::colocation::ColocationObjective;

/// What the metrics of a run are defined against.
#[derive(Debug, Clone, Copy)]
pub struct MetricBasis<'a> {
    /// τ_R.
    pub tau_s: f64,
    /// Pipeline stages (GPUs) per node, the denominator of the per-node utilisation.
    pub stages: usize,
    /// Seconds after the first inference arrival before the steady-state window starts
    /// (`[inference] warmup_s`).
    pub warmup_s: f64,
    /// The weights of the canonical objective (`[objective]`).
    pub weights: &'a ColocationObjective,
}

/// Recomputes the counted metrics and the canonical objective from the run's outcomes with its
/// own formula, and compares them with the reported ones.
pub fn verify_metrics(
    run: &ColocationRun,
    reported: &ColocationMetrics,
    basis: &MetricBasis<'_>,
) -> Result<(), String> {
    let (tau_s, weights) = (basis.tau_s, basis.weights);
    let dropped = run.outcomes.iter().filter(|o| o.dropped).count() as u64;
    let offloaded = run.outcomes.iter().filter(|o| o.offloaded).count() as u64;
    let trained = run
        .outcomes
        .iter()
        .filter(|o| o.training && !o.dropped && o.end_s.is_some())
        .count() as u64;
    let mut nodes: Vec<usize> = run.outcomes.iter().filter_map(|o| o.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut objective = 0.0;
    for o in &run.outcomes {
        if o.dropped {
            objective += weights.dropped;
            continue;
        }
        if !o.training {
            let r = o.prefill_end_s.map(|e| e - o.arrival_s);
            if r.is_none_or(|r| !slo_met(r, tau_s)) {
                objective += weights.slo_miss;
            }
        }
        if let Some(end) = o.end_s {
            objective += (end - o.arrival_s) / tau_s;
        }
    }
    // The paper's definitions: per used node, its active window.
    let mut windows: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    let mut compute_s = 0.0;
    for op in &run.ops {
        let w = windows.entry(op.node).or_insert((op.start_s, op.end_s));
        *w = (w.0.min(op.start_s), w.1.max(op.end_s));
        if matches!(op.kind, OpKind::Forward | OpKind::Backward | OpKind::Decode) {
            compute_s += op.end_s - op.start_s;
        }
    }
    let active: f64 = windows.values().map(|(a, b)| b - a).sum();
    let completed = run
        .outcomes
        .iter()
        .filter(|o| !o.dropped && o.end_s.is_some())
        .count() as f64;
    let (throughput_active, utilization_active) = if active > 0.0 {
        (
            completed / active,
            compute_s / (basis.stages as f64 * active),
        )
    } else {
        (0.0, 0.0)
    };
    let arrivals: Vec<f64> = run
        .outcomes
        .iter()
        .filter(|o| !o.training)
        .map(|o| o.arrival_s)
        .collect();
    let first = arrivals.iter().copied().fold(f64::INFINITY, f64::min);
    let last = arrivals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let window = if arrivals.is_empty() {
        (0.0, 0.0)
    } else {
        ((first + basis.warmup_s).min(last), last)
    };
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let checks = [
        (
            "throughput_active",
            near(reported.throughput_active, throughput_active),
        ),
        (
            "utilization_active",
            near(reported.utilization_active, utilization_active),
        ),
        (
            "window",
            near(reported.window_start_s, window.0) && near(reported.window_end_s, window.1),
        ),
        ("dropped", reported.dropped == dropped),
        ("offloaded", reported.offloaded == offloaded),
        (
            "training_tasks_done",
            reported.training_tasks_done == trained,
        ),
        ("nodes_used", reported.nodes_used == nodes.len() as u64),
        (
            "objective",
            (reported.objective - objective).abs() <= 1e-6 * objective.abs().max(1.0),
        ),
    ];
    match checks.iter().find(|(_, ok)| !ok) {
        Some((name, _)) => Err(format!("metric `{name}` does not recompute")),
        None => Ok(()),
    }
}
