//! A server type resolved from its spec: its NUMA nodes, sockets and device layouts
//! precomputed, and the questions the allocator and the planners ask of them.

use super::bits::{CoreSet, GpuSet};
use super::devices::{ALIGNMENTS, Layout, Shape, alignment_index, device_kinds};
use super::domain::{DeviceKind, Domain, Level, Request};
use crate::spec::cluster::{Penalty, ServerTypeSpec, TopologyPolicySpec};
use crate::spec::preemption::DeviceAlignment;

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
