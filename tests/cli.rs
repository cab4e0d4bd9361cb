//! Runs the `coplan` binary on every example and fixture and compares its output with the
//! insta snapshot stored in the top-level `snapshots/` folder (one fixture file → one snapshot).
//!
//! A fixture may name its command in a first-lines comment `# coplan: <args>`, where `{file}`
//! stands for the fixture's path; the default is `validate {file}`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

mod common;
#[path = "cli/generated.rs"]
mod generated;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::root;

/// Runs coplan from the repository root.
pub fn run(args: &[String]) -> (i32, String, String) {
    common::run_coplan(args)
}

/// Runs coplan with string-slice arguments.
fn run_strs(args: &[&str]) -> (i32, String, String) {
    run(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
}

fn transcript(args: &[String]) -> (i32, String) {
    let (code, stdout, stderr) = run(args);
    let text = format!(
        "$ coplan {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
        args.join(" ")
    );
    (code, text)
}

fn fixture_args(path: &Path, rel: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let line = text
        .lines()
        .take(3)
        .find_map(|l| l.strip_prefix("# coplan: "))
        .unwrap_or("validate {file}");
    line.split_whitespace()
        .map(|a| a.replace("{file}", rel))
        .collect()
}

fn header_line<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .take(8)
        .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
}

fn files(dir: &str) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(root().join(dir))
        .expect("fixture folder exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let rel = format!(
                "{dir}/{}",
                p.file_name().unwrap_or_default().to_string_lossy()
            );
            (p, rel)
        })
        .collect();
    out.sort();
    out
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => root().join("snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        // Timings vary run to run: redacted, with the padding they cause.
        filters => vec![
            (r#""runtime_ms": [0-9.eE+-]+"#, r#""runtime_ms": "[redacted]""#),
            (r"(?m)\s+[0-9]+\.[0-9]+ ms$", "  [time]"),
            (r"(?m)\s+time$", "  time"),
        ],
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn plan_snapshots_for_every_example_workload() {
    let mut seen = 0;
    for (path, rel) in files("examples/workloads") {
        let text = std::fs::read_to_string(&path).expect("example readable");
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("# coplan plan ")) else {
            continue;
        };
        let mut args: Vec<String> = vec!["plan".into()];
        args.extend(line.split_whitespace().map(String::from));
        assert!(
            args.contains(&rel),
            "{rel}: its plan line names the file itself"
        );
        for format in ["table", "json"] {
            let mut a = args.clone();
            a.extend(["--format".to_string(), format.to_string()]);
            let (code, t) = transcript(&a);
            assert_eq!(code, 0, "{t}");
            snapshot(&format!("plan__{}__{format}", stem(&path)), &t);
        }
        seen += 1;
    }
    assert!(seen >= 2, "every workload example names its plan command");
}

/// Runs the one command of every fixture of `tests/fixtures/{dir}` (at least four; each must
/// be a `command`), checks its exit code when `exit` is given, and snapshots its transcript as
/// `{prefix}{stem}`.
fn snapshot_every_fixture(dir: &str, command: &str, prefix: &str, exit: Option<i32>) {
    let fixtures = files(&format!("tests/fixtures/{dir}"));
    assert!(fixtures.len() >= 4, "the {dir} fixtures are there");
    for (path, rel) in fixtures {
        let args = fixture_args(&path, &rel);
        assert_eq!(args.first().map(String::as_str), Some(command), "{rel}");
        let (code, t) = transcript(&args);
        if let Some(expected) = exit {
            assert_eq!(code, expected, "{rel}:\n{t}");
        }
        snapshot(&format!("{prefix}{}", stem(&path)), &t);
    }
}

/// `coplan explain` on the fixtures of `tests/fixtures/explain` (one command each).
#[test]
fn explain_snapshots_for_every_fixture() {
    snapshot_every_fixture("explain", "explain", "explain__", None);
}

#[test]
fn plan_json_follows_the_contract() {
    let (code, out, err) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--format".into(),
        "json".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "preemption");
    let planners = v["planners"].as_array().expect("planners");
    assert_eq!(planners.len(), 6);
    for p in planners {
        for key in [
            "name",
            "status",
            "objective",
            "gap",
            "gap_is_bound",
            "bound",
            "decision_gap",
            "runtime_ms",
            "metrics",
            "events",
        ] {
            assert!(p.get(key).is_some(), "planner field {key}");
        }
        for key in [
            "preemptions",
            "placed",
            "unplaced",
            "hits",
            "hit_rate",
            "hit_rate_guaranteed",
            "hit_rate_best_effort",
            "victims",
            "victim_priority_sum",
            "wasted_evictions",
            "slowdown_mean",
            "slowdown_guaranteed",
            "slowdown_best_effort",
            "gpu_hours_evicted",
            "objective",
            "gap",
            "decision_gap",
            "runtime_ms",
            "subsets_evaluated",
        ] {
            assert!(p["metrics"].get(key).is_some(), "metric {key}");
        }
        for e in p["events"].as_array().expect("events") {
            for key in [
                "preemptor",
                "node",
                "victims",
                "gpus",
                "cores",
                "level",
                "required_level",
                "hit",
                "cost",
                "subsets_evaluated",
            ] {
                assert!(e.get(key).is_some(), "event field {key}");
            }
        }
    }
    let batch = planners
        .iter()
        .find(|p| p["name"] == "ilp-batch")
        .expect("ilp-batch");
    assert_eq!(batch["status"], "optimal");
}

