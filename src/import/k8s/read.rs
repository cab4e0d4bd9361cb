//! Reading a snapshot: every file read one object at a time (JSON — `-o json`, JSON Lines,
//! objects one after another — or YAML, one or many documents), each object with the place
//! it came from, so that every later error can point at the file, document and line; the
//! objects sorted by kind. Ignored fields are counted here, where each object's tree is at
//! hand, and the tree is dropped once its typed object is built: a List of any length is
//! never held whole.

use std::collections::{BTreeMap, BTreeSet};

use super::fabric_read::FabricObjects;
pub(super) use super::origin::{Origin, at_object, at_span};
use crate::calendar::rfc3339_seconds;
use crate::import::dra_objects::{DRA_KINDS, DraObject};
use crate::import::error::ImportError;
use crate::import::fabric_objects::{FabricObject, is_fabric_object};
use crate::import::fields::ignored_fields;
use crate::import::k8s_objects::{Object, Quantity};
use crate::import::limits::{MAX_CLOCK_SPAN_S, MAX_QUANTITY};
use crate::import::summary::ImportSummary;
use crate::import::tree::{Node, Sink, Value, from_tree};
use crate::import::{json, quantity, yaml};

pub(super) struct NodeObject {
    pub(super) name: String,
    pub(super) origin: Origin,
    /// First line of the node's document (spans inside it count from there).
    pub(super) doc_line: usize,
    pub(super) object: Object,
}

pub(super) struct PodObject {
    pub(super) origin: Origin,
    pub(super) object: Object,
}

/// Whether a text is JSON (its first character opens an object or an array); YAML otherwise.
fn is_json(text: &str) -> bool {
    matches!(
        text.trim_start_matches('\u{feff}')
            .trim_start()
            .as_bytes()
            .first(),
        Some(b'{' | b'[')
    )
}

/// Reads every document of every file into objects with their origin; counts ignored fields.
/// Every object's `doc_line` is 1: places in the trees are lines of the file.
pub(super) fn read_objects(
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Vec<(Origin, usize, Object)>, ImportError> {
    let mut out = Vec::new();
    for (fi, (_, text)) in files.iter().enumerate() {
        let mut sink = Objects {
            file: fi,
            out: &mut out,
            summary,
        };
        if is_json(text) {
            json::read(fi, text, &mut sink)?;
        } else {
            yaml::read(fi, text, &mut sink)?;
        }
    }
    Ok(out)
}

/// The reader's sink: each object's ignored fields counted, its tree turned into an
/// [`Object`] and dropped.
struct Objects<'a> {
    file: usize,
    out: &'a mut Vec<(Origin, usize, Object)>,
    summary: &'a mut ImportSummary,
}

impl Objects<'_> {
    fn object(&mut self, origin: Origin, mut node: Node) -> Result<(), ImportError> {
        let kind = node
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string();
        count_ignored(&kind, &node, self.summary);
        // A Node's labels give its rules and GPU model, a Pod's are matched by the
        // PodDisruptionBudgets, and a Pod's annotations and owners make gangs; other kinds'
        // are dropped before they cost memory.
        if kind != "Pod"
            && let Value::Map(entries) = &mut node.value
            && let Some((_, metadata)) = entries.iter_mut().find(|(k, _)| k == "metadata")
            && let Value::Map(fields) = &mut metadata.value
        {
            fields.retain(|(k, _)| {
                (k != "labels" || kind == "Node") && k != "annotations" && k != "ownerReferences"
            });
        }
        let malformed = |e: crate::import::tree::TreeError| {
            let at = e.at.unwrap_or_default();
            ImportError::at(
                self.file,
                at.line.max(1),
                (at.column > 0).then_some(at.column),
                format!("{}: {}", origin.place(), e.message),
            )
            .with(
                "malformed here",
                "expected a Kubernetes object (Node, Pod, NodeResourceTopology, a DRA object) or a `kind: List` of them, as `kubectl get … -o yaml|json` writes",
            )
        };
        if DRA_KINDS.contains(&kind.as_str()) {
            let mut dra: DraObject = from_tree(node).map_err(malformed)?;
            let object = Object {
                kind: dra.kind.clone(),
                api_version: dra.api_version.clone(),
                metadata: crate::import::k8s_objects::Metadata {
                    name: dra.metadata.name.take(),
                    namespace: dra.metadata.namespace.take(),
                    ..Default::default()
                },
                dra: Some(Box::new(dra)),
                ..Object::default()
            };
            self.out.push((origin, 1, object));
            return Ok(());
        }
        let api_version = node.get("apiVersion").and_then(Node::as_str);
        if is_fabric_object(&kind, api_version.unwrap_or_default()) {
            let mut fabric: FabricObject = from_tree(node).map_err(malformed)?;
            let object = Object {
                kind: fabric.kind.clone(),
                api_version: fabric.api_version.clone(),
                metadata: crate::import::k8s_objects::Metadata {
                    name: fabric.metadata.name.take(),
                    namespace: fabric.metadata.namespace.take(),
                    ..Default::default()
                },
                fabric: Some(Box::new(fabric)),
                ..Object::default()
            };
            self.out.push((origin, 1, object));
            return Ok(());
        }
        let object: Object = from_tree(node).map_err(malformed)?;
        self.out.push((origin, 1, object));
        Ok(())
    }
}

