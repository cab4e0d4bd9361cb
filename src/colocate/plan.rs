//! Planning a co-location workload: build the task set, run each planner on the one engine,
//! verify every run, measure it, and report (DESIGN §6, §7).

use std::time::Instant;

use serde::Serialize;

use super::engine::{Dispatcher, Engine, EngineConfig, Run};
use super::lemix::Lemix;
use super::metrics::{self, Metrics};
use super::mix_luf::MixLuf;
use super::mix_rr::MixRr;
use super::separate::Separate;
use super::trace::TraceRequest;
use super::verify::verify_run;
use super::workload::{self, Task, TaskKind};
use crate::preempt::Status;
use crate::spec::ColocationSpec;
use crate::spec::colocation::COLOCATION_PLANNERS;
use crate::topology::Cluster;

/// One task's outcome, in the JSON contract's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskEvent {
    pub task: u32,
    pub kind: &'static str,
    pub node: Option<usize>,
    pub arrival_s: f64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// Inference: R ≤ τ_R; null for training.
    pub slo_met: Option<bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dropped: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offloaded: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerReport {
    pub name: String,
    pub status: Status,
    pub objective: Option<f64>,
    pub gap: Option<f64>,
    pub gap_is_bound: bool,
    pub bound: Option<f64>,
    pub runtime_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub metrics: Option<Metrics>,
    pub events: Vec<TaskEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColocationReport {
    pub schema_version: u32,
    pub kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    pub seed: u64,
    pub nodes: usize,
    pub stages: usize,
    /// τ_R in seconds.
    pub slo_s: f64,
    pub planners: Vec<PlannerReport>,
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
    fn assign(&mut self, view: &super::engine::View<'_>, task: &Task) -> super::engine::Assignment {
        let n = self
            .nodes
            .get(task.id.index())
            .copied()
            .flatten()
            .unwrap_or_else(|| {
                self.next += 1;
                self.next % view.config.nodes.max(1)
            });
        super::engine::Assignment::Node(n)
    }

    fn rank(&self, task: super::workload::TaskId) -> Option<f64> {
        Some(
            self.starts
                .get(task.index())
                .copied()
                .flatten()
                .unwrap_or(f64::MAX),
        )
    }
}

fn last_end(run: &Run) -> f64 {
    run.ops.iter().map(|o| o.end_s).fold(0.0, f64::max)
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ColocationError {
    #[error("the co-location ILP failed: {reason}")]
    Solver { reason: String },
    #[error("unknown planner `{0}`")]
    UnknownPlanner(String),
    #[error("the verifier rejected the run of `{planner}`: {reason}")]
    Verification { planner: String, reason: String },
}

/// Everything a run needs, derived once from the specs.
pub struct Setup {
    pub config: EngineConfig,
    pub tasks: Vec<Task>,
    pub slo_base_s: f64,
    pub mean_prompt: f64,
    pub seed: u64,
}

pub fn setup(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    seed: Option<u64>,
) -> Setup {
    let seed = seed.unwrap_or(spec.planners.seed);
    let tasks = workload::tasks(spec, trace, seed);
    let prompts: Vec<f64> = tasks
        .iter()
        .filter_map(|t| match t.kind {
            TaskKind::Inference { prompt_tokens, .. } => Some(prompt_tokens as f64),
            TaskKind::Training { .. } => None,
        })
        .collect();
    let mean_prompt = if prompts.is_empty() {
        1.0
    } else {
        prompts.iter().sum::<f64>() / prompts.len() as f64
    };
    let nodes = spec
        .nodes
        .map_or(cluster.servers.len(), |n| n.max(1) as usize);
    let gpu_memory = cluster
        .servers
        .first()
        .map_or(0, |s| cluster.types[s.type_id.index()].gpu_memory_mib) as f64;
    let config = EngineConfig::new(spec, nodes, gpu_memory, mean_prompt);
    let slo_base_s = metrics::slo_base_s(config.stages, spec.model.eta_forward, mean_prompt);
    Setup {
        config,
        tasks,
        slo_base_s,
        mean_prompt,
        seed,
    }
}

/// A fresh planner by name; `None` for `ilp`, which has no dispatcher.
pub fn dispatcher(name: &str, spec: &ColocationSpec, s: &Setup) -> Option<Box<dyn Dispatcher>> {
    let c = &s.config;
    match name {
        "separate" => Some(Box::new(Separate::new(
            c.nodes,
            spec.planners.separate_split,
            spec.planners.separate_sync_every.max(1) as u64,
        ))),
        "mix-rr" => Some(Box::new(MixRr::default())),
        "mix-luf" => Some(Box::new(MixLuf)),
        "lemix" => Some(Box::new(Lemix::new(
            spec.lemix.clone(),
            c.latency,
            c.nodes,
            c.stages,
            spec.inference.slo_factor * s.slo_base_s,
            s.mean_prompt.round() as u32,
        ))),
        _ => None,
    }
}

/// Runs one named planner on the engine and verifies the run.
pub fn run_planner(
    name: &str,
    spec: &ColocationSpec,
    s: &Setup,
) -> Result<Option<(Run, f64)>, ColocationError> {
    let Some(mut d) = dispatcher(name, spec, s) else {
        return Ok(None);
    };
    let t0 = Instant::now();
    let run = Engine::new(&s.config, &s.tasks).run(d.as_mut());
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    verify_run(&s.config, &s.tasks, &run).map_err(|reason| ColocationError::Verification {
        planner: name.into(),
        reason,
    })?;
    Ok(Some((run, ms)))
}

pub fn plan(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    planners: Option<&[String]>,
    seed: Option<u64>,
) -> Result<ColocationReport, ColocationError> {
    let names: Vec<String> = planners.map_or_else(|| spec.planners.run.clone(), <[String]>::to_vec);
    if let Some(bad) = names
        .iter()
        .find(|n| !COLOCATION_PLANNERS.contains(&n.as_str()))
    {
        return Err(ColocationError::UnknownPlanner(bad.clone()));
    }
    let s = setup(cluster, spec, trace, seed);
    let tau = spec.inference.slo_factor * s.slo_base_s;
    // (name, run, ms, status, bound)
    let mut runs: Vec<(String, Run, f64, Status, Option<f64>)> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    // Heuristics first: the ILP's horizon must cover their schedules.
    for name in names.iter().filter(|n| n.as_str() != "ilp") {
        if let Some((run, ms)) = run_planner(name, spec, &s)? {
            runs.push((name.clone(), run, ms, Status::Heuristic, None));
        }
    }
    let mut bound: Option<f64> = None;
    if names.iter().any(|n| n == "ilp") {
        let horizon = match runs.iter().map(|r| last_end(&r.1)).reduce(f64::max) {
            Some(h) => h,
            None => run_planner("mix-rr", spec, &s)?.map_or(0.0, |(r, _)| last_end(&r)),
        };
        let t0 = Instant::now();
        let outcome = super::ilp::solve(spec, &s, horizon)
            .map_err(|reason| ColocationError::Solver { reason })?;
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        match outcome {
            super::ilp::IlpOutcome::TooLarge { binaries } => skipped.push((
                "ilp".into(),
                format!(
                    "too large ({binaries} binaries; ilp_max_binaries = {})",
                    spec.planners.ilp_max_binaries
                ),
            )),
            super::ilp::IlpOutcome::NoIncumbent => {
                skipped.push(("ilp".into(), "time limit before any incumbent".into()))
            }
            super::ilp::IlpOutcome::Solved {
                bound: b,
                optimal,
                nodes,
                starts,
            } => {
                let mut replay = FixedNodes {
                    nodes,
                    starts,
                    next: 0,
                };
                let run = Engine::new(&s.config, &s.tasks).run(&mut replay);
                verify_run(&s.config, &s.tasks, &run).map_err(|reason| {
                    ColocationError::Verification {
                        planner: "ilp".into(),
                        reason,
                    }
                })?;
                let status = if optimal {
                    Status::Optimal
                } else {
                    Status::TimeLimit
                };
                bound = b;
                runs.push(("ilp".into(), run, ms, status, b));
            }
        }
    }
    let mut reports = Vec::new();
    for name in &names {
        if let Some((_, reason)) = skipped.iter().find(|(n, _)| n == name) {
            reports.push(PlannerReport {
                name: name.clone(),
                status: Status::Skipped,
                objective: None,
                gap: None,
                gap_is_bound: false,
                bound: None,
                runtime_ms: 0.0,
                skipped: Some(reason.clone()),
                metrics: None,
                events: Vec::new(),
            });
            continue;
        }
        let Some((_, run, ms, status, own_bound)) = runs.iter().find(|r| r.0 == *name) else {
            continue;
        };
        let m = metrics::compute(
            run,
            &s.tasks,
            s.config.nodes,
            s.config.stages,
            s.slo_base_s,
            spec.inference.slo_factor,
            &spec.objective,
        );
        super::verify::verify_metrics(run, &m, tau, &spec.objective).map_err(|reason| {
            ColocationError::Verification {
                planner: name.clone(),
                reason,
            }
        })?;
        let events = run
            .outcomes
            .iter()
            .map(|o| TaskEvent {
                task: o.task.0,
                kind: if o.training { "training" } else { "inference" },
                node: o.node,
                arrival_s: o.arrival_s,
                start_s: o.start_s,
                end_s: o.end_s,
                slo_met: (!o.training).then(|| {
                    !o.dropped
                        && o.prefill_end_s
                            .is_some_and(|e| e - o.arrival_s <= tau + 1e-12)
                }),
                dropped: o.dropped,
                offloaded: o.offloaded,
            })
            .collect();
        reports.push(PlannerReport {
            name: name.clone(),
            status: *status,
            objective: Some(m.objective),
            gap: None,
            gap_is_bound: false,
            bound: *own_bound,
            runtime_ms: *ms,
            skipped: None,
            metrics: Some(m),
            events,
        });
    }
    // gap against the ILP's lower bound; exact only when the replayed ILP schedule attains it.
    if let Some(b) = bound {
        let attained = reports
            .iter()
            .find(|r| r.name == "ilp")
            .and_then(|r| r.objective)
            .is_some_and(|o| (o - b).abs() <= 1e-9 * b.abs().max(1.0));
        for r in &mut reports {
            if let Some(o) = r.objective {
                r.gap = Some((o - b) / b.abs().max(1.0));
                r.gap_is_bound = !attained;
            }
        }
    }
    Ok(ColocationReport {
        schema_version: 1,
        kind: "colocation",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed: s.seed,
        nodes: s.config.nodes,
        stages: s.config.stages,
        slo_s: tau,
        planners: reports,
    })
}

/// A run as Chrome Trace Event JSON (Perfetto): pid = node, tid = stage.
pub fn chrome_trace(run: &Run, nodes: usize, stages: usize) -> serde_json::Value {
    use serde_json::json;
    let mut events = Vec::new();
    for n in 0..nodes {
        events.push(json!({"name": "process_name", "ph": "M", "pid": n, "args": {"name": format!("node-{n}")}}));
        for s in 0..stages {
            events.push(json!({"name": "thread_name", "ph": "M", "pid": n, "tid": s, "args": {"name": format!("stage-{s}")}}));
        }
    }
    for op in &run.ops {
        let kind = serde_json::to_value(op.kind).unwrap_or_default();
        let label = match op.tasks.as_slice() {
            [] => kind.as_str().unwrap_or("op").to_string(),
            [t] => format!("{} t{}", kind.as_str().unwrap_or("op"), t.0),
            many => format!("{} ×{}", kind.as_str().unwrap_or("op"), many.len()),
        };
        events.push(json!({
            "name": label,
            "cat": kind,
            "ph": "X",
            "ts": op.start_s * 1e6,
            "dur": (op.end_s - op.start_s) * 1e6,
            "pid": op.node,
            "tid": op.stage,
            "args": {"tasks": op.tasks.iter().map(|t| t.0).collect::<Vec<_>>()},
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}
