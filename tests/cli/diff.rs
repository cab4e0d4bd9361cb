//! `coplan diff` through the binary: simulate outputs produced here from a small example (the
//! same run against itself, a changed spec, other seeds, planners or cycles) and hand-written
//! ones in `tests/fixtures/diff/` whose regressions are known, with the transcripts of the
//! formats and refusals as insta snapshots in the top-level `snapshots/` folder.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::{root, run_coplan};
use serde_json::Value;

const CLUSTER: &str = "examples/clusters/gpu-2s4n8g-x4.toml";
const WORKLOAD: &str = "tests/fixtures/valid/sim-small.toml";
const PLANNERS: &str = "k8s-default,flextopo-imp";
const BASE: &str = "tests/fixtures/diff/base.json";
const REGRESSED: &str = "tests/fixtures/diff/regressed.json";

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coplan-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `simulate … --format json` into `name` in the temp folder.
fn simulate(name: &str, workload: &Path, extra: &[&str]) -> PathBuf {
    let out = temp_dir().join(name);
    let mut args: Vec<String> = ["simulate", CLUSTER]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(workload.display().to_string());
    args.extend(["--format", "json", "--out"].iter().map(|s| s.to_string()));
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let (code, _, err) = run_coplan(&args);
    assert_eq!(code, 0, "simulate {name}: {err}");
    out
}

/// The baseline every generated comparison shares: 3 seeds × 2 cycles.
fn baseline() -> &'static Path {
    static A: OnceLock<PathBuf> = OnceLock::new();
    A.get_or_init(|| {
        simulate(
            "a.json",
            &root().join(WORKLOAD),
            &["--seeds", "3", "--cycles", "2", "--planners", PLANNERS],
        )
    })
}

fn diff(a: &Path, b: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "diff".to_string(),
        a.display().to_string(),
        b.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    run_coplan(&args)
}

/// A diagnostic on one line: miette wraps long messages and draws a gutter at the breaks.
fn one_line(err: &str) -> String {
    err.split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ")
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("diff writes JSON")
}

fn rows(report: &Value) -> &Vec<Value> {
    report["rows"].as_array().expect("rows")
}

fn snapshot(name: &str, args: &[&str]) {
    let (code, stdout, stderr) = run_coplan(args);
    let text = format!(
        "$ coplan {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
        args.join(" ")
    );
    common::snapshot::assert_snapshot(&format!("diff__{name}"), &text, &[]);
}

