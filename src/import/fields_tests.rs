//! The modelled fields' tests.

use super::*;
use crate::import::tree::collected::Collect;

/// The first document of a JSON text as a tree.
fn tree(text: &str) -> Node {
    let read = Collect::from(crate::import::json::read, text).expect("valid JSON");
    let first = read.documents.into_iter().next().expect("a document");
    first.1
}

#[test]
fn ignored_fields_are_counted_by_kind_and_path() {
    let pod = tree(&serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a", "labels": {"app": "x", "tier": "y"}, "uid": "1"},
        "spec": {"nodeName": "n", "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}}}
        ]},
        "status": {"phase": "Running", "conditions": []}
    }).to_string());
    let mut out = BTreeMap::new();
    ignored_fields("Pod", &pod, &mut out);
    let node = tree(
        &serde_json::json!({"kind": "Node", "metadata": {"name": "n",
        "labels": {"nvidia.com/gpu.product": "H100", "a": "1", "b": "2"}}})
        .to_string(),
    );
    let mut node_out = BTreeMap::new();
    ignored_fields("Node", &node, &mut node_out);
    // Every node label is read: node selectors and affinity match on them; every pod
    // label too: PodDisruptionBudgets select on them.
    assert_eq!(node_out.get("Node: metadata.labels.*"), None);
    let keys: Vec<(&str, u64)> = out.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        keys,
        vec![
            ("Pod: metadata.uid", 1),
            ("Pod: spec.containers.[].image", 1),
            ("Pod: spec.containers.[].name", 1),
            (
                "Pod: spec.containers.[].resources.requests.ephemeral-storage",
                1
            ),
            ("Pod: status.conditions", 1),
        ]
    );
}
