//! Lower bounds on the canonical co-location objective that hold for every schedule the engine
//! can run, with any planner (DESIGN §10.3). The reported bound is the largest of:
//! (a) per-task floors, (b) single-machine relaxations of each pipeline stage, (c) an
//! interval-indexed LP relaxation, and the same three seeing GPU memory (DESIGN §11.2):
//! (d) floors of the tasks that never fit, (e) stage relaxations with training and forced
//! transfers, (f) an LP with memory capacity and offloads. The validity argument of each is in
//! `docs/colocation.md`; the short form sits beside each function.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use good_lp::{Expression, ProblemVariables, constraint, variable};

mod interference;
mod task_floor;

use self::interference::interference;
pub use self::task_floor::TaskFloor;
use self::task_floor::tau;
use super::engine::DiscreteEventEngine;
use super::metrics::objective_term;
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskId, TaskKind};
use crate::solver::{self, SolveStatus, SolverSettings};
use crate::spec::colocation::MemoryTimeout;

/// Per task: its floors (see `TaskFloor`).
pub fn task_floors(setup: &Setup) -> Vec<TaskFloor> {
    let cfg = &setup.config;
    let stages = cfg.stages as f64;
    let tau = tau(setup);
    setup
        .tasks
        .iter()
        .map(|task| match task.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                let prefill = stages * cfg.latency.forward_s(1, prompt_tokens);
                let mut decode_after = vec![0.0; output_tokens as usize + 1];
                for k in (0..output_tokens).rev() {
                    decode_after[k as usize] = decode_after[k as usize + 1]
                        + stages * cfg.latency.decode_s(u64::from(prompt_tokens + k));
                }
                TaskFloor {
                    first_s: prefill,
                    decode_after,
                    certain_miss: if prefill > tau + 1e-12 {
                        setup.spec.objective.slo_miss
                    } else {
                        0.0
                    },
                    never_fits: false,
                }
            }
            TaskKind::Training { tokens, batch } => TaskFloor {
                first_s: stages
                    * (cfg.latency.forward_s(batch, tokens)
                        + cfg.latency.backward_s(batch, tokens)),
                decode_after: vec![0.0],
                certain_miss: 0.0,
                never_fits: false,
            },
        })
        .collect()
}

/// Whether the engine can drop a task under this spec (memory timeouts drop instead of
/// offloading).
fn drops_possible(setup: &Setup) -> bool {
    setup.config.on_timeout == MemoryTimeout::Drop
}

/// (a) Σ over tasks of min(`dropped`, certain miss + idle-cluster time / τ_R).
pub fn request_floors(setup: &Setup) -> f64 {
    let tau = tau(setup);
    let dropped = setup.spec.objective.dropped;
    task_floors(setup)
        .iter()
        .map(|f| dropped.min(f.certain_miss + f.total_s() / tau))
        .sum()
}

/// A request's work on one stage as the stage relaxations count it.
struct StageJob {
    /// Its arrival.
    arrival_s: f64,
    /// Work on the stage: its forward plus its share of every decode iteration.
    work_s: f64,
    /// The earliest its stage work can start: arrival + forwards on the stages before.
    release_s: f64,
    /// What must follow its last work on the stage before it completes.
    tail_s: f64,
}

