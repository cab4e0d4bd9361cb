//! The parts of Kubernetes objects coplan reads (Node, Pod, NodeResourceTopology), as small
//! typed structs; the documents of an export (multi-document YAML, a `kind: List`, JSON); and
//! the count of every field it does not model.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::Spanned;

/// A quantity as written: `64`, `63500m` or `"512Gi"` (YAML may give a bare number).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantityText(pub String);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = QuantityText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes quantity such as 64, 63500m or 512Gi")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(QuantityText(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A quantity with where it was written.
pub type Quantity = Spanned<QuantityText>;

/// One object of any kind: the union of the fields coplan reads of Node, Pod and
/// NodeResourceTopology; everything else is skipped (and counted by [`ignored_fields`]).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Object {
    /// `kind`: `Node`, `Pod`, `NodeResourceTopology` or `List`; others are skipped.
    pub kind: Option<String>,
    /// `apiVersion`, e.g. `v1` or `topology.node.k8s.io/v1alpha2`.
    pub api_version: Option<String>,
    /// `metadata`.
    pub metadata: Metadata,
    /// `spec` (Pod fields).
    pub spec: ObjectSpec,
    /// `status` (Node and Pod fields).
    pub status: ObjectStatus,
    /// The objects of a `kind: List`.
    pub items: Vec<Spanned<Object>>,
    /// NodeResourceTopology.
    pub zones: Vec<Zone>,
    /// NodeResourceTopology attributes, e.g. `topologyManagerPolicy`.
    pub attributes: Vec<Attribute>,
    /// NodeResourceTopology (v1alpha1) Topology Manager policies, read when no attribute names one.
    pub topology_policies: Vec<String>,
}

/// The `metadata` of an object.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Metadata {
    /// Object name (a NodeResourceTopology is named after its node).
    pub name: Option<String>,
    /// Namespace of a pod.
    pub namespace: Option<String>,
    /// RFC 3339 creation time; orders Pending pods into the preemptor list.
    pub creation_timestamp: Option<Spanned<String>>,
    /// Labels; `nvidia.com/gpu.product` gives a node's GPU model.
    pub labels: BTreeMap<String, serde_json::Value>,
}

/// The `spec` of a Pod.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectSpec {
    /// The node a pod is bound to; absent for a pod not yet scheduled.
    pub node_name: Option<String>,
    /// The resolved PriorityClass value.
    pub priority: Option<i64>,
    /// Name of the pod's PriorityClass.
    pub priority_class_name: Option<String>,
    /// App containers; their requests add up.
    pub containers: Vec<Container>,
    /// Init containers; the pod requests the largest of them when it exceeds the app sum.
    pub init_containers: Vec<Container>,
}

/// One container of a pod.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Container {
    /// Its resource requests and limits.
    pub resources: Resources,
}

/// A container's `resources`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Resources {
    /// Requests by resource name (`cpu`, `memory`, `nvidia.com/gpu`, …).
    pub requests: BTreeMap<String, Quantity>,
    /// Limits by resource name; a limit stands in for a missing request.
    pub limits: BTreeMap<String, Quantity>,
}

/// The `status` of a Node or Pod.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectStatus {
    /// Node: resources pods may use, by name.
    pub allocatable: BTreeMap<String, Quantity>,
    /// Node: total resources, read where `allocatable` lacks one.
    pub capacity: BTreeMap<String, Quantity>,
    /// Pod: `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    pub phase: Option<String>,
    /// Pod: `Guaranteed`, `Burstable` or `BestEffort`.
    pub qos_class: Option<String>,
}

/// One zone of a NodeResourceTopology (a NUMA node when its type is `Node`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Zone {
    /// Zone name, e.g. `node-0`.
    pub name: String,
    /// Zone type; zones of type `Node` are NUMA nodes, others are ignored.
    #[serde(rename = "type")]
    pub zone_type: String,
    /// Distances to other zones (by zone name); they group NUMA nodes into sockets.
    pub costs: Vec<Cost>,
    /// Resources of the zone; only `cpu` and `nvidia.com/gpu` are read.
    pub resources: Vec<ZoneResource>,
}

