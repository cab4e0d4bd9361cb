//! `coplan sweep`, `merge` and `simulate`: shards that merge into the unsharded run, shard
//! indices from batch environments, determinism, timelines and co-location sweeps.

use std::process::Command;

use crate::common::root;
use crate::support::run;

fn sweep_args(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "sweep",
        "examples/clusters/gpu-2s4n8g-x4.toml",
        "tests/fixtures/valid/sim-small.toml",
        "--set",
        "flextopo.alpha=0,0.5,1",
        "--set",
        "pool.0.count=2,4",
        "--seeds",
        "2",
        "--cycles",
        "2",
        "--planners",
        "k8s-default,flextopo-imp,ilp-batch",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn sharded_sweeps_merge_into_the_unsharded_run_row_for_row() {
    let dir = std::env::temp_dir().join(format!("coplan-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (code, whole, err) = run(&sweep_args(&[]));
    assert_eq!(code, 0, "{err}");
    let mut files = Vec::new();
    for (i, format) in [(0, "csv"), (1, "jsonl"), (2, "csv"), (3, "jsonl")] {
        let path = dir.join(format!("shard-{i}.{format}"));
        let shard = format!("{i}/4");
        let (code, _, err) = run(&sweep_args(&[
            "--shard",
            &shard,
            "--format",
            format,
            "--out",
            &path.display().to_string(),
        ]));
        assert_eq!(code, 0, "{err}");
        files.push(path.display().to_string());
    }
    let mut merge: Vec<String> = vec!["merge".into()];
    merge.extend(files.iter().cloned());
    merge.extend(["--format".into(), "csv".into()]);
    let (code, merged, err) = run(&merge);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        merged, whole,
        "the union of the shards is the unsharded run, row for row"
    );
    assert!(whole.lines().any(|l| l.starts_with("5,")), "6 scenarios");

    // A missing shard and an overlapping one are rejected.
    let (code, _, err) = run(&[
        "merge".into(),
        files[0].clone(),
        files[1].clone(),
        files[2].clone(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("in none of the inputs"), "{err}");
    let (code, _, err) = run(&[
        "merge".into(),
        files[0].clone(),
        files[0].clone(),
        files[1].clone(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("overlapping"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shard_index_comes_from_batch_environments() {
    let with_env = |vars: &[(&str, &str)], extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_coplan"))
            .args(sweep_args(extra))
            .current_dir(root())
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("SLURM_ARRAY_TASK_MIN")
            .env_remove("SLURM_ARRAY_TASK_COUNT")
            .envs(vars.iter().copied())
            .output()
            .expect("runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, k8s) = with_env(&[("JOB_COMPLETION_INDEX", "1")], &["--shards", "3"]);
    assert_eq!(code, 0);
    assert!(k8s.starts_with("# coplan sweep scenarios=6 shard=1/3"));
    let (code, slurm) = with_env(
        &[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ],
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(slurm, k8s, "Slurm task 2 of 1..=3 is shard 1/3");
    let (code, _) = with_env(&[("JOB_COMPLETION_INDEX", "1")], &[]);
    assert_eq!(code, 2, "an Indexed Job needs --shards");
    // Never shard 0 of 1 by default: --shards without an index, or an index that is not a
    // number, is an input error.
    let (code, _) = with_env(&[], &["--shards", "2"]);
    assert_eq!(code, 2, "--shards needs an index");
    let (code, _) = with_env(&[("JOB_COMPLETION_INDEX", "abc")], &["--shards", "2"]);
    assert_eq!(code, 2, "JOB_COMPLETION_INDEX=abc");
    let (code, _) = with_env(&[("SLURM_ARRAY_TASK_ID", "x")], &[]);
    assert_eq!(code, 2, "SLURM_ARRAY_TASK_ID=x");
}

#[test]
fn sweep_key_and_value_errors_name_them() {
    for (set, needle) in [
        ("flextopo.alfa=1", "invalid sweep key `flextopo.alfa`"),
        ("flextopo.alpha=2", "invalid value `2` for `flextopo.alpha`"),
        ("pool.7.count=1", "index 7 is out of range"),
        (
            "fill.allocator=topology",
            "invalid value `topology` for `fill.allocator`",
        ),
        ("alpha", "expected KEY=V1,V2"),
    ] {
        let (code, _, err) = run(&[
            "sweep".into(),
            "examples/clusters/gpu-2s4n8g-x4.toml".into(),
            "tests/fixtures/valid/sim-small.toml".into(),
            "--set".into(),
            set.into(),
        ]);
        assert_eq!(code, 2, "{set}");
        assert!(err.contains(needle), "{set}: {err}");
    }
    let (code, _, err) = run(&sweep_args(&["--shard", "4/4"]));
    assert_eq!(code, 2);
    assert!(err.contains("invalid shard"), "{err}");
    // The same key twice would give a scenario two values for it.
    let (code, _, err) = run(&[
        "sweep".into(),
        "examples/clusters/gpu-2s4n8g-x4.toml".into(),
        "tests/fixtures/valid/sim-small.toml".into(),
        "--set".into(),
        "flextopo.alpha=0,1".into(),
        "--set".into(),
        "flextopo.alpha=0.5".into(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("given twice"), "{err}");
}

#[test]
fn simulate_is_deterministic_and_parallel_equals_sequential() {
    let args: Vec<String> = [
        "simulate",
        "examples/clusters/gpu-2s4n8g-x4.toml",
        "tests/fixtures/valid/sim-small.toml",
        "--seeds",
        "3",
        "--cycles",
        "2",
        "--format",
        "csv",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (code, parallel, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(&args)
        .current_dir(root())
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        parallel,
        "one thread gives the same rows"
    );
}

#[test]
fn timeline_writes_chrome_trace_events() {
    let (code, out, err) = run(&[
        "timeline".into(),
        "examples/clusters/a100-x16.toml".into(),
        "examples/workloads/colocation-small.toml".into(),
        "--planner".into(),
        "lemix".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let events = v["traceEvents"].as_array().expect("events");
    let complete: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!complete.is_empty());
    for cat in ["forward", "backward", "decode"] {
        assert!(complete.iter().any(|e| e["cat"] == cat), "{cat} events");
    }
    assert!(
        complete
            .iter()
            .all(|e| e["pid"].as_u64().is_some_and(|p| p < 4)
                && e["tid"].as_u64().is_some_and(|t| t < 2))
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "node-0")
    );
    let (code, _, err) = run(&[
        "timeline".into(),
        "examples/clusters/a100-x16.toml".into(),
        "examples/workloads/colocation-small.toml".into(),
        "--planner".into(),
        "gödel".into(),
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn colocation_sweeps_shard_and_merge_like_preemption_ones() {
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "sweep",
            "examples/clusters/a100-x16.toml",
            "examples/workloads/azure-conv-100.toml",
            "--set",
            "lemix.deprioritize=lookahead,off",
            "--set",
            "nodes=2,4",
            "--seeds",
            "2",
            "--planners",
            "mix-rr,lemix",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let (code, whole, err) = run(&args(&[]));
    assert_eq!(code, 0, "{err}");
    assert!(whole.contains(",slo_attainment_5x,"));
    let dir = std::env::temp_dir().join(format!("coplan-csweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut merge = vec!["merge".to_string()];
    for i in 0..2 {
        let path = dir.join(format!("s{i}.csv")).display().to_string();
        let shard = format!("{i}/2");
        let (code, _, err) = run(&args(&["--shard", &shard, "--out", &path]));
        assert_eq!(code, 0, "{err}");
        merge.push(path);
    }
    let (code, table, _) = run(&merge);
    assert_eq!(code, 0);
    assert!(table.contains("slo_attainment_5x") && table.contains("lemix"));
    merge.extend(["--format".into(), "csv".into()]);
    let (_, merged, _) = run(&merge);
    assert_eq!(merged, whole);
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _, err) = run(&[
        "simulate".into(),
        "examples/clusters/a100-x16.toml".into(),
        "examples/workloads/azure-conv-100.toml".into(),
        "--seeds".into(),
        "2".into(),
        "--planners".into(),
        "lemix,nope".into(),
    ]);
    assert_eq!(code, 2, "{err}");
}

/// (planner, metric) → value of long-format rows whose last four columns are
/// `planner,seed,metric,value`.
fn long_values(csv_text: &str) -> std::collections::BTreeMap<(String, String), String> {
    csv_text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let n = cells.len();
            (n >= 4).then(|| {
                (
                    (cells[n - 4].to_string(), cells[n - 2].to_string()),
                    cells[n - 1].to_string(),
                )
            })
        })
        .collect()
}

#[test]
fn sweep_of_a_colocation_workload_reads_its_inference_trace() {
    let workload = "tests/fixtures/valid/coloc-trace.toml";
    let common = ["--seeds", "1", "--planners", "mix-rr,lemix"];
    let mut sweep: Vec<String> = ["sweep", "examples/clusters/a100-x16.toml", workload]
        .iter()
        .chain(["--set", "lemix.tau=0.2"].iter())
        .chain(common.iter())
        .map(|s| s.to_string())
        .collect();
    let (code, swept, err) = run(&sweep);
    assert_eq!(code, 0, "{err}");
    let simulate: Vec<String> = ["simulate", "examples/clusters/a100-x16.toml", workload]
        .iter()
        .chain(common.iter())
        .chain(["--format", "csv"].iter())
        .map(|s| s.to_string())
        .collect();
    let (code, simulated, err) = run(&simulate);
    assert_eq!(code, 0, "{err}");
    let (swept, simulated) = (long_values(&swept), long_values(&simulated));
    assert_eq!(
        swept.get(&("lemix".into(), "inference_requests".into())),
        Some(&"12.0".to_string()),
        "the trace's 12 requests"
    );
    // The same task set as `simulate`, which reads the trace: the same value for every metric.
    assert_eq!(swept, simulated);
    // A swept trace path is read too, relative to the workload file; a missing one is an
    // input error naming it.
    sweep.splice(3..5, ["--set".into(), "inference.trace=missing.csv".into()]);
    let (code, _, err) = run(&sweep);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing.csv"), "{err}");
}
