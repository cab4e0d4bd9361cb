//! Named scenarios of the scheduling rules: fixtures every planner must obey, disruption
//! budgets, the rule that filtered each server out, the topology manager's policies.

use super::*;

/// The workload fixtures of a folder (every file but its `cluster.toml`), as paths from the
/// repository root, sorted.
fn fixtures(folder: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(common::root().join(folder))
        .expect("fixture folder")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "cluster.toml")
        .map(|n| format!("{folder}/{n}"))
        .collect();
    files.sort();
    files
}

/// Every planner, the exact ones included, obeys the scheduler's filter on the fixtures of
/// `tests/fixtures/eligibility` (labels, taints, cordon, NotReady, selectors, affinity,
/// tolerations, `preemption_policy = "never"`): the node and victims each fixture states.
#[test]
fn every_planner_obeys_the_scheduling_rules() {
    let files = fixtures("tests/fixtures/eligibility");
    assert!(files.len() >= 7);
    for rel in files {
        let (workload, text) = load_preemption(&rel);
        let cluster = load_cluster(header(&text, "cluster").expect("cluster header"));
        let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS_AND_NRT);
        let node = match header(&text, "expect-node").expect("expect-node") {
            "-" => None,
            n => Some(n.to_string()),
        };
        let victims: Vec<String> = match header(&text, "expect-victims") {
            Some("-") | None => vec![],
            Some(v) => v.split_whitespace().map(String::from).collect(),
        };
        for p in &report.planners {
            let e = &p.events[0];
            assert_eq!(e.node, node, "{rel}: {} node", p.name);
            assert_eq!(
                sorted(&e.victims),
                sorted(&victims),
                "{rel}: {} victims",
                p.name
            );
            assert_eq!(e.placed, node.is_some(), "{rel}: {} placed", p.name);
        }
    }
}

/// PodDisruptionBudgets on the fixtures of `tests/fixtures/pdb`, soft (counted; only the
/// default prefers candidates that violate none, as kube-scheduler ranks them) and hard
/// (`respect_pdb`: no planner exceeds a budget; the default walks them as Gödel does). Each
/// fixture states, per planner (`*`: every one), the node, the victims and the violations.
#[test]
fn disruption_budgets_are_counted_and_respected() {
    let files = fixtures("tests/fixtures/pdb");
    assert!(files.len() >= 5);
    for rel in files {
        let (workload, text) = load_preemption(&rel);
        let cluster = load_cluster(header(&text, "cluster").expect("cluster header"));
        let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS_AND_NRT);
        let expectations: Vec<Vec<&str>> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# expect "))
            .map(|l| l.split_whitespace().collect())
            .collect();
        for p in &report.planners {
            let expected = expectations
                .iter()
                .find(|e| e[0] == p.name || e[0] == "*")
                .unwrap_or_else(|| panic!("{rel}: no expectation for {}", p.name));
            let field = |key: &str| {
                expected
                    .iter()
                    .find_map(|kv| kv.strip_prefix(key))
                    .unwrap_or_else(|| panic!("{rel}: {key}"))
            };
            let e = &p.events[0];
            let node = Some(field("node=")).filter(|n| *n != "-");
            assert_eq!(e.node.as_deref(), node, "{rel}: {} node", p.name);
            let victims: Vec<String> = field("victims=")
                .split(',')
                .filter(|v| *v != "-")
                .map(String::from)
                .collect();
            assert_eq!(
                sorted(&e.victims),
                sorted(&victims),
                "{rel}: {} victims",
                p.name
            );
            assert_eq!(
                p.metrics.pdb_violations.to_string(),
                field("pdb="),
                "{rel}: {} violations",
                p.name
            );
        }
    }
}

const TOPOLOGY_PLANNERS_AND_NRT: [&str; 6] = common::fixtures::EVERY_PREEMPTION_PLANNER;

/// `explain` names the rule that keeps the preemptor off each server.
#[test]
fn explain_names_the_rule_that_filtered_each_server_out() {
    let cluster = load_cluster("tests/fixtures/eligibility/cluster.toml");
    let (workload, _) = load_preemption("tests/fixtures/eligibility/untolerated-taint.toml");
    let options = coplan::preempt::explain::ExplainOptions {
        event: 1,
        planners: Some(vec!["k8s-default".into()]),
        ..Default::default()
    };
    let cluster = coplan::topology::Cluster::from_spec(&cluster);
    let e =
        coplan::preempt::explain::explain_event(&cluster, &workload, &options).expect("explained");
    let rules: Vec<(&str, &str)> = e
        .filtered_out
        .iter()
        .map(|f| (f.server.as_str(), f.rule))
        .collect();
    assert_eq!(
        rules,
        [
            ("a100-0", "node-affinity"),
            ("a100-1", "not-ready"),
            ("h100-0", "taint"),
            ("h100-1", "unschedulable"),
        ]
    );
    assert!(
        e.filtered_out[2]
            .reason
            .contains("dedicated=llm:NoSchedule"),
        "{:?}",
        e.filtered_out[2]
    );
}