/// The distance from a zone to the zone `name`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Cost {
    /// Name of the other zone.
    pub name: String,
    /// NUMA distance (as in `numactl -H`: 10 to itself, larger is farther).
    pub value: i64,
}

/// One resource of an NRT zone.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ZoneResource {
    /// Resource name (`cpu`, `nvidia.com/gpu`, …).
    pub name: String,
    /// Total in the zone.
    pub capacity: Option<Quantity>,
    /// What pods may use, read in place of `capacity` when present.
    pub allocatable: Option<Quantity>,
    /// What is still free; allocatable minus available is in use.
    pub available: Option<Quantity>,
}

/// A name/value attribute of a NodeResourceTopology.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Attribute {
    /// Attribute name, e.g. `topologyManagerPolicy`.
    pub name: String,
    /// Attribute value (a string for the known attributes).
    pub value: serde_json::Value,
}

/// One document of a file: its text and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Document<'a> {
    /// The text of the document.
    pub text: &'a str,
    /// Line of the file the document starts on (1-based).
    pub first_line: usize,
}

/// The documents of a file: a JSON file is one; YAML splits at `---` lines and ends at `...`.
/// Documents holding only comments and blank lines are left out.
pub fn documents(text: &str) -> Vec<Document<'_>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return vec![Document {
            text,
            first_line: 1,
        }];
    }
    let mut out = Vec::new();
    let (mut start, mut start_line, mut offset) = (0usize, 1usize, 0usize);
    fn push<'a>(
        text: &'a str,
        (from, to): (usize, usize),
        line: usize,
        out: &mut Vec<Document<'a>>,
    ) {
        let body = &text[from..to];
        let has_content = body.lines().any(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        });
        if has_content {
            out.push(Document {
                text: body,
                first_line: line,
            });
        }
    }
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end();
        let marker =
            bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") || bare == "...";
        if marker {
            push(text, (start, offset), start_line, &mut out);
            start = offset + line.len();
            start_line = i + 2;
        }
        offset += line.len();
    }
    push(text, (start, text.len()), start_line, &mut out);
    out
}

/// The fields coplan reads, per kind, as paths of keys (`[]` steps into a list's items).
fn modelled(kind: &str) -> &'static [&'static [&'static str]] {
    const COMMON: &[&str] = &["apiVersion"];
    match kind {
        "Node" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "creationTimestamp"],
            &["metadata", "labels", "nvidia.com/gpu.product"],
            &["status", "allocatable", "cpu"],
            &["status", "allocatable", "memory"],
            &["status", "allocatable", "nvidia.com/gpu"],
            &["status", "capacity", "cpu"],
            &["status", "capacity", "memory"],
            &["status", "capacity", "nvidia.com/gpu"],
        ],
        "Pod" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["metadata", "creationTimestamp"],
            &["spec", "nodeName"],
            &["spec", "priority"],
            &["spec", "priorityClassName"],
            &["spec", "containers", "[]", "resources", "requests", "cpu"],
            &[
                "spec",
                "containers",
                "[]",
                "resources",
                "requests",
                "memory",
            ],
            &[
                "spec",
                "containers",
                "[]",
                "resources",
                "requests",
                "nvidia.com/gpu",
            ],
            &["spec", "containers", "[]", "resources", "limits", "cpu"],
            &["spec", "containers", "[]", "resources", "limits", "memory"],
            &[
                "spec",
                "containers",
                "[]",
                "resources",
                "limits",
                "nvidia.com/gpu",
            ],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "requests",
                "cpu",
            ],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "requests",
                "nvidia.com/gpu",
            ],
            &["spec", "initContainers", "[]", "resources", "limits", "cpu"],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "limits",
                "nvidia.com/gpu",
            ],
            &["status", "phase"],
            &["status", "qosClass"],
        ],
        "NodeResourceTopology" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["zones", "[]", "name"],
            &["zones", "[]", "type"],
            &["zones", "[]", "costs"],
            &["zones", "[]", "resources", "[]", "name"],
            &["zones", "[]", "resources", "[]", "capacity"],
            &["zones", "[]", "resources", "[]", "allocatable"],
            &["zones", "[]", "resources", "[]", "available"],
            &["attributes"],
            &["topologyPolicies"],
        ],
        _ => &[],
    }
}

