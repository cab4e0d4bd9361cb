//! The import goal (docs/performance.md): importing the Alibaba trace's 8,152-pod default
//! list and its 1,213 nodes, then planning 200 preemptions with `k8s-default`, `k8s-nrt` and
//! `flextopo-imp`, as a user's plain run does it: the `coplan` binary, files in and out, cold
//! processes. Medians of `--runs` (default 5) runs, both steps side by side in each run.
//!
//! `cargo bench --bench import [-- --runs N] [-- --data DIR]`; skipped when the trace is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::path::{Path, PathBuf};

mod common;

use common::{arg, count_arg, median, root, timed_run};

fn main() {
    let data = arg("--data")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data/alibaba-gpu-2023"));
    let runs: usize = count_arg("--runs", 5);
    let nodes = data.join("openb_node_list_gpu_node.csv");
    let pods = data.join("openb_pod_list_default.csv");
    if !nodes.exists() || !pods.exists() {
        println!("skipped: the Alibaba trace is not at {}", data.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("coplan-bench-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let s = |p: &Path| p.display().to_string();
    let (nodes, pods, c, w) = (s(&nodes), s(&pods), s(&c), s(&w));
    println!("import + plan of 200 preemptions (k8s-default, k8s-nrt, flextopo-imp), {runs} runs");
    println!(
        "{:<34} {:>10} {:>10} {:>10} {:>12}",
        "mode", "import s", "plan s", "total s", "first run s"
    );
    for (label, extra) in [
        ("at the trace's GPU peak", vec!["--at", "peak"]),
        (
            "arrival sequence, fill 0.95",
            vec!["--as-sequence", "--fill", "0.95"],
        ),
    ] {
        let (mut imports, mut plans, mut totals) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let mut args = vec![
                "import",
                "alibaba-openb",
                &nodes,
                &pods,
                "--next",
                "200",
                "--server-type",
                "G2=gpu-2s4n8g",
                "--out-cluster",
                &c,
                "--out-workload",
                &w,
                "--format",
                "json",
            ];
            args.extend(extra.iter().copied());
            let i = timed_run(&args);
            let p = timed_run([
                "plan",
                &c,
                &w,
                "--planners",
                "k8s-default,k8s-nrt,flextopo-imp",
            ]);
            imports.push(i);
            plans.push(p);
            totals.push(i + p);
        }
        // The first run reads the trace from a cold page cache (unless an earlier process
        // read it): what a user's first plain run sees.
        let first = totals[0];
        println!(
            "{label:<34} {:>10.3} {:>10.3} {:>10.3} {:>12.3}",
            median(imports),
            median(plans),
            median(totals),
            first
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
