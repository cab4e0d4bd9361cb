//! (e) The memory stage relaxation: the stage relaxation with training tasks and the transfers
//! memory forces.

use super::memory_cost::{MemoryCost, memory_costs, memory_task_floors, offload_rate};
use super::stage_relaxation::{request_stage_work, srpt_completion_sum};
use super::task_floor::{TaskFloor, drops_possible};
use crate::colocate::setup::Setup;
use crate::plan::colocation::TaskKind;

/// A task's work on one stage, as the memory-aware relaxations count it.
pub(super) struct WorkJob {
    /// Submission: the objective counts from here.
    pub(super) arrival_s: f64,
    /// The earliest its stage work can start.
    pub(super) release_s: f64,
    /// GPU time on the stage: a request's forward and its share of every decode iteration, a
    /// training task's forward and backward, and the transfers of a task that never fits.
    pub(super) work_s: f64,
    /// What must follow its last work on the stage before it completes.
    pub(super) tail_s: f64,
}

/// The stage-`stage` work of every task (training included: its clock runs from its
/// submission), with the transfers of the tasks that never fit in memory. With
/// `decode_tails` (the floors of `memory_task_floors`), a request's work is its forward
/// alone and its own decode latency joins its tail (the prefills-only model of (b)).
pub(super) fn work_jobs(
    setup: &Setup,
    stage: usize,
    costs: &[MemoryCost],
    decode_tails: Option<&[TaskFloor]>,
) -> Vec<WorkJob> {
    let cfg = &setup.config;
    let later = (cfg.stages - 1 - stage) as f64;
    let before = stage as f64;
    let rate = offload_rate(setup);
    let wait = cfg.least_memory_wait_s();
    setup
        .tasks
        .iter()
        .zip(costs)
        .enumerate()
        .map(|(k, (t, cost))| {
            // Forced: every stage waits, moves the data out and later brings it back.
            let forced = cost.forced;
            match t.kind {
                TaskKind::Inference {
                    prompt_tokens,
                    output_tokens,
                } => {
                    let (forward, decode) = request_stage_work(cfg, prompt_tokens, output_tokens);
                    let (step, extra, last_reload) = if forced {
                        let last = if output_tokens == 0 {
                            0.0
                        } else {
                            cfg.kv_mib_per_token * f64::from(prompt_tokens + output_tokens - 1)
                                / rate
                        };
                        (forward + cost.prefill_penalty_s, cost.transfer_s, last)
                    } else {
                        (forward, 0.0, 0.0)
                    };
                    let release_s = t.arrival_s + before * step + if forced { wait } else { 0.0 };
                    if let Some(floors) = decode_tails {
                        // The forward (and its move out) competes; the later forwards and the
                        // request's own decode follow it.
                        let decode = floors
                            .get(k)
                            .and_then(|f| f.decode_after.first())
                            .copied()
                            .unwrap_or(0.0);
                        let moved = if forced { cost.move_out_s } else { 0.0 };
                        return WorkJob {
                            arrival_s: t.arrival_s,
                            release_s,
                            work_s: forward + moved,
                            tail_s: later * step + decode,
                        };
                    }
                    let tail = if output_tokens == 0 {
                        later * step
                    } else {
                        later
                            * (cfg
                                .latency
                                .decode_s(u64::from(prompt_tokens + output_tokens - 1))
                                + last_reload)
                    };
                    WorkJob {
                        arrival_s: t.arrival_s,
                        release_s,
                        work_s: forward + decode + extra,
                        tail_s: tail,
                    }
                }
                TaskKind::Training { tokens, batch } => {
                    let f = cfg.latency.forward_s(batch, tokens);
                    let b = cfg.latency.backward_s(batch, tokens);
                    let (step, back, extra) = if forced {
                        let moved = cost.move_out_s;
                        (f + wait + moved, b + moved, cost.transfer_s)
                    } else {
                        (f, b, 0.0)
                    };
                    WorkJob {
                        arrival_s: t.arrival_s,
                        release_s: t.arrival_s + before * step + if forced { wait } else { 0.0 },
                        work_s: f + b + extra,
                        tail_s: before * back,
                    }
                }
            }
        })
        .collect()
}

/// (e) The stage relaxation of (b) with every task on the stage's machine of speed N —
/// training tasks too, whose time counts from their submission — and the transfers of the
/// tasks that never fit in memory as work: such a task is offloaded on every stage, and its
/// moves out and its reloads run on the stage's GPU, where nothing else runs meanwhile.
/// Preemptive SRPT of the works (with their releases) plus every tail; the best stage counts,
/// with the certain misses of `memory_task_floors`. `None` when tasks can be dropped (a
/// dropped task takes its work off the stage).
pub fn memory_stage_relaxation(setup: &Setup) -> Option<f64> {
    if drops_possible(setup) {
        return None;
    }
    let tau = setup.objective_unit_s();
    let costs = memory_costs(setup);
    let floors = memory_task_floors(setup);
    let misses: f64 = floors.iter().map(|f| f.certain_miss).sum();
    let speed = setup.config.nodes.max(1) as f64;
    let best = (0..setup.config.stages)
        .flat_map(|stage| [(stage, None), (stage, Some(floors.as_slice()))])
        .map(|(stage, tails)| {
            let jobs = work_jobs(setup, stage, &costs, tails);
            let pairs: Vec<(f64, f64)> = jobs.iter().map(|j| (j.release_s, j.work_s)).collect();
            let rest: f64 = jobs.iter().map(|j| j.tail_s - j.arrival_s).sum();
            (srpt_completion_sum(&pairs, speed) + rest) / tau
        })
        .fold(0.0, f64::max);
    Some(misses + best)
}
