//! The diff goal (≤ 0.1 s): comparing two 10-seed simulate outputs of the paper example
//! (`paper-4090-x100` with `paper-preemption`, B with `flextopo.alpha` = 0.2 instead of 0.5),
//! the whole path a user's run takes: read and parse both files, compare, render the table.
//! The outputs are simulated once, first (not timed); then the median of `--runs` (default
//! 50) library runs and of as many runs of the `coplan` binary (process start included), each
//! with its first, cold run.
//!
//! Run: `cargo bench --bench diff` (`-- --runs N`, `-- --seeds N`, `-- --cycles N`,
//! `-- --planners a,b`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::path::{Path, PathBuf};
use std::time::Instant;

mod common;

use common::{arg_or, coplan, count_arg, median, root};

use coplan::report::{json, table};
use coplan::session::diff::diff_files;
use coplan::session::load::{Workload, load_pair};
use coplan::session::simulate::{self, SimulationResult};
use coplan::sim::preemption::SimOptions;

const GOAL_S: f64 = 0.1;

/// Simulates the paper example with `alpha` and writes its JSON to `out`.
fn simulate(alpha: f64, options: &SimOptions, out: &Path) {
    let mut pair = load_pair(
        &root().join("examples/clusters/paper-4090-x100.toml"),
        &root().join("examples/workloads/paper-preemption.toml"),
    )
    .expect("the paper example loads");
    if let Workload::Preemption(spec) = &mut pair.workload {
        spec.flextopo.alpha = alpha;
    }
    let result = simulate::simulate(&pair, options, &|| {}).expect("the simulation runs");
    let text = match &result {
        SimulationResult::Preemption(r) => json::to_json(r),
        SimulationResult::Colocation(r) => json::to_json(r),
    };
    std::fs::write(out, text).expect("write the simulate output");
}

fn main() {
    let runs: usize = count_arg("--runs", 50);
    let seeds: u64 = count_arg("--seeds", 10);
    let options = SimOptions {
        seeds: Some((1..=seeds).collect()),
        cycles: Some(count_arg("--cycles", 1)),
        planners: Some(
            arg_or("--planners", "k8s-default,k8s-nrt,flextopo-imp,ilp-batch")
                .split(',')
                .map(String::from)
                .collect(),
        ),
        solver: None,
        cancel: Default::default(),
    };
    let dir = std::env::temp_dir().join(format!("coplan-bench-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (a, b): (PathBuf, PathBuf) = (dir.join("a.json"), dir.join("b.json"));
    let t = Instant::now();
    simulate(0.5, &options, &a);
    simulate(0.2, &options, &b);
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len()) / 1024;
    println!(
        "two {seeds}-seed simulate outputs of the paper example ({} KiB, {} KiB), simulated in {:.1} s",
        size(&a),
        size(&b),
        t.elapsed().as_secs_f64()
    );

    let mut library = Vec::with_capacity(runs);
    let mut rows = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let report = diff_files(&a, &b, &[]).expect("the outputs compare");
        let text = table::diff::diff(&report);
        library.push(t.elapsed().as_secs_f64());
        rows = report.rows.len();
        std::hint::black_box(text);
    }
    let mut binary = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let out = coplan([Path::new("diff"), a.as_path(), b.as_path()]);
        binary.push(t.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("diff (parse both, compare, render the table) of {rows} rows, {runs} runs each:");
    println!(
        "{:<40} {:>10} {:>12} {:>8}",
        "path", "median s", "first run s", "goal s"
    );
    for (label, times) in [
        ("library (read, parse, compare, table)", library),
        ("coplan binary (process start included)", binary),
    ] {
        let first = times[0];
        println!(
            "{label:<40} {:>10.4} {:>12.4} {GOAL_S:>8.1}",
            median(times),
            first
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