/// The kubelet's Topology Manager per node: a 2-GPU guaranteed pod on a server with one GPU
/// per NUMA node is refused under `single-numa-node` (no level is admitted), a socket hit
/// under `restricted`, and admitted under `none` and `best-effort` — by every planner.
#[test]
fn every_planner_admits_what_the_nodes_topology_manager_admits() {
    let (workload, _) = load_preemption("tests/fixtures/topology-manager/two-gpus.toml");
    for (policy, placed, required) in [
        ("none", true, Some(Level::Socket)),
        ("best-effort", true, Some(Level::Socket)),
        ("restricted", true, Some(Level::Socket)),
        ("single-numa-node", false, None),
    ] {
        let cluster = load_cluster(&format!(
            "tests/fixtures/topology-manager/cluster-{policy}.toml"
        ));
        let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS_AND_NRT);
        for p in &report.planners {
            let e = &p.events[0];
            assert_eq!(e.placed, placed, "{policy}: {} placed", p.name);
            assert_eq!(
                e.required_level, required,
                "{policy}: {} required level",
                p.name
            );
            if placed {
                assert!(e.hit, "{policy}: {} hit", p.name);
            } else {
                assert!(!e.hit, "{policy}: {}", p.name);
            }
        }
    }
}

/// Below its level: `none` and `best-effort` nodes admit the pod (a miss, `placed-miss`);
/// `restricted` and `single-numa-node` refuse it.
#[test]
fn lenient_topology_manager_policies_admit_a_misaligned_pod_as_a_miss() {
    let (workload, _) = load_preemption("tests/fixtures/topology-manager/two-gpus-fragmented.toml");
    for (policy, placed) in [
        ("none", true),
        ("best-effort", true),
        ("restricted", false),
        ("single-numa-node", false),
    ] {
        let cluster = load_cluster(&format!(
            "tests/fixtures/topology-manager/cluster-{policy}.toml"
        ));
        let report = plan(
            &cluster,
            &workload,
            &["k8s-default", "flextopo-imp", "ilp", "ilp-batch"],
        );
        for p in &report.planners {
            let e = &p.events[0];
            assert_eq!(e.placed, placed, "{policy}: {} placed", p.name);
            if placed {
                assert_eq!(e.outcome, Outcome::PlacedMiss, "{policy}: {}", p.name);
                assert_eq!(e.level, Some(Level::CrossSocket), "{policy}: {}", p.name);
            }
        }
    }
}

/// A hard budget spent by an eviction protects the pods it still covers; recounted (as
/// `simulate` recounts budgets after the pods that left between cycles), it allows again.
#[test]
fn a_spent_hard_budget_protects_its_pods_until_recounted() {
    let cluster = load_cluster("tests/fixtures/pdb/cluster.toml");
    let (workload, _) = load_preemption("tests/fixtures/pdb/hard-same-budget.toml");
    let cluster = coplan::topology::Cluster::from_spec(&cluster);
    let mut state =
        coplan::topology::state::running_state(&cluster, &workload).expect("running pods fit");
    state.attach_budgets(&workload, true);
    let id = |state: &coplan::topology::state::ClusterState, name: &str| {
        state
            .pods()
            .find(|(_, p)| p.name == name)
            .map(|(id, _)| id)
            .expect(name)
    };
    assert_eq!(state.budgets().left(), &[1]);
    let p1 = id(&state, "ns/p1");
    assert!(!state.budgets_allow([p1, id(&state, "ns/p2")]));
    state.evict(p1).expect("running");
    let p2 = id(&state, "ns/p2");
    assert_eq!(state.budgets().left(), &[0]);
    assert!(!state.pod(p2).expect("running").preemptible);
    assert!(
        state.servers()[0]
            .residents()
            .iter()
            .all(|r| !r.preemptible || r.id != p2)
    );
    state.attach_budgets(&workload, true);
    // One covered pod left, `disruptions_allowed = 1`: it may go again.
    assert_eq!(state.budgets().left(), &[1]);
    assert!(state.pod(p2).expect("running").preemptible);
}

/// Servers alike but for a hard budget are not one state to the batch: its optimum (and
/// bound) on `tests/fixtures/pdb-batch` is the plan every planner finds, one preemptor placed.
#[test]
fn the_batch_tells_apart_servers_that_differ_only_in_their_budgets() {
    let cluster = load_cluster("tests/fixtures/pdb/cluster.toml");
    let (workload, _) = load_preemption("tests/fixtures/pdb-batch/one-budget-one-server.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS_AND_NRT);
    let batch = report
        .planners
        .iter()
        .find(|p| p.name == "ilp-batch")
        .expect("ran");
    let bound = batch.bound.expect("a bound");
    for p in &report.planners {
        assert_eq!(p.metrics.placed, 1, "{}", p.name);
        assert_eq!(p.metrics.pdb_violations, 0, "{}", p.name);
        let objective = p.objective.expect("a plan");
        assert!(
            bound <= objective + 1e-9,
            "{}: {objective} below the bound {bound}",
            p.name
        );
    }
    assert_eq!(batch.status, coplan::plan::PlanStatus::Optimal);
}
