//! The exact search's floor of a partial run: what every completion of the state the engine
//! has reached scores at least.

use super::interference::interference;
use super::task_floor::{TaskFloor, drops_possible};
use crate::colocate::engine::DiscreteEventEngine;
use crate::colocate::metrics::objective_term;
use crate::colocate::setup::Setup;
use crate::plan::colocation::{TaskId, slo_met};

/// A lower bound on the final objective of every completion of the run `engine` has reached:
/// finished tasks count what they scored; unfinished ones their floor from now (they cannot
/// finish before `now` plus the work they have left, nor before their idle-cluster time); and
/// the tasks whose op waits in (or runs on) a stage queue share that stage: their ops end no
/// earlier than in shortest-first order after the op running (`queue_floor`). With
/// `placed_only`, tasks not placed yet count nothing.
pub fn partial_floor(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    placed_only: bool,
) -> f64 {
    let tau = setup.objective_unit_s();
    let now = engine.now();
    let dropped = setup.spec.objective.dropped;
    let may_drop = drops_possible(setup);
    let slo_miss = setup.spec.objective.slo_miss;
    let miss = |r: f64| if slo_met(r, tau) { 0.0 } else { slo_miss };
    let mut terms = vec![0.0; setup.tasks.len()];
    let mut decoding_at_floor = vec![false; setup.tasks.len()];
    let shared = if may_drop {
        Vec::new()
    } else {
        shared_decode_s(setup, engine)
    };
    for ((((task, floor), o), term), at_floor) in setup
        .tasks
        .iter()
        .zip(floors)
        .zip(engine.outcomes())
        .zip(terms.iter_mut())
        .zip(decoding_at_floor.iter_mut())
    {
        *term = if o.dropped || o.end_s.is_some() {
            objective_term(o, tau, &setup.spec.objective)
        } else if o.node.is_none() {
            if placed_only {
                0.0
            } else {
                // Not placed yet: it is placed at now or later (a request at its arrival, a
                // training task when A-PP releases it or a deferral ends), and its clock runs
                // from its submission; from its placement, its idle-cluster floor.
                let waited = (now - o.arrival_s).max(0.0);
                let certain_miss = if task.is_training() {
                    0.0
                } else {
                    miss(waited + floor.first_s)
                };
                let t = certain_miss + (waited + floor.total_s()) / tau;
                if may_drop { t.min(dropped) } else { t }
            }
        } else {
            let since = now - o.arrival_s;
            let t = if task.is_training() {
                since.max(floor.total_s()) / tau
            } else {
                match o.prefill_end_s {
                    Some(p) => {
                        // The iteration of the next token may be in flight: count the ones
                        // after it.
                        let next = engine.generated(task.id) as usize + 1;
                        let left = floor.decode_after.get(next).copied().unwrap_or(0.0)
                            + shared.get(task.id.index()).copied().unwrap_or(0.0);
                        *at_floor = since + left >= floor.total_s();
                        miss(p - o.arrival_s) + (since + left).max(floor.total_s()) / tau
                    }
                    None => {
                        let ttft = since.max(floor.first_s);
                        let decode = floor.decode_after.first().copied().unwrap_or(0.0);
                        miss(ttft) + (ttft + decode) / tau
                    }
                }
            };
            if may_drop { t.min(dropped) } else { t }
        };
    }
    let mut sum: f64 = terms.iter().sum();
    if !may_drop {
        let cfg = &setup.config;
        let queues: Vec<f64> = (0..cfg.nodes)
            .map(|node| {
                (0..cfg.stages)
                    .map(|stage| queue_floor(setup, floors, engine, &terms, node, stage))
                    .sum()
            })
            .collect();
        // The queue floors and the interference of queued ops both charge the queued ops'
        // tasks for waiting: per node, the larger of the two. What a running op or a request
        // not placed yet adds is charged to decoding requests and unplaced ones only. One
        // stage for every node (each decoding request counts the ops of one stage).
        let mut best = queues.iter().sum::<f64>();
        for i in interference(setup, floors, engine, &decoding_at_floor, !placed_only) {
            let total = queues
                .iter()
                .zip(&i.queued)
                .zip(&i.running)
                .map(|((q, iq), ir)| q.max(*iq) + ir)
                .sum::<f64>()
                + i.unplaced;
            best = best.max(total);
        }
        sum += best;
        if !placed_only {
            sum += unplaced_training_floor(setup, engine, &terms);
        }
    }
    sum
}

