//! Scaling curves of every planner (docs/performance.md, "Scaling"):
//!
//! 1. preemption, servers 100 → 1 000 → 10 000: the paper preset's server type
//!    (`paper-4090-x100.toml` with its pool resized), filled by `paper-preemption.toml`'s
//!    `[fill]`, its 50 preemptors; time per decision (median) and per plan;
//! 2. preemption, preemptors 10 → 50 → 200 on the 100-server preset (the two services'
//!    `[[preempt]]` counts scaled alike);
//! 3. co-location, tasks 1 000 → 10 000 → 100 000 on 16 A100 nodes (the co-location
//!    benchmark's instance: 70 % inference requests at 16 rps, training at rate 0.3), the
//!    planner's whole run (engine and decisions, verification excluded).
//!
//! Sequential preemption planners are timed per decision on the states their own plan
//! reaches; `ilp-batch` plans the list at once. A planner whose run at one size took longer
//! than `--max-seconds` (default 10) is not run at the larger sizes.
//!
//! Run: `cargo bench --bench scaling` (`-- --only servers|preemptors|tasks` for one curve).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{arg, example, median, number_arg};

use coplan::colocate::registry as colocation_registry;
use coplan::colocate::setup::setup;
use coplan::preempt::apply::apply;
use coplan::preempt::problem::{DecisionPoint, Problem};
use coplan::preempt::registry::registry;
use coplan::preempt::scenario;
use coplan::spec::preemption::PreemptionSpec;
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;

fn fmt_s(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// A planner's median seconds per decision and seconds for the whole list, or why it was not
/// run.
type Timing = Result<(f64, f64), String>;

/// One plan of every preemption planner.
fn preemption_row(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    skip: &[String],
) -> Vec<(&'static str, Timing)> {
    let problem = Problem::new(cluster, spec);
    let mut initial = scenario::initial_state(cluster, spec, Some(1)).expect("valid preset");
    let preemptors = scenario::preemptors(cluster, spec, &mut initial);
    let mut out = Vec::new();
    for planner in registry() {
        let name = planner.name();
        if skip.iter().any(|s| s == name) {
            out.push((
                name,
                Err("slower than --max-seconds at the smaller size".into()),
            ));
            continue;
        }
        if planner.joint() {
            let t0 = Instant::now();
            let result = planner.decide_batch(&problem, &initial, &preemptors, None);
            let total = t0.elapsed().as_secs_f64();
            out.push((
                name,
                result
                    .map(|_| (total / preemptors.len().max(1) as f64, total))
                    .map_err(|e| e.to_string()),
            ));
            continue;
        }
        // Each planner starts cold: no scan memo of an earlier planner's run.
        let mut state = initial.clone();
        state.forget_memos();
        let mut times = Vec::with_capacity(preemptors.len());
        for p in &preemptors {
            let at = DecisionPoint {
                problem: &problem,
                state: &state,
                preemptor: p,
            };
            let t0 = Instant::now();
            let d = planner.decide(&at).expect("decides");
            times.push(t0.elapsed().as_secs_f64());
            apply(&problem, &mut state, p, &d).expect("applies");
        }
        let total = times.iter().sum();
        out.push((name, Ok((median(times), total))));
    }
    out
}

fn print_preemption(
    title: &str,
    label: &str,
    sizes: &[usize],
    max_s: f64,
    instance: impl Fn(usize) -> (Cluster, PreemptionSpec),
) {
    println!("\n### {title}\n");
    let names: Vec<&str> = registry().iter().map(|p| p.name()).collect();
    println!(
        "| {label} | {} |",
        names
            .iter()
            .map(|n| format!("{n} (per decision / per plan)"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---:|{}", "---|".repeat(names.len()));
    let mut skip: Vec<String> = Vec::new();
    for &n in sizes {
        let (cluster, spec) = instance(n);
        let row = preemption_row(&cluster, &spec, &skip);
        let cells: Vec<String> = row
            .iter()
            .map(|(name, r)| match r {
                Ok((per, total)) => {
                    if *total > max_s {
                        skip.push(name.to_string());
                    }
                    format!("{} / {}", fmt_s(*per), fmt_s(*total))
                }
                Err(why) => format!("— ({why})"),
            })
            .collect();
        println!("| {n} | {} |", cells.join(" | "));
    }
}

fn main() {
    let only = arg("--only");
    let max_s: f64 = number_arg("--max-seconds", 10.0);
    let wants = |curve: &str| only.as_deref().is_none_or(|o| o == curve);
    let cluster_spec: ClusterSpec = example("examples/clusters/paper-4090-x100.toml");
    let workload: PreemptionSpec = example("examples/workloads/paper-preemption.toml");
    println!(
        "Scaling curves (one run each, seed 1; {} threads available to rayon)",
        rayon::current_num_threads()
    );

    if wants("servers") {
        print_preemption(
            "Preemption: servers (paper preset's server type and fill, 50 preemptors)",
            "servers",
            &[100, 1_000, 10_000],
            max_s,
            |n| {
                let mut c = cluster_spec.clone();
                c.pool[0].count = n as i64;
                let mut w = workload.clone();
                // The pinned pods name servers of the 100-server preset.
                w.running.clear();
                (Cluster::from_spec(&c), w)
            },
        );
    }
    if wants("preemptors") {
        print_preemption(
            "Preemption: preemptors (100 servers, the two services scaled alike)",
            "preemptors",
            &[10, 50, 200],
            max_s,
            |n| {
                let mut w = workload.clone();
                let per_entry = (n / w.preempt.len().max(1)) as i64;
                for entry in &mut w.preempt {
                    entry.count = per_entry;
                }
                (Cluster::from_spec(&cluster_spec), w)
            },
        );
    }
    if wants("tasks") {
        let mut cluster_spec: ClusterSpec = example("examples/clusters/a100-x16.toml");
        cluster_spec.pool[0].count = 16;
        let cluster = Cluster::from_spec(&cluster_spec);
        let base: ColocationSpec = example("examples/workloads/colocation-small.toml");
        let names: Vec<String> = colocation_registry::registry()
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        println!(
            "\n### Co-location: tasks (16 A100 nodes, 70 % inference at 16 rps, training rate 0.3)\n"
        );
        println!("| tasks | {} |", names.join(" | "));
        println!("|---:|{}", "---|".repeat(names.len()));
        let mut skip: Vec<String> = Vec::new();
        for n in [1_000usize, 10_000, 100_000] {
            let mut spec = base.clone();
            spec.nodes = Some(16);
            spec.inference.count = (n * 7 / 10) as i64;
            if let Some(a) = spec.inference.arrival.as_mut() {
                a.rate_rps = 16.0;
            }
            spec.training.rate = 0.3;
            let s = setup(&cluster, &spec, None, Some(1));
            let mut cells = Vec::new();
            for name in &names {
                if skip.contains(name) {
                    cells.push("— (slower than --max-seconds at the smaller size)".to_string());
                    continue;
                }
                let Some(planner) = colocation_registry::planner(name) else {
                    continue;
                };
                let t0 = Instant::now();
                let result = planner.run(&s, 0.0);
                let took = t0.elapsed().as_secs_f64();
                if took > max_s {
                    skip.push(name.clone());
                }
                cells.push(match result {
                    Ok(_) => fmt_s(took),
                    Err(e) => format!("— ({e})"),
                });
            }
            println!("| {} | {} |", s.tasks.len(), cells.join(" | "));
        }
    }
}
