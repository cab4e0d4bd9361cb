//! `ilp`: a time-indexed MILP over the same tasks (DESIGN §6.3). Binaries place each op (a
//! forward or backward on a stage) of each task on a node at a slot of `ilp_slot_s`.
//!
//! It is a relaxation of the engine, so its optimum (or best bound) is a lower bound of every
//! planner's objective. Every engine schedule maps to a feasible point — each op at slot
//! ⌊start / δ⌋ with its duration rounded **down** to slots (⌊a + b⌋ ≥ ⌊a⌋ + ⌊b⌋ keeps stage
//! capacity and pipeline order), arrivals rounded down — at an objective no larger than the
//! engine's: left out are decode iterations (each request's completion is bounded below by its
//! own decode time instead), memory and its waits, offloads and syncs, and A-PP releases (a
//! training task's term is bounded below by its own processing time); any task may be dropped
//! at the `dropped` cost; response times use the real arrival. The horizon covers the longest
//! run of the planners it is compared with, so their schedules are all inside the model.

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};

use super::discrete_event::{Assignment, DiscreteEventEngine, Dispatcher, View};
use super::planner::{ColocationPlanner, PlannerRun};
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskId, TaskKind};
use crate::plan::error::PlanningError;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::{self, Deadline, SolveError, SolveStatus};

/// The `ilp` planner: the relaxation's bound, and the engine's replay of its solution.
pub struct Ilp;

impl ColocationPlanner for Ilp {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::BoundReference
    }

    fn run(&self, setup: &Setup, horizon_s: f64) -> Result<PlannerRun, PlanningError> {
        let spec = &setup.spec;
        let outcome = solve(setup, horizon_s).map_err(PlanningError::Solver)?;
        Ok(match outcome {
            IlpOutcome::TooLarge { binaries } => PlannerRun::Skipped {
                reason: format!(
                    "too large ({binaries} binaries; ilp_max_binaries = {})",
                    spec.planners.ilp_max_binaries
                ),
            },
            IlpOutcome::NoIncumbent => PlannerRun::NoSolution {
                reason: "time limit before any incumbent".into(),
            },
            IlpOutcome::Solved {
                bound,
                optimal,
                nodes,
                starts,
            } => {
                let mut replay = FixedNodes {
                    nodes,
                    starts,
                    next: 0,
                };
                PlannerRun::Ran {
                    run: DiscreteEventEngine::new(&setup.config, &setup.tasks).run(&mut replay),
                    status: if optimal {
                        PlanStatus::Optimal
                    } else {
                        PlanStatus::TimeLimit
                    },
                    bound,
                }
            }
        })
    }
}

/// The replay of the ILP's solution: each task on the MILP's node, its ops ranked on every
/// stage by the MILP's start slot (a task the MILP dropped goes round-robin, last: the engine
/// runs it rather than drop it).
struct FixedNodes {
    nodes: Vec<Option<usize>>,
    starts: Vec<Option<f64>>,
    next: usize,
}

impl Dispatcher for FixedNodes {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let n = self
            .nodes
            .get(task.id.index())
            .copied()
            .flatten()
            .unwrap_or_else(|| {
                self.next += 1;
                self.next % view.config.nodes.max(1)
            });
        Assignment::Node(n)
    }

    fn rank(&self, task: TaskId) -> Option<f64> {
        Some(
            self.starts
                .get(task.index())
                .copied()
                .flatten()
                .unwrap_or(f64::MAX),
        )
    }
}

/// The ILP's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum IlpOutcome {
    /// The model would have more binaries than `ilp_max_binaries`.
    TooLarge { binaries: usize },
    Solved {
        /// Proven lower bound of the canonical objective.
        bound: Option<f64>,
        optimal: bool,
        /// Node of each task in the MILP's solution (`None`: dropped), for the replay.
        nodes: Vec<Option<usize>>,
        /// Start slot of each task's first op, for the replay's order on each stage.
        starts: Vec<Option<f64>>,
    },
    /// The solver stopped before any incumbent (no bound either).
    NoIncumbent,
}

struct OpVar {
    task: usize,
    node: usize,
    /// Index of the op within its task: forwards 0..S, then backwards S..2S (last stage first).
    op: usize,
    slot: usize,
    var: Variable,
}