/// The stage-`s` jobs of every request.
fn stage_jobs(setup: &Setup, stage: usize) -> Vec<StageJob> {
    let cfg = &setup.config;
    let later = (cfg.stages - 1 - stage) as f64;
    let share = cfg.latency.decode_base_s / cfg.batch_max.max(1) as f64;
    setup
        .tasks
        .iter()
        .filter_map(|t| match t.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                let forward = cfg.latency.forward_s(1, prompt_tokens);
                let out = f64::from(output_tokens);
                // Σ_k (δ_0 / batch_max + δ_1 · (prompt + k)), k = 0 … output − 1.
                let decode = out * share
                    + cfg.latency.decode_per_token_s
                        * (out * f64::from(prompt_tokens) + out * (out - 1.0) / 2.0);
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
fn srpt_completion_sum(jobs: &[(f64, f64)], speed: f64) -> f64 {
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
    let tau = tau(setup);
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

/// Geometric interval ends t_0 < t_1 < … covering `[first, horizon]`.
fn geometric_points(first: f64, horizon: f64, ratio: f64) -> Vec<f64> {
    let mut points = vec![first.max(1e-6)];
    while *points.last().unwrap_or(&horizon) < horizon {
        let last = points[points.len() - 1];
        points.push(last * ratio);
    }
    points
}

/// How the LP bound ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LpBound {
    /// The LP's proven optimum: a lower bound on the canonical co-location objective.
    Value(f64),
    /// Its variable count is above `bound_lp_max_variables`.
    TooLarge(usize),
    /// The solver did not prove its optimum in time (an LP's incumbent bounds nothing).
    Unsolved(String),
}

/// (c) The interval-indexed LP: x_{j,i} = share of request j completing in (t_{i−1}, t_i]
/// (geometric t_i), d_j = dropped (when drops are possible). Σ_i x_{j,i} + d_j = 1; x_{j,i} = 0
/// where t_i is before the request's idle-cluster completion; per stage and interval, the work
/// of requests completed by t_i (their completion less their tail) fits in N · t_i. Each
/// completion costs at least (max(t_{i−1}, floor) − arrival) / τ_R.
pub fn interval_lp(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> LpBound {
    let tau = tau(setup);
    let cfg = &setup.config;
    let spec = &setup.spec;
    let floors = task_floors(setup);
    let requests: Vec<(usize, &Task)> = setup
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_training())
        .collect();
    if requests.is_empty() {
        return LpBound::Value(request_floors(setup));
    }
    let earliest: Vec<f64> = requests
        .iter()
        .map(|(k, t)| t.arrival_s + floors[*k].total_s())
        .collect();
    let first = earliest.iter().copied().fold(f64::INFINITY, f64::min);
    let points = geometric_points(first, horizon_s.max(first * 1.01), 1.25);
    let variables: usize = earliest
        .iter()
        .map(|&e| points.iter().filter(|&&t| t >= e).count().max(1) + 1)
        .sum();
    if variables > spec.planners.bound_lp_max_variables.max(0) as usize {
        return LpBound::TooLarge(variables);
    }
    let drops = drops_possible(setup);
    let mut vars = ProblemVariables::new();
    // Per request: (interval index, variable) pairs, and the drop variable.
    let mut x: Vec<Vec<(usize, good_lp::Variable)>> = Vec::new();
    let mut objective = Expression::from(0.0);
    let mut constraints = Vec::new();
    let last = points.len() - 1;
    for (r, (k, t)) in requests.iter().enumerate() {
        let e = earliest[r];
        let mut own = Vec::new();
        for (i, &end) in points.iter().enumerate() {
            // The last interval is open-ended: any completion past the horizon falls in it.
            if end < e && i < last {
                continue;
            }
            let v = vars.add(variable().min(0.0).max(1.0));
            let start = if i == 0 { e } else { points[i - 1].max(e) };
            objective += ((start - t.arrival_s) / tau + floors[*k].certain_miss) * v;
            own.push((i, v));
        }
        let mut sum: Expression = own.iter().map(|(_, v)| Expression::from(*v)).sum();
        if drops {
            let dv = vars.add(variable().min(0.0).max(1.0));
            objective += spec.objective.dropped * dv;
            sum += dv;
        }
        constraints.push(constraint!(sum == 1.0));
        x.push(own);
    }
    let nodes = cfg.nodes.max(1) as f64;
    for stage in 0..cfg.stages {
        let jobs = stage_jobs(setup, stage);
        for (i, &end) in points.iter().enumerate().take(last) {
            let done: Expression = x
                .iter()
                .zip(&jobs)
                .flat_map(|(own, job)| {
                    own.iter()
                        .filter(move |(ii, _)| *ii <= i)
                        .map(move |(_, v)| job.work_s * *v)
                })
                .sum();
            constraints.push(constraint!(done <= nodes * end));
        }
    }
    let training: f64 = setup
        .tasks
        .iter()
        .zip(&floors)
        .filter(|(t, _)| t.is_training())
        .map(|(_, f)| {
            if drops {
                spec.objective.dropped.min(f.total_s() / tau)
            } else {
                f.total_s() / tau
            }
        })
        .sum();
    let deadline = setup.deadline(settings);
    match solver::minimise(vars, objective, constraints, &[], &deadline, None) {
        Ok(solved) if solved.status == SolveStatus::Optimal => {
            LpBound::Value(solved.objective + training)
        }
        Ok(_) => LpBound::Unsolved("time limit".into()),
        Err(e) => LpBound::Unsolved(e.to_string()),
    }
}

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
fn memory_room_mib(setup: &Setup) -> f64 {
    (setup.config.threshold_mib - setup.config.weights_mib).max(0.0)
}

/// Per task: its `MemoryCost`.
pub fn memory_costs(setup: &Setup) -> Vec<MemoryCost> {
    let cfg = &setup.config;
    let room = memory_room_mib(setup);
    // The engine compares sums that carry rounding: only a need clearly above the room is
    // certain never to fit.
    let slack = 1e-6 * cfg.threshold_mib.abs().max(1.0);
    // Offloaded at `now + 1e-12 >= deadline`: the wait is a hair shorter than `max_wait_s`.
    let wait = (cfg.max_wait_s - 1e-9).max(0.0);
    let rate = cfg.offload_mib_per_s.max(1e-12);
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
    let tau = tau(setup);
    let rate = cfg.offload_mib_per_s.max(1e-12);
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
                if floor.first_s > tau + 1e-12 {
                    floor.certain_miss = setup.spec.objective.slo_miss;
                }
            }
            TaskKind::Training { .. } => floor.first_s += stages * cost.penalty_s,
        }
    }
    floors
}