impl Sink for Objects<'_> {
    fn item(&mut self, document: usize, index: usize, node: Node) -> Result<(), ImportError> {
        let origin = Origin {
            file: self.file,
            document,
            item: Some(index),
            line: node.at.line,
        };
        self.object(origin, node)
    }

    fn document(
        &mut self,
        document: usize,
        mut rest: Node,
        items: Option<usize>,
    ) -> Result<(), ImportError> {
        self.summary.read("documents", 1);
        // Items a reader could not hand on one by one (an anchored sequence, a top-level
        // array): the same, from the tree.
        let mut streamed = items.unwrap_or(0);
        if let Value::Map(entries) = &mut rest.value
            && let Some(i) = entries
                .iter()
                .position(|(k, v)| k == "items" && matches!(v.value, Value::Seq(_)))
            && let (
                _,
                Node {
                    value: Value::Seq(list),
                    ..
                },
            ) = entries.remove(i)
        {
            for node in list {
                streamed += 1;
                self.item(document, streamed, node)?;
            }
        }
        let kind = rest.get("kind").and_then(Node::as_str).unwrap_or_default();
        if kind == "List" || streamed > 0 {
            // The List's own fields (apiVersion, metadata) are checked for their types only.
            let origin = Origin {
                file: self.file,
                document,
                item: None,
                line: rest.at.line,
            };
            let at = rest.at;
            return from_tree::<Object>(rest).map(|_| ()).map_err(|e| {
                let at = e.at.unwrap_or(at);
                ImportError::at(
                    origin.file,
                    at.line.max(1),
                    Some(at.column),
                    format!("document {document}: {}", e.message),
                )
                .with(
                    "malformed here",
                    "a `kind: List` has `items`, `apiVersion` and `metadata`",
                )
            });
        }
        let origin = Origin {
            file: self.file,
            document,
            item: None,
            line: rest.at.line,
        };
        self.object(origin, rest)
    }
}

fn count_ignored(kind: &str, value: &Node, summary: &mut ImportSummary) {
    if matches!(kind, "Node" | "Pod" | "NodeResourceTopology") {
        ignored_fields(kind, value, &mut summary.ignored_fields);
    }
}

/// A parsed quantity, or the located error of its text.
pub(super) fn parse_quantity(
    origin: &Origin,
    doc_line: usize,
    q: &Quantity,
    what: &str,
) -> Result<f64, ImportError> {
    let v = quantity::parse(&q.value.0).map_err(|e| {
        at_span(origin, doc_line, q, format!("{what}: {e}")).with(
            "not a quantity",
            "Kubernetes quantities are a number with an optional suffix: 64, 63500m, 512Mi, 1e3",
        )
    })?;
    if v < 0.0 {
        return Err(at_span(
            origin,
            doc_line,
            q,
            format!("{what} is negative: `{}`", q.value.0),
        )
        .with("negative", "resource quantities are at least 0"));
    }
    // Read as a count of cores or GPUs, a larger value would be clamped somewhere downstream:
    // refused here, with the value as written.
    if v > MAX_QUANTITY {
        return Err(at_span(
            origin,
            doc_line,
            q,
            format!(
                "{what} `{}` is above {MAX_QUANTITY}, coplan's limit for a CPU or GPU quantity",
                q.value.0
            ),
        )
        .with(
            "out of range",
            "no node has that many cores or GPUs; docs/spec.md, \"Limits\", lists the limits",
        ));
    }
    Ok(v)
}