#[test]
fn plan_writes_csv_and_out_files_and_honours_flags() {
    let dir = std::env::temp_dir().join(format!("coplan-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("plan.csv");
    let (code, stdout, err) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--format".into(),
        "csv".into(),
        "--planners".into(),
        "k8s-default,ilp".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty(), "--out keeps stdout empty");
    let csv = std::fs::read_to_string(&out).expect("written");
    assert!(csv.starts_with("scenario,planner,seed,metric,value\n"));
    assert!(csv.contains(",k8s-default,,hit_rate,1.0"));
    assert!(!csv.contains("flextopo"));
    let _ = std::fs::remove_dir_all(&dir);

    let (code, _, err) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--planners".into(),
        "k8s-default,gödel".into(),
    ]);
    assert_eq!(code, 2, "unknown planner is an input error");
    assert!(err.contains("unknown planner `gödel`"), "{err}");
}

#[test]
fn require_all_placed_exits_3_when_no_planner_places_everything() {
    let (code, stdout, _) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/preemption/unplaceable.toml".into(),
        "--require-all-placed".into(),
    ]);
    assert_eq!(code, 3);
    assert!(stdout.contains("k8s-default"), "the plan is still printed");
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_invalid_fixture_exits_2_with_a_located_diagnostic() {
    let fixtures = files("tests/fixtures/invalid");
    assert!(fixtures.len() >= 20, "expected one fixture per error case");
    for (path, rel) in fixtures {
        let args = fixture_args(&path, &rel);
        let (code, text) = transcript(&args);
        assert_eq!(code, 2, "{rel} must be rejected with exit 2:\n{text}");
        // A fixture whose error lies in a file it references names that file instead.
        let content = std::fs::read_to_string(&path).expect("fixture");
        let located = header_line(&content, "points-at")
            .unwrap_or(&rel)
            .to_string();
        assert!(
            text.contains(&format!("─[{located}:")),
            "{rel}: the diagnostic must name the file with line and column:\n{text}"
        );
        assert!(!text.contains("panicked"), "{rel} panicked:\n{text}");
        snapshot(&format!("invalid__{}", stem(&path)), &text);
    }
}