/// (d) Per task, the least its term can be once memory is seen: `request_floors` with every
/// task that never fits offloaded on every stage (`memory_task_floors`), or, where memory
/// timeouts drop, dropped (its term is then exactly `dropped`).
pub fn memory_floors(setup: &Setup) -> f64 {
    let tau = tau(setup);
    let dropped = setup.spec.objective.dropped;
    let drops = drops_possible(setup);
    memory_task_floors(setup)
        .iter()
        .zip(memory_costs(setup))
        .map(|(f, cost)| {
            let term = f.certain_miss + f.total_s() / tau;
            match (drops, cost.forced) {
                (true, true) => dropped,
                (true, false) => term.min(dropped),
                (false, _) => term,
            }
        })
        .sum()
}

/// A task's work on one stage, as the memory-aware relaxations count it.
struct WorkJob {
    /// Submission: the objective counts from here.
    arrival_s: f64,
    /// The earliest its stage work can start.
    release_s: f64,
    /// GPU time on the stage: a request's forward and its share of every decode iteration, a
    /// training task's forward and backward, and the transfers of a task that never fits.
    work_s: f64,
    /// What must follow its last work on the stage before it completes.
    tail_s: f64,
}

/// The stage-`stage` work of every task (training included: its clock runs from its
/// submission), with the transfers of the tasks that never fit in memory. With
/// `decode_tails` (the floors of `memory_task_floors`), a request's work is its forward
/// alone and its own decode latency joins its tail (the prefills-only model of (b)).
fn work_jobs(
    setup: &Setup,
    stage: usize,
    costs: &[MemoryCost],
    decode_tails: Option<&[TaskFloor]>,
) -> Vec<WorkJob> {
    let cfg = &setup.config;
    let later = (cfg.stages - 1 - stage) as f64;
    let before = stage as f64;
    let share = cfg.latency.decode_base_s / cfg.batch_max.max(1) as f64;
    let rate = cfg.offload_mib_per_s.max(1e-12);
    let wait = (cfg.max_wait_s - 1e-9).max(0.0);
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
                    let forward = cfg.latency.forward_s(1, prompt_tokens);
                    let out = f64::from(output_tokens);
                    let decode = out * share
                        + cfg.latency.decode_per_token_s
                            * (out * f64::from(prompt_tokens) + out * (out - 1.0) / 2.0);
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
    let tau = tau(setup);
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

/// (f) The memory LP: the interval-indexed LP of (c) over every task (training too, from its
/// submission), each completing in one of three ways — on GPU memory at stage 0 (`held`),
/// offloaded at stage 0 (`moved`: after the memory wait, its transfers on stage 0's GPU; only
/// under `on_memory_timeout = "offload"`), or dropped (only under "drop") — with, per interval
/// end t_i and over the tasks completed by t_i: compute, Σ work ≤ N · t_i (as in (c), a moved
/// task's transfers included); memory, Σ need · hold ≤ N · M · t_i over the held tasks, M =
/// κ · GPU − weights, a held task holding its need from its stage-0 forward to its completion
/// (at least its idle-cluster time); and, for tasks above M / (k + 1), of which a GPU holds k
/// at most, Σ hold ≤ k · N · t_i. Every schedule is a 0/1 point whose LP cost is at most its
/// objective. A task that never fits is moved on every stage (or dropped).
pub fn memory_lp(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> LpBound {
    let tau = tau(setup);
    let cfg = &setup.config;
    let spec = &setup.spec;
    if setup.tasks.is_empty() {
        return LpBound::Value(0.0);
    }
    let floors = task_floors(setup);
    let forced_floors = memory_task_floors(setup);
    let costs = memory_costs(setup);
    let drops = drops_possible(setup);
    let slo_miss = spec.objective.slo_miss;
    // Per task, its ways of completing: (earliest completion, certain miss, moved at stage 0).
    let modes: Vec<Vec<(f64, f64, bool)>> = setup
        .tasks
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let (floor, cost) = (&floors[k], &costs[k]);
            if cost.forced {
                if drops {
                    return Vec::new();
                }
                let f = &forced_floors[k];
                return vec![(t.arrival_s + f.total_s(), f.certain_miss, true)];
            }
            let mut ways = vec![(t.arrival_s + floor.total_s(), floor.certain_miss, false)];
            if !drops {
                let miss =
                    if !t.is_training() && floor.first_s + cost.prefill_penalty_s > tau + 1e-12 {
                        slo_miss
                    } else {
                        0.0
                    };
                ways.push((t.arrival_s + floor.total_s() + cost.penalty_s, miss, true));
            }
            ways
        })
        .collect();
    let first = modes
        .iter()
        .flatten()
        .map(|m| m.0)
        .fold(f64::INFINITY, f64::min);
    if !first.is_finite() {
        // Every task never fits and is dropped.
        return LpBound::Value(memory_floors(setup));
    }
    let points = geometric_points(first, horizon_s.max(first * 1.01), 1.25);
    let last = points.len() - 1;
    let variables: usize = modes
        .iter()
        .map(|ways| {
            ways.iter()
                .map(|m| points.iter().filter(|&&t| t >= m.0).count().max(1))
                .sum::<usize>()
                + usize::from(drops)
        })
        .sum();
    if variables > spec.planners.bound_lp_max_variables.max(0) as usize {
        return LpBound::TooLarge(variables);
    }
    let mut vars = ProblemVariables::new();
    // Per task: (interval index, variable, moved at stage 0) triples.
    let mut x: Vec<Vec<(usize, good_lp::Variable, bool)>> = Vec::with_capacity(modes.len());
    let mut objective = Expression::from(0.0);
    let mut constraints = Vec::new();
    for (t, ways) in setup.tasks.iter().zip(&modes) {
        let mut own = Vec::new();
        let mut sum = Expression::from(0.0);
        for &(earliest, miss, moved) in ways {
            for (i, &end) in points.iter().enumerate() {
                // The last interval is open-ended: any completion past the horizon falls in it.
                if end < earliest && i < last {
                    continue;
                }
                let v = vars.add(variable().min(0.0).max(1.0));
                let start = if i == 0 {
                    earliest
                } else {
                    points[i - 1].max(earliest)
                };
                objective += ((start - t.arrival_s) / tau + miss) * v;
                sum += v;
                own.push((i, v, moved));
            }
        }
        if drops {
            let dv = vars.add(variable().min(0.0).max(1.0));
            objective += spec.objective.dropped * dv;
            sum += dv;
        }
        constraints.push(constraint!(sum == 1.0));
        x.push(own);
    }
    let nodes = cfg.nodes.max(1) as f64;
    // Every stage's work is the same (`work_jobs` counts a forward, a backward and a decode
    // share alike on each), and stage 0 also runs the transfers of the tasks moved there:
    // its rows imply the other stages'.
    let jobs = work_jobs(setup, 0, &costs, None);
    for (i, &end) in points.iter().enumerate().take(last) {
        let done: Expression = x
            .iter()
            .zip(&jobs)
            .zip(&costs)
            .flat_map(|((own, job), cost)| {
                own.iter()
                    .filter(move |(ii, _, _)| *ii <= i)
                    .map(move |(_, v, moved)| {
                        // `work_jobs` already holds a forced task's transfers; another task
                        // moved at stage 0 adds its own there.
                        let extra = if *moved && !cost.forced {
                            cost.transfer_s
                        } else {
                            0.0
                        };
                        (job.work_s + extra) * *v
                    })
            })
            .sum();
        constraints.push(constraint!(done <= nodes * end));
    }
    let room = memory_room_mib(setup) * (1.0 + 1e-9);
    for (i, &end) in points.iter().enumerate().take(last) {
        let held: Expression = x
            .iter()
            .zip(&floors)
            .zip(&costs)
            .flat_map(|((own, floor), cost)| {
                let area = cost.need_mib * floor.total_s();
                own.iter()
                    .filter(move |(ii, _, moved)| *ii <= i && !*moved)
                    .map(move |(_, v, _)| area * *v)
            })
            .sum();
        constraints.push(constraint!(held <= nodes * room * end));
    }
    // Tasks whose need exceeds room / (k + 1) fit at most k at a time on a GPU: their holds
    // on stage 0 complete by t_i fit in k · N · t_i (k = 1: such tasks hold it in turn).
    for k in 1..=EXCLUSIVE_ROWS {
        let big: Vec<bool> = costs
            .iter()
            .map(|c| !c.forced && c.need_mib * (k as f64 + 1.0) > room)
            .collect();
        if !big.contains(&true) {
            continue;
        }
        for (i, &end) in points.iter().enumerate().take(last) {
            let held: Expression = x
                .iter()
                .zip(&floors)
                .zip(&big)
                .filter(|(_, big)| **big)
                .flat_map(|((own, floor), _)| {
                    let hold = floor.total_s();
                    own.iter()
                        .filter(move |(ii, _, moved)| *ii <= i && !*moved)
                        .map(move |(_, v, _)| hold * *v)
                })
                .sum();
            constraints.push(constraint!(held <= k as f64 * nodes * end));
        }
    }
    let deadline = setup.deadline(settings);
    match solver::minimise(vars, objective, constraints, &[], &deadline, None) {
        Ok(solved) if solved.status == SolveStatus::Optimal => LpBound::Value(solved.objective),
        Ok(_) => LpBound::Unsolved("time limit".into()),
        Err(e) => LpBound::Unsolved(e.to_string()),
    }
}