/// The objects of a snapshot by kind: nodes and NRT objects by name, pods in input order
/// with the first line of their document.
#[derive(Default)]
pub(super) struct Snapshot {
    pub(super) nodes: BTreeMap<String, NodeObject>,
    pub(super) nrts: BTreeMap<String, (Origin, usize, Object)>,
    pub(super) pods: Vec<(PodObject, usize)>,
    /// PriorityClass objects by name: value and preemption policy.
    pub(super) priority_classes: PriorityClasses,
    /// PodDisruptionBudget objects by `namespace/name`.
    pub(super) budgets: BTreeMap<String, (Origin, Object)>,
    /// The DRA objects.
    pub(super) dra: DraObjects,
    /// Kueue Topologies and ResourceFlavors, Volcano HyperNodes and PodGroups.
    pub(super) fabric: FabricObjects,
}

/// PriorityClass objects by name: value and preemption policy.
pub(super) type PriorityClasses = BTreeMap<String, (Option<i64>, Option<String>)>;

/// A DRA object with its name (`namespace/name` for the namespaced
/// kinds).
pub(super) struct Located {
    pub(super) name: String,
    pub(super) object: DraObject,
}

/// The DRA objects of a snapshot: slices in input order, the others by name.
#[derive(Default)]
pub(super) struct DraObjects {
    pub(super) slices: Vec<Located>,
    pub(super) classes: BTreeMap<String, Located>,
    pub(super) claims: BTreeMap<String, Located>,
    pub(super) templates: BTreeMap<String, Located>,
}

/// Sorts the objects by kind; a Node, Pod or NRT object without a name is an error, other
/// kinds are counted and skipped.
pub(super) fn sort_objects(
    objects: Vec<(Origin, usize, Object)>,
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Snapshot, ImportError> {
    let mut snapshot = Snapshot::default();
    let mut pod_ids: BTreeSet<String> = BTreeSet::new();
    for object in objects {
        snapshot.add(object, files, &mut pod_ids, summary)?;
    }
    if snapshot.nodes.is_empty() {
        return Err(ImportError::input(
            format!("no Node objects in {}", summary.files.join(", ")),
            Some("export the nodes too: `kubectl get nodes,pods -A -o yaml`".into()),
        ));
    }

    check_clock_span(&snapshot.pods, files)?;
    Ok(snapshot)
}

/// `namespace/name`: the identity of an object of a namespaced kind.
fn namespaced(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or("default"))
}

impl Snapshot {
    /// Adds one object under its kind; `pod_ids` are the pods (`namespace/name`) already in.
    fn add(
        &mut self,
        (origin, doc_line, object): (Origin, usize, Object),
        files: &[(String, String)],
        pod_ids: &mut BTreeSet<String>,
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        let kind = object.kind.clone().unwrap_or_default();
        summary.read(
            &format!(
                "objects.{}",
                if kind.is_empty() { "(no kind)" } else { &kind }
            ),
            1,
        );
        let named = || {
            object.metadata.name.clone().ok_or_else(|| {
                ImportError::at(
                    origin.file,
                    origin.line,
                    None,
                    format!("{}: a {kind} without metadata.name", origin.describe(files)),
                )
                .with(
                    "no name",
                    "every Node, Pod and NodeResourceTopology needs metadata.name",
                )
            })
        };
        match kind.as_str() {
            "Node" => {
                let name = named()?;
                if self.nodes.contains_key(&name) {
                    summary.dropped("duplicate_nodes", 1);
                    summary.warn(format!(
                        "node `{name}` appears twice; the first ({}) is kept",
                        self.nodes[&name].origin.describe(files)
                    ));
                    return Ok(());
                }
                let node = NodeObject {
                    name: name.clone(),
                    origin,
                    doc_line,
                    object,
                };
                self.nodes.insert(name, node);
            }
            "NodeResourceTopology" => {
                let name = named()?;
                if self.nrts.contains_key(&name) {
                    summary.dropped("duplicate_nrt_objects", 1);
                    summary.warn(format!(
                        "NRT object `{name}` appears twice; the first is kept"
                    ));
                    return Ok(());
                }
                self.nrts.insert(name, (origin, doc_line, object));
            }
            "Pod" => {
                // `namespace/name` is a pod's identity: a second copy (two exports read
                // together) is the same pod.
                let id = namespaced(object.metadata.namespace.as_deref(), &named()?);
                if !pod_ids.insert(id.clone()) {
                    summary.dropped("duplicate_pods", 1);
                    summary.warn(format!(
                        "pod `{id}` appears twice; the first is kept ({})",
                        origin.describe(files)
                    ));
                    return Ok(());
                }
                self.pods.push((PodObject { origin, object }, doc_line));
            }
            "PriorityClass" => {
                let name = named()?;
                summary.read("priority_classes", 1);
                let class = (object.value, object.preemption_policy);
                self.priority_classes.insert(name, class);
            }
            "PodDisruptionBudget" => {
                let id = namespaced(object.metadata.namespace.as_deref(), &named()?);
                summary.read("pod_disruption_budgets", 1);
                if self.budgets.contains_key(&id) {
                    summary.dropped("duplicate_pod_disruption_budgets", 1);
                    return Ok(());
                }
                self.budgets.insert(id, (origin, object));
            }
            "ResourceSlice" | "DeviceClass" | "ResourceClaim" | "ResourceClaimTemplate" => {
                let name = named()?;
                self.dra.add(&kind, name, object, summary);
            }
            _ if object.fabric.is_some() => {
                let name = named()?;
                self.fabric.add(&kind, name, origin, object, summary);
            }
            _ => summary.dropped("objects_of_other_kinds", 1),
        }
        Ok(())
    }
}