/// Solves the model with horizon `horizon_s` (at least the longest compared schedule).
pub fn solve(s: &Setup, horizon_s: f64) -> Result<IlpOutcome, String> {
    let spec = &s.spec;
    let cfg = &s.config;
    let delta = spec.planners.ilp_slot_s;
    let tau = spec.inference.slo_factor * s.slo_base_s;
    let w = &spec.objective;
    let stages = cfg.stages;
    let slots = (horizon_s / delta).ceil() as usize + 1;
    // Op durations in slots (rounded down) and the ops of each task.
    let ops_of = |k: usize| -> Vec<usize> {
        let t = &s.tasks[k];
        let (b, l) = t.forward_shape();
        let f = (cfg.latency.forward_s(b, l) / delta).floor() as usize;
        let mut v = vec![f; stages];
        if t.is_training() {
            let bw = (cfg.latency.backward_s(b, l) / delta).floor() as usize;
            v.extend(std::iter::repeat_n(bw, stages));
        }
        v
    };
    let binaries: usize = (0..s.tasks.len())
        .map(|k| ops_of(k).len() * cfg.nodes * slots)
        .sum::<usize>()
        + s.tasks.len() * (cfg.nodes + 2);
    if binaries > spec.planners.ilp_max_binaries.max(0) as usize {
        return Ok(IlpOutcome::TooLarge { binaries });
    }
    let mut vars = ProblemVariables::new();
    let mut ops: Vec<OpVar> = Vec::new();
    let mut y = vec![Vec::new(); s.tasks.len()]; // y[k][n]: task on node n
    let mut dropped = Vec::new();
    let mut miss = Vec::new();
    for (k, t) in s.tasks.iter().enumerate() {
        let release = if t.is_training() {
            0
        } else {
            (t.arrival_s / delta).floor() as usize
        };
        let durs = ops_of(k);
        for n in 0..cfg.nodes {
            y[k].push(vars.add(variable().binary()));
            for (op, d) in durs.iter().enumerate() {
                for slot in release..slots {
                    if slot + d > slots {
                        break;
                    }
                    ops.push(OpVar {
                        task: k,
                        node: n,
                        op,
                        slot,
                        var: vars.add(variable().binary()),
                    });
                }
            }
        }
        dropped.push(vars.add(variable().binary()));
        miss.push(vars.add(variable().binary()));
    }
    let mut objective = Expression::from(0.0);
    let mut constraints = Vec::new();
    let start_of = |k: usize, op: usize| -> Expression {
        ops.iter()
            .filter(|o| o.task == k && o.op == op)
            .map(|o| o.slot as f64 * o.var)
            .sum()
    };
    for (k, t) in s.tasks.iter().enumerate() {
        let durs = ops_of(k);
        let placed: Expression = y[k].iter().map(|v| Expression::from(*v)).sum();
        constraints.push(constraint!(placed + dropped[k] == 1.0));
        // Each op of a placed task starts exactly once, on the task's node.
        for (n, on_node) in y[k].iter().enumerate() {
            for op in 0..durs.len() {
                let on: Expression = ops
                    .iter()
                    .filter(|o| o.task == k && o.node == n && o.op == op)
                    .map(|o| Expression::from(o.var))
                    .sum();
                constraints.push(constraint!(on == *on_node));
            }
        }
        // Pipeline order: op j + 1 starts after op j ends (only binds when placed).
        for (op, d) in durs.iter().enumerate().take(durs.len().saturating_sub(1)) {
            let big = slots as f64;
            constraints.push(constraint!(
                start_of(k, op + 1) >= start_of(k, op) + *d as f64 - big * dropped[k]
            ));
        }
        objective += w.dropped * dropped[k];
        match t.kind {
            TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            } => {
                // End of the last forward, in seconds: δ · (start slot + duration).
                let end = delta * start_of(k, stages - 1)
                    + (delta * durs[stages - 1] as f64) * (1.0 - dropped[k]);
                let decode: f64 = (0..output_tokens)
                    .map(|i| stages as f64 * cfg.latency.decode_s((prompt_tokens + i) as u64))
                    .sum();
                let horizon = slots as f64 * delta;
                // miss ≥ (R − τ) / horizon, R measured from the real arrival; a dropped request
                // pays `dropped` instead.
                constraints.push(constraint!(
                    horizon * miss[k] >= end.clone() - t.arrival_s - tau - horizon * dropped[k]
                ));
                objective += w.slo_miss * miss[k];
                // (completion − arrival) / τ ≥ (prefill end + own decode time − arrival) / τ,
                // counted only when placed: the constant parts are multiplied by (1 − dropped).
                objective += end / tau;
                objective += ((decode - t.arrival_s) / tau) * (1.0 - dropped[k]);
            }
            TaskKind::Training { .. } => {
                let own: f64 = durs.iter().map(|&d| d as f64 * delta).sum();
                objective += (own / tau) * (1.0 - dropped[k]);
            }
        }
    }
    // One op per stage per slot.
    for n in 0..cfg.nodes {
        for stage in 0..stages {
            for slot in 0..slots {
                let using: Expression = ops
                    .iter()
                    .filter(|o| {
                        let durs = ops_of(o.task);
                        let on_stage = if o.op < stages {
                            o.op
                        } else {
                            2 * stages - 1 - o.op
                        };
                        o.node == n
                            && on_stage == stage
                            && o.slot <= slot
                            && slot < o.slot + durs[o.op].max(1)
                            && durs[o.op] > 0
                    })
                    .map(|o| Expression::from(o.var))
                    .sum();
                constraints.push(constraint!(using <= 1.0));
            }
        }
    }
    let first_ops: Vec<&OpVar> = ops.iter().filter(|o| o.op == 0).collect();
    let keep: Vec<Variable> = y
        .iter()
        .flatten()
        .copied()
        .chain(first_ops.iter().map(|o| o.var))
        .collect();
    match solver::minimise(
        vars,
        objective,
        constraints,
        &keep,
        &Deadline::after(spec.planners.ilp_time_limit_s),
        None,
    ) {
        Ok(solved) => {
            let nodes = (0..s.tasks.len())
                .map(|k| (0..cfg.nodes).find(|&n| solved.values[k * cfg.nodes + n] > 0.5))
                .collect();
            let offset = s.tasks.len() * cfg.nodes;
            let mut starts = vec![None; s.tasks.len()];
            for (o, v) in first_ops.iter().zip(&solved.values[offset..]) {
                if *v > 0.5 {
                    starts[o.task] = Some(o.slot as f64);
                }
            }
            Ok(IlpOutcome::Solved {
                bound: solved.bound,
                optimal: solved.status == SolveStatus::Optimal,
                nodes,
                starts,
            })
        }
        Err(SolveError::NoIncumbent) => Ok(IlpOutcome::NoIncumbent),
        Err(e) => Err(e.to_string()),
    }
}
