//! The decode-interference floor of `partial_floor`: what forwards and backwards on a node
//! cost the requests decoding there.
//!
//! A decoding request's group visits each stage once per iteration, and between two visits to
//! stage s it passes the S − 1 other stages, at least π = (S − 1) · (δ_0 + δ_1 · G) with G the
//! group's largest context. An op X of duration d that runs on stage s of the same node
//! between two of those visits (or between now and the first counted one) stretches that gap
//! from its floor to at least d, so the request completes at least (d − π)⁺ later than its
//! floor; several such ops add, each less π. Or X runs after the request's last counted visit
//! to s, and X's own task waits until then. Per op, the cheaper of the two alternatives at
//! every start time the op could take is a lower bound on what it adds.

use super::task_floor::TaskFloor;
use crate::colocate::engine::{DiscreteEventEngine, StageLoad};
use crate::colocate::setup::Setup;
use crate::plan::colocation::{TaskId, TaskKind};

/// A request decoding on a node, with its counted iterations' floor.
struct Decoding {
    /// Now plus the floor of its counted iterations: when its last one can end at the earliest.
    counted_end_s: f64,
    /// One stage of its last iteration, δ_0 + δ_1 · (its final context).
    last_stage_s: f64,
    /// What its group's passes over the other stages take at most in the floor (π).
    pass_s: f64,
}

/// A decoding request as one stage's interference sees it.
struct Decoder {
    /// The earliest its last counted iteration can start on the stage.
    last_visit_s: f64,
    /// π, as in `Decoding`.
    pass_s: f64,
}

/// An op (or a task's next op) that will run on the stage, with what delaying it costs its
/// own task.
struct Op {
    /// The earliest it can start.
    earliest_s: f64,
    /// Its duration at least.
    duration_s: f64,
    /// Its task's completion is at least its start + this (the op and every later one).
    rest_s: f64,
    /// The completion its task's term already counts, against which a later start is a wait;
    /// `None` for an op that cannot wait (running now).
    counted_end_s: Option<f64>,
}

/// Interference on one stage s of every node, in units of the objective: per node, (ops
/// queued there, the op running there), and the requests not placed yet (each goes to the
/// node where it costs least).
pub(super) struct StageInterference {
    /// Per node: what its queued ops and its placed tasks' later ops on the stage add (their
    /// tasks' waits included).
    pub queued: Vec<f64>,
    /// Per node: what its running op adds to the requests decoding there.
    pub running: Vec<f64>,
    /// What the requests not placed yet add, each on its cheapest node.
    pub unplaced: f64,
}

/// The interference of `engine`'s state on each stage (indexed by stage).
/// `decoding_at_floor[j]`: whether `partial_floor` counts request j's completion as now + its
/// counted decode floor (and shared decode), so that any delay of it adds to its term;
/// requests whose term is set by their idle-cluster floor instead are left out (they may
/// absorb some delay). With `with_unplaced`, the requests not placed yet count too.
pub(super) fn interference(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    decoding_at_floor: &[bool],
    with_unplaced: bool,
) -> Vec<StageInterference> {
    let cfg = &setup.config;
    let decodings: Vec<Vec<Decoding>> = (0..cfg.nodes)
        .map(|node| decodings(setup, floors, engine, decoding_at_floor, node))
        .collect();
    // Every stage's load of the nodes where requests decode (the others add nothing).
    let loads: Vec<Vec<StageLoad>> = decodings
        .iter()
        .enumerate()
        .map(|(node, on_node)| {
            if on_node.is_empty() {
                Vec::new()
            } else {
                (0..cfg.stages)
                    .map(|s| engine.stage_load(node, s))
                    .collect()
            }
        })
        .collect();
    (0..cfg.stages)
        .map(|stage| {
            on_stage(
                setup,
                floors,
                engine,
                &decodings,
                &loads,
                stage,
                with_unplaced,
            )
        })
        .collect()
}

