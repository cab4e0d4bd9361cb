//! The devices of a node, whichever source published them (`device_plugins` for
//! `status.allocatable`, `dra_inventory` for ResourceSlices), and how they are written into
//! the node's server type: the whole GPUs of one kind as `gpu_numa`, every other kind a
//! device group, each device on its NUMA node and PCIe root. The mapping rules are in
//! `docs/import.md`, "Devices".

use std::collections::BTreeMap;

use crate::spec::ServerTypeSpec;
use crate::spec::cluster::{DEFAULT_GPU_KIND, DeviceGroupSpec};

/// Where a DRA device is published: driver, pool, device name.
pub type DeviceRef = (String, String, String);

/// One device as the import models it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DeviceFacts {
    /// Its kind: what pods ask it by.
    pub(super) kind: String,
    /// Its NUMA node, where the source says it.
    pub(super) numa: Option<usize>,
    /// Its PCIe root, where the source says it.
    pub(super) pcie_root: Option<String>,
    /// The share of a whole GPU it is (MIG slices < 1).
    pub(super) fraction: f64,
    /// Its memory.
    pub(super) memory_mib: Option<u64>,
    /// Where DRA publishes it (`None`: a device-plugin resource).
    pub(super) source: Option<DeviceRef>,
    /// The driver (`device-plugin` for allocatable resources), for the summary.
    pub(super) driver: String,
    /// The product it is (DRA `productName`), when the source says.
    pub(super) product: Option<String>,
}

/// A CPU device of the DRA CPU driver: a group of cores on one NUMA node (grouped mode) or
/// one core (individual mode).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CpuDevice {
    pub(super) numa: Option<usize>,
    pub(super) cores: u64,
    pub(super) source: DeviceRef,
}

/// A node's devices written into its server type, and where each DRA device went.
#[derive(Debug, Default)]
pub(super) struct DeviceIds {
    /// DRA device → its id on the server type.
    pub(super) ids: BTreeMap<DeviceRef, usize>,
    /// DRA CPU device → the NUMA node its cores are on.
    pub(super) cpu_numa: BTreeMap<DeviceRef, usize>,
}

/// The kind of a node's whole GPUs: the first of `preferred` it has (the device plugins'
/// kinds, in their order), else the DRA kind of the most whole (unsliced) devices; every
/// other kind is a device group.
pub(super) fn whole_kind(devices: &[DeviceFacts], preferred: &[String]) -> Option<String> {
    let has = |k: &str| devices.iter().any(|d| d.kind == k && d.fraction >= 1.0);
    if let Some(k) = preferred.iter().find(|k| has(k)) {
        return Some(k.clone());
    }
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for d in devices
        .iter()
        .filter(|d| d.fraction >= 1.0 && d.source.is_some())
    {
        *per.entry(&d.kind).or_default() += 1;
    }
    per.into_iter()
        .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k)))
        .map(|(k, _)| k.to_string())
}

