//! `coplan merge` refuses shards that do not make up one sweep: shards of other sweeps (other
//! swept values, seeds, planners, cluster), repeated or lost rows, rows of another scenario,
//! overlaps, missing scenarios and shards without a fingerprint. Each refusal exits 2 and
//! points at the file and line it is about. The malformed shards are the fixtures of
//! `tests/fixtures/invalid/shards/`, each with a `*.case` file naming its command.
//!
//! Ctrl-C (the `interrupt` module) sits beside them: both check what coplan promises when its
//! inputs or its run are cut short.

#[cfg(unix)]
mod interrupt;
mod merge_rows;

use std::path::PathBuf;

use crate::common::{self, root, run_coplan};

const SHARDS: &str = "tests/fixtures/invalid/shards";

fn merge(files: &[&str]) -> (i32, String) {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().map(|f| format!("{SHARDS}/{f}")));
    let (code, _, err) = run_coplan(&args);
    (code, err)
}

/// The text of a diagnostic without miette's line wrapping, for phrase checks.
fn unwrapped(err: &str) -> String {
    err.lines()
        .map(|l| l.trim_start_matches([' ', '│', '×']).trim())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_malformed_shard_case_is_refused_at_its_file_and_line() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/invalid"))
        .expect("the fixture folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    cases.sort();
    let mut merges = 0;
    for case in &cases {
        let text = std::fs::read_to_string(case).expect("readable case");
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
                .unwrap_or_else(|| panic!("{}: no `# {key}:` line", case.display()))
                .to_string()
        };
        let command = field("coplan");
        if !command.starts_with("merge ") {
            continue;
        }
        merges += 1;
        let points_at = field("points-at");
        let args: Vec<&str> = command.split_whitespace().collect();
        let (code, _, err) = run_coplan(&args);
        assert_eq!(code, 2, "{}: {err}", case.display());
        assert!(
            err.contains(&format!("─[{points_at}:")),
            "{}: the diagnostic points at {points_at}: {err}",
            case.display()
        );
    }
    assert!(merges >= 6, "the malformed shard cases are there");
}

#[test]
fn shards_of_sweeps_over_other_values_are_refused_naming_both() {
    let (code, err) = merge(&["mixed-alpha-a.csv", "mixed-alpha-b.csv"]);
    assert_eq!(code, 2, "{err}");
    let err = unwrapped(&err);
    assert!(
        err.contains("mixed-alpha-b.csv` was swept over flextopo.alpha = 0,0.5")
            && err.contains("mixed-alpha-a.csv` over flextopo.alpha = 0,1"),
        "{err}"
    );
}

#[test]
fn shards_with_other_seeds_or_planners_are_refused() {
    let (code, err) = merge(&["mixed-seeds-a.jsonl", "mixed-seeds-b.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(unwrapped(&err).contains("ran seeds 1..=2"), "{err}");
    let (code, err) = merge(&["mixed-planners-a.csv", "mixed-planners-b.csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains("ran planners k8s-default,flextopo-imp"),
        "{err}"
    );
}

#[test]
fn shards_of_another_cluster_file_are_refused() {
    let dir = std::env::temp_dir().join(format!("coplan-merge-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let original = "examples/clusters/gpu-2s4n8g-x4.toml";
    // The same servers, another file: its results could differ in anything the file sets.
    let edited = dir.join("cluster.toml");
    let text = std::fs::read_to_string(root().join(original)).expect("cluster");
    std::fs::write(&edited, format!("{text}\n# edited\n")).expect("write");
    let mut files = Vec::new();
    for (i, cluster) in [original.to_string(), edited.display().to_string()]
        .iter()
        .enumerate()
    {
        let out = dir.join(format!("s{i}.csv")).display().to_string();
        let shard = format!("{i}/2");
        let (code, _, err) = common::process::small_sweep(
            cluster,
            "tests/fixtures/valid/sim-small.toml",
            "k8s-default",
            &["--shard", &shard, "--out", &out],
        );
        assert_eq!(code, 0, "{err}");
        files.push(out);
    }
    let (code, _, err) = run_coplan(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains("read a cluster file with hash"),
        "{err}"
    );
    assert!(err.contains(&format!("─[{}:1:", files[1])), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_duplicate_row_is_refused_naming_both_copies() {
    let (code, err) = merge(&["duplicate-row.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains(
            "duplicate row: scenario 1, planner k8s-default, seed 1, metric objective is already on line 20"
        ),
        "{err}"
    );
    assert!(err.contains("duplicate-row.jsonl:21:"), "{err}");
    let (code, err) = merge(&["duplicate-row.csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("duplicate-row.csv:17:"), "{err}");
}

#[test]
fn a_missing_row_is_refused_naming_its_scenario() {
    let (code, err) = merge(&["missing-row.csv"]);
    assert_eq!(code, 2, "{err}");
    let err = unwrapped(&err);
    assert!(
        err.contains("the header counts 14 rows for scenario 0, 13 are in the file"),
        "{err}"
    );
    let (code, err) = merge(&["missing-row.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains("scenario 1, 13 are in the file (planner k8s-")
            && unwrapped(&err).contains("metric wasted_evictions)"),
        "{err}"
    );
}

#[test]
fn a_row_with_another_scenarios_value_is_refused() {
    let (code, err) = merge(&["wrong-value.csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains("scenario 1 of this sweep is flextopo.alpha = 1"),
        "{err}"
    );
    assert!(err.contains("wrong-value.csv:20:"), "{err}");
    let (code, err) = merge(&["edited-header.csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(unwrapped(&err).contains("the header was edited"), "{err}");
}

#[test]
fn overlapping_shards_and_missing_scenarios_are_refused() {
    let (code, err) = merge(&["overlap-a.csv", "overlap-b.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(unwrapped(&err).contains("overlapping shards"), "{err}");
    let (code, err) = merge(&["missing-scenario.csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        unwrapped(&err).contains("scenarios 1, 2 are in none of the inputs"),
        "{err}"
    );
}

#[test]
fn shards_without_a_fingerprint_are_refused_with_what_to_do() {
    for file in ["no-fingerprint.csv", "no-fingerprint.jsonl"] {
        let (code, err) = merge(&[file]);
        assert_eq!(code, 2, "{err}");
        assert!(
            unwrapped(&err).contains("re-run its sweep with this coplan"),
            "{file}: {err}"
        );
    }
}

#[test]
fn the_halves_of_one_sweep_merge_and_keep_its_fingerprint() {
    let (code, out, err) = run_coplan(&[
        "merge",
        &format!("{SHARDS}/overlap-a.csv"),
        &format!("{SHARDS}/mixed-seeds-a.jsonl"),
    ]);
    // Shard 0 of one sweep and shard 0 of the same sweep in JSON Lines: an overlap.
    assert_eq!(code, 2, "{out}{err}");
    let whole = std::fs::read_to_string(root().join(format!("{SHARDS}/overlap-b.jsonl")))
        .expect("the whole sweep");
    let (code, merged, err) = run_coplan(&[
        "merge",
        &format!("{SHARDS}/overlap-b.jsonl"),
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, whole, "a whole sweep merges into itself");
    assert!(merged.starts_with("{\"coplan_sweep\":{\"fingerprint\":\"fnv1a64:"));
}
