//! The objects that say where nodes sit above the server and which pods form a gang: Kueue's
//! `Topology` and `ResourceFlavor` (`kueue.x-k8s.io`), Volcano's `HyperNode`
//! (`topology.volcano.sh`) and `PodGroup` (`scheduling.volcano.sh`), as typed structs
//! deserialised from one object's tree. Values an error may point at keep where they were
//! written. How they map to `[topology]` and to gangs is `k8s/fabric_levels.rs`,
//! `k8s/fabric_domains.rs`, `k8s/hypernodes.rs` and `k8s/gangs.rs`.

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::labels::LabelSelector;

/// The annotation of a pod that names the node label one domain of which must hold its
/// podset (Kueue).
pub const KUEUE_REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
/// The annotation that names the node label one domain of which the podset would rather fit in.
pub const KUEUE_PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
/// The annotation that names the node label one domain of which holds each slice.
pub const KUEUE_SLICE_REQUIRED: &str = "kueue.x-k8s.io/podset-slice-required-topology";
/// The annotation that gives the pods per slice.
pub const KUEUE_SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
/// The label (or annotation) that names a pod's Kueue workload.
pub const KUEUE_WORKLOAD: &str = "kueue.x-k8s.io/workload-name";
/// The label that names a pod's podset within its workload.
pub const KUEUE_PODSET: &str = "kueue.x-k8s.io/podset";
/// The annotation that names a pod's Volcano PodGroup.
pub const VOLCANO_GROUP: &str = "scheduling.k8s.io/group-name";
/// The older spelling of [`VOLCANO_GROUP`].
pub const VOLCANO_GROUP_OLD: &str = "scheduling.volcano.sh/group-name";

/// The kinds read here, by `kind`; [`is_fabric_object`] also checks the API group.
pub const FABRIC_KINDS: [&str; 4] = ["Topology", "ResourceFlavor", "HyperNode", "PodGroup"];

/// Whether an object of `kind` and `apiVersion` is one of the objects read here: a kind of
/// another API group of the same name (the coscheduling plugin's PodGroup) is not.
pub fn is_fabric_object(kind: &str, api_version: &str) -> bool {
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    matches!(
        (kind, group),
        ("Topology" | "ResourceFlavor", "kueue.x-k8s.io")
            | ("HyperNode", "topology.volcano.sh")
            | ("PodGroup", "scheduling.volcano.sh")
    )
}

/// One of these objects: its metadata, and the spec of whichever kind it is.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FabricObject {
    /// `kind`.
    pub kind: Option<String>,
    /// `apiVersion`, e.g. `kueue.x-k8s.io/v1beta1`.
    pub api_version: Option<String>,
    /// `metadata`.
    pub metadata: FabricMetadata,
    /// `spec`, the union of the four kinds' specs (their field names do not collide).
    pub spec: FabricObjectSpec,
}

/// What coplan reads of the objects' `metadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FabricMetadata {
    /// Object name.
    pub name: Option<String>,
    /// Namespace (PodGroup).
    pub namespace: Option<String>,
}

/// The `spec` of one of these objects.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FabricObjectSpec {
    /// Topology: the levels, outermost first.
    pub levels: Vec<TopologyLevel>,
    /// ResourceFlavor: the Topology its nodes are placed by.
    pub topology_name: Option<Spanned<String>>,
    /// HyperNode: its tier (1: the innermost above the nodes).
    pub tier: Option<Spanned<i64>>,
    /// HyperNode: its members, nodes or HyperNodes of a lower tier.
    pub members: Vec<Member>,
    /// PodGroup: the pods that must be placed together.
    pub min_member: Option<Spanned<i64>>,
    /// PodGroup: where its pods must (or would rather) lie together.
    pub network_topology: Option<NetworkTopology>,
}

/// One level of a Kueue Topology.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyLevel {
    /// The node label whose value names a node's domain at this level.
    pub node_label: Option<Spanned<String>>,
}

/// One member of a HyperNode.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Member {
    /// `Node` or `HyperNode`.
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    /// Which nodes or HyperNodes the member is.
    pub selector: MemberSelector,
}

/// How a HyperNode member is selected: one of these is set.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemberSelector {
    /// One node or HyperNode by name.
    pub exact_match: Option<ExactMatch>,
    /// Nodes by a name pattern (refused: coplan has no regular expressions).
    pub regex_match: Option<Spanned<serde::de::IgnoredAny>>,
    /// Nodes by their labels.
    pub label_match: Option<Spanned<LabelSelector>>,
}

/// A member named exactly.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ExactMatch {
    /// The node's or HyperNode's name.
    pub name: Option<Spanned<String>>,
}

/// A PodGroup's `networkTopology`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkTopology {
    /// `hard` (the default) or `soft`.
    pub mode: Option<Spanned<String>>,
    /// The highest tier of HyperNode the pods may spread across.
    pub highest_tier_allowed: Option<Spanned<i64>>,
}
