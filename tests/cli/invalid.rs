//! The invalid corpus: every malformed spec, importer input, shard, command-line value and
//! environment exits 2 with a located diagnostic; `--out` writes through links and FIFOs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::root;
use crate::support::{files, fixture_args, header_line, run, run_strs, snapshot, stem, transcript};

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