/// Per request decoding in a group: what its counted decode iterations (those after the one
/// that may be in flight, as in `partial_floor`) take beyond its idle-cluster floor because
/// they serve the other members too. A group's members leave it only when they finish (or
/// are dropped, which the caller excludes), and each iteration serves all of them, so member
/// m, with rem_m counted iterations left and c_m tokens of context now, is in the first
/// rem_m of the group's counted iterations with at least c_m + j tokens in the j-th; each
/// such iteration costs δ_1 per token of every member on each of the S stages. Request r's
/// iterations then take at least S · δ_1 · Σ_{m ≠ r} Σ_{j=1}^{k} (c_m + j), k = min(rem_r,
/// rem_m), beyond its own floor. Indexed by task; 0 for every other task.
fn shared_decode_s(setup: &Setup, engine: &DiscreteEventEngine<'_>) -> Vec<f64> {
    let cfg = &setup.config;
    let per_token = cfg.stages as f64 * cfg.latency.decode_per_token_s;
    let mut shared = vec![0.0; setup.tasks.len()];
    if per_token <= 0.0 {
        return shared;
    }
    // (task, counted iterations left, context tokens now) of each member.
    let mut members: Vec<(usize, u64, f64)> = Vec::new();
    for node in 0..cfg.nodes {
        for group in engine.decode_groups(node) {
            if group.len() < 2 {
                continue;
            }
            members.clear();
            for &id in group {
                let Some((prompt_tokens, output_tokens)) =
                    setup.tasks[id.index()].inference_tokens()
                else {
                    continue;
                };
                let generated = engine.generated(id);
                let left = u64::from(output_tokens).saturating_sub(u64::from(generated) + 1);
                let context = f64::from(prompt_tokens) + f64::from(generated);
                members.push((id.index(), left, context));
            }
            for &(r, left_r, _) in &members {
                let mut extra = 0.0;
                for &(m, left_m, context_m) in &members {
                    if m == r {
                        continue;
                    }
                    let k = left_r.min(left_m) as f64;
                    extra += k * context_m + k * (k + 1.0) / 2.0;
                }
                shared[r] += per_token * extra;
            }
        }
    }
    shared
}

/// What the training tasks not placed yet add to their terms in `partial_floor` by sharing
/// stage 0: each runs its forward and its backward there, after now, on one of the N stage-0
/// GPUs. As one machine of speed N, shortest first from now, the k-th ends no earlier than
/// now + (the k shortest works) / N, and it completes no earlier (stage 0 runs its last
/// backward); its clock runs from its submission. The excess over their individual terms.
fn unplaced_training_floor(setup: &Setup, engine: &DiscreteEventEngine<'_>, terms: &[f64]) -> f64 {
    let now = engine.now();
    let latency = &setup.config.latency;
    let (mut works, mut individual, mut submitted) = (Vec::new(), 0.0, 0.0);
    for (task, o) in setup.tasks.iter().zip(engine.outcomes()) {
        if !task.is_training() || o.node.is_some() || o.dropped || o.end_s.is_some() {
            continue;
        }
        let (b, l) = task.forward_shape();
        works.push(latency.forward_s(b, l) + latency.backward_s(b, l));
        individual += terms[task.id.index()];
        submitted += o.arrival_s;
    }
    if works.len() < 2 {
        return 0.0;
    }
    works.sort_by(f64::total_cmp);
    let speed = setup.config.nodes.max(1) as f64;
    let (mut clock, mut ends) = (now, 0.0);
    for w in &works {
        clock += w / speed;
        ends += clock;
    }
    ((ends - submitted) / setup.objective_unit_s() - individual).max(0.0)
}

/// What the ops of one stage queue add to their tasks' terms in `partial_floor`. Each such task
/// has exactly one op pending (its ops run one after another), so the queues hold disjoint
/// tasks. The op running ends at `busy_until`; a queued op of duration d ends at least at
/// `busy_until + d` (per task: its miss and time), and the queued ops together end no earlier
/// than shortest-first after `busy_until` (their time parts summed: one machine, all released).
/// After its op a task still has its later pipeline ops and, for a request in prefill, its
/// decode floor.
fn queue_floor(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    terms: &[f64],
    node: usize,
    stage: usize,
) -> f64 {
    let cfg = &setup.config;
    let tau = setup.objective_unit_s();
    let slo_miss = setup.spec.objective.slo_miss;
    let load = engine.stage_load(node, stage);
    let later = (cfg.stages - 1 - stage) as f64;
    let outcomes = engine.outcomes();
    // (tail after the op, later forwards before the prefill ends) of a task's op.
    let after = |id: TaskId, backward: bool| -> (f64, f64) {
        let task = &setup.tasks[id.index()];
        let (b, l) = task.forward_shape();
        let f = cfg.latency.forward_s(b, l);
        if task.is_training() {
            let bw = cfg.latency.backward_s(b, l);
            if backward {
                (stage as f64 * bw, 0.0)
            } else {
                (later * f + cfg.stages as f64 * bw, 0.0)
            }
        } else {
            let decode = floors[id.index()]
                .decode_after
                .first()
                .copied()
                .unwrap_or(0.0);
            (later * f + decode, later * f)
        }
    };
    // (task, its op's duration on this stage, tail after it, later forwards before its
    // prefill ends).
    let mut jobs: Vec<(TaskId, f64, f64, f64)> = Vec::new();
    let running = load.running.map(|(id, backward)| {
        let (tail, to_prefill) = after(id, backward);
        (id, 0.0, tail, to_prefill)
    });
    for (id, backward, d) in &load.queued {
        let (tail, to_prefill) = after(*id, *backward);
        jobs.push((*id, *d, tail, to_prefill));
    }
    jobs.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let (mut individual, mut misses, mut own_times, mut spt_times) = (0.0, 0.0, 0.0_f64, 0.0);
    let mut clock = load.busy_until;
    for (id, d, tail, to_prefill) in running.into_iter().chain(jobs) {
        let o = &outcomes[id.index()];
        if o.dropped || o.end_s.is_some() {
            continue;
        }
        individual += terms[id.index()];
        let own_end = load.busy_until + d;
        clock += d;
        let is_request = !setup.tasks[id.index()].is_training();
        if is_request && !slo_met(own_end + to_prefill - o.arrival_s, tau) {
            misses += slo_miss;
        }
        own_times += (own_end + tail - o.arrival_s) / tau;
        spt_times += (clock + tail - o.arrival_s) / tau;
    }
    let shared = misses + own_times.max(spt_times);
    (shared - individual).max(0.0)
}
