//! The large inputs, side by side (docs/performance.md, "Large inputs"): the seeded fill of
//! the paper's preemption workload on 10,000 and 20,000 servers, `[fill] churn_rounds` of
//! 8,000 and 100,000 on the paper preset, `topology --format json` of `mixed-10k`, and a plain
//! `coplan plan` of 20,000 servers as a user runs it (the binary, a cold process: load, fill,
//! the planners, verification and rendering). Medians of `--repeats` runs (default 3).
//!
//! `cargo bench --bench large_inputs [-- --repeats N] [--only fill,churn,topology,plan]`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

mod common;

use common::{arg, coplan, count_arg, example, median_time};
use coplan::preempt::scenario;
use coplan::report::json;
use coplan::spec::{ClusterSpec, PreemptionSpec};
use coplan::topology::Cluster;

/// `mixed-10k` with every pool scaled by `factor`.
fn mixed(factor: i64) -> Cluster {
    let mut spec: ClusterSpec = example("examples/clusters/mixed-10k.toml");
    for pool in &mut spec.pool {
        pool.count *= factor;
    }
    Cluster::from_spec(&spec)
}

fn row(what: &str, seconds: f64, note: &str) {
    println!("{what:<52} {:>10.3} s  {note}", seconds);
}

fn main() {
    let repeats: usize = count_arg("--repeats", 3);
    let only = arg("--only").unwrap_or_default();
    let chosen = |name: &str| only.is_empty() || only.split(',').any(|n| n == name);
    let paper: PreemptionSpec = example("examples/workloads/paper-preemption.toml");
    // The pinned pods name the paper cluster's servers; the large clusters get the fill only.
    let mut unpinned = paper.clone();
    unpinned.running.clear();
    println!("large inputs, median of {repeats} runs");
    if chosen("fill") {
        for factor in [1, 2] {
            let cluster = mixed(factor);
            let seconds = median_time(repeats, || {
                let state = scenario::initial_state(&cluster, &unpinned, None).expect("fills");
                std::hint::black_box(state.pod_count());
            });
            row(
                &format!("fill, {} servers (3 churn rounds)", cluster.servers.len()),
                seconds,
                "",
            );
        }
    }
    if chosen("churn") {
        let cluster: ClusterSpec = example("examples/clusters/paper-4090-x100.toml");
        let cluster = Cluster::from_spec(&cluster);
        for rounds in [8_000, 100_000] {
            let mut spec = paper.clone();
            if let Some(fill) = &mut spec.fill {
                fill.churn_rounds = rounds;
            }
            let seconds = median_time(repeats, || {
                let state = scenario::initial_state(&cluster, &spec, None).expect("fills");
                std::hint::black_box(state.pod_count());
            });
            row(&format!("churn, {rounds} rounds, 100 servers"), seconds, "");
        }
    }
    if chosen("topology") {
        let cluster = mixed(1);
        let mut bytes = 0;
        let seconds = median_time(repeats, || {
            bytes = json::topology(&cluster, None).len();
        });
        row(
            "topology --format json, mixed-10k",
            seconds,
            &format!("{:.1} MB", bytes as f64 / 1e6),
        );
    }
    if chosen("plan") {
        let root = env!("CARGO_MANIFEST_DIR");
        let args = [
            "plan".to_string(),
            format!("{root}/benches/inputs/mixed-20k.toml"),
            format!("{root}/benches/inputs/paper-preemption-unpinned.toml"),
            "--format".into(),
            "json".into(),
        ];
        let seconds = median_time(repeats, || {
            let out = coplan(&args);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        });
        row(
            "coplan plan, 20,000 servers (process wall time)",
            seconds,
            "",
        );
    }
}