impl DraObjects {
    /// Adds a DRA object of `kind` named `name` (in its namespace for claims and templates).
    fn add(&mut self, kind: &str, name: String, mut object: Object, summary: &mut ImportSummary) {
        let namespace = object.metadata.namespace.take();
        let Some(object) = object.dra.take() else {
            return;
        };
        let id = if matches!(kind, "ResourceClaim" | "ResourceClaimTemplate") {
            namespaced(namespace.as_deref(), &name)
        } else {
            name
        };
        let located = Located {
            name: id.clone(),
            object: *object,
        };
        let into = match kind {
            "ResourceSlice" => {
                self.slices.push(located);
                return;
            }
            "DeviceClass" => &mut self.classes,
            "ResourceClaim" => &mut self.claims,
            _ => &mut self.templates,
        };
        if into.contains_key(&id) {
            summary.dropped("duplicate_dra_objects", 1);
            return;
        }
        into.insert(id, located);
    }
}

/// Refuses creation times further apart than a workload's clock spans: the import counts
/// every time from the earliest pod, and a span beyond the limit would be written as a
/// workload that does not load. The error points at the pod that first stretches the span
/// past the limit, in input order, and names the pod at the other end.
fn check_clock_span(
    pods: &[(PodObject, usize)],
    files: &[(String, String)],
) -> Result<(), ImportError> {
    // (time, pod index) of the earliest and the latest pod so far.
    let mut bounds: Option<((f64, usize), (f64, usize))> = None;
    for (i, (pod, doc_line)) in pods.iter().enumerate() {
        let Some(ts) = &pod.object.metadata.creation_timestamp else {
            continue;
        };
        // A text that is no time is refused, at its place, when the pods are ordered.
        let Some(t) = rfc3339_seconds(&ts.value) else {
            continue;
        };
        let (lo, hi) = match bounds {
            None => ((t, i), (t, i)),
            Some((lo, hi)) => (
                if t < lo.0 { (t, i) } else { lo },
                if t > hi.0 { (t, i) } else { hi },
            ),
        };
        if hi.0 - lo.0 > MAX_CLOCK_SPAN_S {
            let other = if lo.1 == i { hi.1 } else { lo.1 };
            let (other_pod, _) = &pods[other];
            let other_text = other_pod
                .object
                .metadata
                .creation_timestamp
                .as_ref()
                .map_or("", |t| t.value.as_str());
            return Err(at_span(
                &pod.origin,
                *doc_line,
                ts,
                format!(
                    "creationTimestamp `{}` is {:.3e} s from `{other_text}` ({}, line {}); coplan's clock spans at most {MAX_CLOCK_SPAN_S:e} s (about 317 years)",
                    ts.value,
                    hi.0 - lo.0,
                    other_pod.origin.describe(files),
                    other_pod.origin.line,
                ),
            )
            .with(
                "too far apart",
                "times are counted from the earliest pod; docs/spec.md, \"Limits\", lists the limits",
            ));
        }
        bounds = Some((lo, hi));
    }
    Ok(())
}