/// The requests decoding on `node` that the interference counts.
fn decodings(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    decoding_at_floor: &[bool],
    node: usize,
) -> Vec<Decoding> {
    let cfg = &setup.config;
    let stages = cfg.stages as f64;
    let (d0, d1) = (cfg.latency.decode_base_s, cfg.latency.decode_per_token_s);
    let now = engine.now();
    let mut out = Vec::new();
    for group in engine.decode_groups(node) {
        // The group's context never exceeds every member's final context.
        let mut largest = 0.0;
        for &id in group {
            if let Some((prompt_tokens, output_tokens)) = setup.tasks[id.index()].inference_tokens()
            {
                largest += f64::from(prompt_tokens) + f64::from(output_tokens);
            }
        }
        let pass_s = (stages - 1.0) * (d0 + d1 * largest);
        for &id in group {
            // A request that never fits reloads before every iteration: its counted passes
            // exceed π, so it is left out.
            if !decoding_at_floor[id.index()] || floors[id.index()].never_fits {
                continue;
            }
            let Some((prompt_tokens, output_tokens)) = setup.tasks[id.index()].inference_tokens()
            else {
                continue;
            };
            let next = u64::from(engine.generated(id)) + 1;
            let output = u64::from(output_tokens);
            if next >= output {
                continue;
            }
            // Counted iterations next..output, each S · (δ_0 + δ_1 · (p + k)).
            let p = f64::from(prompt_tokens);
            let counted = (output - next) as f64;
            let contexts = counted * p + (next + output - 1) as f64 * counted / 2.0;
            out.push(Decoding {
                counted_end_s: now + stages * (counted * d0 + d1 * contexts),
                last_stage_s: d0 + d1 * (p + (output - 1) as f64),
                pass_s,
            });
        }
    }
    out
}

/// The interference on one stage (see `StageInterference`).
fn on_stage(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    decodings: &[Vec<Decoding>],
    loads: &[Vec<StageLoad>],
    stage: usize,
    with_unplaced: bool,
) -> StageInterference {
    let cfg = &setup.config;
    let stages = cfg.stages;
    let tau = setup.objective_unit_s();
    let now = engine.now();
    let outcomes = engine.outcomes();
    // The last counted iteration reaches the stage after its passes over the stages before.
    let decoders: Vec<Vec<Decoder>> = decodings
        .iter()
        .map(|on_node| {
            on_node
                .iter()
                .map(|d| Decoder {
                    last_visit_s: d.counted_end_s - (stages - stage) as f64 * d.last_stage_s,
                    pass_s: d.pass_s,
                })
                .collect()
        })
        .collect();
    let mut queued = vec![0.0; cfg.nodes];
    let mut running = vec![0.0; cfg.nodes];
    for node in 0..cfg.nodes {
        let (Some(load), false) = (loads[node].get(stage), decoders[node].is_empty()) else {
            continue;
        };
        if load.running.is_some() {
            let op = Op {
                earliest_s: now,
                duration_s: load.busy_until - now,
                rest_s: 0.0,
                counted_end_s: None,
            };
            running[node] = op_cost(&op, &decoders[node]) / tau;
        }
        for &(id, backward, duration_s) in &load.queued {
            let o = &outcomes[id.index()];
            if o.dropped || o.end_s.is_some() {
                continue;
            }
            let op = queued_op(setup, floors, engine, id, backward, duration_s, stage);
            queued[node] += op_cost(&op, &decoders[node]) / tau;
        }
        for op in later_ops(setup, floors, engine, &loads[node], stage) {
            queued[node] += op_cost(&op, &decoders[node]) / tau;
        }
    }
    let mut unplaced = 0.0;
    if with_unplaced {
        for (task, o) in setup.tasks.iter().zip(outcomes) {
            let TaskKind::Inference { prompt_tokens, .. } = task.kind else {
                continue;
            };
            if o.node.is_some() || o.dropped || o.end_s.is_some() {
                continue;
            }
            let forward = cfg.latency.forward_s(1, prompt_tokens);
            let floor = &floors[task.id.index()];
            let decode = floor.decode_after.first().copied().unwrap_or(0.0);
            // Placed at its arrival (or now), its forward reaches the stage after the ones
            // before; its term counts its floor from then.
            let placed_s = now.max(o.arrival_s);
            let op = Op {
                earliest_s: placed_s + stage as f64 * forward,
                duration_s: forward,
                rest_s: (stages - stage) as f64 * forward + decode,
                counted_end_s: Some(placed_s + floor.total_s()),
            };
            let cheapest = decoders
                .iter()
                .map(|on_node| op_cost(&op, on_node))
                .fold(f64::INFINITY, f64::min);
            if cheapest.is_finite() {
                unplaced += cheapest / tau;
            }
        }
    }
    StageInterference {
        queued,
        running,
        unplaced,
    }
}

