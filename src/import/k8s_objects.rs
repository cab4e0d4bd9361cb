//! The parts of Kubernetes objects coplan reads (Node, Pod, NodeResourceTopology), as small
//! typed structs deserialised from one object's located tree (`tree.rs`); and the count of
//! every field it does not model.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::Spanned;

pub use super::labels::{LabelRequirement, LabelSelector, Labels};
use super::tree::{Node, Value};

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
        // As text: a bare `1e30` keeps the digits it was written with, for the message that
        // refuses it.
        d.deserialize_str(V)
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
    /// The objects of a `kind: List`: the readers hand them on one by one, so a document's
    /// `items` is always empty by the time it is read as an object; kept so that an `items`
    /// of the wrong type is still refused.
    pub items: Vec<serde::de::IgnoredAny>,
    /// NodeResourceTopology.
    pub zones: Vec<Zone>,
    /// NodeResourceTopology attributes, e.g. `topologyManagerPolicy`.
    pub attributes: Vec<Attribute>,
    /// NodeResourceTopology (v1alpha1) Topology Manager policies, read when no attribute names one.
    pub topology_policies: Vec<String>,
    /// PriorityClass: its value.
    pub value: Option<i64>,
    /// PriorityClass: `PreemptLowerPriority` (default) or `Never`.
    pub preemption_policy: Option<String>,
    /// A DRA object (ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate), read
    /// by its own types: its `spec.devices` is a list in one kind and a map in another.
    #[serde(skip)]
    pub dra: Option<Box<super::dra_objects::DraObject>>,
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
    /// Labels; `nvidia.com/gpu.product` gives a node's GPU model; a pod's are matched by
    /// PodDisruptionBudgets.
    pub labels: Labels,
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
    /// Node: cordoned.
    pub unschedulable: bool,
    /// Node: its taints.
    pub taints: Vec<K8sTaint>,
    /// Pod: labels a node must carry.
    pub node_selector: BTreeMap<String, String>,
    /// Pod: affinity; only required node affinity is read.
    pub affinity: Affinity,
    /// Pod: its tolerations.
    pub tolerations: Vec<K8sToleration>,
    /// Pod: `PreemptLowerPriority` or `Never` (as resolved from its PriorityClass).
    pub preemption_policy: Option<String>,
    /// Pod: the RuntimeClass overhead added to its requests.
    pub overhead: BTreeMap<String, Quantity>,
    /// Pod: topology spread constraints (not modelled; warned about).
    pub topology_spread_constraints: Vec<serde::de::IgnoredAny>,
    /// Pod: volumes; a persistent volume claim may pin the pod to a zone (not modelled).
    pub volumes: Vec<Volume>,
    /// Pod: scheduling gates hold a pod back (not modelled).
    pub scheduling_gates: Vec<serde::de::IgnoredAny>,
    /// Pod: its DRA resource claims, by claim or template.
    pub resource_claims: Vec<super::dra_objects::PodResourceClaim>,
    /// PodDisruptionBudget: the pods it covers (`None`: none; an empty one: all in its
    /// namespace).
    pub selector: Option<LabelSelector>,
    /// PodDisruptionBudget: pods that must stay available (a count or `N%`).
    pub min_available: Option<Spanned<QuantityText>>,
    /// PodDisruptionBudget: pods that may be unavailable (a count or `N%`).
    pub max_unavailable: Option<Spanned<QuantityText>>,
}

/// One pod volume: only whether it is a persistent volume claim.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Volume {
    /// A claim, whose volume's node affinity (its zone) the scheduler honours.
    pub persistent_volume_claim: Option<serde::de::IgnoredAny>,
}

/// A node taint as Kubernetes writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct K8sTaint {
    /// Taint key.
    pub key: String,
    /// Taint value.
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A pod toleration as Kubernetes writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct K8sToleration {
    /// Taint key; empty with `Exists` tolerates everything.
    pub key: Option<String>,
    /// `Equal` (default) or `Exists`.
    pub operator: Option<String>,
    /// Value compared by `Equal`.
    pub value: Option<String>,
    /// Effect tolerated; empty tolerates every effect.
    pub effect: Option<String>,
}

/// A pod's `affinity`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Affinity {
    /// `nodeAffinity`.
    pub node_affinity: NodeAffinity,
    /// Inter-pod affinity (not modelled; warned about).
    pub pod_affinity: Option<serde::de::IgnoredAny>,
    /// Inter-pod anti-affinity (not modelled; warned about).
    pub pod_anti_affinity: Option<serde::de::IgnoredAny>,
}

/// A pod's `affinity.nodeAffinity`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct NodeAffinity {
    /// Required terms (a filter); the preferred ones are scores and not read.
    #[serde(rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    pub required: Option<NodeSelector>,
    /// Preferred terms: counted, warned about, not modelled.
    #[serde(rename = "preferredDuringSchedulingIgnoredDuringExecution")]
    pub preferred: Vec<serde::de::IgnoredAny>,
}

