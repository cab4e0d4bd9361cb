//! Preemption planners on named scenarios: the Kubernetes ranking and victim cases (S1–S8,
//! S14 of the prior-art notes) and topology cases where the default and FlexTopo must differ.

mod common;

use common::{header, load_cluster, load_preemption, plan};
use coplan::plan::preemption::EventOutcome as Outcome;
use coplan::topology::Level;

#[test]
fn kubernetes_ranking_and_victim_scenarios() {
    let dir = common::root().join("tests/fixtures/preemption");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("k8s-s"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 16);
    for path in files {
        let rel = format!(
            "tests/fixtures/preemption/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let (workload, text) = load_preemption(&rel);
        let cluster = load_cluster(header(&text, "cluster").expect("cluster header"));
        let report = plan(&cluster, &workload, &["k8s-default"]);
        let event = &report.planners[0].events[0];
        let expected_node = header(&text, "expect-node").expect("expect-node");
        let mut expected: Vec<String> = match header(&text, "expect-victims") {
            Some("-") | None => vec![],
            Some(v) => v.split_whitespace().map(String::from).collect(),
        };
        expected.sort();
        let mut victims = event.victims.clone();
        victims.sort();
        assert_eq!(event.node.as_deref(), Some(expected_node), "{rel}: node");
        assert_eq!(victims, expected, "{rel}: victims");
        assert!(event.placed, "{rel}: the preemptor is placed");
    }
}

const TOPOLOGY_PLANNERS: [&str; 5] = [
    "k8s-default",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

#[test]
fn derived_combination_case_needs_both_socket1_pods() {
    // S16's node with both NUMA nodes of socket 1 half-used by low-priority pods: counts fit
    // without eviction, but a socket-aligned placement needs both pods gone.
    let cluster = load_cluster("tests/fixtures/preemption/topo-gpu-2s4n8g-x1.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-derived-combination.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let by = |n: &str| {
        report
            .planners
            .iter()
            .find(|p| p.name == n)
            .expect("planner ran")
    };
    let k8s = &by("k8s-default").events[0];
    assert!(k8s.victims.is_empty(), "the blind default evicts nothing");
    assert_eq!(
        k8s.outcome,
        Outcome::Refused,
        "and fails admission across sockets"
    );
    assert_eq!(k8s.level, Some(Level::CrossSocket));
    for name in ["flextopo-imp", "flextopo-exhaustive", "ilp", "ilp-batch"] {
        let e = &by(name).events[0];
        assert_eq!(sorted(&e.victims), vec!["low-n2-0", "low-n3-0"], "{name}");
        assert_eq!(e.level, Some(Level::Socket), "{name}");
        assert!(e.hit, "{name}");
    }
}

#[test]
fn rtx4090_guaranteed_pod_default_refused_flextopo_aligned() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let k8s = &report.planners[0].events[0];
    assert_eq!(
        k8s.node.as_deref(),
        Some("node-0"),
        "zero-victim server first"
    );
    assert_eq!(k8s.outcome, Outcome::Refused);
    // Evicting the NUMA 1 pod of node-0 frees GPU 1 next to the free GPU 0: one victim aligns
    // the pod in socket 0, cheaper than two on the full node-1.
    for planner in &report.planners[1..] {
        let e = &planner.events[0];
        assert_eq!(e.node.as_deref(), Some("node-0"), "{}", planner.name);
        assert_eq!(e.level, Some(Level::Socket), "{}", planner.name);
        assert_eq!(e.victims.len(), 1, "{}", planner.name);
        assert!(e.hit);
        if planner.name.starts_with("flextopo") {
            // Equal candidates in either socket: the victim names break the tie.
            assert_eq!(e.victims, vec!["batch-0"]);
        }
    }
}

#[test]
fn a100_guaranteed_pod_needs_one_numa_node() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-a100-x2.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-a100-guaranteed.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let k8s = &report.planners[0].events[0];
    assert_eq!(k8s.outcome, Outcome::Refused);
    assert_eq!(k8s.level, Some(Level::CrossSocket));
    let imp = &report.planners[1].events[0];
    assert_eq!(imp.level, Some(Level::Numa));
    assert_eq!(imp.required_level, Some(Level::Numa));
    // Evicting one 2-GPU pod on a100-0 completes a NUMA node (a100-1 would need two victims);
    // batch-0-0 and batch-1-0 tie on every key but the victim names.
    assert_eq!(imp.node.as_deref(), Some("a100-0"));
    assert_eq!(imp.victims, vec!["batch-0-0"]);
    assert!(report.planners.iter().skip(1).all(|p| p.events[0].hit));
}

#[test]
fn enumeration_budget_truncates_and_says_so() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.flextopo.max_subset_evaluations = 1;
    let report = plan(
        &cluster,
        &workload,
        &["flextopo-imp", "flextopo-exhaustive"],
    );
    for p in &report.planners {
        assert!(
            p.truncated,
            "{}: the budget cut the enumeration short",
            p.name
        );
        assert!(p.events[0].truncated, "{}", p.name);
        assert!(
            p.metrics.subsets_evaluated <= 2,
            "{}: one subset per server",
            p.name
        );
    }
}

#[test]
fn calibrated_topology_score_prices_levels_by_measured_penalty() {
    use coplan::spec::preemption::{TopologyScore, TopologyScoreName};
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.flextopo.topology_score = TopologyScore::Named(TopologyScoreName::Calibrated);
    let report = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &report.planners[0].events[0];
    assert_eq!(e.level, Some(Level::Socket));
    // One victim of the lowest priority (per_victim 1) + topology 2 · (1 − 1/1.2).
    let expected = 1.0 + 2.0 * (1.0 - 1.0 / 1.2);
    assert!(
        (e.cost - expected).abs() < 1e-9,
        "cost {} vs {expected}",
        e.cost
    );
    assert!((report.planners[0].metrics.slowdown_mean.unwrap_or(0.0) - 1.2).abs() < 1e-9);
}

#[test]
fn victims_score_basis_prefers_victims_within_one_numa_node() {
    use coplan::spec::preemption::ScoreBasis;
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x1.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/score-basis.toml");
    workload.flextopo.alpha = 0.0;
    let placement = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &placement.planners[0].events[0];
    assert_eq!(
        (e.victims.clone(), e.level),
        (vec!["alpha-0".to_string()], Some(Level::Numa))
    );
    workload.flextopo.score_basis = ScoreBasis::Victims;
    let victims = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &victims.planners[0].events[0];
    assert_eq!(
        (e.victims.clone(), e.level),
        (vec!["zeta-0".to_string()], Some(Level::Numa))
    );
}
