//! `coplan import k8s`: lists, JSON lines and YAML streams, the summary, the kubelet's
//! accounting of running pods, repeated pods and disruption budgets.

use super::*;

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
    let (code, out, err) = import_k8s(
        &[
            "tests/fixtures/import/valid/k8s-lines.jsonl",
            "--format",
            "json",
        ],
        &c,
        &w,
    );
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
    let (code, out, err) = import_k8s(&[&path_str(&file), "--format", "json"], &c, &w);
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
fn the_json_summary_carries_every_count() {
    let dir = scratch("json-summary");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, out, err) = import_k8s(
        &[
            "tests/fixtures/import/valid/k8s-list.json",
            "--format",
            "json",
        ],
        &c,
        &w,
    );
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

/// The kubelet's accounting: a Guaranteed pod with whole CPUs holds exclusive cores; the
/// others share a pool of ⌈Σ millicores⌉ cores (a native sidecar and the pod overhead
/// counted, an ordinary init container only as a peak), so no DaemonSet pod pushes a job off
/// its node; a node that cannot hold its pods is an error unless `--allow-misfit`.
#[test]
fn running_pods_are_counted_as_the_kubelet_counts_them() {
    let dir = scratch("kubelet-accounting");
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let input = "tests/fixtures/import/k8s-kubelet-accounting.yaml";
    let (code, _, err) = import_k8s(&[input], &path_str(&c), &path_str(&w));
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
    let (code, _, err) = import_k8s(
        &[input, "--cpu-manager", "none"],
        &path_str(&c),
        &path_str(&w),
    );
    assert_eq!(code, 0, "{err}");
    // A node too small for its pods: named, exit 2, unless --allow-misfit.
    let small = std::fs::read_to_string(input)
        .expect("fixture")
        .replace("cpu: \"16\"", "cpu: \"14\"");
    let small_path = dir.join("small.yaml");
    std::fs::write(&small_path, small).expect("written");
    let (code, _, err) = import_k8s(&[&path_str(&small_path)], &path_str(&c), &path_str(&w));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("web/serve") && err.contains("--allow-misfit"),
        "{err}"
    );
    let (code, _, err) = import_k8s(
        &[&path_str(&small_path), "--allow-misfit"],
        &path_str(&c),
        &path_str(&w),
    );
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
    let (code, _, err) = import_k8s(&[input, input], &path_str(&c), &path_str(&w));
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
    let (code, _, err) = import_k8s(
        &["tests/fixtures/import/k8s-disruption-budgets.yaml"],
        &path_str(&c),
        &path_str(&w),
    );
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
