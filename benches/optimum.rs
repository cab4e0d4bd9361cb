//! Release benchmark of the co-location optimum (issue: the optimum at every size).
//!
//! 1. Scale: the default example (`colocation-small`: Llama-3-8B measured profile, 4 nodes ×
//!    2 stages, 12 requests/s, training rate 0.3) at 50, 300 and 3 000 requests: the time of
//!    each lower bound (median of 5), the `ilp` time and status, every planner's gap to the
//!    bound, and the best feasible schedule over the bound.
//! 2. Exact proofs: the same profile on 20 tasks × 2 nodes and 12 tasks × 4 nodes
//!    (`ilp_time_limit_s = 10`) and 20 tasks × 4 nodes (60 s), five seeds each: how many are
//!    proven and the median time.
//! 3. The bound on the first hour of the Azure conversation trace on 16 nodes (skipped when
//!    `../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv` and
//!    `$COPLAN_AZURE_TRACE` are both missing).
//!
//! Run: `cargo bench --bench optimum` (`-- exact` runs part 2 only, `-- azure` part 3 only).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{azure_hour, example, flag, median, on_hour};
use coplan::colocate::bounds::best_bound;
use coplan::colocate::ilp;
use coplan::colocate::planning::plan;
use coplan::colocate::setup::setup;
use coplan::plan::PlanStatus;
use coplan::solver::SolverSettings;
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;

fn scale(cluster: &Cluster, base: &ColocationSpec) {
    println!("## Scale (colocation-small, 4 nodes × 2 stages)\n");
    println!(
        "| requests | tasks | floors ms | stage ms | LP ms | bound | source | ilp status | ilp s | best / bound | gaps (separate, mix-rr, mix-luf, lemix, lemix-balanced, ilp) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---|");
    for requests in [50, 300, 3000] {
        let mut spec = base.clone();
        spec.inference.count = requests;
        let s = setup(cluster, &spec, None, None);
        let settings = SolverSettings::default();
        // The horizon as planning sets it is the candidates' last op end; 2× the last arrival
        // is close and keeps this part independent of the planners.
        let horizon = 2.0 * s.tasks.iter().map(|t| t.arrival_s).fold(1.0, f64::max);
        // The first three parts (floors, stage relaxation, interval LP) are the columns.
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); 3];
        for _ in 0..5 {
            let b = best_bound(&s, horizon, settings);
            for (i, p) in b.parts.iter().take(3).enumerate() {
                times[i].push(p.runtime_ms);
            }
        }
        let report = plan(cluster, &spec, None, None, None).expect("plans");
        let bound = report.bound.unwrap_or(0.0);
        let ilp = report
            .planners
            .iter()
            .find(|p| p.name == "ilp")
            .expect("ilp runs");
        let best = report
            .planners
            .iter()
            .filter_map(|p| p.objective)
            .fold(f64::INFINITY, f64::min);
        let gaps: Vec<String> = report
            .planners
            .iter()
            .map(|p| p.gap.map_or("-".into(), |g| format!("{:+.1}%", 100.0 * g)))
            .collect();
        println!(
            "| {requests} | {} | {:.2} | {:.2} | {:.1} | {bound:.1} | {} | {:?} | {:.1} | {:.2} | {} |",
            s.tasks.len(),
            median(times[0].clone()),
            median(times[1].clone()),
            median(times[2].clone()),
            report.bound_source,
            ilp.status,
            ilp.runtime_ms / 1000.0,
            best / bound.max(1e-12),
            gaps.join(", ")
        );
    }
}

fn exact(cluster: &Cluster, base: &ColocationSpec) {
    println!(
        "\n## Exact search (five seeds each, every decision: nodes, deferrals, sync points)\n"
    );
    println!(
        "| nodes | tasks | time limit s | proven | median s | max s | median nodes expanded |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (nodes, tasks, limit) in [(2, 20, 10.0), (4, 12, 10.0), (4, 20, 60.0)] {
        let mut spec = base.clone();
        spec.nodes = Some(nodes);
        spec.planners.ilp_time_limit_s = limit;
        spec.planners.ilp_exact_max_tasks = tasks as i64;
        let (mut times, mut expanded, mut proven) = (Vec::new(), Vec::new(), 0);
        for seed in 1..=5u64 {
            // Requests so that requests + training tasks = `tasks` (training share 0.3).
            let mut count = tasks as i64;
            let s = loop {
                spec.inference.count = count;
                let s = setup(cluster, &spec, None, Some(seed));
                if s.tasks.len() <= tasks || count <= 1 {
                    break s;
                }
                count -= 1;
            };
            let t0 = Instant::now();
            let outcome = ilp::solve(&s);
            times.push(t0.elapsed().as_secs_f64());
            expanded.push(outcome.expanded as f64);
            if outcome.status == PlanStatus::Optimal {
                proven += 1;
            }
        }
        println!(
            "| {nodes} | {tasks} | {limit} | {proven}/5 | {:.2} | {:.2} | {:.0} |",
            median(times.clone()),
            times.iter().copied().fold(0.0, f64::max),
            median(expanded)
        );
    }
}

fn azure(base: &ColocationSpec) {
    let hour = match azure_hour() {
        Ok(hour) => hour,
        Err(path) => {
            println!("\nAzure trace not found at {path}: skipping the Azure hour");
            return;
        }
    };
    let mut cluster_spec: ClusterSpec = example("examples/clusters/a100-x16.toml");
    cluster_spec.pool[0].count = 16;
    let cluster = Cluster::from_spec(&cluster_spec);
    let mut spec = on_hour(base, &hour);
    spec.nodes = Some(16);
    let s = setup(&cluster, &spec, Some(&hour), Some(1));
    let horizon = 2.0 * hour.iter().map(|r| r.arrival_s).fold(1.0, f64::max);
    // Per part, then the whole `best_bound` last.
    let mut times: Vec<Vec<f64>> = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let t0 = Instant::now();
        let b = best_bound(&s, horizon, SolverSettings::default());
        let total = t0.elapsed().as_secs_f64() * 1000.0;
        times.resize(b.parts.len() + 1, Vec::new());
        for (i, p) in b.parts.iter().enumerate() {
            times[i].push(p.runtime_ms);
        }
        times[b.parts.len()].push(total);
        last = Some(b);
    }
    println!(
        "\n## Azure conv, first hour: {} requests + {} training tasks, 16 nodes\n",
        hour.len(),
        s.tasks.len() - hour.len()
    );
    println!("| bound | value | median ms |");
    println!("|---|---:|---:|");
    if let Some(b) = last {
        for (i, p) in b.parts.iter().enumerate() {
            let value = match &p.value {
                Ok(v) => format!("{v:.1}"),
                Err(why) => format!("- ({why})"),
            };
            println!("| {} | {value} | {:.1} |", p.name, median(times[i].clone()));
        }
        println!(
            "| best: {} | {:.1} | {:.1} (all {}) |",
            b.source,
            b.best,
            median(times[b.parts.len()].clone()),
            b.parts.len()
        );
    }
}

fn main() {
    let cluster_spec: ClusterSpec = example("examples/clusters/a100-x16.toml");
    let cluster = Cluster::from_spec(&cluster_spec);
    let base: ColocationSpec = example("examples/workloads/colocation-small.toml");
    if flag("azure") {
        azure(&base);
        return;
    }
    if flag("exact") {
        exact(&cluster, &base);
        return;
    }
    exact(&cluster, &base);
    scale(&cluster, &base);
    azure(&base);
}