/// The memory LP's rows for tasks of which at most k fit on a GPU at once, k = 1 … this.
const EXCLUSIVE_ROWS: usize = 3;

/// One bound's value and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPart {
    /// Which bound this is (`request floors`, `stage relaxation`, `interval lp`, `memory floors`,
    /// `memory stage relaxation` or `memory lp`).
    pub name: &'static str,
    /// `None`: not computed on this instance, with why.
    pub value: Result<f64, String>,
    /// Wall time spent computing it, in milliseconds (not part of snapshot output).
    pub runtime_ms: f64,
}

/// Every bound, and the best.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// The largest computed bound on the canonical objective (0 when none applies); a later part
    /// replaces an earlier one only when higher beyond rounding.
    pub best: f64,
    /// The `name` of the part that gave `best`.
    pub source: &'static str,
    /// Every bound in computation order, including those not computed on this instance.
    pub parts: Vec<BoundPart>,
}

/// Computes (a) to (f) and keeps the largest. `horizon_s` bounds the LPs' intervals
/// (completions past it share the last, open-ended interval).
pub fn best_bound(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> Bounds {
    let timed = |name: &'static str, f: &dyn Fn() -> Result<f64, String>| {
        let t0 = Instant::now();
        let value = f();
        BoundPart {
            name,
            value,
            runtime_ms: t0.elapsed().as_secs_f64() * 1000.0,
        }
    };
    let parts = vec![
        timed("request floors", &|| Ok(request_floors(setup))),
        timed("stage relaxation", &|| {
            stage_relaxation(setup)
                .ok_or_else(|| "tasks can be dropped (on_memory_timeout = \"drop\")".into())
        }),
        timed("interval lp", &|| {
            lp_part(setup, interval_lp(setup, horizon_s, settings))
        }),
        timed("memory floors", &|| Ok(memory_floors(setup))),
        timed("memory stage relaxation", &|| {
            memory_stage_relaxation(setup)
                .ok_or_else(|| "tasks can be dropped (on_memory_timeout = \"drop\")".into())
        }),
        timed("memory lp", &|| {
            lp_part(setup, memory_lp(setup, horizon_s, settings))
        }),
    ];
    let (best, source) = parts
        .iter()
        .filter_map(|p| p.value.as_ref().ok().map(|v| (*v, p.name)))
        // A later bound replaces an earlier one only when it is higher beyond rounding.
        .fold((0.0_f64, "request floors"), |acc, (v, n)| {
            if v > acc.0 + 1e-9 * acc.0.abs().max(1.0) {
                (v, n)
            } else {
                acc
            }
        });
    Bounds {
        best,
        source,
        parts,
    }
}

