//! Cluster spec (DESIGN §3): server types (hardware templates) and pools of servers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::eligibility::{NodeRules, Taint};
use super::fabric::{FabricSpec, ServerPlace};
use super::kind::SpecKind;

/// A cluster: server types and pools of servers of each type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// `"cluster"`, or absent: a file without `kind` is read as a cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SpecKind>,
    /// Cluster name, used in reports.
    pub name: String,
    /// Hardware templates. The built-in types `rtx4090-8g`, `a100-8g` and `gpu-2s4n8g` may be
    /// referenced by pools without being defined here.
    #[serde(default)]
    pub server_type: Vec<ServerTypeSpec>,
    /// Pools of identical servers.
    pub pool: Vec<PoolSpec>,
    /// Scheduling rules of named servers, on top of their pool's: labels (added, a server's
    /// value winning), taints (added), a cordon, readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<ServerRulesSpec>,
    /// The levels above the server (racks, blocks, NVLink domains), DESIGN §12.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<FabricSpec>,
}

/// One hardware template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerTypeSpec {
    /// Name referenced by pools, kebab-case.
    pub name: String,
    /// GPU model, for reports only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// Memory of one GPU in MiB (used by co-location memory checks).
    #[serde(default)]
    pub gpu_memory_mib: u64,
    /// CPU sockets per server (≥ 1).
    pub sockets: i64,
    /// NUMA nodes per socket (≥ 1). NUMA nodes are numbered socket-major.
    pub numa_per_socket: i64,
    /// CPU cores per NUMA node (≥ 1). NUMA j holds cores j·cores_per_numa … (j+1)·cores_per_numa − 1.
    pub cores_per_numa: i64,
    /// FlexTopo CoreGroup size (≥ 1); defaults to `cores_per_numa` (one group per NUMA node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_group_size: Option<i64>,
    /// GPU i is attached to NUMA node `gpu_numa[i]`; `[]` for a CPU-only server.
    #[serde(default)]
    pub gpu_numa: Vec<i64>,
    /// The device kind of the whole GPUs in `gpu_numa` (the resource a pod asks them by:
    /// `amd.com/gpu`, a DRA device class); absent: `gpu`, the kind of a class that names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_resource: Option<String>,
    /// GPU i sits behind PCIe root `gpu_pcie_root[i]` (a DRA `pcieRoot` attribute); absent:
    /// unknown, so each GPU is its own root and a `pcie-root` claim of several GPUs fits nowhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_pcie_root: Vec<i64>,
    /// Devices of other kinds (MIG slices, DRA devices of another class), numbered after the
    /// whole GPUs in the order written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceGroupSpec>,
    /// Measured slowdown of a placement at each level relative to a single-NUMA one
    /// (each ≥ 1.0, `numa ≤ socket ≤ cross_socket`).
    #[serde(default)]
    pub penalty: Penalty,
    /// The kubelet's Topology Manager policy on servers of this type; absent: each workload
    /// class's `topology_qos` alone decides admission (as before policies were modelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_policy: Option<TopologyPolicySpec>,
    /// The Topology Manager scope (`container` or `pod`); coplan aligns a pod as one unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_scope: Option<TopologyScopeSpec>,
}

/// Devices of one kind on a server type: each a slot a pod of that kind may hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceGroupSpec {
    /// The device kind: the resource pods ask for (`nvidia.com/mig-3g.40gb`, `amd.com/gpu`,
    /// a DRA device class such as `gpu.example.com`); never `gpu` unless the type has no
    /// whole GPUs of that kind already.
    pub kind: String,
    /// Device i of the group is attached to NUMA node `numa[i]` (one entry per device).
    pub numa: Vec<i64>,
    /// Device i sits behind PCIe root `pcie_root[i]`; absent: unknown (each its own root).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcie_root: Vec<i64>,
    /// The share of one whole GPU each device is (a MIG `3g.40gb` slice of an H100 is 3/7),
    /// in (0, 1]; GPU-hours count devices by it. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_fraction: Option<f64>,
    /// Memory of one device in MiB, for reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
}

/// The name of the device kind of whole GPUs when nothing names one.
pub const DEFAULT_GPU_KIND: &str = "gpu";

impl ServerTypeSpec {
    /// The kind of this type's whole GPUs.
    pub fn gpu_kind(&self) -> &str {
        self.gpu_resource.as_deref().unwrap_or(DEFAULT_GPU_KIND)
    }

