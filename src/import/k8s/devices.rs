//! The devices of each node, as the cluster publishes them: device-plugin resources in
//! `status.allocatable` (`nvidia.com/gpu`, `amd.com/gpu`, MIG profiles under the mixed and
//! the single strategy, any `--gpu-resource`) and DRA ResourceSlices (every device with its
//! attributes and capacities, the newest generation of each pool only), each device given a
//! kind (the resource or DeviceClass pods ask it by), a NUMA node and a PCIe root where the
//! source says them. `apply` writes them into a node's server type; the mapping rules are in
//! `docs/import.md`, "Devices".

use std::collections::{BTreeMap, BTreeSet};

use super::conventions::{GPU_PRODUCT_LABEL, GPU_RESOURCE};
use super::read::{DraObjects, Located};
use crate::import::dra_objects::{Device, DevicesField};
use crate::import::k8s_objects::Labels;
use crate::import::quantity;
use crate::import::summary::ImportSummary;
use crate::spec::ServerTypeSpec;
use crate::spec::cluster::{DEFAULT_GPU_KIND, DeviceGroupSpec};

/// The standard DRA attribute of a device's NUMA node.
pub const NUMA_ATTRIBUTE: &str = "resource.kubernetes.io/numaNode";
/// The standard DRA attribute of a device's PCIe root.
pub const PCIE_ROOT_ATTRIBUTE: &str = "resource.kubernetes.io/pcieRoot";
/// The AMD resource of whole GPUs.
pub const AMD_GPU_RESOURCE: &str = "amd.com/gpu";
/// The prefix of the MIG resources of the mixed strategy.
pub const MIG_RESOURCE_PREFIX: &str = "nvidia.com/mig-";
/// GPU feature discovery's label of the MIG strategy (`single`, `mixed`).
pub const MIG_STRATEGY_LABEL: &str = "nvidia.com/mig.strategy";
/// GPU feature discovery's label of each GPU's memory, in MiB.
pub const GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";
/// AMD's node labeller: the product.
pub const AMD_PRODUCT_LABEL: &str = "amd.com/gpu.product-name";

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

/// What a DeviceClass selects, as read from its CEL selectors.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ClassMatch {
    driver: Option<String>,
    /// (qualified attribute, value as text).
    attributes: Vec<(String, String)>,
}

impl ClassMatch {
    fn conditions(&self) -> usize {
        usize::from(self.driver.is_some()) + self.attributes.len()
    }

    fn selects(&self, driver: &str, device: &Device) -> bool {
        self.driver.as_deref().is_none_or(|d| d == driver)
            && self.attributes.iter().all(|(name, value)| {
                device
                    .attribute(driver, name)
                    .and_then(|a| a.text())
                    .is_some_and(|v| &v == value)
            })
    }
}

/// One CEL selector read as a conjunction of `device.driver == "…"` and
/// `device.attributes["domain"].name == value`; `None` for anything else.
pub(super) fn parse_cel(expression: &str) -> Option<ClassMatch> {
    let mut m = ClassMatch::default();
    for atom in expression.split("&&") {
        let atom = atom
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let (lhs, rhs) = atom.split_once("==")?;
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        let value = unquote(rhs)?;
        if lhs == "device.driver" {
            m.driver = Some(value);
            continue;
        }
        let rest = lhs.strip_prefix("device.attributes[")?;
        let (domain, rest) = rest.split_once(']')?;
        let domain = unquote(domain.trim())?;
        let name = rest.strip_prefix('.')?.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        m.attributes.push((format!("{domain}/{name}"), value));
    }
    Some(m)
}

fn unquote(text: &str) -> Option<String> {
    let t = text.trim();
    if let Some(inner) = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
    {
        return (!inner.contains(['"', '\''])).then(|| inner.to_string());
    }
    // An integer or boolean literal compares as its text.
    (t == "true" || t == "false" || t.parse::<i64>().is_ok()).then(|| t.to_string())
}