/// A `nodeSelector` of required node affinity: alternatives.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelector {
    /// The terms, of which one must hold.
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// One term: every requirement must hold.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorTerm {
    /// Requirements on labels.
    pub match_expressions: Vec<K8sRequirement>,
    /// Requirements on fields (`metadata.name`).
    pub match_fields: Vec<K8sRequirement>,
}

/// One requirement as Kubernetes writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct K8sRequirement {
    /// Label key or field.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`.
    pub operator: String,
    /// Values.
    pub values: Vec<String>,
}

/// One container of a pod.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Container {
    /// Its resource requests and limits.
    pub resources: Resources,
    /// Init container: `Always` makes it a native sidecar, running beside the app containers.
    #[serde(rename = "restartPolicy")]
    pub restart_policy: Option<String>,
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
    /// Node: its conditions; `Ready` is read.
    pub conditions: Vec<Condition>,
    /// PodDisruptionBudget: evictions it allows now, as its controller computed them.
    pub disruptions_allowed: Option<i64>,
    /// Pod: the claims generated for its claim templates.
    pub resource_claim_statuses: Vec<super::dra_objects::PodResourceClaimStatus>,
}

/// One status condition.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Condition {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
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

/// A path step matching every extended resource name (one with a `/`: `nvidia.com/gpu`,
/// `amd.com/gpu`, `nvidia.com/mig-3g.40gb`, a `--gpu-resource`): which of them are devices
/// is decided once the nodes are read.
const EXTENDED: &str = "<extended>";

/// Whether the path step `step` reads the key `key`.
fn step_matches(step: &str, key: &str) -> bool {
    step == key || (step == EXTENDED && key.contains('/'))
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
            &["metadata", "labels"],
            &["spec", "unschedulable"],
            &["spec", "taints"],
            &["status", "conditions", "[]", "type"],
            &["status", "conditions", "[]", "status"],
            &["status", "allocatable", "cpu"],
            &["status", "allocatable", "memory"],
            &["status", "allocatable", EXTENDED],
            &["status", "capacity", "cpu"],
            &["status", "capacity", "memory"],
            &["status", "capacity", EXTENDED],
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
            &["spec", "nodeSelector"],
            &["spec", "affinity", "nodeAffinity"],
            &["spec", "affinity", "podAffinity"],
            &["spec", "affinity", "podAntiAffinity"],
            &["spec", "topologySpreadConstraints"],
            &["spec", "schedulingGates"],
            &["spec", "resourceClaims"],
            &["status", "resourceClaimStatuses"],
            &["spec", "volumes", "[]", "persistentVolumeClaim"],
            &["spec", "tolerations"],
            &["spec", "preemptionPolicy"],
            &["spec", "overhead"],
            &["spec", "initContainers", "[]", "restartPolicy"],
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
                EXTENDED,
            ],
            &["spec", "containers", "[]", "resources", "limits", "cpu"],
            &["spec", "containers", "[]", "resources", "limits", "memory"],
            &["spec", "containers", "[]", "resources", "limits", EXTENDED],
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
                EXTENDED,
            ],
            &["spec", "initContainers", "[]", "resources", "limits", "cpu"],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "limits",
                EXTENDED,
            ],
            &["status", "phase"],
            &["status", "qosClass"],
            &["metadata", "labels"],
        ],
        "PodDisruptionBudget" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["spec", "selector"],
            &["spec", "minAvailable"],
            &["spec", "maxUnavailable"],
            &["status", "disruptionsAllowed"],
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

/// Where a reader stands inside one object of a modelled kind, as [`ignored_fields`] walks
/// it: the modelled paths that run through the current place (a bit per path of
/// [`modelled`]) and how deep it is. A reader asks it, key by key, whether a value is read
/// at all: a value the walk counts as ignored is never looked into, so the reader need not
/// build it (it leaves [`Value::Skipped`] in its place, which the walk counts as the value it
/// stands for).
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    paths: &'static [&'static [&'static str]],
    depth: usize,
    mask: u64,
}

/// What a reader does with the value of one key: build it whole, build it asking the inner
/// scope, or skip it.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Read whole: a modelled path ends here (or the walk does not look inside).
    Whole,
    /// Read, asking the scope inside it.
    Into(Scope),
    /// Not read: the walk counts it as an ignored field.
    Skip,
}

impl Scope {
    /// The scope at the top of an object of `kind`; `None` for a kind whose fields are not
    /// counted (every field is read).
    pub fn root(kind: &str) -> Option<Scope> {
        let paths = modelled(kind);
        if paths.is_empty() || paths.len() > 64 {
            return None;
        }
        Some(Scope {
            paths,
            depth: 0,
            mask: if paths.len() == 64 {
                u64::MAX
            } else {
                (1u64 << paths.len()) - 1
            },
        })
    }