#[test]
fn a_run_against_itself_changes_nothing_and_passes_every_gate() {
    let a = baseline();
    let (code, out, err) = diff(a, a, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    let gateable: Vec<String> = rows(&report)
        .iter()
        .filter(|r| !r["better"].is_null())
        .filter_map(|r| r["metric"].as_str().map(String::from))
        .collect();
    assert!(!gateable.is_empty());
    for r in rows(&report) {
        assert_eq!(r["diff"], 0.0, "{r}");
        assert_eq!(r["n"], 3, "{r}");
        assert_eq!(
            (&r["ci95_low"], &r["ci95_high"]),
            (&0.0.into(), &0.0.into())
        );
        assert_eq!(r["verdict"], "no_change", "{r}");
    }
    assert_eq!(report["notes"], Value::Array(vec![]));
    let (code, _, err) = diff(a, a, &["--fail-on-regression", &gateable.join(",")]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_changed_spec_is_compared_and_a_changed_planner_set_is_refused() {
    let a = baseline();
    let text = std::fs::read_to_string(root().join(WORKLOAD)).expect("workload");
    let changed = temp_dir().join("alpha.toml");
    std::fs::write(&changed, format!("{text}\n[flextopo]\nalpha = 0.9\n")).expect("write");
    let b = simulate(
        "alpha.json",
        &changed,
        &["--seeds", "3", "--cycles", "2", "--planners", PLANNERS],
    );
    let (code, out, err) = diff(a, &b, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    let (ra, rb) = (json(&read(a)), json(&read(&b)));
    let metrics = |v: &Value, planner: usize| {
        v["planners"][planner]["per_seed"]
            .as_object()
            .map_or(0, |m| m.len())
    };
    assert_eq!(
        rows(&report).len(),
        metrics(&ra, 0) + metrics(&ra, 1),
        "every metric of both planners compared"
    );
    assert_eq!(metrics(&ra, 1), metrics(&rb, 1));
    let only_default = simulate(
        "k8s-only.json",
        &root().join(WORKLOAD),
        &["--seeds", "3", "--cycles", "2", "--planners", "k8s-default"],
    );
    let (code, _, err) = diff(a, &only_default, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("planners: only in A: flextopo-imp"), "{err}");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("simulate output")
}

#[test]
fn mismatched_seeds_are_refused_naming_both_files_and_the_seeds() {
    let a = baseline();
    let b = simulate(
        "two-seeds.json",
        &root().join(WORKLOAD),
        &["--seeds", "2", "--cycles", "2", "--planners", PLANNERS],
    );
    let (code, out, err) = diff(a, &b, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    let err = one_line(&err);
    assert!(err.contains("a.json` (A) and"), "{err}");
    assert!(err.contains("two-seeds.json` (B)"), "{err}");
    assert!(
        err.contains("seeds: A has 3 (1-3), B has 2 (1-2); only in A: 3"),
        "{err}"
    );
}

#[test]
fn other_cycles_are_compared_with_a_note() {
    let a = baseline();
    let b = simulate(
        "one-cycle.json",
        &root().join(WORKLOAD),
        &["--seeds", "3", "--cycles", "1", "--planners", PLANNERS],
    );
    let (code, out, err) = diff(a, &b, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    assert_eq!(
        report["notes"][0],
        "the cycles per seed differ: A has 2, B has 1"
    );
    assert_eq!(
        (&report["a"]["cycles"], &report["b"]["cycles"]),
        (&2.into(), &1.into())
    );
    let (code, table, _) = diff(a, &b, &[]);
    assert_eq!(code, 0);
    assert!(
        table.contains("note: the cycles per seed differ: A has 2, B has 1"),
        "{table}"
    );
}

#[test]
fn one_seed_gives_no_interval_and_never_a_regression() {
    let one = simulate(
        "one-seed.json",
        &root().join(WORKLOAD),
        &["--seeds", "1", "--cycles", "1", "--planners", PLANNERS],
    );
    let (code, out, err) = diff(
        &one,
        &one,
        &[
            "--format",
            "json",
            "--fail-on-regression",
            "hit_rate,victims",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    assert!(
        report["notes"][0]
            .as_str()
            .is_some_and(|n| n.starts_with("1 seed(s) paired: no confidence interval")),
        "{report}"
    );
    for r in rows(&report) {
        assert_eq!(r["n"], 1);
        assert!(r["ci95_low"].is_null() && r["ci95_high"].is_null(), "{r}");
        assert_eq!(r["verdict"], "no_ci");
    }
}

#[test]
fn every_metric_simulate_writes_has_a_direction_or_is_deliberately_without() {
    let colocation = simulate_colocation();
    for path in [baseline().to_path_buf(), colocation] {
        let v = json(&read(&path));
        for p in v["planners"].as_array().expect("planners") {
            let per_seed = p["per_seed"].as_object().expect("per-seed values");
            assert_eq!(
                per_seed.keys().collect::<Vec<_>>(),
                p["metrics"]
                    .as_object()
                    .expect("metrics")
                    .keys()
                    .collect::<Vec<_>>(),
                "per_seed holds the summarised metrics"
            );
            let seeds = v["seeds"].as_array().map_or(0, Vec::len);
            for (metric, values) in per_seed {
                assert_eq!(values.as_array().map(Vec::len), Some(seeds), "{metric}");
                assert!(
                    coplan::sim::diff::better(metric).is_some()
                        || coplan::sim::diff::UNDIRECTED.contains(&metric.as_str()),
                    "`{metric}` needs a direction in sim::diff::DIRECTIONS or a place in UNDIRECTED"
                );
            }
        }
    }
}

fn simulate_colocation() -> PathBuf {
    let out = temp_dir().join("colocation.json");
    let (code, _, err) = run_coplan(&[
        "simulate",
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
        "--seeds",
        "1",
        "--format",
        "json",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn a_regression_beyond_noise_exits_3_after_writing_the_output() {
    let (code, out, err) = run_coplan(&[
        "diff",
        BASE,
        REGRESSED,
        "--format",
        "json",
        "--fail-on-regression",
        "victims,hit_rate",
    ]);
    assert_eq!(code, 3, "{err}");
    let report = json(&out);
    assert_eq!(
        report["fail_on_regression"],
        serde_json::json!(["victims", "hit_rate"])
    );
    let regressions = report["regressions"].as_array().expect("regressions");
    assert_eq!(regressions.len(), 1);
    assert_eq!(
        (&regressions[0]["planner"], &regressions[0]["metric"]),
        (&"flextopo-imp".into(), &"hit_rate".into())
    );
    assert!(err.contains("flextopo-imp hit_rate"), "{err}");
    // Fewer victims is better: gating on victims alone passes.
    let (code, _, err) = run_coplan(&["diff", BASE, REGRESSED, "--fail-on-regression", "victims"]);
    assert_eq!(code, 0, "{err}");
    // With --out the file is written before the exit code says why.
    let file = temp_dir().join("regressed.csv");
    let (code, stdout, _) = run_coplan(&[
        "diff",
        BASE,
        REGRESSED,
        "--format",
        "csv",
        "--out",
        &file.display().to_string(),
        "--fail-on-regression",
        "hit_rate",
    ]);
    assert_eq!(code, 3);
    assert!(stdout.is_empty());
    let csv = std::fs::read_to_string(&file).expect("--out written");
    assert!(csv.contains("flextopo-imp,hit_rate,higher,"), "{csv}");
    assert!(
        csv.lines()
            .any(|l| l.starts_with("flextopo-imp,hit_rate") && l.ends_with(",worse"))
    );
}

#[test]
fn gating_an_unknown_or_undirected_metric_is_an_input_error() {
    for (metric, needle) in [
        ("nope", "`nope` is not a metric of both outputs"),
        ("gap", "`gap` is not a metric of both outputs"),
        ("preemptions", "`preemptions` has no known better direction"),
    ] {
        let (code, out, err) =
            run_coplan(&["diff", BASE, REGRESSED, "--fail-on-regression", metric]);
        assert_eq!(code, 2, "{metric}: {err}");
        assert!(
            out.is_empty(),
            "{metric}: nothing written on an input error"
        );
        let err = one_line(&err);
        assert!(err.contains(needle), "{metric}: {err}");
    }
    let (_, _, err) = run_coplan(&["diff", BASE, REGRESSED, "--fail-on-regression", "nope"]);
    let err = one_line(&err);
    assert!(
        err.contains("they compare hit_rate, preemptions, slowdown_guaranteed, victims"),
        "{err}"
    );
}

#[test]
fn snapshot_table() {
    snapshot("table", &["diff", BASE, REGRESSED]);
}

#[test]
fn snapshot_json() {
    snapshot("json", &["diff", BASE, REGRESSED, "--format", "json"]);
}

#[test]
fn snapshot_csv() {
    snapshot("csv", &["diff", BASE, REGRESSED, "--format", "csv"]);
}

#[test]
fn snapshot_fail_on_regression() {
    snapshot(
        "fail-on-regression",
        &[
            "diff",
            BASE,
            REGRESSED,
            "--fail-on-regression",
            "hit_rate,victims",
        ],
    );
}

#[test]
fn snapshot_kind_mismatch() {
    snapshot(
        "kind-mismatch",
        &["diff", BASE, "tests/fixtures/diff/colocation.json"],
    );
}

#[test]
fn snapshot_old_version() {
    snapshot(
        "old-version",
        &["diff", BASE, "tests/fixtures/diff/old-version.json"],
    );
}

#[test]
fn snapshot_syntax_error() {
    snapshot(
        "syntax-error",
        &["diff", "tests/fixtures/diff/syntax-error.json", BASE],
    );
}

#[test]
fn snapshot_plan_output() {
    snapshot(
        "plan-output",
        &["diff", "tests/fixtures/diff/plan-output.json", BASE],
    );
}