/// Cases of the invalid corpus that are not a spec file: an importer's input, a shard file, a
/// command-line value or an environment. A `.case` file holds only header lines:
/// `# coplan: <args>` (`{out}` stands for a scratch `--out` path, which must not be written),
/// `# env: KEY=VALUE` (repeatable), and either `# points-at: <file>` (the diagnostic names that
/// file with a line) or `# names: <text>` (a command-line value: the message quotes it).
#[test]
fn every_invalid_case_exits_2_with_a_located_diagnostic() {
    let dir = root().join("tests/fixtures/invalid");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    cases.sort();
    let scratch = std::env::temp_dir().join(format!("coplan-cases-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    for path in &cases {
        let name = stem(path);
        let text = std::fs::read_to_string(path).expect("case is readable");
        let out = scratch.join(format!("{name}.out"));
        let out_text = out.display().to_string();
        let args: Vec<String> = header_line(&text, "coplan")
            .unwrap_or_else(|| panic!("{name}.case has no `# coplan:` line"))
            .split_whitespace()
            .map(|a| a.replace("{out}", &out_text))
            .collect();
        let env: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# env: "))
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let output = Command::new(env!("CARGO_BIN_EXE_coplan"))
            .args(&args)
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("SLURM_ARRAY_TASK_COUNT")
            .env_remove("SLURM_ARRAY_TASK_MIN")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(root())
            .env("NO_COLOR", "1")
            .output()
            .expect("the coplan binary runs");
        let code = output.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let env_words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        let transcript = format!(
            "$ {}coplan {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            env_words.concat(),
            args.join(" ")
        )
        .replace(&out_text, "{out}");
        assert_eq!(code, 2, "{name}.case must exit 2:\n{transcript}");
        assert!(
            !transcript.contains("panicked"),
            "{name}.case panicked:\n{transcript}"
        );
        assert!(!out.exists(), "{name}.case wrote its --out file");
        match (header_line(&text, "points-at"), header_line(&text, "names")) {
            (Some(file), _) => {
                let located = transcript.contains(&format!("─[{file}:"))
                    || transcript
                        .split(&format!("{file}:"))
                        .skip(1)
                        .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
                assert!(
                    located,
                    "{name}.case: the diagnostic must name {file} with a line:\n{transcript}"
                );
            }
            (None, Some(value)) => assert!(
                transcript.contains(value),
                "{name}.case: the diagnostic must quote `{value}`:\n{transcript}"
            ),
            (None, None) => panic!("{name}.case needs `# points-at:` or `# names:`"),
        }
        snapshot(&format!("invalid__{name}"), &transcript);
    }
    let toml_fixtures = files("tests/fixtures/invalid").len();
    assert!(
        toml_fixtures + cases.len() >= 60,
        "the invalid corpus holds {} cases; at least 60 are expected",
        toml_fixtures + cases.len()
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[cfg(unix)]
#[test]
fn out_writes_through_symlinks_keeps_modes_and_leaves_fifos_fifos() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = std::env::temp_dir().join(format!("coplan-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plan_to = |out: &Path| {
        run(&[
            "plan".into(),
            "tests/fixtures/valid/tiny-cluster.toml".into(),
            "tests/fixtures/valid/tiny-running.toml".into(),
            "--planners".into(),
            "k8s-default".into(),
            "--out".into(),
            out.display().to_string(),
        ])
    };
    let real = dir.join("real.txt");
    std::fs::write(&real, "old").expect("write");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = dir.join("link.txt");
    symlink(&real, &link).expect("symlink");
    let (code, _, err) = plan_to(&link);
    assert_eq!(code, 0, "{err}");
    let link_meta = std::fs::symlink_metadata(&link).expect("link");
    assert!(link_meta.file_type().is_symlink(), "the link stays a link");
    let text = std::fs::read_to_string(&real).expect("target");
    assert!(text.starts_with("preemption plan"), "{text}");
    let mode = std::fs::metadata(&real).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the replaced file keeps its mode");
    // A FIFO is written into, not replaced by a regular file.
    let fifo = dir.join("fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap_or_default())
        };
        let (code, _, err) = plan_to(&fifo);
        assert_eq!(code, 0, "{err}");
        assert!(
            reader
                .join()
                .unwrap_or_default()
                .starts_with("preemption plan")
        );
        let kind = std::fs::symlink_metadata(&fifo).expect("fifo").file_type();
        assert!(!kind.is_file(), "the FIFO stays a FIFO");
    }
    let (code, _, _) = plan_to(&dir);
    assert_eq!(code, 2, "a directory is an input error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn seeds_and_cycles_outside_their_limits_exit_2() {
    for (flag, value) in [
        ("--seeds", "0"),
        ("--seeds", "18446744073709551615"),
        ("--seeds", "4294967295"),
        ("--cycles", "0"),
        ("--cycles", "1000001"),
    ] {
        let (code, _, err) = run_strs(&[
            "simulate",
            "tests/fixtures/valid/tiny-cluster.toml",
            "tests/fixtures/valid/tiny-running.toml",
            flag,
            value,
        ]);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains("is not in 1..="), "{flag} {value}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn every_valid_fixture_matches_its_snapshot() {
    for (path, rel) in files("tests/fixtures/valid") {
        let args = fixture_args(&path, &rel);
        let (code, text) = transcript(&args);
        assert_eq!(code, 0, "{rel} must succeed:\n{text}");
        snapshot(&format!("valid__{}", stem(&path)), &text);
    }
}

#[test]
fn every_example_validates_and_renders() {
    for dir in ["examples/clusters", "examples/workloads"] {
        for (path, rel) in files(dir) {
            let mut text = String::new();
            let (code, t) = transcript(&["validate".into(), rel.clone()]);
            assert_eq!(code, 0, "{rel} must validate:\n{t}");
            text.push_str(&t);
            if dir.ends_with("clusters") {
                let (code, t) = transcript(&[
                    "topology".into(),
                    rel.clone(),
                    "--format".into(),
                    "table".into(),
                ]);
                assert_eq!(code, 0, "{rel} topology:\n{t}");
                // A 10,000-server table would make a megabyte snapshot: its head and its size.
                const HEAD: usize = 40;
                let lines: Vec<&str> = t.lines().collect();
                if lines.len() > 200 {
                    text.push_str(&lines[..HEAD].join("\n"));
                    text.push_str(&format!("\n… {} more lines\n", lines.len() - HEAD));
                } else {
                    text.push_str(&t);
                }
            }
            snapshot(&format!("example__{}", stem(&path)), &text);
        }
    }
}

#[test]
fn all_examples_validate_together() {
    let mut args = vec!["validate".to_string()];
    for dir in ["examples/clusters", "examples/workloads"] {
        args.extend(files(dir).into_iter().map(|(_, rel)| rel));
    }
    let (code, text) = transcript(&args);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn each_workload_example_cross_checks_against_its_cluster() {
    for (cluster, workload) in [
        (
            "examples/clusters/paper-4090-x100.toml",
            "examples/workloads/paper-preemption.toml",
        ),
        (
            "examples/clusters/paper-4090-x100.toml",
            "examples/workloads/paper-preemption-kwok.toml",
        ),
        (
            "examples/clusters/paper-4090-x100.toml",
            "examples/workloads/colocation-small.toml",
        ),
    ] {
        let (code, text) = transcript(&["validate".into(), cluster.into(), workload.into()]);
        assert_eq!(code, 0, "{text}");
    }
}

#[test]
fn unreadable_file_is_an_input_error() {
    let (code, text) = transcript(&[
        "validate".into(),
        "tests/fixtures/does-not-exist.toml".into(),
    ]);
    assert_eq!(code, 2);
    snapshot("unreadable_file", &text);
}

#[test]
fn usage_errors_exit_2() {
    for args in [vec!["frobnicate"], vec!["topology"], vec!["schema", "gpu"]] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let (code, _, _) = run(&args);
        assert_eq!(code, 2, "{args:?}");
    }
}

#[test]
fn dot_output_renders_with_graphviz_when_installed() {
    let Ok(probe) = Command::new("dot").arg("-V").output() else {
        eprintln!("graphviz not installed: skipping the render check");
        return;
    };
    assert!(probe.status.success());
    let (code, dot, _) = run(&[
        "topology".into(),
        "examples/clusters/gpu-2s4n8g-x4.toml".into(),
        "--format".into(),
        "dot".into(),
    ]);
    assert_eq!(code, 0);
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dot starts");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(dot.as_bytes())
        .expect("write dot");
    let out = child.wait_with_output().expect("dot finishes");
    assert!(
        out.status.success(),
        "dot rejected the output: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
}

#[test]
fn topology_json_lists_servers_sockets_numa_cores_gpus_with_used_by() {
    let (code, out, err) = run(&[
        "topology".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--format".into(),
        "json".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let numa0 = &v["servers"][0]["sockets"][0]["numa_nodes"][1];
    assert_eq!(numa0["id"], 1);
    assert_eq!(numa0["gpus"][0]["used_by"], "batch-0");
    assert_eq!(numa0["cores"][0]["used_by"], "batch-0");
    assert_eq!(v["pods"].as_array().map(Vec::len), Some(3));
}

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
fn profile_fit_reports_r2_and_the_model_section() {
    let (code, out, err) = run(&[
        "profile".into(),
        "fit".into(),
        "examples/profiles/llama-3-8b-a100-2-stages.csv".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[model]") && out.contains("eta_forward = ") && out.contains("R² = "));
    // Measured layers are linear in the tokens with a per-pass overhead: the extended form wins.
    assert!(
        out.contains("forward: F-test of the extended against the paper form")
            && out.contains("the data support the extended form")
            && out.contains("delta_forward_s = ")
            && out.contains("beta_forward = "),
        "{out}"
    );
    let r2 = |prefix: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} in {out}"));
        let after = line.split("R² = ").nth(1).unwrap_or_default();
        after
            .split(',')
            .next()
            .unwrap_or_default()
            .parse()
            .unwrap_or(0.0)
    };
    assert!(r2("# forward, extended form") > 0.99, "{out}");
    assert!(r2("# forward, paper form") < 0.9, "{out}");
    let dir = std::env::temp_dir().join(format!("coplan-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "kind,batch,tokens,stage_s\nforward,1,128,0.03\nforward,one,128,0.03\n",
    )
    .expect("write");
    let (code, _, err) = run(&["profile".into(), "fit".into(), bad.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.csv:3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_vidur_profile_writes_the_samples_profile_fit_reads() {
    let dir = std::env::temp_dir().join(format!("coplan-vidur-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("samples.csv");
    let out_path = out.display().to_string();
    let import = |extra: &[&str]| {
        let mut a = vec![
            "import",
            "vidur-profile",
            "tests/fixtures/valid/vidur-mlp-sample.csv",
            "--layers-per-stage",
            "16",
        ];
        a.extend_from_slice(extra);
        run_strs(&a)
    };
    let (code, _, err) = import(&["--out", &out_path]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("DERIVED attention") && text.contains("ASSUMED"));
    assert!(
        text.contains("kind,batch,tokens,stage_s\nforward,1,1,"),
        "{text}"
    );
    let (code, fit, err) = run_strs(&["profile", "fit", &out_path]);
    assert_eq!(code, 0, "{err}");
    assert!(fit.contains("[model]"), "{fit}");
    for bad in [["--tp", "3"], ["--attention-efficiency", "1.5"]] {
        let (code, _, err) = import(&bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    let (code, _, err) = run_strs(&[
        "import",
        "vidur-profile",
        "tests/fixtures/valid/azure-sample.csv",
        "--layers-per-stage",
        "16",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("missing column"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_azure_llm_writes_a_valid_workload_and_rejects_bad_rows() {
    let dir = std::env::temp_dir().join(format!("coplan-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let trace = dir.join("trace.csv");
    std::fs::write(
        &trace,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:15:51.2224670,879,55",
    )
    .expect("write");
    let out = dir.join("w.toml");
    let (code, _, err) = run(&[
        "import".into(),
        "azure-llm".into(),
        trace.display().to_string(),
        "--rate-scale".into(),
        "2".into(),
        "--limit".into(),
        "2".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(
        text.contains("count = 2")
            && text.contains("arrival_s = 2.15729")
            && text.contains("CC-BY 4.0")
    );
    let (code, stdout, err) = run(&["validate".into(), out.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("2 explicit requests"));
    std::fs::write(&trace, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:50.99,many,109\n").expect("write");
    let (code, _, err) = run(&[
        "import".into(),
        "azure-llm".into(),
        trace.display().to_string(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("trace.csv:3") && err.contains("ContextTokens"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
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

/// A list of running pods past the limit is refused at the first pod beyond it, before the
/// cluster state is built (a million pods once took 3.8 GB and 18 s). Generated here: the file
/// is 3 MB.
#[test]
fn running_pods_above_the_limit_are_refused_at_the_first_one_past_it() {
    let dir = std::env::temp_dir().join(format!("coplan-pods-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("pods.toml");
    let limit = coplan::spec::limits::MAX_RUNNING_PODS;
    let mut text = String::from(
        "kind = \"preemption\"\n[[workload]]\nname = \"b\"\npriority = 1\ngpus = 1\ncores = 1\n",
    );
    for _ in 0..=limit {
        text.push_str("[[running]]\nworkload = \"b\"\nnode = \"tiny-0\"\n");
    }
    std::fs::write(&path, &text).expect("write");
    let (code, _, err) = run(&["validate".into(), path.display().to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("must be at most {limit}, got {}", limit + 1)),
        "{err}"
    );
    let line = 6 + 3 * limit + 1;
    assert!(err.contains(&format!("pods.toml:{line}:")), "{err}");
}

// `plan` tables on a real cluster: `--events`, the `hit none` column, a plan without
// preemptors and a planner without a solution (fixtures in `tests/fixtures/plan`).

/// `coplan plan` on the fixtures of `tests/fixtures/plan` (one command each).
#[test]
fn plan_table_fixtures_match_their_snapshots() {
    snapshot_every_fixture("plan", "plan", "plan_table__", Some(0));
}

/// Runs the command of `tests/fixtures/plan/<name>.toml` with `extra` arguments; its stdout.
fn plan_fixture(name: &str, extra: &[&str]) -> String {
    let rel = format!("tests/fixtures/plan/{name}.toml");
    let mut args = fixture_args(&root().join(&rel), &rel);
    args.extend(extra.iter().map(|a| a.to_string()));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// The event tables of a plan table: each planner's title line and its rows.
fn event_tables(table: &str) -> Vec<(String, Vec<String>)> {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = table.lines().peekable();
    while let Some(line) = lines.next() {
        let is_title = line.contains(" events") && line.ends_with(':') && !line.contains("  ");
        if !is_title {
            continue;
        }
        let Some(header) = lines.next() else { break };
        assert!(header.starts_with("preemptor"), "{line}: {header}");
        let mut rows = Vec::new();
        while let Some(row) = lines.next_if(|l| !l.is_empty()) {
            rows.push(row.to_string());
        }
        tables.push((line.to_string(), rows));
    }
    tables
}

/// The cost of an event line (the sixth column; the columns before it hold no spaces).
fn event_cost(row: &str) -> f64 {
    row.split_whitespace()
        .nth(5)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no cost in `{row}`"))
}

#[test]
fn plan_events_prints_every_event_none_or_each_planners_costliest() {
    let all = plan_fixture("events-above-50", &["--events", "all"]);
    let worst = plan_fixture("events-above-50", &["--events", "worst"]);
    let none = plan_fixture("events-above-50", &["--events", "none"]);
    let auto = plan_fixture("events-above-50", &[]);

    let every = event_tables(&all);
    assert_eq!(every.len(), 2, "one table per planner:\n{all}");
    for (title, rows) in &every {
        assert_eq!(rows.len(), 60, "{title}");
    }

    // The 10 costliest, the earlier on a tie, in list order.
    let costliest = event_tables(&worst);
    assert_eq!(costliest.len(), every.len());
    for ((title, rows), (all_title, all_rows)) in costliest.iter().zip(&every) {
        let name = all_title.trim_end_matches(" events:");
        assert_eq!(
            title,
            &format!("{name} events (the 10 costliest of 60; --events all lists every one):")
        );
        let mut order: Vec<usize> = (0..all_rows.len()).collect();
        order.sort_by(|&a, &b| {
            event_cost(&all_rows[b])
                .total_cmp(&event_cost(&all_rows[a]))
                .then(a.cmp(&b))
        });
        order.truncate(10);
        order.sort_unstable();
        // Cells, not padding: the columns of ten rows may be narrower than of sixty.
        let cells = |row: &String| row.split_whitespace().collect::<Vec<_>>().join(" ");
        let expected: Vec<String> = order.iter().map(|&i| cells(&all_rows[i])).collect();
        assert_eq!(
            rows.iter().map(cells).collect::<Vec<_>>(),
            expected,
            "{title}"
        );
    }

    // `none`: the comparison table and its notes, no event table.
    assert!(event_tables(&none).is_empty(), "{none}");
    assert!(none.contains("flextopo-imp  heuristic"), "{none}");
    assert!(!none.contains("\npreemptor "), "{none}");
    assert!(!none.contains("costliest"), "{none}");

    // Above 50 preemptors the default is `worst`, with a note saying how to get every event.
    let note = "\nevents: the plan has 60 preemptors (more than 50), so each planner lists only its 10 costliest events; --events all prints every one.\n";
    assert!(auto.contains(note), "{auto}");
    assert_eq!(
        event_tables(&auto.replacen(note, "", 1)),
        costliest,
        "auto is worst above 50"
    );
    assert!(
        !worst.contains(note),
        "asked for, the worst events need no note"
    );

    // JSON keeps every event whatever `--events` says.
    let json = plan_fixture("events-above-50", &["--format", "json", "--events", "none"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        assert_eq!(
            p["events"].as_array().map(Vec::len),
            Some(60),
            "{}",
            p["name"]
        );
    }
}

#[test]
fn plan_events_default_lists_every_event_up_to_50_preemptors() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "plan",
            "examples/clusters/paper-4090-x100.toml",
            "examples/workloads/paper-preemption.toml",
            "--planners",
            "k8s-default,flextopo-imp",
        ];
        a.extend(extra);
        let (code, out, err) = run_strs(&a);
        assert_eq!(code, 0, "{err}");
        out
    };
    let (auto, all) = (args(&[]), args(&["--events", "all"]));
    assert!(auto.contains(": 50 preemptors\n"), "{auto}");
    let tables = event_tables(&auto);
    assert_eq!(tables.len(), 2, "{auto}");
    assert!(tables.iter().all(|(_, rows)| rows.len() == 50));
    assert_eq!(tables, event_tables(&all));
    assert!(!auto.contains("costliest"), "{auto}");
}

/// The cells of a planner's row in the comparison table (`decision gap` and the other
/// two-word headers are one cell; a cell holds no space).
fn planner_row(table: &str, planner: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(planner))
        .unwrap_or_else(|| panic!("no row for {planner}:\n{table}"))
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn hit_none_column_appears_when_qos_none_preemptors_make_hits_differ() {
    let table = plan_fixture("qos-none-preemptors", &[]);
    let header = table
        .lines()
        .find(|l| l.starts_with("planner "))
        .expect("comparison header");
    assert!(header.contains("hit BE  hit none  placed"), "{header}");
    assert!(
        table.contains("hit none: hit rate of the preemptors without topology QoS"),
        "{table}"
    );
    // Cells: planner, status, objective, gap, decision gap, hits, hit G, hit BE, hit none, …
    let json = plan_fixture("qos-none-preemptors", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        let name = p["name"].as_str().expect("name");
        let events = p["events"].as_array().expect("events");
        let of_none: Vec<_> = events
            .iter()
            .filter(|e| e["topology_qos"] == "none")
            .collect();
        let hits = of_none.iter().filter(|e| e["hit"] == true).count();
        let expected = format!("{:.1}%", 100.0 * hits as f64 / of_none.len() as f64);
        let row = planner_row(&table, name);
        assert_eq!(row[8], expected, "{name}: {row:?}");
    }
    // k8s-default: both hits are QoS-none pods, which `hit G` and `hit BE` do not count.
    let k8s = planner_row(&table, "k8s-default");
    assert_eq!(&k8s[5..9], ["2/3", "0.0%", "-", "100.0%"], "{k8s:?}");

    // Without QoS-none preemptors the column is not there.
    let (code, out, err) = run_strs(&[
        "plan",
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/tiny-running.toml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("hit none"), "{out}");
}

#[test]
fn a_plan_without_preemptors_says_so_instead_of_empty_sums_and_0_of_0() {
    let table = plan_fixture("no-preemptors", &[]);
    assert!(
        table.contains("`no-preemptors` on tiny: no preemptors\n"),
        "{table}"
    );
    assert!(table.contains("no preemptors: the workload's [[preempt]] list is empty"));
    for absent in ["0/0", "-0.000", "status", " events"] {
        assert!(!table.contains(absent), "`{absent}` in\n{table}");
    }
    // JSON: every rate and mean over preemptors is null; the evicted GPU-hours (now_s is set)
    // are an empty sum, +0.
    let json = plan_fixture("no-preemptors", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        let m = &p["metrics"];
        assert_eq!(m["preemptions"], 0);
        for key in [
            "hit_rate_guaranteed",
            "hit_rate_best_effort",
            "slowdown_mean",
            "slowdown_guaranteed",
            "slowdown_best_effort",
        ] {
            assert!(m[key].is_null(), "{}: {key} = {}", p["name"], m[key]);
        }
        let hours = m["gpu_hours_evicted"].as_f64().expect("gpu_hours_evicted");
        assert!(hours == 0.0 && hours.is_sign_positive(), "{}", p["name"]);
    }
}

#[test]
fn a_planner_without_a_solution_prints_dashes_not_0_of_0() {
    let json = plan_fixture("no-solution", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(plan["planners"][0]["status"], "no_solution", "{json}");
    let table = plan_fixture("no-solution", &[]);
    assert!(table.contains(": no planner found a plan\n"), "{table}");
    assert!(!table.contains("0/0"), "{table}");
    // Cells: planner, status, objective, gap, decision gap, hits, hit G, hit BE, placed,
    // victims, wasted, slowdown G, slowdown BE, subsets, time.
    let row = planner_row(&table, "ilp-batch");
    assert_eq!(row[1], "no_solution");
    assert!(row[2..13].iter().all(|c| c == "-"), "{row:?}");
    assert!(table.contains("\nilp-batch events: none (no_solution: no plan)\n"));
}

/// `--time-limit S` is a number of seconds in (0, 86400]: anything else is a usage error.
#[test]
fn time_limit_refuses_what_is_not_a_budget() {
    for bad in ["0", "-1", "abc", "inf", "NaN", "86401"] {
        let (code, _, err) = common::run_coplan(&[
            "plan".to_string(),
            "examples/clusters/paper-4090-x100.toml".into(),
            "examples/workloads/paper-preemption.toml".into(),
            format!("--time-limit={bad}"),
        ]);
        assert_eq!(code, 2, "--time-limit {bad}: {err}");
        assert!(err.contains("--time-limit"), "--time-limit {bad}: {err}");
    }
}

/// A budget spent before the searches begin: the exact side is anytime and says so — the
/// batch keeps the best sequential plan as its incumbent (`time_limit`, no bound, so no gap),
/// flextopo-exhaustive sources the events as IMP does and is marked `truncated` — and every
/// plan still passes the verifier (exit 0).
#[test]
fn a_spent_budget_gives_honest_statuses_not_a_failure() {
    let (code, out, err) = run_strs(&[
        "plan",
        "examples/clusters/paper-4090-x100.toml",
        "examples/workloads/paper-preemption.toml",
        "--time-limit",
        "0.001",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let by = |name: &str| planner_named(&plan, name);
    let batch = by("ilp-batch");
    assert_eq!(batch["status"], "time_limit");
    // Its bound, if any, is the proven placement floor: below its incumbent.
    let bound = batch["bound"].as_f64();
    let best_sequential = [
        "k8s-default",
        "k8s-nrt",
        "flextopo-imp",
        "flextopo-exhaustive",
        "ilp",
    ]
    .iter()
    .map(|n| by(n)["objective"].as_f64().expect("objective"))
    .fold(f64::INFINITY, f64::min);
    let batch_objective = batch["objective"].as_f64().expect("an incumbent");
    assert!(
        batch_objective <= best_sequential + 1e-9,
        "{batch_objective} > {best_sequential}"
    );
    assert!(
        bound.is_none_or(|b| b <= batch_objective + 1e-9),
        "{bound:?}"
    );
    // Every gap is against that bound, so an upper bound.
    for p in plan["planners"].as_array().expect("planners") {
        assert!(p["gap"].is_null() || p["gap_is_bound"] == true, "{p}");
    }
    assert_eq!(by("flextopo-exhaustive")["truncated"], true);
    assert_eq!(
        by("flextopo-exhaustive")["objective"],
        by("flextopo-imp")["objective"]
    );
    // Co-location: the exact search stops after its first dive and says so.
    let (code, out, err) = run_strs(&[
        "plan",
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
        "--time-limit",
        "0.001",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ilp = planner_named(&plan, "ilp");
    assert_eq!(ilp["status"], "time_limit", "{ilp}");
}

/// The planner `name` of a `plan --format json` output.
fn planner_named(plan: &serde_json::Value, name: &str) -> serde_json::Value {
    plan["planners"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} ran"))
}

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

#[test]
fn explain_refuses_what_plan_refuses() {
    for workload in [
        "tests/fixtures/invalid/planners-run-empty.toml",
        "tests/fixtures/invalid/objective-weight-above-limit.toml",
    ] {
        let cluster = "examples/clusters/gpu-2s4n8g-x4.toml";
        let (plan, _, _) = run_strs(&["plan", cluster, workload]);
        let (explain, _, err) = run_strs(&["explain", cluster, workload, "--event", "1"]);
        assert_eq!(plan, 2, "{workload}");
        assert_eq!(explain, 2, "{workload}: {err}");
    }
    let (code, _, err) = run_strs(&[
        "explain",
        "tests/fixtures/invalid/penalty-above-limit.toml",
        "tests/fixtures/valid/tiny-running.toml",
        "--event",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
}