/// The ops that tasks placed on a node (its stages' `loads`) will run on `stage` later, one
/// per task: a task whose op runs or waits on another stage (or runs on this one) reaches this
/// stage with its backward (training) or its forward (a request in prefill) after the ops
/// between, each at least its idle-cluster duration. A task queued on this stage already
/// counts there.
fn later_ops(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    loads: &[StageLoad],
    stage: usize,
) -> Vec<Op> {
    let cfg = &setup.config;
    let now = engine.now();
    let mut ops = Vec::new();
    for (current, load) in loads.iter().enumerate() {
        let running = load
            .running
            .map(|(id, backward)| (id, backward, load.busy_until - now, true));
        let queued = load.queued.iter().map(|&(id, b, d)| (id, b, d, false));
        for (id, backward, left_s, is_running) in running.into_iter().chain(queued) {
            if current == stage && !is_running {
                continue;
            }
            let o = &engine.outcomes()[id.index()];
            if o.dropped || o.end_s.is_some() {
                continue;
            }
            let task = &setup.tasks[id.index()];
            let (b, l) = task.forward_shape();
            let forward = cfg.latency.forward_s(b, l);
            let back = cfg.latency.backward_s(b, l);
            let last = cfg.stages - 1;
            // (the op on `stage` is a backward, the ops strictly between the current one and it)
            let next = if task.is_training() {
                match (backward, current) {
                    (false, c) => Some((
                        true,
                        (last - c) as f64 * forward + (last - stage) as f64 * back,
                    )),
                    (true, c) if c > stage => Some((true, (c - stage - 1) as f64 * back)),
                    (true, _) => None,
                }
            } else if !backward && current < stage {
                Some((false, (stage - current - 1) as f64 * forward))
            } else {
                None
            };
            let Some((on_backward, between_s)) = next else {
                continue;
            };
            let duration_s = if on_backward { back } else { forward };
            let mut op = queued_op(setup, floors, engine, id, on_backward, duration_s, stage);
            op.earliest_s = now + left_s + between_s;
            ops.push(op);
        }
    }
    ops
}

/// A queued forward or backward of task `id` on `stage`, with its task's counted completion
/// as `partial_floor` counts it (its time from submission at least its idle-cluster floor,
/// and a request's prefill at least its floor from arrival).
fn queued_op(
    setup: &Setup,
    floors: &[TaskFloor],
    engine: &DiscreteEventEngine<'_>,
    id: TaskId,
    backward: bool,
    duration_s: f64,
    stage: usize,
) -> Op {
    let cfg = &setup.config;
    let task = &setup.tasks[id.index()];
    let floor = &floors[id.index()];
    let o = &engine.outcomes()[id.index()];
    let now = engine.now();
    let since = now - o.arrival_s;
    let (b, l) = task.forward_shape();
    let forward = cfg.latency.forward_s(b, l);
    let later = (cfg.stages - stage) as f64;
    let (rest_s, counted) = if task.is_training() {
        let bw = cfg.latency.backward_s(b, l);
        let rest = if backward {
            (stage + 1) as f64 * bw
        } else {
            later * forward + cfg.stages as f64 * bw
        };
        (rest, since.max(floor.total_s()))
    } else {
        let decode = floor.decode_after.first().copied().unwrap_or(0.0);
        (later * forward + decode, since.max(floor.first_s) + decode)
    };
    Op {
        earliest_s: now,
        duration_s,
        rest_s,
        counted_end_s: Some(o.arrival_s + counted),
    }
}

/// The least an op adds over every start time it could take: the requests whose last
/// counted visit starts after the op ends pay (d − π)⁺ each, and the op's own task pays
/// how far its completion passes the one already counted.
fn op_cost(op: &Op, decoders: &[Decoder]) -> f64 {
    let wait = |start: f64| match op.counted_end_s {
        Some(end) => (start + op.rest_s - end).max(0.0),
        None => 0.0,
    };
    // (latest start at which the request still pays, what it pays).
    let mut paying: Vec<(f64, f64)> = decoders
        .iter()
        .map(|d| {
            (
                d.last_visit_s - op.duration_s,
                (op.duration_s - d.pass_s).max(0.0),
            )
        })
        .filter(|&(latest, pays)| pays > 0.0 && latest >= op.earliest_s)
        .collect();
    if paying.is_empty() {
        return 0.0;
    }
    let mut best = paying.iter().map(|p| p.1).sum::<f64>() + wait(op.earliest_s);
    if op.counted_end_s.is_none() {
        return best;
    }
    // Starting just after a request's latest start frees it and every request whose latest
    // start is no later.
    paying.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut still = 0.0;
    let mut i = 0;
    while i < paying.len() {
        let at = paying[i].0;
        let mut j = i;
        while j < paying.len() && paying[j].0 >= at {
            j += 1;
        }
        best = best.min(still + wait(at));
        for p in &paying[i..j] {
            still += p.1;
        }
        i = j;
    }
    best
}
