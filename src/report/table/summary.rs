//! One-line summaries of valid spec files (`coplan validate`).

use crate::spec::colocation::ArrivalProcess;
use crate::spec::preemption::IdsOrCount;
use crate::spec::{ClusterSpec, ColocationSpec, PreemptionSpec, Spec};
use crate::topology::Cluster;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One-line summary of a valid spec file: its kind, name and sizes (`coplan validate`).
pub fn summary(spec: &Spec) -> String {
    match spec {
        Spec::Cluster(c) => cluster(c),
        Spec::Preemption(w) => preemption(w),
        Spec::Colocation(w) => colocation(w),
    }
}

fn cluster(spec: &ClusterSpec) -> String {
    let c = Cluster::from_spec(spec);
    format!(
        "cluster `{}`: {}, {}, {}, {}, {}",
        spec.name,
        plural(c.types.len(), "server type", "server types"),
        plural(spec.pool.len(), "pool", "pools"),
        plural(c.servers.len(), "server", "servers"),
        plural(c.gpu_count(), "GPU", "GPUs"),
        plural(c.core_count(), "core", "cores"),
    )
}

fn preemption(spec: &PreemptionSpec) -> String {
    // Saturating: each count is validated alone, and their sum may exceed i64.
    let preemptors = spec
        .preempt
        .iter()
        .fold(0i64, |sum, e| sum.saturating_add(e.count));
    let explicit = spec
        .running
        .iter()
        .filter(|r| {
            matches!(r.gpus, Some(IdsOrCount::Ids(_)))
                || matches!(r.cores, Some(IdsOrCount::Ids(_)))
        })
        .count();
    let fill = spec.fill.as_ref().map_or(String::new(), |f| {
        format!(
            ", fill to {:.0}% GPUs ({} allocator, {} churn rounds, seed {})",
            f.target_gpu_utilization * 100.0,
            f.allocator.as_str(),
            f.churn_rounds,
            f.seed
        )
    });
    format!(
        "preemption{}: {}, {} ({} with explicit ids){}, {}{}; planners {}",
        spec.name
            .as_ref()
            .map_or(String::new(), |n| format!(" `{n}`")),
        plural(spec.workload.len(), "workload", "workloads"),
        plural(spec.running.len(), "running pod", "running pods"),
        explicit,
        fill,
        if spec.has_gangs() {
            let pods = spec.preempt.iter().fold(0i64, |sum, e| {
                sum.saturating_add(e.count.saturating_mul(e.pods.unwrap_or(1)))
            });
            format!(
                "{} ({} pods)",
                plural(preemptors.max(0) as usize, "gang", "gangs"),
                pods.max(0)
            )
        } else {
            plural(preemptors.max(0) as usize, "preemptor", "preemptors")
        },
        match spec.simulation.admission {
            crate::spec::preemption::Admission::Kubelet => "",
            crate::spec::preemption::Admission::Bind => ", bind admission (nothing refuses)",
        },
        spec.planners_to_run().join(","),
    )
}

fn colocation(spec: &ColocationSpec) -> String {
    let inf = &spec.inference;
    let arrivals = match (&inf.arrival, &inf.trace) {
        _ if inf.requests.is_some() => format!(
            "{} explicit requests",
            inf.requests.as_ref().map_or(0, Vec::len)
        ),
        (Some(a), _) => format!(
            "{} {} rps",
            match a.process {
                ArrivalProcess::Poisson => "poisson",
                ArrivalProcess::Uniform => "uniform",
            },
            a.rate_rps
        ),
        (None, Some(t)) => format!("trace {t}"),
        (None, None) => "no arrivals".into(),
    };
    let rate = spec.training.rate;
    let n_train = crate::spec::colocation::training_count(inf.count.max(0) as usize, rate) as i64;
    format!(
        "colocation{}: {} × {} stages ({}), {} inference requests ({arrivals}), {} (rate {rate}); planners {}",
        spec.name
            .as_ref()
            .map_or(String::new(), |n| format!(" `{n}`")),
        spec.nodes.map_or("cluster nodes".into(), |n| plural(
            n.max(0) as usize,
            "node",
            "nodes"
        )),
        spec.model.stages,
        spec.model.name,
        inf.count,
        plural(n_train.max(0) as usize, "training task", "training tasks"),
        spec.planners.run.join(","),
    )
}

/// The indented line under a summary that states a large spec's work.
pub fn estimate(e: &crate::plan::estimate::WorkEstimate) -> String {
    let simulation = e
        .per_simulation
        .map_or(String::new(), |s| format!(", {s:.1e} per simulate"));
    format!(
        "  estimated work: {:.1e} {} per plan{simulation} ({})\n",
        e.per_plan, e.unit, e.sizes
    )
}
