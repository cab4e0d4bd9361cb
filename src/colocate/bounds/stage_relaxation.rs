//! (b) The stage relaxation: each pipeline stage of every node as one fast machine, scheduled
//! by preemptive SRPT.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::task_floor::{TaskFloor, drops_possible, task_floors};
use crate::colocate::engine::EngineConfig;
use crate::colocate::setup::Setup;
use crate::plan::colocation::{Task, TaskKind};

/// A request's work on one stage as the stage relaxations count it.
pub(super) struct StageJob {
    /// Its arrival.
    pub(super) arrival_s: f64,
    /// Work on the stage: its forward plus its share of every decode iteration.
    pub(super) work_s: f64,
    /// The earliest its stage work can start: arrival + forwards on the stages before.
    pub(super) release_s: f64,
    /// What must follow its last work on the stage before it completes.
    pub(super) tail_s: f64,
}

/// A request's forward on one stage and its share there of every decode iteration,
/// Σ_k (δ_0 / batch_max + δ_1 · (prompt + k)), k = 0 … output − 1.
pub(super) fn request_stage_work(
    cfg: &EngineConfig,
    prompt_tokens: u32,
    output_tokens: u32,
) -> (f64, f64) {
    let share = cfg.latency.decode_base_s / cfg.batch_max.max(1) as f64;
    let forward = cfg.latency.forward_s(1, prompt_tokens);
    let out = f64::from(output_tokens);
    let decode = out * share
        + cfg.latency.decode_per_token_s
            * (out * f64::from(prompt_tokens) + out * (out - 1.0) / 2.0);
    (forward, decode)
}

/// The stage-`s` jobs of every request.
pub(super) fn stage_jobs(setup: &Setup, stage: usize) -> Vec<StageJob> {
    let cfg = &setup.config;
    let later = (cfg.stages - 1 - stage) as f64;
    setup
        .tasks
        .iter()
        .filter_map(|t| match t.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                let (forward, decode) = request_stage_work(cfg, prompt_tokens, output_tokens);
                let tail = if output_tokens == 0 {
                    later * forward
                } else {
                    later
                        * cfg
                            .latency
                            .decode_s(u64::from(prompt_tokens + output_tokens - 1))
                };
                Some(StageJob {
                    arrival_s: t.arrival_s,
                    work_s: forward + decode,
                    release_s: t.arrival_s + stage as f64 * forward,
                    tail_s: tail,
                })
            }
            TaskKind::Training { .. } => None,
        })
        .collect()
}

/// Σ C_j of preemptive SRPT on one machine of speed `speed` (optimal for 1|r_j, pmtn|ΣC_j).
pub(super) fn srpt_completion_sum(jobs: &[(f64, f64)], speed: f64) -> f64 {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[a].0.total_cmp(&jobs[b].0));
    // Min-heap on remaining time: non-negative floats order as their bit patterns.
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let (mut now, mut sum, mut next) = (0.0_f64, 0.0, 0);
    while next < order.len() || !heap.is_empty() {
        if heap.is_empty() {
            now = now.max(jobs[order[next]].0);
        }
        while next < order.len() && jobs[order[next]].0 <= now {
            heap.push(Reverse((jobs[order[next]].1 / speed).max(0.0).to_bits()));
            next += 1;
        }
        let Some(Reverse(bits)) = heap.pop() else {
            continue;
        };
        let left = f64::from_bits(bits);
        let until_next = if next < order.len() {
            jobs[order[next]].0 - now
        } else {
            f64::INFINITY
        };
        if left <= until_next {
            now += left;
            sum += now;
        } else {
            now += until_next;
            heap.push(Reverse((left - until_next).max(0.0).to_bits()));
        }
    }
    sum
}

/// (b) Per pipeline stage, the cluster's N GPUs of that stage as one machine of speed N:
/// every request's stage work (released after its forwards on earlier stages) scheduled by
/// preemptive SRPT, plus the tail that must follow on later stages; the best stage counts.
/// Certain misses and training floors are added. `None` when tasks can be dropped (a dropped
/// task takes its work out of the stage, which this sum does not model).
pub fn stage_relaxation(setup: &Setup) -> Option<f64> {
    if drops_possible(setup) {
        return None;
    }
    let tau = setup.objective_unit_s();
    let floors = task_floors(setup);
    let fixed: f64 = setup
        .tasks
        .iter()
        .zip(&floors)
        .map(|(t, f)| {
            if t.is_training() {
                f.total_s() / tau
            } else {
                f.certain_miss
            }
        })
        .sum();
    let speed = setup.config.nodes.max(1) as f64;
    let cfg = &setup.config;
    let requests: Vec<(&Task, &TaskFloor)> = setup
        .tasks
        .iter()
        .zip(&floors)
        .filter(|(t, _)| !t.is_training())
        .collect();
    let best = (0..cfg.stages)
        .map(|stage| {
            // With decode work: every request's stage work competes for the stage.
            let jobs = stage_jobs(setup, stage);
            let pairs: Vec<(f64, f64)> = jobs.iter().map(|j| (j.release_s, j.work_s)).collect();
            let rest: f64 = jobs.iter().map(|j| j.tail_s - j.arrival_s).sum();
            let with_decode = srpt_completion_sum(&pairs, speed) + rest;
            // Prefills only: the forwards compete; the request's own decode latency (which no
            // other work can shorten) and its later forwards follow its forward on the stage.
            let later = (cfg.stages - 1 - stage) as f64;
            let mut pairs = Vec::with_capacity(requests.len());
            let mut rest = 0.0;
            for (t, f) in &requests {
                let forward = f.first_s / cfg.stages as f64;
                pairs.push((t.arrival_s + stage as f64 * forward, forward));
                rest +=
                    later * forward + f.decode_after.first().copied().unwrap_or(0.0) - t.arrival_s;
            }
            let prefills = srpt_completion_sum(&pairs, speed) + rest;
            with_decode.max(prefills) / tau
        })
        .fold(0.0, f64::max);
    Some(fixed + best)
}