/// The share of a whole GPU a MIG profile is: its compute slices (`3g` of `3g.40gb`, or of
/// `1c.3g.40gb`) over the GPU's seven (four on an A30).
pub(super) fn mig_fraction(profile: &str, product: Option<&str>) -> Option<f64> {
    let slices: u32 = profile
        .split('.')
        .find_map(|part| part.strip_suffix('g').and_then(|n| n.parse().ok()))?;
    let of = if product.is_some_and(|p| p.contains("A30")) {
        4
    } else {
        7
    };
    (slices > 0 && slices <= of).then(|| f64::from(slices) / f64::from(of))
}

/// The MIG profile a single-strategy product label names (`NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`).
fn single_strategy_profile(product: &str) -> Option<&str> {
    product
        .rsplit_once("-MIG-")
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty())
}

/// The kind pods asking `nvidia.com/gpu` get on a node: its MIG profile under the single
/// strategy, else whole GPUs.
pub(super) fn nvidia_gpu_kind(labels: &Labels) -> String {
    let product = labels.get(GPU_PRODUCT_LABEL);
    let single = labels.get(MIG_STRATEGY_LABEL) == Some("single")
        || product.is_some_and(|p| single_strategy_profile(p).is_some());
    match product.and_then(single_strategy_profile) {
        Some(profile) if single => format!("{MIG_RESOURCE_PREFIX}{profile}"),
        _ => DEFAULT_GPU_KIND.to_string(),
    }
}

/// The device kind of an extended resource a pod asks for, on a node whose `nvidia.com/gpu`
/// is `nvidia_kind`; `None` for a resource that is no device.
pub(super) fn resource_kind(resource: &str, nvidia_kind: &str, extra: &[String]) -> Option<String> {
    if resource == GPU_RESOURCE {
        Some(nvidia_kind.to_string())
    } else if resource == AMD_GPU_RESOURCE
        || resource.starts_with(MIG_RESOURCE_PREFIX)
        || extra.iter().any(|r| r == resource)
    {
        Some(resource.to_string())
    } else {
        None
    }
}

/// Whether an extended resource is a device resource coplan models.
pub(super) fn is_device_resource(resource: &str, extra: &[String]) -> bool {
    resource_kind(resource, DEFAULT_GPU_KIND, extra).is_some()
}

/// The devices a node's device plugins advertise (`counts`: whole units per resource).
pub(super) fn plugin_devices(
    labels: &Labels,
    counts: &BTreeMap<String, u64>,
    summary: &mut ImportSummary,
    node: &str,
) -> Vec<DeviceFacts> {
    let product = labels.get(GPU_PRODUCT_LABEL);
    let memory = labels
        .get(GPU_MEMORY_LABEL)
        .and_then(|m| m.parse::<u64>().ok());
    let mut out = Vec::new();
    for (resource, &n) in counts {
        let kind = if resource == GPU_RESOURCE {
            nvidia_gpu_kind(labels)
        } else {
            resource.clone()
        };
        let fraction = match kind.strip_prefix(MIG_RESOURCE_PREFIX) {
            Some(profile) => match mig_fraction(profile, product) {
                Some(f) => f,
                None => {
                    summary.warn(format!(
                        "node `{node}`: MIG profile `{profile}` names no compute slices; each device counted as a whole GPU's share 1/7"
                    ));
                    1.0 / 7.0
                }
            },
            None => 1.0,
        };
        if resource == GPU_RESOURCE && kind != DEFAULT_GPU_KIND {
            summary.honoured("nodes_with_mig_single_strategy", 1);
        }
        if resource.starts_with(MIG_RESOURCE_PREFIX) {
            summary.honoured("nodes_with_mig_mixed_strategy_resources", 1);
        }
        let memory_mib = if fraction < 1.0 { None } else { memory };
        for _ in 0..n {
            out.push(DeviceFacts {
                kind: kind.clone(),
                numa: None,
                pcie_root: None,
                fraction,
                memory_mib,
                source: None,
                driver: "device-plugin".into(),
                product: None,
            });
        }
    }
    out
}

