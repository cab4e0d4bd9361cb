//! Gangs above the server (DESIGN §12.3): the hand-checked cases of `tests/fixtures/gangs`
//! against their snapshots and against the numbers worked out in each fixture's header.

use serde_json::Value;

use crate::support::{fixture_args, run, snapshot_every_fixture};

#[test]
fn every_gang_fixture_matches_its_snapshot() {
    snapshot_every_fixture("gangs", "plan", "gangs__", Some(0));
}

/// The plan of one fixture of `tests/fixtures/gangs`, as JSON.
fn plan(name: &str) -> Value {
    let rel = format!("tests/fixtures/gangs/{name}.toml");
    let args = fixture_args(&crate::common::root().join(&rel), &rel);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("JSON")
}

fn planner<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["planners"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("planner {name}"))
}

fn event(plan: &Value, name: &str) -> Value {
    planner(plan, name)["events"][0].clone()
}

fn sorted(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(String::from))
        .collect();
    out.sort();
    out
}

fn nodes(e: &Value) -> Vec<String> {
    let mut out: Vec<String> = e["gang"]["placements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["node"].as_str().map(String::from))
        .collect();
    out.sort();
    out
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-3)
}

#[test]
fn pod_by_pod_preemption_splits_a_gang_the_optimum_keeps_in_one_rack() {
    let p = plan("split-by-pod-by-pod");
    let blind = event(&p, "k8s-default");
    assert_eq!(blind["outcome"], "split");
    assert_eq!(blind["gang"]["spread_level"], "cluster");
    assert_eq!(sorted(&blind["victims"]), ["low-10-0", "low-20-0"]);
    let m = &planner(&p, "k8s-default")["metrics"];
    assert_eq!(m["wasted_evictions"], 2);
    assert_eq!(m["gangs"]["split"], 1);
    for exact in ["ilp", "ilp-batch", "flextopo-imp"] {
        let e = event(&p, exact);
        assert_eq!(e["outcome"], "placed", "{exact}");
        assert_eq!(e["gang"]["domain"], "r2", "{exact}");
        assert_eq!(sorted(&e["victims"]), ["low-20-0", "low-30-0"], "{exact}");
        assert!(
            close(&e["cost"], 2.0 + 30.0 / 91.0),
            "{exact}: {}",
            e["cost"]
        );
    }
    assert_eq!(planner(&p, "ilp-batch")["status"], "optimal");
    // Kueue's best fit takes the rack with the least capacity once its pods are treated as
    // gone: both hold two hosts, so the first, r1, at 2 + 40/91.
    let kueue = event(&p, "kueue-tas");
    assert_eq!(kueue["gang"]["domain"], "r1");
    assert!(close(&kueue["cost"], 2.0 + 40.0 / 91.0));
}

#[test]
fn a_gang_that_fits_only_one_nvlink_domain_frees_all_of_it() {
    let p = plan("whole-nvlink-domain");
    for name in ["ilp", "ilp-batch", "kueue-tas", "flextopo-imp"] {
        let e = event(&p, name);
        assert_eq!(e["outcome"], "placed", "{name}");
        assert_eq!(e["gang"]["domain"], "d1", "{name}");
        assert_eq!(nodes(&e), ["d1-h0", "d1-h1", "d1-h2", "d1-h3"], "{name}");
        assert_eq!(e["victims"].as_array().map(Vec::len), Some(4), "{name}");
    }
    let blind = event(&p, "k8s-default");
    assert_eq!(blind["outcome"], "split");
    assert_eq!(planner(&p, "k8s-default")["metrics"]["wasted_evictions"], 4);
}

#[test]
fn the_optimum_weighs_a_preferred_level_by_its_penalty() {
    // Spread over the block: 2 × 2.0 × (1 − 1/1.15); inside a rack one victim more.
    let mild = plan("preferred-costs-more");
    let e = event(&mild, "ilp");
    assert_eq!(e["gang"]["spread_level"], "block");
    assert_eq!(e["gang"]["preferred_hit"], false);
    assert!(e["victims"].as_array().is_some_and(Vec::is_empty));
    assert!(close(&e["cost"], 4.0 * (1.0 - 1.0 / 1.15)));
    // Over a block that costs 3× a host, the victim pays: 1.0 + 2 × 2.0 × (1 − 1/1.05).
    let steep = plan("preferred-pays");
    let e = event(&steep, "ilp");
    assert_eq!(e["gang"]["spread_level"], "rack");
    assert_eq!(e["gang"]["preferred_hit"], true);
    assert!(close(&e["cost"], 1.0 + 4.0 * (1.0 - 1.0 / 1.05)));
    let kueue = event(&steep, "kueue-tas");
    assert_eq!(
        kueue["gang"]["spread_level"], "block",
        "Kueue does not preempt for a preference"
    );
    assert_eq!(planner(&steep, "ilp-batch")["status"], "optimal");
}

#[test]
fn kueue_admits_a_gang_the_kubelet_refuses_and_the_optimum_frees_numa_nodes() {
    let p = plan("kueue-admitted-cannot-run");
    let kueue = event(&p, "kueue-tas");
    assert_eq!(
        kueue["outcome"], "refused",
        "admitted by counts, refused by the kubelet"
    );
    assert!(kueue["victims"].as_array().is_some_and(Vec::is_empty));
    for name in ["ilp", "ilp-batch"] {
        let e = event(&p, name);
        assert_eq!(e["outcome"], "placed", "{name}");
        assert_eq!(nodes(&e), ["h0", "h0"], "{name}");
        assert_eq!(e["victims"].as_array().map(Vec::len), Some(2), "{name}");
        assert!(close(&e["cost"], 2.0), "{name}: {}", e["cost"]);
    }
}

#[test]
fn a_sweep_of_gangs_writes_gang_metrics_that_merge_reads() {
    let dir = std::env::temp_dir().join(format!("coplan-gang-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let out = dir.join("sweep.csv");
    let out_arg = out.to_string_lossy().to_string();
    let (code, _, err) = crate::support::run_strs(&[
        "sweep",
        "examples/clusters/h100-racks.toml",
        "examples/workloads/gangs-racks.toml",
        "--set",
        "fill.target_gpu_utilization=0.8,0.9",
        "--seeds",
        "2",
        "--cycles",
        "1",
        "--planners",
        "ilp,kueue-tas",
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = std::fs::read_to_string(&out).expect("shard");
    assert!(rows.contains(",gangs.hit_rate.rack,"), "{rows}");
    assert!(rows.contains(",gangs.over_eviction,"));
    let (code, merged, err) = crate::support::run_strs(&["merge", &out_arg]);
    assert_eq!(code, 0, "{err}");
    assert!(merged.contains("kueue-tas"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn simulate_prints_the_gang_metrics_of_a_workload_of_gangs() {
    let (code, out, err) = crate::support::run_strs(&[
        "simulate",
        "examples/clusters/h100-racks.toml",
        "examples/workloads/gangs-racks.toml",
        "--seeds",
        "2",
        "--cycles",
        "1",
        "--planners",
        "k8s-default,ilp",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gangs, per cycle:"), "{out}");
    assert!(
        out.contains("hit rack") && out.contains("over-eviction"),
        "{out}"
    );
}
