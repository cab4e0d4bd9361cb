//! The FlexTopo model (DESIGN §4): server layouts with their domains, the cluster, allocation
//! state, placement levels and the node allocator shared by every planner.

pub mod bits;
pub mod budgets;
mod devices;
mod domain;
pub mod eligibility;
pub mod graph;
pub mod state;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::spec::cluster::TopologyPolicySpec;
use crate::spec::eligibility::NodeRules;
use crate::spec::preemption::DeviceAlignment;
use crate::spec::{ClusterSpec, Penalty, ServerTypeSpec};
pub use bits::{CoreSet, GpuSet};
pub use devices::device_kinds;
use devices::{ALIGNMENTS, Layout, Shape, alignment_index};
pub use domain::{DeviceKind, Domain, Level, Request};

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub $inner);

        impl $name {
            /// The id as an index into the table it points into.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

typed_id!(
    /// Index of a server in [`Cluster::servers`].
    ServerId(u32)
);
typed_id!(
    /// Index of a server type in [`Cluster::types`].
    ServerTypeId(u16)
);
typed_id!(
    /// Index of a pod in a state's pod table.
    PodId(u32)
);

/// A resolved, validated server type with its domains precomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerType {
    /// Server type name, unique in the cluster spec (e.g. `rtx4090-8g`).
    pub name: String,
    /// GPU model label (e.g. `A100`); informational only.
    pub gpu_model: Option<String>,
    /// Memory of each GPU, in MiB.
    pub gpu_memory_mib: u64,
    /// CPU sockets per server (≥ 1).
    pub sockets: usize,
    /// NUMA nodes per socket (≥ 1); NUMA nodes are numbered socket-major.
    pub numa_per_socket: usize,
    /// Cores per NUMA node (≥ 1); NUMA j holds cores j·cores_per_numa … (j+1)·cores_per_numa − 1.
    pub cores_per_numa: usize,
    /// Cores per FlexTopo CoreGroup (the `CoreGroup` vertices of the graph); defaults to
    /// `cores_per_numa`.
    pub core_group_size: usize,
    /// NUMA node of each device (whole GPUs first, then the other kinds' devices).
    pub gpu_numa: Vec<usize>,
    /// Kind of each device, as its index into the kinds the type was built with.
    pub device_kind: Vec<DeviceKind>,
    /// PCIe root of each device (unknown roots numbered apart, one per device).
    pub device_pcie_root: Vec<usize>,
    /// Share of one whole GPU each device is (1 for a whole GPU, 3/7 for a `3g` MIG slice).
    pub device_fraction: Vec<f64>,
    /// Measured slowdown of a placement at each level relative to a single-NUMA one (≥ 1.0,
    /// monotone).
    pub penalty: Penalty,
    /// The kubelet's Topology Manager policy on these servers, when the spec gives one.
    pub topology_policy: Option<TopologyPolicySpec>,
    numa: Vec<Domain>,
    socket: Vec<Domain>,
    whole: Domain,
    /// Per device kind (the index of [`DeviceKind`]), per claim constraint ([`ALIGNMENTS`]).
    layouts: Vec<[Layout; 4]>,
    /// The layout of a kind the type lacks: no device, so only device-free requests fit.
    absent: [Layout; 4],
    /// Every device is a whole GPU of the default kind: a plain request may take any of them,
    /// and the unmasked domains serve it.
    only_default_gpus: bool,
}

impl ServerType {
    /// Builds the layout with the type's own device kinds; the spec must have passed
    /// validation.
    pub fn new(spec: &ServerTypeSpec) -> Self {
        Self::with_kinds(spec, &device_kinds([spec]))
    }