/// Maps whose keys are free-form: their ignored entries are counted as one path `…*`.
const FREE_FORM: &[&str] = &["labels", "annotations"];

/// Counts every field of `value` (one object of `kind`) that coplan does not read, by
/// `Kind: dotted.path`, into `out`.
pub fn ignored_fields(kind: &str, value: &serde_json::Value, out: &mut BTreeMap<String, u64>) {
    let paths = modelled(kind);
    let mut prefix: Vec<&str> = Vec::new();
    walk(kind, paths, value, &mut prefix, out);
}

fn walk<'v>(
    kind: &str,
    paths: &[&[&str]],
    value: &'v serde_json::Value,
    prefix: &mut Vec<&'v str>,
    out: &mut BTreeMap<String, u64>,
) {
    let depth = prefix.len();
    let matches = |key: &str, prefix: &[&str]| -> Vec<usize> {
        paths
            .iter()
            .filter(|p| {
                p.len() > depth
                    && p[depth] == key
                    && p[..depth].iter().zip(prefix).all(|(a, b)| a == b)
            })
            .map(|p| p.len())
            .collect()
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                let hits = matches(key, prefix);
                if hits.contains(&(depth + 1)) {
                    continue;
                }
                if hits.is_empty() {
                    let parent_free = prefix.last().is_some_and(|p| FREE_FORM.contains(p));
                    let path = if parent_free {
                        format!("{}.*", prefix.join("."))
                    } else {
                        let mut v: Vec<&str> = prefix.clone();
                        v.push(key);
                        v.join(".")
                    };
                    *out.entry(format!("{kind}: {path}")).or_default() += 1;
                    continue;
                }
                prefix.push(key);
                walk(kind, paths, child, prefix, out);
                prefix.pop();
            }
        }
        serde_json::Value::Array(items) => {
            let steps_in = paths.iter().any(|p| p.len() > depth && p[depth] == "[]");
            if steps_in {
                prefix.push("[]");
                for item in items {
                    walk(kind, paths, item, prefix, out);
                }
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_splits_at_document_markers_and_json_is_one_document() {
        let text = "# header\n---\nkind: Node\n---\n# only a comment\n---\nkind: Pod\n...\n";
        let docs = documents(text);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].first_line, 3);
        assert_eq!(docs[0].text, "kind: Node\n");
        assert_eq!(docs[1].first_line, 7);
        let json = "\n{\"kind\": \"List\", \"items\": []}\n";
        assert_eq!(documents(json).len(), 1);
        assert_eq!(documents("kind: Node\n").len(), 1);
    }

    #[test]
    fn ignored_fields_are_counted_by_kind_and_path() {
        let pod: serde_json::Value = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "labels": {"app": "x", "tier": "y"}, "uid": "1"},
            "spec": {"nodeName": "n", "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}}}
            ]},
            "status": {"phase": "Running", "conditions": []}
        });
        let mut out = BTreeMap::new();
        ignored_fields("Pod", &pod, &mut out);
        let node = serde_json::json!({"kind": "Node", "metadata": {"name": "n",
            "labels": {"nvidia.com/gpu.product": "H100", "a": "1", "b": "2"}}});
        let mut node_out = BTreeMap::new();
        ignored_fields("Node", &node, &mut node_out);
        assert_eq!(node_out.get("Node: metadata.labels.*"), Some(&2));
        let keys: Vec<(&str, u64)> = out.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            keys,
            vec![
                ("Pod: metadata.labels", 1),
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
}