/// The DRA devices of the snapshot, by node, with their kinds.
#[derive(Debug, Default)]
pub(super) struct DraInventory {
    /// Node → its devices (not CPUs).
    pub(super) devices: BTreeMap<String, Vec<DeviceFacts>>,
    /// Node → its CPU devices.
    pub(super) cpus: BTreeMap<String, Vec<CpuDevice>>,
    /// DeviceClass → the kind its devices have (its own name), or `None` when its selectors
    /// could not be read.
    pub(super) class_kinds: BTreeMap<String, Option<String>>,
    /// DeviceClasses that select CPU devices.
    pub(super) cpu_classes: BTreeSet<String>,
    /// Device → node, for allocation results.
    pub(super) node_of: BTreeMap<DeviceRef, String>,
    /// Device (not CPU) → its kind.
    pub(super) kind_of: BTreeMap<DeviceRef, String>,
    /// Per kind, the most devices of it any node has (`allocationMode: All`).
    pub(super) most_per_node: BTreeMap<String, u64>,
    /// Per kind, the fewest devices of it a node that has it has.
    pub(super) fewest_per_node: BTreeMap<String, u64>,
}

/// Whether a device is a CPU device: a capacity named `cpu` (`dra.cpu/cpu`), or a driver
/// named for CPUs.
fn cpu_capacity(driver: &str, device: &Device) -> Option<u64> {
    let cap = device
        .capacity()
        .iter()
        .find(|(k, _)| *k == "cpu" || k.ends_with("/cpu"))
        .and_then(|(_, v)| v.text())
        .and_then(|t| quantity::parse(&t).ok());
    match cap {
        Some(c) => Some(c.max(0.0).floor() as u64),
        None if driver == "dra.cpu" || driver.ends_with(".cpu") => Some(1),
        None => None,
    }
}

fn numa_of(driver: &str, device: &Device) -> Option<usize> {
    [NUMA_ATTRIBUTE, "numaNode", "numaNodeID"]
        .iter()
        .find_map(|a| device.attribute(driver, a).and_then(|v| v.int))
        .and_then(|n| usize::try_from(n).ok())
}