    /// Every device of the type in id order: whole GPUs, then each group's devices, as
    /// (kind, NUMA node, PCIe root if known, GPU fraction).
    pub fn all_devices(&self) -> Vec<(&str, i64, Option<i64>, f64)> {
        let gpus = self
            .gpu_numa
            .iter()
            .enumerate()
            .map(|(i, &n)| (self.gpu_kind(), n, self.gpu_pcie_root.get(i).copied(), 1.0));
        let groups = self.devices.iter().flat_map(|g| {
            let frac = g.gpu_fraction.unwrap_or(1.0);
            g.numa
                .iter()
                .enumerate()
                .map(move |(i, &n)| (g.kind.as_str(), n, g.pcie_root.get(i).copied(), frac))
        });
        gpus.chain(groups).collect()
    }
}

/// A kubelet Topology Manager policy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyPolicySpec {
    /// No alignment, every pod admitted.
    None,
    /// Alignment preferred, every pod admitted.
    BestEffort,
    /// A pod is admitted only at the best alignment the node could give it.
    Restricted,
    /// A pod is admitted only when its aligned resources fit one NUMA node.
    SingleNumaNode,
}

impl TopologyPolicySpec {
    /// The kebab-case name used in specs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyPolicySpec::None => "none",
            TopologyPolicySpec::BestEffort => "best-effort",
            TopologyPolicySpec::Restricted => "restricted",
            TopologyPolicySpec::SingleNumaNode => "single-numa-node",
        }
    }
}

/// A kubelet Topology Manager scope.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyScopeSpec {
    /// Each container aligned on its own (the kubelet's default).
    Container,
    /// The pod's containers aligned together.
    Pod,
}

/// Slowdown factors per placement level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Penalty {
    /// Slowdown of a single-NUMA placement (normally 1.0).
    pub numa: f64,
    /// Slowdown of a placement within one socket over several NUMA nodes.
    pub socket: f64,
    /// Slowdown of a placement across sockets.
    pub cross_socket: f64,
}

// Written by hand so the schema's default matches serde's (a derived one would say 0.0).
impl Default for Penalty {
    fn default() -> Self {
        Self {
            numa: 1.0,
            socket: 1.0,
            cross_socket: 1.0,
        }
    }
}

/// A pool of `count` servers of one type, named `<name_prefix><index>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    /// A server type defined in this file or a built-in one.
    pub server_type: String,
    /// Number of servers (≥ 1).
    pub count: i64,
    /// Prefix of server names; the index is zero-padded to the width of `count − 1`.
    #[serde(default = "default_name_prefix")]
    pub name_prefix: String,
    /// Explicit server names, one per server (`count` of them), instead of numbered ones:
    /// imported clusters keep the names their nodes have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// Node labels every server of the pool carries (node selectors and affinity read them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Taints every server of the pool carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Every server of the pool is cordoned (`kubectl cordon`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub unschedulable: bool,
    /// The domain of every server of the pool at each `[topology]` level (`{ block = "b1",
    /// rack = "r3" }`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub domain: BTreeMap<String, String>,
}

/// The scheduling rules of one named server, on top of its pool's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerRulesSpec {
    /// A server of some pool.
    pub name: String,
    /// Labels added to the pool's (this server's value wins).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Taints added to the pool's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Cordoned (`spec.unschedulable`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub unschedulable: bool,
    /// `false`: the node is NotReady and takes nothing.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub ready: bool,
    /// This server's domain at `[topology]` levels, on top of its pool's (this one wins).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub domain: BTreeMap<String, String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_true(b: &bool) -> bool {
    *b
}
fn yes() -> bool {
    true
}

impl Default for PoolSpec {
    fn default() -> Self {
        PoolSpec {
            server_type: String::new(),
            count: 0,
            name_prefix: default_name_prefix(),
            names: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
            domain: BTreeMap::new(),
        }
    }
}

impl PoolSpec {
    /// The scheduling rules every server of the pool carries.
    pub fn rules(&self) -> NodeRules {
        NodeRules {
            labels: self.labels.clone(),
            taints: self.taints.clone(),
            unschedulable: self.unschedulable,
            ready: true,
        }
    }
}

fn default_name_prefix() -> String {
    "node-".to_string()
}

