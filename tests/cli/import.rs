//! `coplan import`: Kubernetes snapshots, the Alibaba GPU trace and Azure requests into
//! specs. Valid inputs are snapshotted (the written cluster, workload and summary) and
//! planned; every malformed input exits 2 with a diagnostic that names its file, line and
//! column, snapshotted too.

mod devices;
mod fabric;
mod invalid;
mod k8s;
mod traces;

use std::path::{Path, PathBuf};

use crate::common::{self, root};

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_coplan(args)
}

/// A fresh folder for a test's output files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coplan-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn snapshot(name: &str, text: &str) {
    let scratch_folders = [(r"/[^ ]*coplan-import-[0-9]+-[a-z0-9-]+/", "[tmp]/")];
    common::snapshot::assert_snapshot(name, text, &scratch_folders);
}

/// `coplan import k8s` of `args` (inputs and options), writing the cluster and the workload to
/// the files given.
fn import_k8s(args: &[&str], cluster: &str, workload: &str) -> (i32, String, String) {
    let mut all = vec!["import", "k8s"];
    all.extend_from_slice(args);
    all.extend(["--out-cluster", cluster, "--out-workload", workload]);
    run(&all)
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Imports with `args` (the outputs appended), checks the specs validate and plan, and
/// returns the transcript: the cluster, the workload and the summary.
fn import_and_plan(name: &str, args: &[&str]) -> String {
    import_and_plan_with(name, args, "k8s-default,k8s-nrt,flextopo-imp,ilp")
}

/// [`import_and_plan`] with the planners `planners` (a list that holds flextopo-imp).
fn import_and_plan_with(name: &str, args: &[&str], planners: &str) -> String {
    let dir = scratch(name);
    let (c, w) = (dir.join("cluster.toml"), dir.join("workload.toml"));
    let (c, w) = (path_str(&c), path_str(&w));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--out-cluster", &c, "--out-workload", &w]);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "{name}: import failed:\n{stderr}");
    assert!(stdout.is_empty(), "{name}: the text summary goes to stderr");
    let cluster = std::fs::read_to_string(&c).expect("cluster written");
    let workload = std::fs::read_to_string(&w).expect("workload written");
    let (code, _, err) = run(&["validate", &c, &w]);
    assert_eq!(
        code, 0,
        "{name}: the written specs validate together:\n{err}"
    );
    let (code, out, err) = run(&["plan", &c, &w, "--planners", planners]);
    assert_eq!(code, 0, "{name}: the written specs plan:\n{err}");
    assert!(out.contains("flextopo-imp"));
    format!(
        "$ coplan {}\n--- cluster\n{cluster}--- workload\n{workload}--- stderr\n{stderr}",
        args.join(" ")
    )
}

/// The workload and cluster an import writes, without the first comment line (which names
/// the input file).
fn written(name: &str, file: &str) -> (String, String) {
    let dir = scratch(name);
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, _, err) = import_k8s(&[file], &c, &w);
    assert_eq!(code, 0, "{file}: {err}");
    let body = |p: &str| {
        let text = std::fs::read_to_string(p).expect("written");
        text.lines()
            .filter(|l| !l.starts_with("# Imported by") && !l.starts_with("name ="))
            .collect::<Vec<_>>()
            .join("\n")
    };
    (body(&c), body(&w))
}

/// Per planner, the victims of a plan's first eviction (as `--format evictions` names them)
/// and the plan's `pdb_violations`.
fn first_evictions(cluster: &str, workload: &str) -> Vec<(String, String, u64)> {
    let (code, out, err) = run(&["plan", cluster, workload, "--format", "evictions"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    v["planners"]
        .as_array()
        .expect("planners")
        .iter()
        .map(|p| {
            let victims: Vec<&str> = p["evictions"][0]["victims"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            (
                p["planner"].as_str().unwrap_or_default().to_string(),
                victims.join(" "),
                p["pdb_violations"].as_u64().expect("counted"),
            )
        })
        .collect()
}

/// [`first_evictions`] without the budget counts.
fn victims_by_planner(cluster: &str, workload: &str) -> Vec<(String, String)> {
    first_evictions(cluster, workload)
        .into_iter()
        .map(|(p, v, _)| (p, v))
        .collect()
}