impl DraInventory {
    /// Reads the slices and classes.
    pub(super) fn read(dra: &DraObjects, summary: &mut ImportSummary) -> Self {
        let mut inv = DraInventory::default();
        // Classes: what each selects.
        let mut matches: Vec<(String, ClassMatch)> = Vec::new();
        for (name, class) in &dra.classes {
            summary.read("dra.device_classes", 1);
            let mut all = ClassMatch::default();
            let mut readable = true;
            for sel in &class.object.spec.selectors {
                match sel.cel.as_ref().and_then(|c| parse_cel(&c.expression)) {
                    Some(m) => {
                        all.driver = all.driver.or(m.driver);
                        all.attributes.extend(m.attributes);
                    }
                    None => readable = false,
                }
            }
            if class.object.spec.extended_resource_name.is_some() {
                summary.not_modelled(
                    "DeviceClass extendedResourceName (devices requested as an extended resource)",
                    name.clone(),
                );
            }
            if !readable {
                summary.warn(format!(
                    "DeviceClass `{name}`: a selector is not a conjunction of `device.driver == \"…\"` and `device.attributes[\"…\"].name == …`; the devices it selects are not guessed, and pending pods asking for it are left out"
                ));
                inv.class_kinds.insert(name.clone(), None);
                continue;
            }
            inv.class_kinds.insert(name.clone(), Some(name.clone()));
            matches.push((name.clone(), all));
        }
        // Slices: the newest generation of each pool.
        let mut newest: BTreeMap<(String, String), i64> = BTreeMap::new();
        for s in &dra.slices {
            let key = slice_pool(s);
            let g = s.object.spec.pool.generation.unwrap_or(0);
            let e = newest.entry(key).or_insert(g);
            *e = (*e).max(g);
        }
        for s in &dra.slices {
            summary.read("dra.resource_slices", 1);
            let spec = &s.object.spec;
            let (driver, pool) = slice_pool(s);
            if spec.pool.generation.unwrap_or(0) < newest[&(driver.clone(), pool.clone())] {
                summary.dropped("dra_resource_slices_of_an_older_pool_generation", 1);
                continue;
            }
            let Some(node) = spec.node_name.clone() else {
                summary.not_modelled(
                    "ResourceSlices not local to one node (allNodes, nodeSelector)",
                    s.name.clone(),
                );
                continue;
            };
            if !spec.shared_counters.is_empty() {
                summary.not_modelled(
                    "DRA shared counters (partitionable devices)",
                    s.name.clone(),
                );
            }
            let devices = match &spec.devices {
                Some(DevicesField::Slice(d)) => d.as_slice(),
                _ => &[],
            };
            for d in devices {
                let source = (driver.clone(), pool.clone(), d.name.clone());
                if d.tainted() {
                    summary.not_modelled("DRA device taints", format!("{}/{}", s.name, d.name));
                }
                if d.consumes_counters() {
                    summary.not_modelled(
                        "DRA devices consuming shared counters",
                        format!("{}/{}", s.name, d.name),
                    );
                }
                inv.node_of.insert(source.clone(), node.clone());
                if let Some(cores) = cpu_capacity(&driver, d) {
                    summary.mapped(&format!("devices.cpu ({driver})"), 1);
                    inv.cpus.entry(node.clone()).or_default().push(CpuDevice {
                        numa: numa_of(&driver, d),
                        cores,
                        source,
                    });
                    for (name, m) in &matches {
                        if m.selects(&driver, d) {
                            inv.cpu_classes.insert(name.clone());
                        }
                    }
                    continue;
                }
                // The most specific class that selects it names its kind; without one, its
                // driver does.
                let mut selecting: Vec<&(String, ClassMatch)> = matches
                    .iter()
                    .filter(|(_, m)| m.selects(&driver, d))
                    .collect();
                selecting
                    .sort_by_key(|(name, m)| (std::cmp::Reverse(m.conditions()), name.clone()));
                let kind = match selecting.first() {
                    Some((name, _)) => name.clone(),
                    None => {
                        summary.list(
                            "dra_devices_no_device_class_selects",
                            format!("{}/{}", s.name, d.name),
                        );
                        driver.clone()
                    }
                };
                if selecting.len() > 1 {
                    summary.list(
                        "dra_devices_several_classes_select",
                        format!("{}/{} → {kind}", s.name, d.name),
                    );
                }
                let product = d.attribute(&driver, "productName").and_then(|a| a.text());
                let kind_name = kind.clone();
                let mig_profile = d
                    .attribute(&driver, "profile")
                    .and_then(|a| a.text())
                    .filter(|_| {
                        d.attribute(&driver, "type")
                            .and_then(|a| a.text())
                            .as_deref()
                            == Some("mig")
                            || d.attribute(&driver, "type").is_none()
                    });
                let fraction = mig_profile
                    .as_deref()
                    .and_then(|p| mig_fraction(p, product.as_deref()))
                    .unwrap_or(1.0);
                let memory_mib = d
                    .capacity()
                    .get("memory")
                    .and_then(|c| c.text())
                    .and_then(|t| quantity::parse(&t).ok())
                    .map(|bytes| (bytes / (1024.0 * 1024.0)).round() as u64);
                summary.mapped(&format!("devices.{kind} ({driver})"), 1);
                inv.devices
                    .entry(node.clone())
                    .or_default()
                    .push(DeviceFacts {
                        kind,
                        numa: numa_of(&driver, d),
                        pcie_root: d
                            .attribute(&driver, PCIE_ROOT_ATTRIBUTE)
                            .and_then(|a| a.text()),
                        fraction,
                        memory_mib,
                        source: Some(source.clone()),
                        driver: driver.clone(),
                        product,
                    });
                inv.kind_of.insert(source, kind_name);
            }
        }
        for devices in inv.devices.values() {
            let mut per: BTreeMap<&str, u64> = BTreeMap::new();
            for d in devices {
                *per.entry(&d.kind).or_default() += 1;
            }
            for (k, n) in per {
                let most = inv.most_per_node.entry(k.to_string()).or_insert(0);
                *most = (*most).max(n);
                let fewest = inv.fewest_per_node.entry(k.to_string()).or_insert(n);
                *fewest = (*fewest).min(n);
            }
        }
        inv
    }
}