    /// Builds the layout, numbering device kinds as `kinds` does (a cluster's kinds).
    pub fn with_kinds(spec: &ServerTypeSpec, kinds: &[String]) -> Self {
        let sockets = spec.sockets.max(1) as usize;
        let numa_per_socket = spec.numa_per_socket.max(1) as usize;
        let cores_per_numa = spec.cores_per_numa.max(1) as usize;
        let numa_count = sockets * numa_per_socket;
        let devices = spec.all_devices();
        let gpu_numa: Vec<usize> = devices
            .iter()
            .map(|&(_, n, ..)| (n.max(0) as usize).min(numa_count - 1))
            .collect();
        let device_kind: Vec<DeviceKind> = devices
            .iter()
            .map(|&(k, ..)| {
                kinds
                    .iter()
                    .position(|name| name == k)
                    .map_or(DeviceKind::ABSENT, |i| DeviceKind(i as u16))
            })
            .collect();
        // Unknown roots get numbers of their own above every known one.
        let known_roots = devices
            .iter()
            .filter_map(|d| d.2)
            .map(|r| r.max(0) as usize + 1)
            .max()
            .unwrap_or(0);
        let device_pcie_root: Vec<usize> = devices
            .iter()
            .enumerate()
            .map(|(i, d)| d.2.map_or(known_roots + i, |r| r.max(0) as usize))
            .collect();
        let device_fraction: Vec<f64> = devices.iter().map(|d| d.3).collect();
        let numa: Vec<Domain> = (0..numa_count)
            .map(|j| Domain {
                gpus: GpuSet::from_ids(
                    gpu_numa
                        .iter()
                        .enumerate()
                        .filter(|&(_, &n)| n == j)
                        .map(|(g, _)| g),
                ),
                cores: CoreSet::range(j * cores_per_numa, (j + 1) * cores_per_numa),
            })
            .collect();
        let socket: Vec<Domain> = (0..sockets)
            .map(|s| {
                numa[s * numa_per_socket..(s + 1) * numa_per_socket]
                    .iter()
                    .fold(Domain::empty(), |acc, d| acc.union(d))
            })
            .collect();
        let whole = socket.iter().fold(Domain::empty(), |acc, d| acc.union(d));
        let shape = Shape {
            numa: &numa,
            numa_per_socket,
            gpu_numa: &gpu_numa,
            device_pcie_root: &device_pcie_root,
        };
        let layouts = (0..kinds.len())
            .map(|k| {
                let usable = GpuSet::from_ids(
                    (0..device_kind.len()).filter(|&g| device_kind[g] == DeviceKind(k as u16)),
                );
                ALIGNMENTS.map(|a| shape.layout(usable, a))
            })
            .collect();
        let absent = ALIGNMENTS.map(|a| shape.layout(GpuSet::empty(), a));
        let only_default_gpus = device_kind.iter().all(|&k| k == DeviceKind::GPU);
        ServerType {
            name: spec.name.clone(),
            gpu_model: spec.gpu_model.clone(),
            gpu_memory_mib: spec.gpu_memory_mib,
            sockets,
            numa_per_socket,
            cores_per_numa,
            core_group_size: spec
                .core_group_size
                .map_or(cores_per_numa, |g| g.max(1) as usize),
            gpu_numa,
            device_kind,
            device_pcie_root,
            device_fraction,
            penalty: spec.penalty,
            topology_policy: spec.topology_policy,
            numa,
            socket,
            whole,
            layouts,
            absent,
            only_default_gpus,
        }
    }

    /// Whether `req` is served by the server's own domains: it takes no device, or a plain
    /// GPU request on a type whose devices are all whole GPUs of the default kind.
    fn plain_on_this_type(&self, req: Request) -> bool {
        req.gpus == 0
            || (self.only_default_gpus && req.kind == DeviceKind::GPU && req.alignment.is_none())
    }

    fn layout(&self, req: Request) -> &Layout {
        // A request of no device has nothing to align: any domain of the server will do.
        let (kind, alignment) = if req.gpus == 0 {
            (DeviceKind::GPU, None)
        } else {
            (req.kind, req.alignment)
        };
        self.layouts
            .get(kind.0 as usize)
            .unwrap_or(&self.absent)
            .get(alignment_index(alignment))
            .unwrap_or(&self.absent[0])
    }

    /// The domains `req` may be placed in at `level`: [`ServerType::domains`] with devices of
    /// other kinds left out, split by the claim's constraint.
    pub fn domains_for(&self, req: Request, level: Level) -> &[Domain] {
        if self.plain_on_this_type(req) {
            return self.domains(level);
        }
        self.layout(req).at(level)
    }

    /// The devices of `req`'s kind on this type (every device, for a request of none).
    pub fn usable(&self, req: Request) -> GpuSet {
        if req.gpus == 0 {
            return self.whole.gpus;
        }
        self.layout(req).usable
    }

