//! The Kubernetes importer's tests of the import as a whole.

use super::importer::import;
use crate::import::error::ImportError;

#[test]
fn a_snapshot_whose_nodes_are_all_left_out_is_an_input_error() {
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\nstatus:\n  cpu: \"8\"\n";
    match import(&[("snapshot.yaml".into(), text.into())]) {
        Err(ImportError::Input { message, help }) => {
            assert!(message.contains("snapshot.yaml"), "{message}");
            assert!(help.is_some_and(|h| h.contains("allocatable")));
        }
        other => panic!("{other:?}"),
    }
}

/// A node of 8 GPUs named `name` with `labels` (flow-style YAML, `{}` for none).
fn node(name: &str, labels: &str) -> String {
    format!(
        "- {{kind: Node, apiVersion: v1, metadata: {{name: {name}, labels: {labels}}}, status: {{allocatable: {{cpu: \"16\", nvidia.com/gpu: \"8\"}}}}}}\n"
    )
}

/// A pending pod of `gpus` GPUs named `name` with `annotations`.
fn pending(name: &str, gpus: u32, annotations: &str) -> String {
    format!(
        "- {{kind: Pod, apiVersion: v1, metadata: {{name: {name}, namespace: ml, annotations: {annotations}, ownerReferences: [{{kind: Job, name: job, controller: true}}]}}, spec: {{priority: 10, containers: [{{name: c, resources: {{limits: {{cpu: \"2\", nvidia.com/gpu: \"{gpus}\"}}}}}}]}}, status: {{phase: Pending}}}}\n"
    )
}

/// The error of importing a List of `items`, with its message.
fn refused(items: &[String]) -> String {
    let text = format!("kind: List\napiVersion: v1\nitems:\n{}", items.concat());
    match import(&[("s.yaml".into(), text)]) {
        Err(ImportError::At { message, .. }) => message,
        other => panic!("expected a located error, got {other:?}"),
    }
}

fn hypernode(name: &str, tier: i64, members: &[(&str, &str)]) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(t, n)| format!("{{type: {t}, selector: {{exactMatch: {{name: {n}}}}}}}"))
        .collect();
    format!(
        "- {{kind: HyperNode, apiVersion: topology.volcano.sh/v1alpha1, metadata: {{name: {name}}}, spec: {{tier: {tier}, members: [{}]}}}}\n",
        members.join(", ")
    )
}

#[test]
fn hypernodes_nest_by_tier_and_hold_each_node_once_per_tier() {
    let nodes = [node("n0", "{}"), node("n1", "{}")];
    let two = refused(&[
        nodes[0].clone(),
        nodes[1].clone(),
        hypernode("a", 1, &[("Node", "n0"), ("Node", "n1")]),
        hypernode("b", 1, &[("Node", "n1")]),
    ]);
    assert!(
        two.contains("node `n1` is in HyperNode `a` and in HyperNode `b`"),
        "{two}"
    );
    let flat = refused(&[
        nodes[0].clone(),
        nodes[1].clone(),
        hypernode("a", 1, &[("Node", "n0"), ("Node", "n1")]),
        hypernode("b", 1, &[("HyperNode", "a")]),
    ]);
    assert!(flat.contains("is of tier 1, not below 1"), "{flat}");
    let missing = refused(&[
        nodes[0].clone(),
        nodes[1].clone(),
        hypernode("a", 1, &[("Node", "n0")]),
    ]);
    assert!(
        missing.contains("node `n1` is in no HyperNode of tier 1"),
        "{missing}"
    );
}

#[test]
fn a_kueue_gang_asks_the_same_of_every_pod_and_its_slices_divide_it() {
    let topology = "- {kind: Topology, apiVersion: kueue.x-k8s.io/v1beta1, metadata: {name: t}, spec: {levels: [{nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]}}\n".to_string();
    let nodes = [
        node("n0", "{example.com/rack: r0}"),
        node("n1", "{example.com/rack: r0}"),
    ];
    let rack = "{kueue.x-k8s.io/podset-required-topology: example.com/rack}";
    let shapes = refused(&[
        topology.clone(),
        nodes[0].clone(),
        nodes[1].clone(),
        pending("p0", 4, rack),
        pending("p1", 2, rack),
    ]);
    assert!(
        shapes.contains("pod `ml/p1` is in gang `ml/job` but its workload class"),
        "{shapes}"
    );
    let sliced = "{kueue.x-k8s.io/podset-slice-required-topology: kubernetes.io/hostname, kueue.x-k8s.io/podset-slice-size: \"2\"}";
    let slices = refused(&[
        topology.clone(),
        nodes[0].clone(),
        nodes[1].clone(),
        pending("p0", 2, sliced),
        pending("p1", 2, sliced),
        pending("p2", 2, sliced),
    ]);
    assert!(
        slices.contains("3 pending pods, which slices of 2 do not divide"),
        "{slices}"
    );
    let half = refused(&[
        topology.clone(),
        nodes[0].clone(),
        pending("p0", 2, "{kueue.x-k8s.io/podset-slice-size: \"2\"}"),
    ]);
    assert!(
        half.contains("has kueue.x-k8s.io/podset-slice-size but no"),
        "{half}"
    );
    let wider = refused(&[
        topology,
        nodes[0].clone(),
        pending(
            "p0",
            2,
            "{kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname, kueue.x-k8s.io/podset-preferred-topology: example.com/rack}",
        ),
    ]);
    assert!(
        wider.contains("the preferred level `rack` is wider than the required `host`"),
        "{wider}"
    );
}

#[test]
fn the_hostname_level_of_a_kueue_topology_is_its_last() {
    let topology = "- {kind: Topology, apiVersion: kueue.x-k8s.io/v1beta1, metadata: {name: t}, spec: {levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: example.com/rack}]}}\n".to_string();
    let message = refused(&[topology, node("n0", "{example.com/rack: r0}")]);
    assert!(message.contains("it can only be the last"), "{message}");
}
