//! Every example and valid fixture: validated, rendered and planned against its snapshot;
//! usage errors, Graphviz and the topology JSON.

use std::process::Command;

use crate::support::{
    files, fixture_args, run, snapshot, snapshot_every_fixture, stem, tiny_json, transcript,
};

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

/// `coplan explain` on the fixtures of `tests/fixtures/explain` (one command each).
#[test]
fn explain_snapshots_for_every_fixture() {
    snapshot_every_fixture("explain", "explain", "explain__", None);
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
    let v = tiny_json("topology");
    let numa0 = &v["servers"][0]["sockets"][0]["numa_nodes"][1];
    assert_eq!(numa0["id"], 1);
    assert_eq!(numa0["gpus"][0]["used_by"], "batch-0");
    assert_eq!(numa0["cores"][0]["used_by"], "batch-0");
    assert_eq!(v["pods"].as_array().map(Vec::len), Some(3));
}