    /// Whether the free devices `free` hold `req`'s devices as its claim demands (of its
    /// kind, and for a constrained claim, in one device group), cores aside: the device half
    /// of a scheduler's filter.
    pub fn devices_fit(&self, req: Request, free: GpuSet) -> bool {
        if req.gpus == 0 {
            return true;
        }
        if self.plain_on_this_type(req) {
            return free.and(self.whole.gpus).len() >= req.gpus;
        }
        let layout = self.layout(req);
        match req.alignment {
            None => free.and(layout.usable).len() >= req.gpus,
            Some(_) => layout
                .numa
                .iter()
                .any(|d| free.and(d.gpus).len() >= req.gpus),
        }
    }

    /// Whether a claim whose devices and cores must share a NUMA node finds one NUMA node
    /// with enough of both free (always true for any other request: its cores go anywhere).
    pub fn cores_fit_claim(&self, req: Request, gpus: GpuSet, cores: CoreSet) -> bool {
        if req.gpus == 0 || req.alignment != Some(DeviceAlignment::NumaWithCores) {
            return true;
        }
        self.layout(req)
            .numa
            .iter()
            .any(|d| gpus.and(d.gpus).len() >= req.gpus && cores.and(d.cores).len() >= req.cores)
    }

    /// The `free` devices of `req`'s kind in the first device group its claim accepts (the
    /// whole server when it has no constraint) that holds enough of them, if any.
    pub fn free_group(&self, req: Request, free: GpuSet) -> Option<GpuSet> {
        let groups = if req.alignment.is_some() {
            Level::Numa
        } else {
            Level::CrossSocket
        };
        self.domains_for(req, groups)
            .iter()
            .map(|group| free.and(group.gpus))
            .find(|g| g.len() >= req.gpus)
    }

    /// The lowest `req.gpus` devices of [`ServerType::free_group`].
    pub fn pick_devices(&self, req: Request, free: GpuSet) -> Option<GpuSet> {
        self.free_group(req, free)?.lowest(req.gpus)
    }

    /// Whether `gpus` are of `req`'s kind and lie together as its claim demands.
    pub fn device_rule_holds(&self, req: Request, gpus: GpuSet) -> bool {
        if gpus.is_empty() {
            return true;
        }
        gpus.is_subset(&self.usable(req))
            && self
                .domains_for(req, Level::CrossSocket)
                .iter()
                .chain(self.domains_for(req, Level::Numa))
                .any(|d| gpus.is_subset(&d.gpus))
    }

    /// The devices of kind `kind` on this type.
    pub fn devices_of(&self, kind: DeviceKind) -> GpuSet {
        self.layouts
            .get(kind.0 as usize)
            .map_or(GpuSet::empty(), |l| l[0].usable)
    }
    /// Number of NUMA nodes (`sockets · numa_per_socket`).
    pub fn numa_count(&self) -> usize {
        self.numa.len()
    }

    /// Number of devices per server, every kind (may be 0).
    pub fn gpu_count(&self) -> usize {
        self.gpu_numa.len()
    }

    /// Whole GPUs' worth of this type's devices (MIG slices by their fraction).
    pub fn gpu_equivalents(&self) -> f64 {
        self.device_fraction.iter().sum()
    }

    /// Number of CPU cores per server.
    pub fn core_count(&self) -> usize {
        self.numa.len() * self.cores_per_numa
    }

    /// The socket that holds NUMA node `numa`.
    pub fn socket_of_numa(&self, numa: usize) -> usize {
        numa / self.numa_per_socket
    }

    /// The NUMA node that holds core `core`.
    pub fn numa_of_core(&self, core: usize) -> usize {
        core / self.cores_per_numa
    }

    /// The GPUs and cores of NUMA node `numa`.
    pub fn numa_domain(&self, numa: usize) -> &Domain {
        &self.numa[numa]
    }

    /// The GPUs and cores of socket `socket`.
    pub fn socket_domain(&self, socket: usize) -> &Domain {
        &self.socket[socket]
    }

    /// Every GPU and core of the server.
    pub fn whole(&self) -> &Domain {
        &self.whole
    }

