//! `coplan capacity` on co-location workloads: every candidate printed, trace workloads
//! scaled, and the answer independent of the spec's own rate.

use crate::common::root;
use crate::support::run_strs;

#[test]
fn capacity_prints_every_candidate_and_scales_trace_workloads() {
    let cluster = "examples/clusters/a100-x16.toml";
    let workload = "examples/workloads/colocation-small.toml";
    let (code, out, err) = run_strs(&[
        "capacity",
        cluster,
        workload,
        "--planners",
        "separate,mix-rr,ilp",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let planners = v["planners"].as_array().expect("planners");
    assert_eq!(
        planners.len(),
        2,
        "the reference planner has no rate of its own"
    );
    assert!(
        planners
            .iter()
            .all(|p| p["answer"].as_f64().unwrap_or(0.0) > 0.0)
    );
    // A trace workload is probed with its arrivals scaled, not refused.
    let (code, _, err) = run_strs(&["capacity", cluster, "tests/fixtures/valid/coloc-trace.toml"]);
    assert_eq!(code, 0, "{err}");
    // Sweeps take the load as a fraction of SEPARATE's capacity.
    let (code, rows, err) = run_strs(&[
        "sweep",
        cluster,
        workload,
        "--set",
        "inference.load=0.3,0.9",
        "--seeds",
        "1",
        "--planners",
        "separate",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(rows.contains(",0.3,separate,1,slo_attainment_5x,") && rows.contains(",0.9,separate,"));
}

#[test]
fn colocation_capacity_does_not_depend_on_the_spec_rate_and_scales_traces() {
    let capacity = |workload: &str| {
        let (code, out, err) = run_strs(&[
            "capacity",
            "examples/clusters/a100-x16.toml",
            workload,
            "--planners",
            "separate",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        v["planners"][0]["answer"].as_f64().expect("a rate")
    };
    let dir = std::env::temp_dir().join(format!("coplan-capacity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let spec = std::fs::read_to_string(root().join("examples/workloads/colocation-small.toml"))
        .expect("example");
    let at_own = capacity("examples/workloads/colocation-small.toml");
    let fast = dir.join("fast.toml");
    std::fs::write(&fast, spec.replace("rate_rps = 12", "rate_rps = 1e5")).expect("write");
    let at_1e5 = capacity(&fast.display().to_string());
    assert!(at_own > 1.0, "separate keeps up at {at_own} rps");
    // Bisection ends within 2^-12 of its bracket, and the two brackets differ.
    assert!(
        (at_own - at_1e5).abs() <= 0.01 * at_own,
        "capacity from 12 rps: {at_own}; from 1e5 rps: {at_1e5}"
    );
    // A trace workload: its arrivals are scaled, not refused.
    let trace = capacity("tests/fixtures/valid/coloc-trace.toml");
    assert!(trace > 0.0, "the trace's capacity is {trace}");
    let _ = std::fs::remove_dir_all(&dir);
}