    /// The value of map key `key` here.
    pub fn key(&self, key: &str) -> Step {
        let mut through = 0u64;
        let mut bits = self.mask;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let p = self.paths[i];
            if p.len() > self.depth && step_matches(p[self.depth], key) {
                if p.len() == self.depth + 1 {
                    return Step::Whole;
                }
                through |= 1 << i;
            }
        }
        if through == 0 {
            Step::Skip
        } else {
            Step::Into(Scope {
                paths: self.paths,
                depth: self.depth + 1,
                mask: through,
            })
        }
    }

    /// The items of a sequence here: the scope inside each, or `None` when the walk does not
    /// step into them (read whole).
    pub fn items(&self) -> Option<Scope> {
        let d = self.depth;
        if !self.paths.iter().any(|p| p.len() > d && p[d] == "[]") {
            return None;
        }
        let mut mask = 0u64;
        for (i, p) in self.paths.iter().enumerate() {
            if self.mask & (1 << i) != 0 && p.len() > d && p[d] == "[]" {
                mask |= 1 << i;
            }
        }
        Some(Scope {
            paths: self.paths,
            depth: d + 1,
            mask,
        })
    }
}

/// What a reader builds of one value.
#[derive(Debug, Clone, Copy)]
pub enum Want {
    /// All of it.
    Whole,
    /// An object's top: its `kind` (once read) says which of its fields are read.
    Object,
    /// What the scope reads.
    Scoped(Scope),
}

/// The fields of a map being read under `want`, key by key; `kind` decides an object's scope
/// once its value is read.
#[derive(Debug, Clone, Copy)]
pub struct MapWant {
    want: Want,
    /// For [`Want::Object`]: the scope once `kind` has been read (`Some(None)`: every field).
    kind: Option<Option<Scope>>,
}

impl MapWant {
    /// The fields of a map read under `want`.
    pub fn new(want: Want) -> MapWant {
        MapWant { want, kind: None }
    }

    /// What is built of the value of `key`: `None` to skip it.
    pub fn key(&self, key: &str) -> Option<Want> {
        let scope = match (self.want, self.kind) {
            (Want::Whole, _) | (Want::Object, None | Some(None)) => return Some(Want::Whole),
            (Want::Object, Some(Some(scope))) | (Want::Scoped(scope), _) => scope,
        };
        match scope.key(key) {
            Step::Whole => Some(Want::Whole),
            Step::Into(inner) => Some(Want::Scoped(inner)),
            Step::Skip => None,
        }
    }

    /// After the value of `key` was read: the first `kind` of an object decides its scope.
    pub fn read(&mut self, key: &str, value: &Node) {
        if matches!(self.want, Want::Object) && self.kind.is_none() && key == "kind" {
            self.kind = Some(Scope::root(value.as_str().unwrap_or_default()));
        }
    }
}

impl Want {
    /// What is built of each item of a sequence read under this.
    pub fn items(self) -> Want {
        match self {
            Want::Whole | Want::Object => Want::Whole,
            Want::Scoped(scope) => scope.items().map_or(Want::Whole, Want::Scoped),
        }
    }
}

/// Maps whose keys are free-form: their ignored entries are counted as one path `…*`.
const FREE_FORM: &[&str] = &["labels", "annotations"];

/// Counts every field of `value` (one object of `kind`) that coplan does not read, by
/// `Kind: dotted.path`, into `out`.
pub fn ignored_fields(kind: &str, value: &Node, out: &mut BTreeMap<String, u64>) {
    let paths = modelled(kind);
    let mut prefix: Vec<&str> = Vec::new();
    walk(kind, paths, value, &mut prefix, out);
}

fn walk<'v>(
    kind: &str,
    paths: &[&[&str]],
    value: &'v Node,
    prefix: &mut Vec<&'v str>,
    out: &mut BTreeMap<String, u64>,
) {
    let depth = prefix.len();
    match &value.value {
        Value::Map(map) => {
            for (key, child) in map {
                // The lengths of the modelled paths through this key.
                let mut through = false;
                let mut ends_here = false;
                for p in paths {
                    if p.len() > depth
                        && step_matches(p[depth], key)
                        && p[..depth]
                            .iter()
                            .zip(prefix.iter())
                            .all(|(a, b)| step_matches(a, b))
                    {
                        through = true;
                        ends_here |= p.len() == depth + 1;
                    }
                }
                if ends_here {
                    continue;
                }
                if !through {
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
        Value::Seq(items) => {
            let steps_in = paths.iter().any(|p| p.len() > depth && p[depth] == "[]");
            if steps_in {
                prefix.push("[]");
                for item in items {
                    walk(kind, paths, item, prefix, out);
                }
                prefix.pop();
            }
        }
        Value::Scalar { .. } | Value::Skipped => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::tree::Sink;

    /// The first document of a JSON text as a tree.
    fn tree(text: &str) -> Node {
        struct First(Option<Node>);
        impl Sink for First {
            fn item(
                &mut self,
                _: usize,
                _: usize,
                _: Node,
            ) -> Result<(), crate::import::error::ImportError> {
                Ok(())
            }
            fn document(
                &mut self,
                _: usize,
                rest: Node,
                _: Option<usize>,
            ) -> Result<(), crate::import::error::ImportError> {
                self.0.get_or_insert(rest);
                Ok(())
            }
        }
        let mut first = First(None);
        crate::import::json::read(0, text, &mut first).expect("valid JSON");
        first.0.expect("a document")
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
}