fn slice_pool(s: &Located) -> (String, String) {
    let spec = &s.object.spec;
    (
        spec.driver.clone().unwrap_or_default(),
        spec.pool
            .name
            .clone()
            .or_else(|| spec.node_name.clone())
            .unwrap_or_default(),
    )
}

/// A node's devices written into its server type, and where each DRA device went.
#[derive(Debug, Default)]
pub(super) struct DeviceIds {
    /// DRA device → its id on the server type.
    pub(super) ids: BTreeMap<DeviceRef, usize>,
    /// DRA CPU device → the NUMA node its cores are on.
    pub(super) cpu_numa: BTreeMap<DeviceRef, usize>,
}

/// The kind of a node's whole GPUs: the first of `gpu`, `amd.com/gpu`, a `--gpu-resource`,
/// then the DRA kind of the most whole (unsliced) devices; every other kind is a device group.
pub(super) fn whole_kind(devices: &[DeviceFacts], extra: &[String]) -> Option<String> {
    let has = |k: &str| devices.iter().any(|d| d.kind == k && d.fraction >= 1.0);
    if has(DEFAULT_GPU_KIND) {
        return Some(DEFAULT_GPU_KIND.into());
    }
    if has(AMD_GPU_RESOURCE) {
        return Some(AMD_GPU_RESOURCE.into());
    }
    if let Some(r) = extra.iter().find(|r| has(r)) {
        return Some(r.clone());
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

/// Writes `devices` into `layout` (whose NUMA structure is set): whole GPUs of the node's
/// whole kind as `gpu_numa` (their kind as `gpu_resource` unless it is `gpu`), every other
/// kind a device group; devices without a NUMA node spread over the NUMA nodes as the default
/// layout spreads GPUs. `nrt_gpus`: the GPU NUMA nodes an NRT object gave (kept for the
/// device-plugin GPUs they count).
pub(super) fn apply(
    layout: &mut ServerTypeSpec,
    devices: &[DeviceFacts],
    cpus: &[CpuDevice],
    extra: &[String],
) -> DeviceIds {
    let numa_count = (layout.sockets * layout.numa_per_socket).max(1) as usize;
    let nrt_gpus: Vec<i64> = std::mem::take(&mut layout.gpu_numa);
    let whole = whole_kind(devices, extra);
    // Kinds in order: the whole kind first, then the others by name.
    let mut kinds: Vec<&str> = devices.iter().map(|d| d.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if let Some(w) = &whole {
        kinds.retain(|k| k != w);
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
        let whole_group = whole.as_deref() == Some(*kind);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cel_selectors_of_the_known_shapes_are_read_and_others_refused() {
        let m = parse_cel("device.driver == \"gpu.nvidia.com\" && device.attributes[\"gpu.nvidia.com\"].type == \"gpu\"").unwrap();
        assert_eq!(m.driver.as_deref(), Some("gpu.nvidia.com"));
        assert_eq!(
            m.attributes,
            vec![("gpu.nvidia.com/type".into(), "gpu".into())]
        );
        assert_eq!(
            parse_cel("device.driver == 'dra.cpu'")
                .unwrap()
                .driver
                .as_deref(),
            Some("dra.cpu")
        );
        for bad in [
            "device.driver in [\"a\", \"b\"]",
            "device.capacity[\"x\"].memory.compareTo(quantity(\"1Gi\")) >= 0",
            "device.driver == \"a\" || device.driver == \"b\"",
            "device.attributes[\"d\"].x != \"y\"",
        ] {
            assert_eq!(parse_cel(bad), None, "{bad}");
        }
    }

    #[test]
    fn mig_profiles_are_shares_of_a_gpu() {
        assert_eq!(
            mig_fraction("3g.40gb", Some("NVIDIA-H100-80GB-HBM3")),
            Some(3.0 / 7.0)
        );
        assert_eq!(mig_fraction("1c.2g.20gb", None), Some(2.0 / 7.0));
        assert_eq!(mig_fraction("2g.12gb", Some("NVIDIA-A30")), Some(0.5));
        assert_eq!(mig_fraction("xl", None), None);
        assert_eq!(
            single_strategy_profile("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
            Some("1g.5gb")
        );
    }
}
