//! What GPU memory costs each task, in the engine's accounting, and the task floors it forces:
//! the model every memory-aware bound (d), (e) and (f) shares.

use super::task_floor::{TaskFloor, drops_possible, task_floors};
use crate::colocate::setup::Setup;
use crate::plan::colocation::{TaskKind, slo_met};

/// What a task's memory costs it on one stage, in the engine's accounting
/// (`engine/memory.rs`): held from the start of its forward there (a request: its prompt KV
/// and the growth its decoding reserves, until it completes; a training task: its activations,
/// until its backward there ends), or, when the forward waited `max_wait_s` for memory,
/// moved to the host, which costs GPU time on that stage.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryCost {
    /// MiB held on a stage where the task is not offloaded.
    pub need_mib: f64,
    /// The need exceeds κ · GPU memory − weights: no stage ever admits the forward, so the
    /// task is offloaded on every stage (or dropped, with `on_memory_timeout = "drop"`).
    pub forced: bool,
    /// The move out to the host (the need without a request's decode growth, at the offload
    /// rate).
    pub move_out_s: f64,
    /// GPU time an offload on one stage adds to that stage: the move out, then every reload
    /// (a request's KV, growing by a token per iteration, before each decode iteration; a
    /// training task's activations once, before its backward).
    pub transfer_s: f64,
    /// What an offload on one stage adds to the task's own path: the memory wait, then
    /// `transfer_s`.
    pub penalty_s: f64,
    /// What it adds to a request's prefill: the wait and the move out.
    pub prefill_penalty_s: f64,
}

/// The memory a forward may still take on an empty stage, κ · GPU memory − weights.
pub(super) fn memory_room_mib(setup: &Setup) -> f64 {
    (setup.config.threshold_mib - setup.config.weights_mib).max(0.0)
}

/// MiB per second of host offload, kept above zero so that transfer times stay finite.
pub(super) fn offload_rate(setup: &Setup) -> f64 {
    setup.config.offload_mib_per_s.max(1e-12)
}

/// Per task: its `MemoryCost`.
pub fn memory_costs(setup: &Setup) -> Vec<MemoryCost> {
    let cfg = &setup.config;
    let room = memory_room_mib(setup);
    // The engine compares sums that carry rounding: only a need clearly above the room is
    // certain never to fit.
    let slack = 1e-6 * cfg.threshold_mib.abs().max(1.0);
    let wait = cfg.least_memory_wait_s();
    let rate = offload_rate(setup);
    let kv = cfg.kv_mib_per_token;
    setup
        .tasks
        .iter()
        .map(|task| {
            let (need, out_mib, back_mib) = match task.kind {
                TaskKind::Inference {
                    prompt_tokens,
                    output_tokens,
                } => {
                    let (p, o) = (f64::from(prompt_tokens), f64::from(output_tokens));
                    // Σ_{k<o} kv · (p + k): the KV each decode iteration streams back.
                    let reloads = kv * (o * p + o * (o - 1.0) / 2.0);
                    (kv * (p + o), kv * p, reloads)
                }
                TaskKind::Training { tokens, batch } => {
                    let a = cfg.activation_mib_per_token * f64::from(tokens) * f64::from(batch);
                    (a, a, a)
                }
            };
            let (move_out, transfer) = (out_mib / rate, (out_mib + back_mib) / rate);
            MemoryCost {
                need_mib: need,
                forced: need > room + slack,
                move_out_s: move_out,
                transfer_s: transfer,
                penalty_s: wait + transfer,
                prefill_penalty_s: wait + move_out,
            }
        })
        .collect()
}

/// `task_floors` with what memory forces: a task whose need never fits is offloaded on every
/// stage, so each of its S forwards first waits `max_wait_s` and moves its data out, and each
/// of its decode iterations (or its backwards) first brings the data back on every stage. With
/// `on_memory_timeout = "drop"` such a task is dropped and its floors stay as they were (the
/// objective charges `dropped`, which `memory_floors` counts). Each entry is still a floor of
/// what is left of its task from any point of a run, so the ilp's `partial_floor` may take
/// these in place of `task_floors`.
pub fn memory_task_floors(setup: &Setup) -> Vec<TaskFloor> {
    let mut floors = task_floors(setup);
    if drops_possible(setup) {
        return floors;
    }
    let cfg = &setup.config;
    let stages = cfg.stages as f64;
    let tau = setup.objective_unit_s();
    let rate = offload_rate(setup);
    let kv = cfg.kv_mib_per_token;
    for ((task, floor), cost) in setup
        .tasks
        .iter()
        .zip(floors.iter_mut())
        .zip(memory_costs(setup))
    {
        if !cost.forced {
            continue;
        }
        floor.never_fits = true;
        match task.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                floor.first_s += stages * cost.prefill_penalty_s;
                let mut after = 0.0;
                for k in (0..output_tokens).rev() {
                    after += stages * kv * f64::from(prompt_tokens + k) / rate;
                    floor.decode_after[k as usize] += after;
                }
                if !slo_met(floor.first_s, tau) {
                    floor.certain_miss = setup.spec.objective.slo_miss;
                }
            }
            TaskKind::Training { .. } => floor.first_s += stages * cost.penalty_s,
        }
    }
    floors
}