/// An LP bound's value, or why there is none (the `reason` of its part).
fn lp_part(setup: &Setup, bound: LpBound) -> Result<f64, String> {
    match bound {
        LpBound::Value(v) => Ok(v),
        LpBound::TooLarge(n) => Err(format!(
            "{n} variables (bound_lp_max_variables = {})",
            setup.spec.planners.bound_lp_max_variables
        )),
        LpBound::Unsolved(why) => Err(why),
    }
}

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
    let tau = tau(setup);
    let now = engine.now();
    let dropped = setup.spec.objective.dropped;
    let may_drop = drops_possible(setup);
    let slo_miss = setup.spec.objective.slo_miss;
    let miss = |r: f64| if r > tau + 1e-12 { slo_miss } else { 0.0 };
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
                let TaskKind::Inference {
                    prompt_tokens,
                    output_tokens,
                } = setup.tasks[id.index()].kind
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
    ((ends - submitted) / tau(setup) - individual).max(0.0)
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
    let tau = tau(setup);
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
        if is_request && own_end + to_prefill - o.arrival_s > tau + 1e-12 {
            misses += slo_miss;
        }
        own_times += (own_end + tail - o.arrival_s) / tau;
        spt_times += (clock + tail - o.arrival_s) / tau;
    }
    let shared = misses + own_times.max(spt_times);
    (shared - individual).max(0.0)
}