    /// The domains of one level, in index order.
    pub fn domains(&self, level: Level) -> &[Domain] {
        match level {
            Level::Numa => &self.numa,
            Level::Socket => &self.socket,
            Level::CrossSocket => std::slice::from_ref(&self.whole),
        }
    }

    /// The smallest domain kind that contains all of `gpus` and `cores`.
    pub fn level_of(&self, gpus: GpuSet, cores: CoreSet) -> Level {
        let within = |d: &Domain| gpus.is_subset(&d.gpus) && cores.is_subset(&d.cores);
        if self.numa.iter().any(within) {
            Level::Numa
        } else if self.socket.iter().any(within) {
            Level::Socket
        } else {
            Level::CrossSocket
        }
    }

    /// The smallest domain kind that could hold `req` on an empty server of this type, or
    /// `None` when the request exceeds the server. Under the `single-numa-node` policy only a
    /// single NUMA node will do: a request no NUMA node holds has no level the kubelet admits.
    pub fn required_level(&self, req: Request) -> Option<Level> {
        let level = place(self, self.whole.gpus, self.whole.cores, req).map(|p| p.level)?;
        match self.topology_policy {
            Some(TopologyPolicySpec::SingleNumaNode) if level != Level::Numa => None,
            _ => Some(level),
        }
    }

    /// Whether `req` fits an empty server of this type at all, aligned or not.
    pub fn fits_empty(&self, req: Request) -> bool {
        place(self, self.whole.gpus, self.whole.cores, req).is_some()
    }

    /// Whether this node's kubelet refuses a placement below the required level of a pod
    /// whose resources it aligns: without a policy in the spec, the class's QoS decides
    /// alone; `none` and `best-effort` admit every placement.
    pub fn enforces_alignment(&self) -> bool {
        !matches!(
            self.topology_policy,
            Some(TopologyPolicySpec::None | TopologyPolicySpec::BestEffort)
        )
    }
}

/// Where the node allocator put a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// GPU ids taken.
    pub gpus: GpuSet,
    /// Core ids taken.
    pub cores: CoreSet,
    /// The smallest domain containing all of them.
    pub level: Level,
}

/// The node allocator (DESIGN §4): place `req` on the free GPUs and cores of a server at the
/// best level it can reach. Within a level, the domain with the fewest free resources left
/// over wins (GPUs first, then cores), ties by lowest index. Inside the domain it takes the
/// lowest free GPU ids, then cores on those GPUs' NUMA nodes first, then the lowest other ids.
pub fn place(
    t: &ServerType,
    free_gpus: GpuSet,
    free_cores: CoreSet,
    req: Request,
) -> Option<Placement> {
    for level in Level::ALL {
        let mut best: Option<(u32, u32, &Domain)> = None;
        for d in t.domains_for(req, level) {
            let g = free_gpus.and(d.gpus).len();
            let c = free_cores.and(d.cores).len();
            if g < req.gpus || c < req.cores {
                continue;
            }
            let left = (g - req.gpus, c - req.cores);
            if best.is_none_or(|(bg, bc, _)| left < (bg, bc)) {
                best = Some((left.0, left.1, d));
            }
        }
        if let Some((_, _, d)) = best {
            let gpus = free_gpus.and(d.gpus).lowest(req.gpus)?;
            let cores = pick_cores(t, gpus, free_cores.and(d.cores), req.cores)?;
            return Some(Placement {
                gpus,
                cores,
                level: t.level_of(gpus, cores),
            });
        }
    }
    None
}

/// Picks `n` of the `free` cores for a pod holding `gpus`: the lowest ids on those GPUs'
/// NUMA nodes first, then the lowest others; `None` when fewer than `n` are free.
pub fn pick_cores(t: &ServerType, gpus: GpuSet, free: CoreSet, n: u32) -> Option<CoreSet> {
    let near = gpus
        .iter()
        .map(|g| t.numa[t.gpu_numa[g]].cores)
        .fold(CoreSet::empty(), CoreSet::or)
        .and(free);
    let first = near.lowest(n.min(near.len()))?;
    let rest = free.minus(first).lowest(n - first.len())?;
    Some(first.or(rest))
}

/// A server of the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Server name, unique in the cluster (e.g. `node-07`).
    pub name: String,
    /// Its server type in [`Cluster::types`].
    pub type_id: ServerTypeId,
    /// Its labels, taints, cordon and readiness ([`eligibility`] reads them).
    pub rules: Arc<NodeRules>,
}

