//! Lower bounds on the canonical co-location objective that hold for every schedule the engine
//! can run, with any planner (DESIGN §10.3). The reported bound is the largest of:
//! (a) per-task floors, (b) single-machine relaxations of each pipeline stage, (c) an
//! interval-indexed LP relaxation. The validity argument of each is in `docs/colocation.md`;
//! the short form sits beside each function.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use good_lp::{Expression, ProblemVariables, constraint, variable};

use super::engine::DiscreteEventEngine;
use super::metrics::objective_term;
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskId, TaskKind};
use crate::solver::{self, Deadline, SolveStatus, SolverSettings};
use crate::spec::colocation::MemoryTimeout;

/// What every schedule gives a task at least, measured on an idle cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFloor {
    /// A request's prefill through every stage, S · Δ_F(1, prompt); a training task's S
    /// forwards and S backwards.
    pub first_s: f64,
    /// Per decode iteration k of a request: its full-pipeline latency with the request alone,
    /// S · (δ_0 + δ_1 · (prompt + k)); suffix sums, so `decode_after[k]` is the floor of
    /// iterations k.. (length output + 1).
    pub decode_after: Vec<f64>,
    /// `slo_miss` when the prefill alone exceeds τ_R (a certain miss), else 0.
    pub certain_miss: f64,
}

impl TaskFloor {
    /// The idle-cluster time from arrival (release) to completion.
    pub fn total_s(&self) -> f64 {
        self.first_s + self.decode_after.first().copied().unwrap_or(0.0)
    }
}

fn tau(setup: &Setup) -> f64 {
    (setup.spec.inference.slo_factor * setup.slo_base_s).max(1e-12)
}

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
                }
            }
            TaskKind::Training { tokens, batch } => TaskFloor {
                first_s: stages
                    * (cfg.latency.forward_s(batch, tokens)
                        + cfg.latency.backward_s(batch, tokens)),
                decode_after: vec![0.0],
                certain_miss: 0.0,
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
    let deadline = Deadline::after(spec.planners.ilp_time_limit_s).solving_with(settings);
    match solver::minimise(vars, objective, constraints, &[], &deadline, None) {
        Ok(solved) if solved.status == SolveStatus::Optimal => {
            LpBound::Value(solved.objective + training)
        }
        Ok(_) => LpBound::Unsolved("time limit".into()),
        Err(e) => LpBound::Unsolved(e.to_string()),
    }
}

/// One bound's value and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPart {
    pub name: &'static str,
    /// `None`: not computed on this instance, with why.
    pub value: Result<f64, String>,
    pub runtime_ms: f64,
}

/// Every bound, and the best.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    pub best: f64,
    pub source: &'static str,
    pub parts: Vec<BoundPart>,
}

/// Computes (a), (b) and (c) and keeps the largest. `horizon_s` bounds the LP's intervals
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
        timed(
            "interval lp",
            &|| match interval_lp(setup, horizon_s, settings) {
                LpBound::Value(v) => Ok(v),
                LpBound::TooLarge(n) => Err(format!(
                    "{n} variables (bound_lp_max_variables = {})",
                    setup.spec.planners.bound_lp_max_variables
                )),
                LpBound::Unsolved(why) => Err(why),
            },
        ),
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
    for (((task, floor), o), term) in setup
        .tasks
        .iter()
        .zip(floors)
        .zip(engine.outcomes())
        .zip(terms.iter_mut())
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
                        let left = floor.decode_after.get(next).copied().unwrap_or(0.0);
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
        for node in 0..setup.config.nodes {
            for stage in 0..setup.config.stages {
                sum += queue_floor(setup, floors, engine, &terms, node, stage);
            }
        }
    }
    sum
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
