//! Co-location metrics and the canonical objective (DESIGN §6.4).

use std::collections::BTreeMap;

use super::setup::Setup;
use crate::plan::colocation::{
    ColocationMetrics, ColocationRun, OpKind, TaskKind, TaskOutcome, slo_key, slo_met,
};
use crate::spec::colocation::ColocationObjective;

fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    Some(sorted[i])
}

/// Canonical objective: Σ_inference slo_miss·[R > τ_R] + Σ_dropped dropped +
/// Σ_completed (completion − arrival) / τ_R. A dropped request pays `dropped`, not `slo_miss`.
pub fn compute(run: &ColocationRun, setup: &Setup) -> ColocationMetrics {
    let (nodes, stages) = (setup.config.nodes, setup.config.stages);
    let slo_base = setup.slo_base_s;
    let (slo_factor, warmup_s) = (
        setup.spec.inference.slo_factor,
        setup.spec.inference.warmup_s,
    );
    let weights = &setup.spec.objective;
    let tau = setup.slo_s();
    let window = steady_window(run, warmup_s);
    let makespan = makespan_s(run);
    let per_s = |x: f64| if makespan > 0.0 { x / makespan } else { 0.0 };
    let completed = run
        .outcomes
        .iter()
        .filter(|o| o.end_s.is_some() && !o.dropped)
        .count();
    let all_inference: Vec<_> = run.outcomes.iter().filter(|o| !o.training).collect();
    // Request metrics count the steady-state window's requests.
    let inference: Vec<_> = all_inference
        .iter()
        .copied()
        .filter(|o| o.arrival_s >= window.0 - 1e-12 && o.arrival_s <= window.1 + 1e-12)
        .collect();
    let tokens = tokens_served(&all_inference, setup);
    let met = |k: f64| {
        inference
            .iter()
            .filter(|o| response_s(o).is_some_and(|r| slo_met(r, k * slo_base)))
            .count()
    };
    let share = |k: f64| {
        if inference.is_empty() {
            1.0
        } else {
            met(k) as f64 / inference.len() as f64
        }
    };
    let mut ttft: Vec<f64> = inference.iter().filter_map(|o| response_s(o)).collect();
    ttft.sort_by(f64::total_cmp);
    let tbt = sorted_token_gaps(&inference);
    let GpuTimes {
        busy,
        transfer,
        gaps,
        spans,
    } = gpu_times(run);
    let active = active_spans(run);
    let active_sum: f64 = active.values().sum();
    let nodes_used = run
        .outcomes
        .iter()
        .filter_map(|o| o.node)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let stale: Vec<f64> = inference
        .iter()
        .filter_map(|o| o.staleness.map(|s| s as f64))
        .collect();
    let dropped = run.outcomes.iter().filter(|o| o.dropped).count();
    let objective = run
        .outcomes
        .iter()
        .map(|o| objective_term(o, tau, weights))
        .sum();
    let mut slo = BTreeMap::new();
    // The spec's own factor (τ_R) beside the fixed ones, under its own key.
    for k in [1.0, 5.0, 10.0, slo_factor] {
        slo.insert(slo_key(k), share(k));
    }
    ColocationMetrics {
        tasks: run.outcomes.len() as u64,
        inference_requests: inference.len() as u64,
        throughput_tasks_per_s: per_s(completed as f64),
        throughput_tokens_per_s: per_s(tokens),
        goodput_rps: goodput_rps(met(slo_factor), &inference, window.0),
        slo_attainment: slo,
        ttft_p50_s: percentile(&ttft, 0.5),
        ttft_p99_s: percentile(&ttft, 0.99),
        tbt_p50_s: percentile(&tbt, 0.5),
        tbt_p99_s: percentile(&tbt, 0.99),
        gpu_utilization: if makespan > 0.0 {
            busy / (nodes * stages) as f64 / makespan
        } else {
            0.0
        },
        transfer_utilization: if makespan > 0.0 {
            transfer / (nodes * stages) as f64 / makespan
        } else {
            0.0
        },
        throughput_active: if active_sum > 0.0 {
            completed as f64 / active_sum
        } else {
            0.0
        },
        utilization_active: if active_sum > 0.0 {
            busy / (stages as f64 * active_sum)
        } else {
            0.0
        },
        window_start_s: window.0,
        window_end_s: window.1,
        bubble_rate: if spans > 0.0 { gaps / spans } else { 0.0 },
        makespan_s: makespan,
        nodes_used: nodes_used as u64,
        dropped: dropped as u64,
        offloaded: run.outcomes.iter().filter(|o| o.offloaded).count() as u64,
        training_tasks_done: run
            .outcomes
            .iter()
            .filter(|o| o.training && o.end_s.is_some() && !o.dropped)
            .count() as u64,
        staleness_mean: (!stale.is_empty()).then(|| stale.iter().sum::<f64>() / stale.len() as f64),
        objective,
    }
}