/// The server types that pools may reference without defining them.
pub fn builtin_server_types() -> Vec<ServerTypeSpec> {
    vec![
        builtin(
            ("rtx4090-8g", "RTX4090", 24564),
            (2, 4, 8),
            (0..8).collect(),
            (1.2, 3.2),
        ),
        builtin(
            ("a100-8g", "A100", 81920),
            (2, 1, 32),
            vec![0, 0, 0, 0, 1, 1, 1, 1],
            (1.0, 2.0),
        ),
        builtin(
            ("gpu-2s4n8g", "generic", 81920),
            (2, 2, 24),
            vec![0, 0, 1, 1, 2, 2, 3, 3],
            (1.2, 2.0),
        ),
    ]
}

/// A built-in type: (name, GPU model, GPU memory in MiB), (sockets, NUMA nodes per socket,
/// cores per NUMA node), each GPU's NUMA node and the (socket, cross-socket) penalties. Each
/// has CoreGroups of 8 cores and whole GPUs of the default kind only.
fn builtin(
    (name, gpu_model, gpu_memory_mib): (&str, &str, u64),
    (sockets, numa_per_socket, cores_per_numa): (i64, i64, i64),
    gpu_numa: Vec<i64>,
    (socket, cross_socket): (f64, f64),
) -> ServerTypeSpec {
    ServerTypeSpec {
        name: name.into(),
        gpu_model: Some(gpu_model.into()),
        gpu_memory_mib,
        sockets,
        numa_per_socket,
        cores_per_numa,
        core_group_size: Some(8),
        gpu_numa,
        penalty: Penalty {
            numa: 1.0,
            socket,
            cross_socket,
        },
        topology_policy: None,
        topology_scope: None,
        gpu_resource: None,
        gpu_pcie_root: Vec::new(),
        devices: Vec::new(),
    }
}

impl ClusterSpec {
    /// The place of every server, in pool order: per level, the server's own `domain`
    /// entry, else its pool's, else the value of the level's label on the server.
    pub fn server_places(&self) -> Vec<ServerPlace> {
        let spec = self;
        let fabric = spec.topology.clone().unwrap_or_default();
        let own: BTreeMap<&str, &BTreeMap<String, String>> = spec
            .server
            .iter()
            .map(|s| (s.name.as_str(), &s.domain))
            .collect();
        let mut out = Vec::new();
        for (pool_index, pool) in spec.pool.iter().enumerate() {
            for (name, rules) in spec.pool_server_rules(pool) {
                let domains = fabric
                    .levels
                    .iter()
                    .map(|level| {
                        own.get(name.as_str())
                            .and_then(|d| d.get(level))
                            .or_else(|| pool.domain.get(level))
                            .or_else(|| {
                                fabric
                                    .labels
                                    .get(level)
                                    .and_then(|key| rules.labels.get(key))
                            })
                            .cloned()
                    })
                    .collect();
                out.push(ServerPlace {
                    name,
                    pool: pool_index,
                    domains,
                });
            }
        }
        out
    }

    /// The definition of a server type: this file's, else a built-in one.
    pub fn server_type(&self, name: &str) -> Option<ServerTypeSpec> {
        self.server_type
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .or_else(|| builtin_server_types().into_iter().find(|t| t.name == name))
    }

    /// The scheduling rules of every server of `pool`, with the named servers' own added:
    /// (name, rules) in index order.
    pub fn pool_server_rules(&self, pool: &PoolSpec) -> Vec<(String, NodeRules)> {
        let base = pool.rules();
        let own: BTreeMap<&str, &ServerRulesSpec> =
            self.server.iter().map(|s| (s.name.as_str(), s)).collect();
        Self::pool_server_names(pool)
            .into_iter()
            .map(|name| {
                let mut rules = base.clone();
                if let Some(s) = own.get(name.as_str()) {
                    rules
                        .labels
                        .extend(s.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
                    rules.taints.extend(s.taints.iter().cloned());
                    rules.unschedulable |= s.unschedulable;
                    rules.ready &= s.ready;
                }
                (name, rules)
            })
            .collect()
    }

    /// Server names of a pool in index order: its explicit `names`, else numbered ones.
    pub fn pool_server_names(pool: &PoolSpec) -> Vec<String> {
        if let Some(names) = &pool.names {
            return names.clone();
        }
        let count = pool.count.max(0) as usize;
        let width = count.saturating_sub(1).to_string().len();
        (0..count)
            .map(|i| format!("{}{:0width$}", pool.name_prefix, i))
            .collect()
    }
}