/// Writes `devices` into `layout` (whose NUMA structure is set): the devices of kind `whole`
/// as `gpu_numa` (their kind as `gpu_resource` unless it is `gpu`), every other kind a device
/// group. A device's NUMA node is its source's; else, for device-plugin GPUs, the one the
/// layout's `gpu_numa` already gives (an NRT object's zones); else spread over the NUMA nodes
/// as the default layout spreads GPUs.
pub(super) fn apply(
    layout: &mut ServerTypeSpec,
    devices: &[DeviceFacts],
    cpus: &[CpuDevice],
    whole: Option<&str>,
) -> DeviceIds {
    let numa_count = (layout.sockets * layout.numa_per_socket).max(1) as usize;
    let nrt_gpus: Vec<i64> = std::mem::take(&mut layout.gpu_numa);
    // Kinds in order: the whole kind first, then the others by name.
    let mut kinds: Vec<&str> = devices.iter().map(|d| d.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if let Some(w) = whole {
        kinds.retain(|k| *k != w);
        kinds.insert(0, w);
    }
    let mut ids = DeviceIds::default();
    let mut next_id = 0usize;
    let mut roots: BTreeMap<String, i64> = BTreeMap::new();
    layout.gpu_resource = None;
    layout.gpu_pcie_root = Vec::new();
    layout.devices = Vec::new();
    for (ki, kind) in kinds.iter().enumerate() {
        let of: Vec<&DeviceFacts> = devices.iter().filter(|d| d.kind == *kind).collect();
        let n = of.len();
        // NUMA nodes: the source's, else the NRT's for device-plugin GPUs, else spread.
        let mut placed: Vec<(usize, usize, &DeviceFacts)> = of
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let numa = d
                    .numa
                    .or_else(|| {
                        (ki == 0 && d.source.is_none())
                            .then(|| nrt_gpus.get(i).map(|&x| x.max(0) as usize))
                            .flatten()
                    })
                    .unwrap_or(i * numa_count / n.max(1))
                    .min(numa_count - 1);
                (numa, i, *d)
            })
            .collect();
        placed.sort_by(|a, b| {
            (a.0, a.2.pcie_root.as_deref(), a.1).cmp(&(b.0, b.2.pcie_root.as_deref(), b.1))
        });
        let any_root = placed.iter().any(|p| p.2.pcie_root.is_some());
        let mut numa = Vec::with_capacity(n);
        let mut root_ids = Vec::new();
        for (j, (nn, _, d)) in placed.iter().enumerate() {
            numa.push(*nn as i64);
            if any_root {
                let next = roots.len() as i64;
                let r = match &d.pcie_root {
                    Some(r) => *roots.entry(r.clone()).or_insert(next),
                    // Unknown: a root of its own.
                    None => *roots
                        .entry(format!("\u{0}unknown-{kind}-{j}"))
                        .or_insert(next),
                };
                root_ids.push(r);
            }
            if let Some(src) = &d.source {
                ids.ids.insert(src.clone(), next_id + j);
            }
        }
        next_id += n;
        let whole_group = whole == Some(*kind);
        if whole_group {
            layout.gpu_numa = numa;
            layout.gpu_pcie_root = root_ids;
            if *kind != DEFAULT_GPU_KIND {
                layout.gpu_resource = Some(kind.to_string());
            }
            let memory = of.iter().filter_map(|d| d.memory_mib).min();
            if let Some(m) = memory {
                layout.gpu_memory_mib = m;
            }
        } else {
            let fraction = of.iter().map(|d| d.fraction).fold(1.0, f64::min);
            layout.devices.push(DeviceGroupSpec {
                kind: kind.to_string(),
                numa,
                pcie_root: root_ids,
                gpu_fraction: (fraction < 1.0).then_some(fraction),
                memory_mib: of.iter().filter_map(|d| d.memory_mib).min(),
            });
        }
    }
    for c in cpus {
        if let Some(n) = c.numa.filter(|&n| n < numa_count) {
            ids.cpu_numa.insert(c.source.clone(), n);
        }
    }
    ids
}

/// The NUMA nodes the devices of a node name (the highest + 1), when any does.
pub(super) fn numa_nodes_named(devices: &[DeviceFacts], cpus: &[CpuDevice]) -> Option<usize> {
    devices
        .iter()
        .filter_map(|d| d.numa)
        .chain(cpus.iter().filter_map(|c| c.numa))
        .max()
        .map(|m| m + 1)
}

/// The cores per NUMA node the CPU driver's grouped devices give (the fewest over the NUMA
/// nodes), when it publishes one device per NUMA node.
pub(super) fn cores_per_numa_of(cpus: &[CpuDevice], numa_count: usize) -> Option<u64> {
    let mut per: BTreeMap<usize, u64> = BTreeMap::new();
    for c in cpus {
        *per.entry(c.numa?).or_default() += c.cores;
    }
    (per.len() == numa_count)
        .then(|| per.values().copied().min())
        .flatten()
}
