//! Malformed importer inputs and bad options: exit 2 with a diagnostic naming file, line and
//! column, each snapshotted.

use super::*;

/// Every malformed input: (fixture, arguments with `{file}` for it).
const INVALID: &[(&str, &[&str])] = &[
    ("k8s-pdb-bad-amount.yaml", &["import", "k8s", "{file}"]),
    ("k8s-pdb-bad-operator.yaml", &["import", "k8s", "{file}"]),
    ("k8s-bad-quantity.yaml", &["import", "k8s", "{file}"]),
    ("k8s-bad-yaml.yaml", &["import", "k8s", "{file}"]),
    ("k8s-wrong-type.yaml", &["import", "k8s", "{file}"]),
    ("k8s-bad-timestamp.yaml", &["import", "k8s", "{file}"]),
    ("k8s-bad-pod-request.json", &["import", "k8s", "{file}"]),
    (
        "k8s-one-line-bad-quantity.json",
        &["import", "k8s", "{file}"],
    ),
    ("k8s-lines-malformed.jsonl", &["import", "k8s", "{file}"]),
    (
        "k8s-concatenated-wrong-type.json",
        &["import", "k8s", "{file}"],
    ),
    ("k8s-cpu-1e30.yaml", &["import", "k8s", "{file}"]),
    ("k8s-dra-bad-attribute.yaml", &["import", "k8s", "{file}"]),
    ("k8s-dra-bad-slice.yaml", &["import", "k8s", "{file}"]),
    (
        "k8s-timestamps-too-far-apart.yaml",
        &["import", "k8s", "{file}"],
    ),
    (
        "k8s-timestamp-not-a-date.yaml",
        &["import", "k8s", "{file}"],
    ),
    ("k8s-billion-laughs.yaml", &["import", "k8s", "{file}"]),
    ("k8s-nesting-limit.json", &["import", "k8s", "{file}"]),
    ("k8s-kueue-unknown-level.yaml", &["import", "k8s", "{file}"]),
    (
        "k8s-topology-node-without-level-label.yaml",
        &["import", "k8s", "{file}"],
    ),
    (
        "k8s-hypernode-regex-member.yaml",
        &["import", "k8s", "{file}"],
    ),
    ("k8s-podgroup-bad-mode.yaml", &["import", "k8s", "{file}"]),
    (
        "alibaba-bad-node-row.csv",
        &[
            "import",
            "alibaba-openb",
            "{file}",
            "tests/fixtures/import/valid/alibaba-pods.csv",
        ],
    ),
    (
        "alibaba-ragged-pods.csv",
        &[
            "import",
            "alibaba-openb",
            "tests/fixtures/import/valid/alibaba-nodes.csv",
            "{file}",
        ],
    ),
    (
        "alibaba-bad-time.csv",
        &[
            "import",
            "alibaba-openb",
            "tests/fixtures/import/valid/alibaba-nodes.csv",
            "{file}",
        ],
    ),
    (
        "alibaba-pods-header.csv",
        &[
            "import",
            "alibaba-openb",
            "tests/fixtures/import/valid/alibaba-nodes.csv",
            "{file}",
        ],
    ),
];

#[test]
fn every_malformed_input_exits_2_naming_file_line_and_column() {
    let listed: Vec<&str> = INVALID.iter().map(|(f, _)| *f).collect();
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("tests/fixtures/import/invalid"))
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        on_disk, sorted,
        "every invalid fixture is listed with its command"
    );
    let dir = scratch("invalid");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    for (fixture, args) in INVALID {
        let rel = format!("tests/fixtures/import/invalid/{fixture}");
        let mut all: Vec<String> = args.iter().map(|a| a.replace("{file}", &rel)).collect();
        all.extend([
            "--out-cluster".into(),
            c.clone(),
            "--out-workload".into(),
            w.clone(),
        ]);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let (code, _, err) = run(&refs);
        assert_eq!(code, 2, "{fixture} must exit 2:\n{err}");
        assert!(
            err.contains(&format!("─[{rel}:")),
            "{fixture}: not located:\n{err}"
        );
        assert!(!err.contains("panicked"), "{fixture}:\n{err}");
        assert!(
            !Path::new(&c).exists() && !Path::new(&w).exists(),
            "{fixture}: nothing is written on failure"
        );
        let stem = fixture.rsplit_once('.').map_or(*fixture, |(s, _)| s);
        snapshot(
            &format!("import_invalid__{stem}"),
            &format!(
                "$ coplan {}\nexit: {code}\n--- stderr\n{err}",
                args.join(" ").replace("{file}", &rel)
            ),
        );
    }
}

#[test]
fn bad_options_and_inputs_without_a_place_exit_2() {
    let nodes = "tests/fixtures/import/valid/alibaba-nodes.csv";
    let pods = "tests/fixtures/import/valid/alibaba-pods.csv";
    let out = [
        "--out-cluster",
        "/nonexistent/c.toml",
        "--out-workload",
        "/nonexistent/w.toml",
    ];
    let alibaba = |option, value| vec!["import", "alibaba-openb", nodes, pods, option, value];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (alibaba("--at", "noon"), "--at"),
        (alibaba("--server-type", "G2"), "MODEL=TYPE"),
        (alibaba("--server-type", "G2=no-such"), "built-in"),
        (alibaba("--server-type", "V100M16=gpu-2s4n8g"), "GPU"),
        (alibaba("--qos", "BE=low:none"), "PRIORITY"),
        (alibaba("--fill", "1.5"), "--fill"),
        (alibaba("--next", "0"), "--next"),
        (
            vec![
                "import",
                "k8s",
                "tests/fixtures/import/invalid/alibaba-pods-header.csv",
            ],
            "Node",
        ),
        (
            vec!["import", "k8s", "tests/fixtures/does-not-exist.yaml"],
            "cannot read",
        ),
    ];
    for (mut args, needle) in cases {
        args.extend(out);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}:\n{err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected `{needle}`:\n{err}"
        );
        assert!(!err.contains("panicked"));
    }
}