/// First arrival to the last op or task end, in seconds (0 for an empty run).
fn makespan_s(run: &ColocationRun) -> f64 {
    let first = run
        .outcomes
        .iter()
        .map(|o| o.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let last = run
        .outcomes
        .iter()
        .filter_map(|o| o.end_s)
        .chain(run.ops.iter().map(|o| o.end_s))
        .fold(f64::NEG_INFINITY, f64::max);
    if last > first { last - first } else { 0.0 }
}

/// A request's response R, arrival to the end of its prefill; `None` when it was dropped or
/// never prefilled.
fn response_s(o: &TaskOutcome) -> Option<f64> {
    if o.dropped {
        None
    } else {
        o.prefill_end_s.map(|e| e - o.arrival_s)
    }
}

/// Prompt and decoded tokens of the requests that were prefilled.
fn tokens_served(requests: &[&TaskOutcome], setup: &Setup) -> f64 {
    let mut tokens = 0.0;
    for o in requests {
        if let (Some(_), TaskKind::Inference { prompt_tokens, .. }) =
            (o.prefill_end_s, setup.tasks[o.task.index()].kind)
        {
            tokens += prompt_tokens as f64 + o.token_times.len() as f64;
        }
    }
    tokens
}

/// Time between tokens, per generated token: each token's gap from the previous one (the
/// first from the prefill's end), sorted.
fn sorted_token_gaps(requests: &[&TaskOutcome]) -> Vec<f64> {
    let mut tbt: Vec<f64> = requests
        .iter()
        .filter(|o| !o.dropped)
        .filter_map(|o| Some((o.prefill_end_s?, &o.token_times)))
        .flat_map(|(start, times)| {
            std::iter::once(start)
                .chain(times.iter().copied())
                .zip(times.iter().copied())
                .map(|(a, b)| b - a)
        })
        .collect();
    tbt.sort_by(f64::total_cmp);
    tbt
}

/// What the GPUs did over a run, summed over GPUs.
struct GpuTimes {
    /// Compute busy time (forward, backward, decode).
    busy: f64,
    /// Transfer busy time (offloads, reloads, syncs).
    transfer: f64,
    /// Idle gaps between consecutive ops of a GPU.
    gaps: f64,
    /// Each GPU's first op start to last op end.
    spans: f64,
}

/// Per GPU: busy time (compute and transfers apart), span and gaps. Busy times are summed
/// per GPU, then over GPUs in order, so that they do not depend on how the log interleaves
/// the ops of different GPUs.
fn gpu_times(run: &ColocationRun) -> GpuTimes {
    // (spans, compute busy, transfer busy) per GPU.
    type PerGpu = (Vec<(f64, f64)>, f64, f64);
    let mut per_gpu: BTreeMap<(usize, usize), PerGpu> = BTreeMap::new();
    for op in &run.ops {
        let g = per_gpu.entry((op.node, op.stage)).or_default();
        g.0.push((op.start_s, op.end_s));
        if is_compute(op.kind) {
            g.1 += op.end_s - op.start_s;
        } else {
            g.2 += op.end_s - op.start_s;
        }
    }
    let busy: f64 = per_gpu.values().map(|g| g.1).sum();
    let transfer: f64 = per_gpu.values().map(|g| g.2).sum();
    let (mut gaps, mut spans) = (0.0, 0.0);
    for (ops, _, _) in per_gpu.values_mut() {
        ops.sort_by(|a, b| a.0.total_cmp(&b.0));
        spans += ops.last().map_or(0.0, |l| l.1) - ops.first().map_or(0.0, |f| f.0);
        gaps += ops
            .windows(2)
            .map(|w| (w[1].0 - w[0].1).max(0.0))
            .sum::<f64>();
    }
    GpuTimes {
        busy,
        transfer,
        gaps,
        spans,
    }
}

/// Requests of the window that met the SLO, per second from the window's start to the last
/// response of its requests: the rate at which they were served, over a span that always
/// covers their service (a burst arriving within 20 ms is not a rate of hundreds per second).
fn goodput_rps(met: usize, window_requests: &[&TaskOutcome], window_start_s: f64) -> f64 {
    let last_response = window_requests
        .iter()
        .filter(|o| !o.dropped)
        .filter_map(|o| o.prefill_end_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = last_response - window_start_s;
    if span > 0.0 { met as f64 / span } else { 0.0 }
}

/// One task's term of the canonical objective: `dropped` for a dropped task; otherwise
/// `slo_miss` for a request whose prefill response exceeds τ_R (or that has none), plus
/// (completion − arrival) / τ_R once it has completed.
pub fn objective_term(o: &TaskOutcome, tau: f64, weights: &ColocationObjective) -> f64 {
    if o.dropped {
        return weights.dropped;
    }
    let mut term = 0.0;
    if !o.training
        && o.prefill_end_s
            .is_none_or(|e| !slo_met(e - o.arrival_s, tau))
    {
        term += weights.slo_miss;
    }
    if let Some(end) = o.end_s {
        term += (end - o.arrival_s) / tau.max(1e-12);
    }
    term
}

/// Forward, backward and decode compute; offloads, reloads and syncs are transfers.
pub fn is_compute(kind: OpKind) -> bool {
    matches!(kind, OpKind::Forward | OpKind::Backward | OpKind::Decode)
}

/// The steady-state window: from `warmup_s` after the first inference arrival to the last one.
pub fn steady_window(run: &ColocationRun, warmup_s: f64) -> (f64, f64) {
    let arrivals = run
        .outcomes
        .iter()
        .filter(|o| !o.training)
        .map(|o| o.arrival_s);
    let (first, last) = arrivals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if first.is_finite() {
        ((first + warmup_s).min(last), last)
    } else {
        (0.0, 0.0)
    }
}

/// Per used node: its active span, first op start to last op end (the released code's
/// denominator of throughput).
pub fn active_spans(run: &ColocationRun) -> BTreeMap<usize, f64> {
    let mut window: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    for op in &run.ops {
        let w = window
            .entry(op.node)
            .or_insert((f64::INFINITY, f64::NEG_INFINITY));
        w.0 = w.0.min(op.start_s);
        w.1 = w.1.max(op.end_s);
    }
    window.into_iter().map(|(n, (a, b))| (n, b - a)).collect()
}
