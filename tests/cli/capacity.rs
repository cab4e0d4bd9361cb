//! `coplan capacity` on preemption workloads: the hand-checked tiny case, the one output shape
//! shared with the co-location form, and every input error.

// `capacity` of co-location workloads.
mod colocation;

use coplan::sim::capacity::{COUNT_METRICS, TARGET_METRICS};

use crate::common;

const CLUSTER: &str = "tests/fixtures/valid/tiny-cluster.toml";
const TINY: &str = "tests/fixtures/valid/capacity-tiny.toml";

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_coplan(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
}

/// `capacity` of the tiny case, until every service is placed, with `extra` options.
fn tiny_until_placed<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["capacity", CLUSTER, TINY, "--target", "unplaced<=0"];
    args.extend_from_slice(extra);
    args
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("capacity JSON")
}

#[test]
fn the_tiny_case_needs_three_servers_as_counted_by_hand() {
    // The fixture's header counts it: 1 server leaves 3 services unplaced, 2 leave 1, 3 none.
    let v = json(&["capacity", CLUSTER, TINY, "--target", "unplaced<=0"]);
    assert_eq!(v["kind"], "capacity");
    assert_eq!(v["workload_kind"], "preemption");
    assert_eq!(v["searched"], "servers");
    assert_eq!(v["target"]["metric"], "unplaced");
    assert_eq!(v["target"]["op"], "<=");
    assert_eq!(v["hold"], "pods");
    assert_eq!(v["held_pods"], serde_json::json!([4, 4, 4]));
    for p in v["planners"].as_array().expect("planners") {
        assert_eq!(p["verdict"], "found", "{p}");
        assert_eq!(p["answer"], 3.0, "{p}");
        let at = |size: f64| {
            p["probes"]
                .as_array()
                .expect("probes")
                .iter()
                .find(|q| q["value"] == size)
                .map(|q| (q["metric"]["mean"].as_f64(), q["status"].clone()))
        };
        assert_eq!(at(1.0), Some((Some(3.0), "fails".into())));
        assert_eq!(at(2.0), Some((Some(1.0), "fails".into())));
        assert_eq!(at(3.0), Some((Some(0.0), "holds".into())));
        assert!(p["non_monotone"].as_array().is_some_and(Vec::is_empty));
    }
    // --pool by name_prefix, --min and --max narrow the sizes tried.
    let v = json(&tiny_until_placed(&[
        "--pool", "tiny-", "--min", "2", "--max", "4", "--seeds", "2", "--cycles", "1",
    ]));
    assert_eq!(v["seeds"], serde_json::json!([1, 2]));
    let p = &v["planners"][0];
    assert_eq!(p["answer"], 3.0);
    assert!(
        p["probes"]
            .as_array()
            .expect("probes")
            .iter()
            .all(|q| (2.0..=4.0).contains(&q["value"].as_f64().unwrap_or(0.0)))
    );
    // Too small a --max: not reached, and the table says to raise it.
    let (code, out, err) = run(&tiny_until_placed(&["--max", "2"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("not reached: raise --max"), "{out}");
}

#[test]
fn holding_the_utilisation_adds_load_with_the_servers_and_says_so() {
    let v = json(&tiny_until_placed(&["--hold", "utilization"]));
    assert_eq!(v["hold"], "utilization");
    assert_eq!(v["held_pods"], serde_json::json!([]));
    // At 3 servers the fill takes 6 of 12 GPUs (4 on the first server, 2 on the second): the
    // third server and the second's 2 GPUs still take the 3 services.
    let p = &v["planners"][0];
    let three = p["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .find(|q| q["value"] == 3.0)
        .expect("3 servers tried");
    assert_eq!(three["fill_pods"], 6.0);
    let (code, out, _) = run(&tiny_until_placed(&["--hold", "utilization"]));
    assert_eq!(code, 0);
    assert!(out.contains("load grows with the pool"), "{out}");
}

#[test]
fn the_co_location_form_keeps_its_meaning_in_the_same_shape() {
    let v = json(&[
        "capacity",
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
        "--planners",
        "separate",
    ]);
    assert_eq!(v["workload_kind"], "colocation");
    assert_eq!(v["searched"], "rate_rps");
    let p = &v["planners"][0];
    assert_eq!(p["verdict"], "found");
    assert!(p["answer"].as_f64().unwrap_or(0.0) > 0.0);
    // The answer is the highest rate found stable.
    let highest_stable = p["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .filter(|q| q["status"] == "holds")
        .filter_map(|q| q["value"].as_f64())
        .fold(0.0, f64::max);
    assert_eq!(p["answer"].as_f64(), Some(highest_stable));
}

#[test]
fn bad_questions_are_input_errors() {
    let cases: [(&[&str], &str); 10] = [
        (
            &tiny_until_placed(&["--seeds", "0"]),
            "0 is not in 1..=10000",
        ),
        (
            &tiny_until_placed(&["--max", "4000000000"]),
            "at most 100000 servers",
        ),
        (&["capacity", CLUSTER, TINY], "needs `--target"),
        (
            &["capacity", CLUSTER, TINY, "--target", "unplaced<0"],
            "expected METRIC>=X or METRIC<=X",
        ),
        (
            &["capacity", CLUSTER, TINY, "--target", "hitrate>=0.9"],
            "unknown metric `hitrate`",
        ),
        (&tiny_until_placed(&["--pool", "7"]), "no pool 7"),
        (
            &tiny_until_placed(&["--pool", "gpu-"]),
            "no pool has this name_prefix",
        ),
        (
            &tiny_until_placed(&["--min", "5", "--max", "3"]),
            "expected 1 ≤ min ≤ max",
        ),
        (&tiny_until_placed(&["--seed", "3"]), "`--seeds K`"),
        (
            &[
                "capacity",
                "examples/clusters/a100-x16.toml",
                "examples/workloads/colocation-small.toml",
                "--target",
                "unplaced<=0",
            ],
            "sizes a pool for a preemption workload",
        ),
    ];
    for (args, expected) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A metric no planner reports here (no guaranteed preemptors).
    let (code, _, err) = run(&[
        "capacity",
        CLUSTER,
        TINY,
        "--target",
        "hit_rate_guaranteed>=1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no planner reports `hit_rate_guaranteed`"),
        "{err}"
    );
}

#[test]
fn the_target_metrics_are_what_simulate_reports() {
    // The lists `--target` checks against must follow the metrics a simulation records.
    let v = {
        let (code, out, err) = run(&[
            "simulate", CLUSTER, TINY, "--seeds", "1", "--cycles", "1", "--format", "json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).expect("simulate JSON")
    };
    let mut reported: Vec<String> = v["planners"][0]["metrics"]
        .as_object()
        .expect("metrics")
        .keys()
        .cloned()
        .collect();
    // Metrics that are null on this workload (no guaranteed or best-effort preemptors, no
    // reference planner) are missing from the summary but still valid targets.
    reported.extend(
        [
            "decision_gap",
            "gap",
            "gpu_hours_evicted",
            "hit_rate_best_effort",
            "hit_rate_guaranteed",
            "slowdown_best_effort",
            "slowdown_guaranteed",
        ]
        .map(String::from),
    );
    reported.push("victims_per_preemption".into());
    reported.sort();
    reported.dedup();
    let mut listed: Vec<String> = TARGET_METRICS
        .iter()
        .chain(&COUNT_METRICS)
        .map(|m| m.to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, reported);
}

const SHRINK_CLUSTER: &str = "tests/fixtures/valid/shrink-cluster.toml";
const SHRINK: &str = "tests/fixtures/valid/capacity-shrink.toml";

/// `capacity` of the shrinking case, until every service is placed, with `extra` options.
fn shrink_until_placed<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "capacity",
        SHRINK_CLUSTER,
        SHRINK,
        "--target",
        "unplaced<=0",
    ];
    args.extend_from_slice(extra);
    args
}

/// The probe of the first planner at `size` servers.
fn probe_at(v: &serde_json::Value, size: f64) -> serde_json::Value {
    v["planners"][0]["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .find(|q| q["value"] == size)
        .cloned()
        .unwrap_or_else(|| panic!("{size} servers tried: {v}"))
}

#[test]
fn a_pool_shrinks_below_today_by_removing_its_emptiest_servers() {
    // The fixture's header counts it by hand.
    let v = json(&shrink_until_placed(&[]));
    assert_eq!(v["min"], 1, "below today's 4 servers, down to one");
    for p in v["planners"].as_array().expect("planners") {
        assert_eq!(
            (p["verdict"].clone(), p["answer"].clone()),
            ("found".into(), 2.0.into())
        );
    }
    let one = probe_at(&v, 1.0);
    assert_eq!(
        one["removed_servers"],
        serde_json::json!(["n-3", "n-1", "n-2"])
    );
    assert_eq!(
        (one["replaced_pods"].clone(), one["displaced_pods"].clone()),
        (1.into(), 2.into())
    );
    assert_eq!(one["displaced"], serde_json::json!(["jobs/e", "jobs/f"]));
    // Pods of today's load no longer run: the size cannot hold it.
    assert_eq!(one["status"], "cannot_hold_load");
    let two = probe_at(&v, 2.0);
    assert_eq!(two["removed_servers"], serde_json::json!(["n-3", "n-1"]));
    assert_eq!(
        (two["replaced_pods"].clone(), two["displaced_pods"].clone()),
        (1.into(), 0.into())
    );
    assert_eq!(two["status"], "holds");
    let four = probe_at(&v, 4.0);
    assert!(four.get("removed_servers").is_none(), "{four}");
    assert_eq!(four["replaced_pods"], 0);
    // Holding the utilisation instead, the displaced pods are counted and the size is judged
    // by its metric: n-0 is full, the preemptor finds no room.
    let v = json(&shrink_until_placed(&["--hold", "utilization"]));
    let one = probe_at(&v, 1.0);
    assert_eq!(
        (one["status"].clone(), one["displaced_pods"].clone()),
        ("fails".into(), 2.into())
    );
    assert_eq!(one["metric"]["mean"], 1.0);
    // The table states the moves at every size.
    let (code, out, err) = run(&shrink_until_placed(&[]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("re-placed  displaced"), "{out}");
    assert!(
        out.contains("displaced pods by size: 1: jobs/e, jobs/f"),
        "{out}"
    );
}

#[test]
fn found_is_never_reported_at_a_bound_the_search_did_not_go_below() {
    // From --min 2 the target holds at once: nothing below was tried, so 2 is "at most".
    let v = json(&shrink_until_placed(&["--min", "2"]));
    for p in v["planners"].as_array().expect("planners") {
        assert_eq!(p["verdict"], "at_most", "{p}");
        assert_eq!(p["answer"], 2.0, "{p}");
    }
    let (code, out, err) = run(&shrink_until_placed(&["--min", "2"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("≤ 2  at most: holds at 2, the smallest size searched"),
        "{out}"
    );
    assert!(!out.contains("found"), "{out}");
    // One size searched, and it holds: at most that, never "found".
    let v = json(&shrink_until_placed(&["--min", "3", "--max", "3"]));
    assert_eq!(v["planners"][0]["verdict"], "at_most");
    // One size searched that cannot hold the load (two pods displaced): not reached.
    let v = json(&shrink_until_placed(&["--min", "1", "--max", "1"]));
    assert_eq!(v["planners"][0]["verdict"], "not_reached");
}

#[test]
fn nothing_random_runs_one_seed_at_every_size() {
    let v = json(&shrink_until_placed(&[]));
    assert_eq!(v["seeds"], serde_json::json!([1]));
    assert_eq!(v["seeds_requested"], serde_json::json!([1, 2, 3]));
    assert!(
        v["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("nothing in this workload is random")),
        "{v}"
    );
    assert!(probe_at(&v, 2.0)["metric"]["ci95"].is_null());
    // With a [fill], every seed runs and there is no note.
    let v = json(&["capacity", CLUSTER, TINY, "--target", "unplaced<=0"]);
    assert_eq!(v["seeds"], serde_json::json!([1, 2, 3]));
    assert_eq!(v["notes"], serde_json::json!([]));
}
