//! The parts of Kubernetes objects coplan reads (Node, Pod, NodeResourceTopology), as small
//! typed structs deserialised from one object's located tree (`tree.rs`). Which fields these
//! are, path by path, is `fields.rs`'s.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::Spanned;

use super::fabric_objects as fo;
pub use super::labels::{LabelRequirement, LabelSelector, Labels};

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
    /// A Kueue Topology or ResourceFlavor, a Volcano HyperNode or PodGroup, read by its own
    /// types.
    #[serde(skip)]
    pub fabric: Option<Box<super::fabric_objects::FabricObject>>,
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
    /// A pod's annotations that coplan reads (Kueue's topology requests, Volcano's group
    /// name), each with where its value was written.
    pub annotations: Annotations,
    /// A pod's owners; its controller groups it with its siblings into a gang.
    pub owner_references: Vec<OwnerReference>,
}

/// The annotations coplan reads ([`READ_ANNOTATIONS`]), by key; the others are not kept.
#[derive(Debug, Default)]
pub struct Annotations(BTreeMap<String, Spanned<Text>>);

/// The annotations a pod is read for.
pub const READ_ANNOTATIONS: [&str; 7] = [
    fo::KUEUE_REQUIRED,
    fo::KUEUE_PREFERRED,
    fo::KUEUE_SLICE_REQUIRED,
    fo::KUEUE_SLICE_SIZE,
    fo::KUEUE_WORKLOAD,
    fo::VOLCANO_GROUP,
    fo::VOLCANO_GROUP_OLD,
];

impl Annotations {
    /// The value of `key`, with where it was written.
    pub fn get(&self, key: &str) -> Option<&Spanned<Text>> {
        self.0.get(key)
    }
}

impl<'de> Deserialize<'de> for Annotations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Annotations;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of annotation keys to values")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Annotations::default())
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut kept = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    if READ_ANNOTATIONS.contains(&key.as_str()) {
                        kept.insert(key, map.next_value::<Spanned<Text>>()?);
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                Ok(Annotations(kept))
            }
        }
        d.deserialize_map(V)
    }
}

/// One owner of an object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OwnerReference {
    /// The owner's kind (`Job`, `JobSet`, `LeaderWorkerSet`, …).
    pub kind: String,
    /// The owner's name.
    pub name: String,
    /// Whether it is the object's controller.
    pub controller: Option<bool>,
}

/// A free-form value as text (an annotation's): YAML may leave `true` or `8` unquoted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a text value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text(String::new()))
            }
        }
        d.deserialize_str(V)
    }
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
