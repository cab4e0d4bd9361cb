//! `coplan import`: Kubernetes snapshots, the Alibaba GPU trace and Azure requests into
//! specs. Valid inputs are snapshotted (the written cluster, workload and summary) and
//! planned; every malformed input exits 2 with a diagnostic that names its file, line and
//! column, snapshotted too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

mod common;

use std::path::{Path, PathBuf};

use common::root;

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
    insta::with_settings!({
        snapshot_path => root().join("snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        filters => vec![(r"/[^ ]*coplan-import-[0-9]+-[a-z0-9-]+/", "[tmp]/")],
    }, {
        insta::assert_snapshot!(name, text);
    });
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Imports with `args` (the outputs appended), checks the specs validate and plan, and
/// returns the transcript: the cluster, the workload and the summary.
fn import_and_plan(name: &str, args: &[&str]) -> String {
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
    let (code, out, err) = run(&[
        "plan",
        &c,
        &w,
        "--planners",
        "k8s-default,k8s-nrt,flextopo-imp,ilp",
    ]);
    assert_eq!(code, 0, "{name}: the written specs plan:\n{err}");
    assert!(out.contains("flextopo-imp"));
    format!(
        "$ coplan {}\n--- cluster\n{cluster}--- workload\n{workload}--- stderr\n{stderr}",
        args.join(" ")
    )
}

#[test]
fn the_k8s_example_snapshot_imports_with_its_nrt_objects() {
    let text = import_and_plan(
        "k8s-example",
        &[
            "import",
            "k8s",
            "examples/k8s/cluster-snapshot.yaml",
            "examples/k8s/noderesourcetopologies.yaml",
        ],
    );
    // NRT layouts: the H100 nodes have 2 sockets of 2 NUMA nodes (costs 12 against 20).
    assert!(text.contains("sockets = 2\nnuma_per_socket = 2\ncores_per_numa = 24"));
    // Pending pods are the preemptors, in creation order, each under its own name.
    assert!(text.contains(
        "[[preempt]]\nworkload = \"serving-high-2g24c\"\ncount = 1\nname = \"serve/chat-70b-1\""
    ));
    assert!(text.contains("nodes_with_the_default_layout: cpu-01"));
    snapshot("import__k8s-example", &text);
}

#[test]
fn a_kubectl_json_list_imports_and_counts_what_it_ignores() {
    let text = import_and_plan(
        "k8s-json",
        &["import", "k8s", "tests/fixtures/import/valid/k8s-list.json"],
    );
    assert!(text.contains("names = [\"node-a\"]"), "{text}");
    assert!(
        text.contains("cores_dropped_by_the_default_layout"),
        "{text}"
    );
    assert!(text.contains("objects_of_other_kinds"));
    assert!(text.contains("pods_finished"));
    snapshot("import__k8s-list", &text);
}

/// The workload and cluster an import writes, without the first comment line (which names
/// the input file).
fn written(name: &str, file: &str) -> (String, String) {
    let dir = scratch(name);
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, _, err) = run(&[
        "import",
        "k8s",
        file,
        "--out-cluster",
        &c,
        "--out-workload",
        &w,
    ]);
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

#[test]
fn json_lines_concatenated_objects_and_multi_document_yaml_import_as_the_list_does() {
    let list = written("formats-list", "tests/fixtures/import/valid/k8s-list.json");
    for (name, file) in [
        (
            "formats-jsonl",
            "tests/fixtures/import/valid/k8s-lines.jsonl",
        ),
        (
            "formats-concatenated",
            "tests/fixtures/import/valid/k8s-concatenated.json",
        ),
        (
            "formats-multi",
            "tests/fixtures/import/valid/k8s-multi.yaml",
        ),
    ] {
        let got = written(name, file);
        assert_eq!(got, list, "{file} imports otherwise than k8s-list.json");
    }
    // Every object of the JSON Lines is read, not only the first.
    let dir = scratch("formats-count");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, out, err) = run(&[
        "import",
        "k8s",
        "tests/fixtures/import/valid/k8s-lines.jsonl",
        "--out-cluster",
        &c,
        "--out-workload",
        &w,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["read"]["documents"], 7, "{out}");
    assert_eq!(v["read"]["objects.Pod"], 4, "{out}");
}

/// A generated kubectl-shaped `-o yaml` List of 2,000 nodes (with managedFields, NRT objects,
/// DaemonSets, sidecars, a cordoned node, PDBs: `scripts/k8s-snapshot.py --noise`) imports:
/// one List of that size was refused by the YAML reader's element budget. Not timed
/// (`cargo bench --bench k8s_import` measures); skipped without python3.
#[test]
fn a_generated_2000_node_yaml_list_imports() {
    let dir = scratch("generated-2000");
    let file = dir.join("k8s-2000.yaml");
    let generated = std::process::Command::new("python3")
        .arg(root().join("scripts/k8s-snapshot.py"))
        .args([
            "--nodes", "2000", "--seed", "3", "--noise", "--format", "yaml", "--out",
        ])
        .arg(&file)
        .status();
    match generated {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipped: python3 scripts/k8s-snapshot.py did not run");
            return;
        }
    }
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, out, err) = run(&[
        "import",
        "k8s",
        &path_str(&file),
        "--out-cluster",
        &c,
        "--out-workload",
        &w,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["read"]["documents"], 1);
    assert_eq!(v["read"]["objects.Node"], 2000);
    assert_eq!(v["read"]["objects.NodeResourceTopology"], 2000);
    assert_eq!(v["mapped"]["servers"], 2000);
    assert!(
        v["ignored_fields"]["Pod: metadata.managedFields"]
            .as_u64()
            .is_some_and(|n| n > 10_000),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_small_alibaba_trace_imports_at_a_moment_and_as_a_sequence() {
    let nodes = "tests/fixtures/import/valid/alibaba-nodes.csv";
    let pods = "tests/fixtures/import/valid/alibaba-pods.csv";
    let at = import_and_plan(
        "alibaba-at",
        &[
            "import",
            "alibaba-openb",
            nodes,
            pods,
            "--at",
            "50",
            "--next",
            "3",
            "--server-type",
            "G2=gpu-2s4n8g",
        ],
    );
    assert!(at.contains("server_type = \"gpu-2s4n8g\""));
    let sequence = import_and_plan(
        "alibaba-seq",
        &[
            "import",
            "alibaba-openb",
            nodes,
            pods,
            "--as-sequence",
            "--fill",
            "0.5",
            "--next",
            "2",
            "--gpu-shares",
            "drop",
            "--qos",
            "Burstable=300:none:preemptible",
        ],
    );
    snapshot("import__alibaba-small", &format!("{at}\n{sequence}"));
}

#[test]
fn the_json_summary_carries_every_count() {
    let dir = scratch("json-summary");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, out, err) = run(&[
        "import",
        "k8s",
        "tests/fixtures/import/valid/k8s-list.json",
        "--out-cluster",
        &c,
        "--out-workload",
        &w,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON summary on stdout");
    for key in [
        "source",
        "files",
        "read",
        "mapped",
        "defaulted",
        "rounded",
        "dropped",
        "ignored_fields",
        "lists",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "summary lacks `{key}`: {out}");
    }
    assert_eq!(v["mapped"]["preemptors"], 1);
    // A running pod's millicores join its node's shared pool: nothing is rounded per pod.
    assert_eq!(v["mapped"]["running_pods_in_the_shared_cpu_pool"], 1);
    assert!(
        v["rounded"].get("pod_cpu_to_whole_cores").is_none(),
        "{out}"
    );
}

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
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["import", "alibaba-openb", nodes, pods, "--at", "noon"],
            "--at",
        ),
        (
            vec![
                "import",
                "alibaba-openb",
                nodes,
                pods,
                "--server-type",
                "G2",
            ],
            "MODEL=TYPE",
        ),
        (
            vec![
                "import",
                "alibaba-openb",
                nodes,
                pods,
                "--server-type",
                "G2=no-such",
            ],
            "built-in",
        ),
        (
            vec![
                "import",
                "alibaba-openb",
                nodes,
                pods,
                "--server-type",
                "V100M16=gpu-2s4n8g",
            ],
            "GPU",
        ),
        (
            vec![
                "import",
                "alibaba-openb",
                nodes,
                pods,
                "--qos",
                "BE=low:none",
            ],
            "PRIORITY",
        ),
        (
            vec!["import", "alibaba-openb", nodes, pods, "--fill", "1.5"],
            "--fill",
        ),
        (
            vec!["import", "alibaba-openb", nodes, pods, "--next", "0"],
            "--next",
        ),
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

#[test]
fn azure_requests_go_into_a_base_workload_or_a_nodeless_default() {
    let dir = scratch("azure");
    let out = path_str(&dir.join("w.toml"));
    let trace = "tests/fixtures/valid/azure-sample.csv";
    let base = "examples/workloads/colocation-small.toml";
    let (code, _, err) = run(&["import", "azure-llm", trace, "--base", base, "--out", &out]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("written");
    let base_text = std::fs::read_to_string(root().join(base)).expect("base");
    // The base's model and training stay; its arrivals are replaced by the requests.
    assert!(text.contains("[[inference.requests]]"));
    assert!(!text.contains("[inference.arrival]"));
    let model_name = |t: &str| {
        t.lines()
            .skip_while(|l| l.trim() != "[model]")
            .find(|l| l.starts_with("name"))
            .map(str::to_string)
    };
    assert_eq!(model_name(&text), model_name(&base_text));
    assert!(
        err.contains("import azure-llm"),
        "summary on stderr:\n{err}"
    );
    let (code, _, err) = run(&["validate", &out]);
    assert_eq!(code, 0, "{err}");

    let (code, stdout, _) = run(&["import", "azure-llm", trace]);
    assert_eq!(code, 0);
    assert!(!stdout.lines().any(|l| l.starts_with("nodes")), "{stdout}");
    assert!(stdout.contains("Assumed (no --base)"));
    let (code, _, err) = run(&["import", "azure-llm", trace, "--format", "json"]);
    assert_eq!(code, 2, "JSON summary without --out is refused:\n{err}");
    let (code, _, err) = run(&[
        "import",
        "azure-llm",
        trace,
        "--base",
        "examples/workloads/paper-preemption.toml",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("co-location"), "{err}");
}

/// The Alibaba files are read by path (no licence to ship them): skipped when absent.
fn alibaba_data() -> Option<PathBuf> {
    let dir = root().join("../shared/data/alibaba-gpu-2023");
    if dir.join("openb_node_list_gpu_node.csv").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: ../shared/data/alibaba-gpu-2023 is absent");
        None
    }
}

#[test]
fn the_shared_alibaba_trace_imports_and_plans() {
    let Some(dir) = alibaba_data() else { return };
    let nodes = path_str(&dir.join("openb_node_list_gpu_node.csv"));
    for (pods, extra) in [
        ("openb_pod_list_default.csv", vec!["--at", "peak"]),
        (
            "openb_pod_list_default.csv",
            vec!["--as-sequence", "--fill", "0.97"],
        ),
        ("openb_pod_list_multigpu50.csv", vec![]),
    ] {
        let pods = path_str(&dir.join(pods));
        let tmp = scratch("shared");
        let (c, w) = (path_str(&tmp.join("c.toml")), path_str(&tmp.join("w.toml")));
        let mut args = vec![
            "import",
            "alibaba-openb",
            &nodes,
            &pods,
            "--next",
            "40",
            "--server-type",
            "G2=gpu-2s4n8g",
            "--out-cluster",
            &c,
            "--out-workload",
            &w,
            "--format",
            "json",
        ];
        args.extend(extra.iter().copied());
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{pods} {extra:?}:\n{err}");
        let summary: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(summary["read"]["nodes"], 1213);
        assert_eq!(summary["mapped"]["preemptors"], 40);
        let (code, out, err) = run(&[
            "plan",
            &c,
            &w,
            "--planners",
            "k8s-default,k8s-nrt,flextopo-imp",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("40 preemptors"), "{out}");
    }
}

/// The kubelet's accounting: a Guaranteed pod with whole CPUs holds exclusive cores; the
/// others share a pool of ⌈Σ millicores⌉ cores (a native sidecar and the pod overhead
/// counted, an ordinary init container only as a peak), so no DaemonSet pod pushes a job off
/// its node; a node that cannot hold its pods is an error unless `--allow-misfit`.
#[test]
fn running_pods_are_counted_as_the_kubelet_counts_them() {
    let dir = scratch("kubelet-accounting");
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let input = "tests/fixtures/import/k8s-kubelet-accounting.yaml";
    let (code, _, err) = run(&[
        "import",
        "k8s",
        input,
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 0, "{err}");
    let workload = std::fs::read_to_string(&w).expect("workload written");
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&workload).expect("a workload");
    let cores = |name: &str| {
        let r = spec
            .running
            .iter()
            .find(|r| r.name.as_deref() == Some(name))
            .expect(name);
        let class = spec
            .workload
            .iter()
            .find(|w| w.name == r.workload)
            .expect("class");
        class.cores
    };
    // 12 exclusive; the pool: 2.5 + 0.5 sidecar + 0.25 overhead + 3 × 0.15 = 3.7 → 4 cores,
    // 3 of them the job's whole cores and the remainder to its larger fraction.
    assert_eq!(cores("ml/train"), 12);
    assert_eq!(cores("web/serve"), 4);
    assert!(!workload.contains("kube-system/ds-"), "{workload}");
    assert!(
        err.contains("shared_pool_pods_within_another_pods_core  3"),
        "{err}"
    );
    // Without the static CPU manager every pod shares the pool: 12 + 3.25 + 0.45 → 16 cores.
    let (code, _, err) = run(&[
        "import",
        "k8s",
        input,
        "--cpu-manager",
        "none",
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 0, "{err}");
    // A node too small for its pods: named, exit 2, unless --allow-misfit.
    let small = std::fs::read_to_string(input)
        .expect("fixture")
        .replace("cpu: \"16\"", "cpu: \"14\"");
    let small_path = dir.join("small.yaml");
    std::fs::write(&small_path, small).expect("written");
    let (code, _, err) = run(&[
        "import",
        "k8s",
        &path_str(&small_path),
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("web/serve") && err.contains("--allow-misfit"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "import",
        "k8s",
        &path_str(&small_path),
        "--allow-misfit",
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("left out"), "{err}");
}

/// A pod seen twice (two exports read together) is one pod: the first copy is kept, the
/// second counted and warned about; the workload still validates.
#[test]
fn a_pod_exported_twice_is_imported_once() {
    let dir = scratch("duplicate-pods");
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let input = "tests/fixtures/import/valid/k8s-list.json";
    let (code, _, err) = run(&[
        "import",
        "k8s",
        input,
        input,
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("duplicate_pods") && err.contains("appears twice"),
        "{err}"
    );
}

/// PodDisruptionBudgets from a snapshot: each selector matched against the running pods of
/// its namespace (`matchLabels`, `matchExpressions`), the amount from `status` or from
/// `minAvailable`; a budget that covers no running pod is left out. The default then prefers
/// the replicas its budget lets go over the trainer whose budget allows nothing; the planners
/// that price victims evict the trainer and count the violation, unless `respect_pdb`.
#[test]
fn disruption_budgets_are_imported_counted_and_respected() {
    let dir = scratch("disruption-budgets");
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let (code, _, err) = run(&[
        "import",
        "k8s",
        "tests/fixtures/import/k8s-disruption-budgets.yaml",
        "--out-cluster",
        &path_str(&c),
        "--out-workload",
        &path_str(&w),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("pod_disruption_budgets  2"), "{err}");
    let text = std::fs::read_to_string(&w).expect("workload written");
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&text).expect("a workload");
    let budgets: Vec<(&str, Vec<&str>)> = spec
        .disruption_budget
        .iter()
        .map(|b| (b.name.as_str(), b.pods.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        budgets,
        [
            (
                "serve/chat",
                vec![
                    "serve/chat-0",
                    "serve/chat-1",
                    "serve/chat-2",
                    "serve/chat-3"
                ]
            ),
            ("train/trainer", vec!["train/trainer-0", "train/trainer-1"]),
        ]
    );
    assert_eq!(spec.disruption_budget[0].disruptions_allowed, Some(2));
    let evictions = |workload: &Path| first_evictions(&path_str(&c), &path_str(workload));
    for (planner, victims, violations) in evictions(&w) {
        if planner.starts_with("k8s-") {
            assert_eq!(victims, "serve/chat-2 serve/chat-3", "{planner}");
            assert_eq!(violations, 0, "{planner}");
        } else {
            assert_eq!(victims, "train/trainer-1", "{planner}");
            assert_eq!(violations, 1, "{planner}");
        }
    }
    let hard = dir.join("hard.toml");
    std::fs::write(
        &hard,
        text.replace("respect_pdb = false", "respect_pdb = true"),
    )
    .expect("written");
    for (planner, victims, violations) in evictions(&hard) {
        assert_eq!(victims, "serve/chat-2 serve/chat-3", "{planner}");
        assert_eq!(violations, 0, "{planner}");
    }
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

/// Imports a fixture of `tests/fixtures/import/devices/` into a scratch folder: the paths of
/// the written cluster and workload, and the summary.
fn import_devices(fixture: &str, extra: &[&str]) -> (String, String, String) {
    let dir = scratch(&format!("devices-{}", fixture.replace('.', "-")));
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let input = format!("tests/fixtures/import/devices/{fixture}.yaml");
    let mut args = vec!["import", "k8s", input.as_str()];
    args.extend(extra);
    args.extend(["--out-cluster", &c, "--out-workload", &w]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{fixture}: {err}");
    (c, w, err)
}

#[test]
fn every_device_fixture_imports_plans_and_matches_its_snapshot() {
    for fixture in [
        "dra-v1",
        "dra-v1beta1",
        "dra-v1beta2",
        "dra-cpu-driver",
        "dra-not-modelled",
        "mig-mixed",
        "mig-single",
        "amd",
    ] {
        let text = import_and_plan(
            &format!("devices-snap-{fixture}"),
            &[
                "import",
                "k8s",
                &format!("tests/fixtures/import/devices/{fixture}.yaml"),
            ],
        );
        snapshot(&format!("import__devices-{fixture}"), &text);
    }
}

#[test]
fn dra_slices_give_gpus_their_numa_nodes_and_claims_say_who_holds_which() {
    let (c, w, summary) = import_devices("dra-v1", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    // Not a node of 0 GPUs: the slice's 8 devices, on the NUMA nodes its attributes name;
    // the stale generation (all on NUMA 0) is dropped.
    assert!(
        cluster.contains("gpu_numa = [0, 0, 0, 0, 1, 1, 1, 1]"),
        "{cluster}"
    );
    assert!(cluster.contains("gpu_resource = \"gpu.nvidia.com\""));
    assert!(cluster.contains("gpu_memory_mib = 81920"));
    assert!(summary.contains("dra_resource_slices_of_an_older_pool_generation  1"));
    let workload = std::fs::read_to_string(&w).expect("workload");
    // Exactly the allocated devices, not a re-placement.
    assert!(workload.contains("name = \"ml/batch-x\"\nworkload = \"p5-3xgpu-nvidia-com-2c\"\nnode = \"h100-a\"\ngpus = [0, 1, 2]"), "{workload}");
    assert!(workload.contains("device_alignment = \"numa\""));
    // Priority-only eviction (kube-scheduler's reprieve, as KEP-5690 would run it) frees
    // NUMA 1 by the two priority-20 pods; the optimum frees NUMA 0 by the priority-5 and
    // priority-30 pods, which only the slices' NUMA attributes tell apart.
    let victims = victims_by_planner(&c, &w);
    let of = |name: &str| {
        victims
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(of("k8s-default"), "ml/batch-z ml/batch-y");
    assert_eq!(of("ilp"), "ml/batch-w ml/batch-x");
    assert_eq!(of("ilp-batch"), "ml/batch-w ml/batch-x");
    assert_eq!(of("flextopo-imp"), "ml/batch-w ml/batch-x");
    // Every API version reads to the same specs.
    for version in ["dra-v1beta1", "dra-v1beta2"] {
        let (c2, w2, _) = import_devices(version, &[]);
        let body = |p: &str| {
            std::fs::read_to_string(p)
                .expect("written")
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with("name = \"k8s"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(body(&c), body(&c2), "{version}");
        assert_eq!(body(&w), body(&w2), "{version}");
    }
}

#[test]
fn what_dra_publishes_and_coplan_does_not_model_is_a_warning_naming_the_object() {
    let (_, _, summary) = import_devices("dra-not-modelled", &[]);
    for line in [
        "DRA shared counters (partitionable devices): 1 object(s): h100-a-gpu.nvidia.com-abcde",
        "DRA device taints: 1 object(s): h100-a-gpu.nvidia.com-abcde/gpu-0",
        "DRA admin access (monitors devices, holds none): 1 object(s): ml/batch-x-gpus",
    ] {
        assert!(
            summary.contains(&format!(
                "warning: not modelled, affects scheduling: {line}"
            )),
            "{summary}"
        );
    }
}

#[test]
fn the_cpu_driver_gives_numa_nodes_their_cores_and_claims_align_both() {
    let (c, w, _) = import_devices("dra-cpu-driver", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("sockets = 2\nnuma_per_socket = 1\ncores_per_numa = 32"),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    assert!(
        workload.contains("device_alignment = \"numa-with-cores\""),
        "{workload}"
    );
    // The running pod's 24 cores are on NUMA 0, beside its GPU.
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&workload).expect("a workload");
    let run = &spec.running[0];
    assert_eq!(
        run.cores,
        Some(coplan::spec::preemption::IdsOrCount::Ids((0..24).collect()))
    );
    assert_eq!(spec.workload[0].cores, 16);
}

#[test]
fn mig_slices_are_devices_of_their_own_kind_never_whole_gpus() {
    let (c, w, summary) = import_devices("mig-single", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    // 56 slices of 1/7 GPU: 8 GPUs' worth, no whole GPU on the MIG node.
    assert!(
        summary.contains("devices.nvidia.com/mig-1g.5gb (device-plugin)  56"),
        "{summary}"
    );
    assert!(
        summary.contains("devices.gpu (device-plugin)                    8"),
        "{summary}"
    );
    assert!(
        cluster.contains("kind = \"nvidia.com/mig-1g.5gb\""),
        "{cluster}"
    );
    assert!(
        cluster.contains("gpu_fraction = 0.14285714285714285"),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    // The pending pod that selects the MIG product asks for a slice; the other for GPUs.
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&workload).expect("a workload");
    let kind_of = |pod: &str| {
        let entry = spec
            .preempt
            .iter()
            .find(|p| p.name.as_deref() == Some(pod))
            .expect(pod);
        let class = spec
            .workload
            .iter()
            .find(|k| k.name == entry.workload)
            .expect("class");
        class.gpu_kind().to_string()
    };
    assert_eq!(kind_of("default/slice-new"), "nvidia.com/mig-1g.5gb");
    assert_eq!(kind_of("default/whole-new"), "gpu");
    let victims = victims_by_planner(&c, &w);
    assert!(
        victims.iter().all(|(_, v)| v.contains("slice-")),
        "{victims:?}"
    );

    let (c, w, summary) = import_devices("mig-mixed", &[]);
    assert!(
        summary.contains("devices.nvidia.com/mig-3g.40gb (device-plugin)  2"),
        "{summary}"
    );
    // Only the 3g pod frees a 3g slice: the free 1g slices are another kind.
    for (planner, v) in victims_by_planner(&c, &w) {
        assert_eq!(v, "default/medium-0", "{planner}");
    }
}

#[test]
fn amd_gpus_and_named_resources_are_devices_of_their_kind() {
    let (c, w, _) = import_devices("amd", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("gpu_resource = \"amd.com/gpu\""),
        "{cluster}"
    );
    assert!(
        cluster.contains("gpu_model = \"AMD_Instinct_MI300X_OAM\""),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    assert!(workload.contains("gpus = [0, 1]"), "{workload}");
    for (planner, v) in victims_by_planner(&c, &w) {
        assert_eq!(v.split(' ').count(), 2, "{planner}: {v}");
    }
    // A resource coplan does not know is no device until `--gpu-resource` names it.
    let dir = scratch("gaudi");
    let input = dir.join("gaudi.yaml");
    let text = std::fs::read_to_string(root().join("tests/fixtures/import/devices/amd.yaml"))
        .expect("fixture")
        .replace("amd.com/gpu:", "habana.ai/gaudi:");
    std::fs::write(&input, text).expect("written");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, _, err) = run(&[
        "import",
        "k8s",
        &path_str(&input),
        "--gpu-resource",
        "habana.ai/gaudi",
        "--pool-label",
        "amd.com/gpu.product-name",
        "--out-cluster",
        &c,
        "--out-workload",
        &w,
    ]);
    assert_eq!(code, 0, "{err}");
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("gpu_resource = \"habana.ai/gaudi\""),
        "{cluster}"
    );
    // The pool is named after the label's value, for `capacity --pool`.
    assert!(
        cluster.contains("name_prefix = \"amd-instinct-mi300x-oam-\""),
        "{cluster}"
    );
    let (code, out, err) = run(&[
        "capacity",
        &c,
        &w,
        "--pool",
        "amd-instinct-mi300x-oam-",
        "--target",
        "unplaced<=0",
    ]);
    assert_eq!(code, 0, "{err}\n{out}");
}
