//! One budget per run (docs/performance.md, "One budget per run"): a plain `coplan plan` with
//! the default planners and the default `--time-limit`, as a user runs it (the binary, a cold
//! process), on every shipped example and on imported inputs: the Alibaba trace at its peak and
//! filled to 0.97 (read by path from `../shared/data`, skipped when absent), the full Azure
//! conversation trace, and 20,000 servers; and the batch optimum at real size: `mixed-10k` × 200
//! (`benches/inputs/paper-preemption-200.toml`) and `mixed-20k` × 50 with `ilp-batch`. Per
//! input: the wall time against the budget and the `ilp-batch` / `ilp` status, objective and
//! bound.
//!
//! `cargo bench --bench budget [-- --time-limit S] [--only NAME,…]`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench may panic: that is its failure

use std::path::Path;
use std::time::Instant;

mod common;

use common::{arg, coplan, root};

/// The imported inputs, written under the target directory (none of the trace is committed).
fn imported(dir: &Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let data = root().join("../shared/data");
    let alibaba = data.join("alibaba-gpu-2023");
    let nodes = alibaba.join("openb_node_list_gpu_node.csv");
    let pods = alibaba.join("openb_pod_list_default.csv");
    if nodes.exists() && pods.exists() {
        for (name, extra) in [
            ("alibaba-peak", vec!["--at", "peak"]),
            ("alibaba-0.97", vec!["--as-sequence", "--fill", "0.97"]),
        ] {
            let c = dir.join(format!("{name}-c.toml"));
            let w = dir.join(format!("{name}-w.toml"));
            let (n, p) = (nodes.to_string_lossy(), pods.to_string_lossy());
            let (cs, ws) = (c.to_string_lossy(), w.to_string_lossy());
            let mut args = vec!["import", "alibaba-openb", &n, &p];
            args.extend(extra);
            args.extend(["--next", "200", "--server-type", "G2=gpu-2s4n8g"]);
            args.extend(["--out-cluster", &cs, "--out-workload", &ws]);
            assert!(coplan(&args).status.success(), "import {name}");
            out.push((name.to_string(), cs.into_owned(), ws.into_owned()));
        }
    }
    let azure = data.join("azure-llm-2023/AzureLLMInferenceTrace_conv.csv");
    if azure.exists() {
        let w = dir.join("azure-conv-all.toml");
        let (a, ws) = (azure.to_string_lossy(), w.to_string_lossy());
        let args = [
            "import",
            "azure-llm",
            &a,
            "--base",
            "examples/workloads/azure-conv-100.toml",
            "--out",
            &ws,
        ];
        assert!(coplan(args).status.success(), "import azure");
        out.push((
            "azure-conv-all".into(),
            "examples/clusters/a100-x16.toml".into(),
            ws.into_owned(),
        ));
    }
    out
}

fn main() {
    let budget = arg("--time-limit").unwrap_or_else(|| "10".into());
    let only: Option<Vec<String>> =
        arg("--only").map(|s| s.split(',').map(str::to_string).collect());
    let dir = root().join("target/bench-budget");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let mut inputs: Vec<(String, String, String)> = vec![
        (
            "paper-preemption".into(),
            "examples/clusters/paper-4090-x100.toml".into(),
            "examples/workloads/paper-preemption.toml".into(),
        ),
        (
            "paper-preemption-kwok".into(),
            "examples/clusters/paper-4090-x100.toml".into(),
            "examples/workloads/paper-preemption-kwok.toml".into(),
        ),
        (
            "colocation-small".into(),
            "examples/clusters/a100-x16.toml".into(),
            "examples/workloads/colocation-small.toml".into(),
        ),
        (
            "colocation-70b-memory".into(),
            "examples/clusters/a100-x16.toml".into(),
            "examples/workloads/colocation-70b-memory.toml".into(),
        ),
        (
            "azure-conv-100".into(),
            "examples/clusters/a100-x16.toml".into(),
            "examples/workloads/azure-conv-100.toml".into(),
        ),
        (
            "mixed-20k".into(),
            "benches/inputs/mixed-20k.toml".into(),
            "benches/inputs/paper-preemption-unpinned.toml".into(),
        ),
        (
            "batch-10k-200".into(),
            "examples/clusters/mixed-10k.toml".into(),
            "benches/inputs/paper-preemption-200.toml".into(),
        ),
    ];
    inputs.extend(imported(&dir));
    // The batch optimum on 20,000 servers: the default planners of that list and `ilp-batch`.
    let planners_of = |name: &str| match name {
        "batch-20k-50" => Some("k8s-default,k8s-nrt,flextopo-imp,ilp-batch"),
        _ => None,
    };
    inputs.push((
        "batch-20k-50".into(),
        "benches/inputs/mixed-20k.toml".into(),
        "benches/inputs/paper-preemption-unpinned.toml".into(),
    ));
    println!("budget {budget} s; wall time of a plain `coplan plan` (cold process)");
    println!("{:<24} {:>9} {:>9}  exact side", "input", "wall s", "over");
    for (name, cluster, workload) in inputs {
        if only.as_ref().is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let t = Instant::now();
        let mut args = vec![
            "plan",
            &cluster,
            &workload,
            "--time-limit",
            &budget,
            "--format",
            "json",
        ];
        if let Some(planners) = planners_of(&name) {
            args.extend(["--planners", planners]);
        }
        let out = coplan(&args);
        let wall = t.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let exact: Vec<String> = plan["planners"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["name"] == "ilp" || p["name"] == "ilp-batch")
            .map(|p| {
                let value =
                    |v: &serde_json::Value| v.as_f64().map_or("-".into(), |x| format!("{x:.3}"));
                format!(
                    "{} {} {} (bound {})",
                    p["name"].as_str().unwrap_or("?"),
                    p["status"].as_str().unwrap_or("?"),
                    value(&p["objective"]),
                    value(&p["bound"])
                )
            })
            .collect();
        let limit: f64 = budget.parse().expect("a number of seconds");
        println!(
            "{name:<24} {wall:>9.2} {:>+8.1}%  {}",
            (wall / limit - 1.0) * 100.0,
            exact.join("; ")
        );
    }
}
