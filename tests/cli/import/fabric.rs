//! Levels above the server and gangs from Kubernetes snapshots: a Kueue Topology and Kueue's
//! pod annotations, Volcano HyperNodes and PodGroups, topograph's node labels and the GPU
//! clique label. Each fixture imports, validates, plans and is snapshotted.

use super::*;

/// Each fixture of `tests/fixtures/import/fabric/` with the planners its specs are planned
/// with: every gang planner, gang-blind and gang-aware.
const PLANNERS: &str = "k8s-default,k8s-nrt,kueue-tas,flextopo-imp,ilp,ilp-batch";
const FIXTURES: &[(&str, &str)] = &[
    ("kueue-topology", PLANNERS),
    ("volcano-hypernodes", PLANNERS),
    ("topograph", PLANNERS),
    ("gpu-clique", PLANNERS),
];

fn fixture(name: &str) -> String {
    format!("tests/fixtures/import/fabric/{name}.yaml")
}

#[test]
fn every_fabric_fixture_imports_validates_plans_and_matches_its_snapshot() {
    let listed: Vec<&str> = FIXTURES.iter().map(|(f, _)| *f).collect();
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("tests/fixtures/import/fabric"))
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().replace(".yaml", ""))
        .collect();
    on_disk.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(on_disk, sorted, "every fabric fixture is listed");
    for (name, planners) in FIXTURES {
        let text = import_and_plan_with(
            &format!("fabric-{name}"),
            &["import", "k8s", &fixture(name)],
            planners,
        );
        snapshot(&format!("import__fabric-{name}"), &text);
    }
}

/// The written cluster and workload of a fixture, parsed.
fn imported(
    name: &str,
) -> (
    coplan::spec::ClusterSpec,
    coplan::spec::PreemptionSpec,
    String,
) {
    let dir = scratch(&format!("fabric-specs-{name}"));
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, _, err) = import_k8s(&[&fixture(name)], &c, &w);
    assert_eq!(code, 0, "{name}: {err}");
    let cluster =
        toml::from_str(&std::fs::read_to_string(&c).expect("cluster")).expect("a cluster");
    let workload =
        toml::from_str(&std::fs::read_to_string(&w).expect("workload")).expect("a workload");
    (cluster, workload, err)
}

/// The gang entry named `name`: (pods, required, preferred, slice size, slice level).
type GangFields = (
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

fn gang(w: &coplan::spec::PreemptionSpec, name: &str) -> GangFields {
    let e = w
        .preempt
        .iter()
        .find(|e| e.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no [[preempt]] named {name}"));
    (
        e.pods,
        e.required_level.clone(),
        e.preferred_level.clone(),
        e.slice_size,
        e.slice_level.clone(),
    )
}

fn domain_of(c: &coplan::spec::ClusterSpec, server: &str) -> Vec<(String, String)> {
    c.server
        .iter()
        .find(|s| s.name == server)
        .map(|s| s.domain.clone().into_iter().collect())
        .unwrap_or_default()
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn a_kueue_topology_gives_levels_by_label_and_pod_annotations_make_gangs() {
    let (c, w, err) = imported("kueue-topology");
    let fabric = c.topology.clone().expect("[topology]");
    // The Topology the ResourceFlavor names, not the first one read.
    assert_eq!(fabric.levels, ["block", "rack"]);
    assert_eq!(
        fabric.labels.get("rack").map(String::as_str),
        Some("cloud.provider.com/topology-rack")
    );
    assert!(err.contains("`default` gives the levels"), "{err}");
    // Rack names reused under both blocks are prefixed by their block.
    assert_eq!(domain_of(&c, "h100-05"), [("rack".into(), "b2-r1".into())]);
    assert_eq!(
        gang(&w, "ml/train-a/workers"),
        (Some(4), some("block"), some("rack"), Some(2), some("host"))
    );
    // Grouped by the pods' controller.
    assert_eq!(
        gang(&w, "ml/eval"),
        (Some(2), some("rack"), None, None, None)
    );
    assert_eq!(
        gang(&w, "ml/solo"),
        (Some(1), some("host"), None, None, None)
    );
    assert_eq!(gang(&w, "ml/plain"), (None, None, None, None, None));
    assert_eq!(w.preempt.len(), 4, "one entry per gang, in creation order");
}

#[test]
fn volcano_hypernodes_give_tiers_and_pod_groups_make_gangs() {
    let (c, w, err) = imported("volcano-hypernodes");
    let fabric = c.topology.clone().expect("[topology]");
    assert_eq!(fabric.levels, ["tier-3", "tier-2", "tier-1"]);
    assert!(fabric.labels.is_empty());
    // node-4 is s2's by its label, s2 is s5's, s5 is s6's.
    assert_eq!(
        domain_of(&c, "node-4"),
        [
            ("tier-1".into(), "s2".into()),
            ("tier-2".into(), "s5".into()),
            ("tier-3".into(), "s6".into())
        ]
    );
    assert_eq!(
        gang(&w, "ml/train-hard"),
        (Some(4), some("tier-2"), None, None, None)
    );
    assert_eq!(
        gang(&w, "ml/infer-soft"),
        (Some(2), None, some("tier-1"), None, None)
    );
    // The third pending pod of a minMember-2 group is planned by itself.
    assert_eq!(gang(&w, "ml/infer-soft-2"), (None, None, None, None, None));
    assert_eq!(gang(&w, "ml/eval"), (Some(2), None, None, None, None));
    assert!(
        err.contains("PodGroup `ml/orphan`, which is not in the snapshot"),
        "{err}"
    );
}

#[test]
fn topograph_labels_and_gpu_cliques_give_levels_an_nvlink_level_innermost() {
    let (c, w, _) = imported("topograph");
    let fabric = c.topology.clone().expect("[topology]");
    assert_eq!(fabric.levels, ["spine", "leaf", "accelerator"]);
    assert_eq!(
        gang(&w, "ml/pretrain"),
        (Some(4), some("leaf"), some("accelerator"), None, None)
    );
    let (c, w, err) = imported("gpu-clique");
    let fabric = c.topology.clone().expect("[topology]");
    assert_eq!(fabric.levels, ["leaf", "nvlink"]);
    assert_eq!(
        fabric.labels.get("nvlink").map(String::as_str),
        Some("nvidia.com/gpu.clique")
    );
    // A node without a clique is an NVLink domain of its own.
    assert_eq!(
        domain_of(&c, "h100-0"),
        [("nvlink".into(), "h100-0".into())]
    );
    assert!(domain_of(&c, "gb200-0").is_empty());
    assert!(
        err.contains("nodes_in_an_nvlink_domain_of_their_own: h100-0"),
        "{err}"
    );
    assert_eq!(
        gang(&w, "ml/moe"),
        (Some(3), some("nvlink"), None, None, None)
    );
}

#[test]
fn a_snapshot_without_levels_or_gangs_imports_as_before() {
    let (cluster, workload) = written("fabric-none", "tests/fixtures/import/valid/k8s-multi.yaml");
    assert!(!cluster.contains("[topology]"), "{cluster}");
    assert!(!cluster.contains("domain"), "{cluster}");
    assert!(!workload.contains("pods ="), "{workload}");
}
