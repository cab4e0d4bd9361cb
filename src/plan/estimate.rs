//! The work a spec asks for, estimated from its sizes alone (`coplan validate` prints it for
//! large specs), so a user sees before a run that it asks for billions of evaluations.

use crate::spec::colocation::ColocationSpec;
use crate::spec::preemption::{PreemptionSpec, Seeds};
use crate::topology::Cluster;

/// Work at or above which `validate` prints the estimate: about a second of planning.
pub const REPORT_ABOVE: f64 = 1e7;

/// The sizes of one plan of a workload and the work they imply.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkEstimate {
    /// What the figure counts, e.g. "server evaluations per planner".
    pub unit: &'static str,
    /// The figure for one `plan`.
    pub per_plan: f64,
    /// The figure for the spec's `simulate` (its seeds × cycles), when it has one.
    pub per_simulation: Option<f64>,
    /// The sizes behind it, in words.
    pub sizes: String,
}

impl WorkEstimate {
    /// Whether the estimate is large enough to print.
    pub fn is_large(&self) -> bool {
        self.per_plan.max(self.per_simulation.unwrap_or(0.0)) >= REPORT_ABOVE
    }
}

/// A preemption workload on a cluster: every preemptor's decision looks at every server, once
/// per planner (the pruned and exact planners look at fewer or more; this is the scale).
pub fn preemption(cluster: &Cluster, spec: &PreemptionSpec) -> WorkEstimate {
    let servers = cluster.servers.len() as f64;
    let gpus = cluster.gpu_count() as f64;
    let preemptors: f64 = spec.preempt.iter().map(|e| e.count.max(0) as f64).sum();
    let filled = spec.fill.as_ref().map_or(0.0, |f| {
        let total: f64 = f.mix.values().filter(|w| **w > 0.0).sum();
        let mean_gpus: f64 = spec
            .workload
            .iter()
            .filter_map(|w| f.mix.get(&w.name).map(|share| (w, *share)))
            .filter(|(_, share)| *share > 0.0)
            .map(|(w, share)| w.gpus.max(1) as f64 * share / total.max(f64::MIN_POSITIVE))
            .sum();
        f.target_gpu_utilization * gpus / mean_gpus.max(1.0)
    });
    let pods = spec.running.len() as f64 + filled + preemptors;
    let per_plan = preemptors * servers;
    let seeds = match &spec.simulation.seeds {
        Seeds::Count(n) => *n as f64,
        Seeds::List(list) => list.len() as f64,
    };
    let cycles = spec.simulation.cycles.max(0) as f64;
    WorkEstimate {
        unit: "server evaluations per planner",
        per_plan,
        per_simulation: Some(per_plan * seeds * cycles),
        sizes: format!(
            "{servers} servers, about {pods:.0} pods, {preemptors} preemptors; simulate: {seeds} seeds × {cycles} cycles"
        ),
    }
}

/// A co-location workload: every decode iteration of every request, once per planner.
pub fn colocation(spec: &ColocationSpec) -> WorkEstimate {
    let inf = &spec.inference;
    let (requests, output_tokens) = match &inf.requests {
        Some(list) => (
            list.len() as f64,
            list.iter().map(|r| r.output_tokens.max(0) as f64).sum(),
        ),
        None => (
            inf.count.max(0) as f64,
            inf.count.max(0) as f64 * inf.output_tokens.mean,
        ),
    };
    let training =
        crate::spec::colocation::training_count(requests as usize, spec.training.rate) as f64;
    WorkEstimate {
        unit: "decode iterations per planner",
        per_plan: output_tokens,
        per_simulation: None,
        sizes: format!("{requests} requests, {training} training tasks"),
    }
}
