//! `simulate` and `capacity` on the specs imported from the example Kubernetes snapshot.

use crate::support::run_strs;

/// Imports the example Kubernetes snapshot into a fresh folder: (cluster, workload) paths.
fn imported_example(tag: &str) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("coplan-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cluster = dir.join("c.toml").display().to_string();
    let workload = dir.join("w.toml").display().to_string();
    let (code, _, err) = run_strs(&[
        "import",
        "k8s",
        "examples/k8s/cluster-snapshot.yaml",
        "examples/k8s/noderesourcetopologies.yaml",
        "--out-cluster",
        &cluster,
        "--out-workload",
        &workload,
    ]);
    assert_eq!(code, 0, "{err}");
    (cluster, workload)
}

#[test]
fn simulate_on_an_imported_snapshot_runs_one_seed_and_says_so() {
    // An imported workload lists its pods and preemptors and has no [fill]: no seed changes
    // anything, so one seed runs whatever is asked, and no interval is claimed.
    let (cluster, workload) = imported_example("sim-one-seed");
    let args = [
        "simulate",
        &cluster,
        &workload,
        "--seeds",
        "5",
        "--cycles",
        "2",
        "--planners",
        "k8s-default,flextopo-imp",
    ];
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let (code, out, err) = run_strs(&json_args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: nothing in this workload is random"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["seeds"], serde_json::json!([1]));
    assert_eq!(v["seeds_requested"], serde_json::json!([1, 2, 3, 4, 5]));
    assert_eq!(v["nothing_random"], true);
    assert!(
        v["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("one seed is run (5 were asked)"))
    );
    for p in v["planners"].as_array().expect("planners") {
        for (metric, s) in p["metrics"].as_object().expect("metrics") {
            assert!(s["ci95"].is_null(), "{metric}: {s}");
            assert_eq!(s["n"], 1, "{metric}");
        }
        assert_eq!(
            p["totals"]["preemptions"], 12,
            "6 preemptors × 2 cycles × 1 seed"
        );
    }
    let (code, out, err) = run_strs(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 seed × 2 cycles; values exact, CI not applicable"),
        "{out}"
    );
    assert!(
        out.contains("note: nothing in this workload is random"),
        "{out}"
    );
    assert!(!out.contains('±'), "{out}");
    let mut csv_args = args.to_vec();
    csv_args.extend(["--format", "csv"]);
    let (code, out, err) = run_strs(&csv_args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: nothing in this workload is random"),
        "{err}"
    );
    assert!(
        out.lines()
            .skip(1)
            .all(|l| l.split(',').nth(2) == Some("1")),
        "{out}"
    );
    // A workload with a [fill] draws it per seed: every seed runs, no note.
    let (code, out, err) = run_strs(&[
        "simulate",
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/capacity-tiny.toml",
        "--seeds",
        "3",
        "--cycles",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        (v["seeds"].clone(), v["nothing_random"].clone()),
        (serde_json::json!([1, 2, 3]), false.into())
    );
}

#[test]
fn capacity_shrinks_a_pool_of_an_imported_snapshot() {
    // The H100 pool (2 nodes) can be asked about 1: gpu-h100-02 holds fewer GPUs and goes;
    // its 4-GPU pretraining pod fits nowhere else, so one node cannot hold today's load.
    let (cluster, workload) = imported_example("capacity-shrink");
    let (code, out, err) = run_strs(&[
        "capacity",
        &cluster,
        &workload,
        "--pool",
        "2",
        "--target",
        "hit_rate>=0.9",
        "--planners",
        "flextopo-imp",
        "--cycles",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let p = &v["planners"][0];
    let one = p["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .find(|q| q["value"] == 1.0)
        .cloned()
        .expect("1 server tried");
    assert_eq!(one["removed_servers"], serde_json::json!(["gpu-h100-02"]));
    assert_eq!(
        one["displaced"],
        serde_json::json!(["train/llm-pretrain-0"])
    );
    assert_eq!(one["replaced_pods"], 3);
    assert_eq!(one["status"], "cannot_hold_load");
    // 1 was tried and fails: 2 is found, not a bound.
    assert_eq!(
        (p["verdict"].clone(), p["answer"].clone()),
        ("found".into(), 2.0.into())
    );
}
