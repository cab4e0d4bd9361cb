//! `coplan import alibaba` and `import azure`: the small committed traces and, when present,
//! the shared Alibaba trace.

use super::*;

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
