//! What every run of a co-location workload shares, derived once from the specs: the engine
//! configuration, the task set and the SLO.

use super::engine::EngineConfig;
use super::latency::PassCost;
use super::trace::TraceRequest;
use super::workload;
use crate::p;
use crate::plan::cancel::Cancel;
use crate::plan::colocation::{OpLog, Task, TaskKind};
use crate::solver::{Deadline, SolverSettings};
use crate::spec::ColocationSpec;
use crate::spec::source::Finding;
use crate::topology::Cluster;

/// Everything a run needs, derived once from the specs.
pub struct Setup {
    /// The workload (a scenario's own copy, with any swept values applied).
    pub spec: ColocationSpec,
    /// The run's fixed parameters, derived from the spec and the cluster's first server type.
    pub config: EngineConfig,
    /// Every task of the run (inference requests and training tasks), indexed by `TaskId`.
    pub tasks: Vec<Task>,
    /// The SLO base, in seconds: a full-pipeline prefill of the mean prompt; τ_R = `slo_factor` ×
    /// this.
    pub slo_base_s: f64,
    /// Mean prompt length over the inference requests, in tokens (1 when there are none).
    pub mean_prompt: f64,
    /// Seed of the task generation and of every planner's run.
    pub seed: u64,
    /// A stop request cuts the exact search short (the caller then discards the run).
    pub cancel: Cancel,
}

impl Setup {
    /// τ_R, the response-time SLO: `slo_factor` × the SLO base, in seconds.
    pub fn slo_s(&self) -> f64 {
        self.spec.inference.slo_factor * self.slo_base_s
    }

    /// τ_R as the objective's unit of time, which the bounds and the exact search divide by:
    /// kept above zero so that every quotient stays finite.
    pub fn objective_unit_s(&self) -> f64 {
        self.slo_s().max(1e-12)
    }

    /// A solver deadline of this run: `ilp_time_limit_s` from now at most (the cap of one
    /// solve or search), ending with the run's budget (`--time-limit`) and at a stop request,
    /// solved with `settings`. Every solve, bound and search of a co-location run takes its
    /// deadline from here.
    pub fn deadline(&self, settings: SolverSettings) -> Deadline {
        Deadline::for_run(
            self.spec.planners.ilp_time_limit_s,
            settings,
            self.cancel.flag(),
            self.cancel.ends_at(),
        )
    }
}

/// The setup of one seed (`None`: the spec's `[planners].seed`).
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
    let slo_base_s = slo_base_s(config.stages, &config.latency.forward, mean_prompt);
    Setup {
        spec: spec.clone(),
        config,
        tasks,
        slo_base_s,
        mean_prompt,
        seed,
        cancel: Cancel::never(),
    }
}

/// Cross-file checks of a co-location workload against its cluster.
pub fn cluster_findings(cluster: &Cluster, spec: &ColocationSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let available = cluster.servers.len() as i64;
    if let Some(n) = spec.nodes
        && n > available
    {
        out.push(
            Finding::new(
                "spec::too-large",
                p!["nodes"],
                format!(
                    "{n} nodes requested, cluster `{}` has {available} servers",
                    cluster.name
                ),
                "more than the cluster has",
            )
            .help("lower `nodes`, or omit it to use every server"),
        );
    }
    let used = spec.nodes.unwrap_or(available).clamp(0, available) as usize;
    if used > OpLog::MAX_NODES {
        out.push(
            Finding::new(
                "spec::too-large",
                p!["nodes"],
                format!(
                    "{used} nodes: a co-location run simulates at most {} (its op log names a \
                     node in 16 bits)",
                    OpLog::MAX_NODES
                ),
                "too many nodes",
            )
            .help(format!("set `nodes` to at most {}", OpLog::MAX_NODES)),
        );
    }
    if let Some(short) = cluster.servers[..used]
        .iter()
        .find(|s| (cluster.types[s.type_id.index()].gpu_count() as i64) < spec.model.stages)
    {
        let t = &cluster.types[short.type_id.index()];
        out.push(
            Finding::new(
                "spec::too-large",
                p!["model", "stages"],
                format!(
                    "{} pipeline stages need {} GPUs per node, but server `{}` ({}) has {}",
                    spec.model.stages,
                    spec.model.stages,
                    short.name,
                    t.name,
                    t.gpu_count()
                ),
                "more stages than GPUs",
            )
            .help("one stage runs on one GPU: use fewer stages or servers with more GPUs"),
        );
    }
    out
}

/// The SLO base: a full-pipeline prefill of the mean prompt (S · Δ_F(1, ℓ̄)).
pub fn slo_base_s(stages: usize, forward: &PassCost, mean_prompt: f64) -> f64 {
    let s = stages as f64;
    // The quadratic term first, in the paper model's own order of operations.
    s * forward.eta * mean_prompt * mean_prompt + s * (forward.delta_s + forward.beta * mean_prompt)
}