/// The resolved cluster: server types and servers in pool order.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Cluster name from the spec.
    pub name: String,
    /// The server types that pools use, in first-use order.
    pub types: Vec<ServerType>,
    /// The device kinds of those types: `gpu` first, then by name ([`DeviceKind`] indexes it).
    pub kinds: Vec<String>,
    /// Every server of every pool, in pool order; indexed by [`ServerId`].
    pub servers: Vec<Server>,
    by_name: BTreeMap<String, ServerId>,
    /// Position of each server in ascending name order (for name tie-breaks without strings).
    name_rank: Vec<usize>,
}

impl Cluster {
    /// Builds the cluster from a validated spec.
    pub fn from_spec(spec: &ClusterSpec) -> Self {
        let used: Vec<ServerTypeSpec> = spec
            .pool
            .iter()
            .filter_map(|p| spec.server_type(&p.server_type))
            .collect();
        let kinds = device_kinds(&used);
        let mut types: Vec<ServerType> = Vec::new();
        let mut servers = Vec::new();
        for pool in &spec.pool {
            let Some(ts) = spec.server_type(&pool.server_type) else {
                continue;
            };
            let type_id = match types.iter().position(|t| t.name == ts.name) {
                Some(i) => i,
                None => {
                    types.push(ServerType::with_kinds(&ts, &kinds));
                    types.len() - 1
                }
            };
            // Servers without rules of their own share their pool's.
            let shared = Arc::new(pool.rules());
            for (name, rules) in spec.pool_server_rules(pool) {
                let rules = if rules == *shared {
                    Arc::clone(&shared)
                } else {
                    Arc::new(rules)
                };
                servers.push(Server {
                    name,
                    type_id: ServerTypeId(type_id as u16),
                    rules,
                });
            }
        }
        let by_name: BTreeMap<String, ServerId> = servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), ServerId(i as u32)))
            .collect();
        let mut name_rank = vec![0; servers.len()];
        for (rank, id) in by_name.values().enumerate() {
            name_rank[id.index()] = rank;
        }
        Cluster {
            name: spec.name.clone(),
            types,
            kinds,
            servers,
            by_name,
            name_rank,
        }
    }

    /// Rank of a server's name in ascending order.
    pub fn name_rank(&self, id: ServerId) -> usize {
        self.name_rank[id.index()]
    }

    /// The server with this name, if any.
    pub fn server_id(&self, name: &str) -> Option<ServerId> {
        self.by_name.get(name).copied()
    }

    /// The server with this id; panics on an id from another cluster.
    pub fn server(&self, id: ServerId) -> &Server {
        &self.servers[id.index()]
    }

    /// The layout of a server's type.
    pub fn type_of(&self, id: ServerId) -> &ServerType {
        &self.types[self.servers[id.index()].type_id.index()]
    }

    /// The id of device kind `name`, [`DeviceKind::ABSENT`] when no server has it.
    pub fn kind_id(&self, name: &str) -> DeviceKind {
        self.kinds
            .iter()
            .position(|k| k == name)
            .map_or(DeviceKind::ABSENT, |i| DeviceKind(i as u16))
    }

    /// The name of a device kind.
    pub fn kind_name(&self, kind: DeviceKind) -> &str {
        self.kinds
            .get(kind.0 as usize)
            .map_or("(absent)", String::as_str)
    }

    /// The request of one pod of `class`: its devices of the class's kind and its cores.
    pub fn request_of(
        &self,
        class: &crate::spec::preemption::WorkloadClass,
        gpus: u32,
        cores: u32,
    ) -> Request {
        Request {
            gpus,
            cores,
            kind: self.kind_id(class.gpu_kind()),
            alignment: class.device_alignment,
        }
    }

    /// Total devices of the cluster, every kind.
    pub fn gpu_count(&self) -> usize {
        self.servers
            .iter()
            .map(|s| self.types[s.type_id.index()].gpu_count())
            .sum()
    }

    /// Total CPU cores of the cluster.
    pub fn core_count(&self) -> usize {
        self.servers
            .iter()
            .map(|s| self.types[s.type_id.index()].core_count())
            .sum()
    }
}

#[cfg(test)]
mod tests;
