//! Running the `coplan` binary on examples and fixtures and comparing its transcript with the
//! insta snapshot stored in the top-level `snapshots/` folder (one fixture file → one snapshot).
//!
//! A fixture may name its command in a first-lines comment `# coplan: <args>`, where `{file}`
//! stands for the fixture's path; the default is `validate {file}`.

use std::path::{Path, PathBuf};

use crate::common::{self, root};

/// Runs coplan from the repository root.
pub fn run(args: &[String]) -> (i32, String, String) {
    common::run_coplan(args)
}

/// Runs coplan with string-slice arguments.
pub fn run_strs(args: &[&str]) -> (i32, String, String) {
    run(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
}

pub fn transcript(args: &[String]) -> (i32, String) {
    let (code, stdout, stderr) = run(args);
    let text = format!(
        "$ coplan {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
        args.join(" ")
    );
    (code, text)
}

pub fn fixture_args(path: &Path, rel: &str) -> Vec<String> {
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

pub fn header_line<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .take(8)
        .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
}

pub fn files(dir: &str) -> Vec<(PathBuf, String)> {
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

/// Compares a transcript with the snapshot `name`, timings redacted.
pub fn snapshot(name: &str, text: &str) {
    // Timings vary run to run: redacted, with the padding they cause.
    let timings = [
        (
            r#""runtime_ms": [0-9.eE+-]+"#,
            r#""runtime_ms": "[redacted]""#,
        ),
        (r"(?m)\s+[0-9]+\.[0-9]+ ms$", "  [time]"),
        (r"(?m)\s+time$", "  time"),
    ];
    common::snapshot::assert_snapshot(name, text, &timings);
}

pub fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Runs the one command of every fixture of `tests/fixtures/{dir}` (at least four; each must
/// be a `command`), checks its exit code when `exit` is given, and snapshots its transcript as
/// `{prefix}{stem}`.
pub fn snapshot_every_fixture(dir: &str, command: &str, prefix: &str, exit: Option<i32>) {
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

/// `coplan {command}` of the tiny cluster and its running pods as JSON.
pub fn tiny_json(command: &str) -> serde_json::Value {
    let (code, out, err) = run(&[
        command.into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--format".into(),
        "json".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("valid JSON")
}
