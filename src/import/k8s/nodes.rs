//! Nodes → servers: each node's server type and pool, from its NRT layout where it has one,
//! else from the default layout, and what the later steps need of it (its policy, its reserved
//! cores, the use its NRT reports).

use std::collections::BTreeMap;

use super::conventions::{GPU_PRODUCT_LABEL, GPU_RESOURCE, TopologyPolicy};
use super::device_plugins::{
    AMD_PRODUCT_LABEL, is_device_resource, nvidia_gpu_kind, plugin_devices, whole_kind_preference,
};
use super::devices::{
    CpuDevice, DeviceFacts, DeviceIds, apply, cores_per_numa_of, numa_nodes_named, whole_kind,
};
use super::dra_inventory::DraInventory;
use super::nrt::{NrtLayout, nrt_layout};
use super::read::{NodeObject, Origin, Snapshot, parse_quantity};
use crate::import::build::{ClusterBuilder, default_layout};
use crate::import::error::ImportError;
use crate::import::k8s_objects::Object;
use crate::import::quantity::floor_units;
use crate::import::summary::ImportSummary;
use crate::spec::ServerTypeSpec;

/// What the nodes say: the server types and pools, and per node its Topology Manager policy,
/// the cores its kubelet reserves per NUMA node and the use its NRT reports per NUMA node.
#[derive(Default)]
pub(super) struct NodeFacts {
    pub(super) builder: ClusterBuilder,
    pub(super) policies: BTreeMap<String, Option<TopologyPolicy>>,
    pub(super) reserved: BTreeMap<String, Vec<u64>>,
    pub(super) in_use: BTreeMap<String, Vec<(u64, u64)>>,
    /// Per node: where its DRA devices went on its server type.
    pub(super) device_ids: BTreeMap<String, DeviceIds>,
    /// Per node: the kind a pod asking `nvidia.com/gpu` gets there.
    pub(super) nvidia_kind: BTreeMap<String, String>,
}

/// What reading a node needs besides the node: the DRA devices, the extended resources read
/// as devices (`--gpu-resource`) and the device kinds whole GPUs are preferably of, and the
/// pool label.
struct Reading<'a> {
    nrts: &'a BTreeMap<String, (Origin, usize, Object)>,
    inventory: &'a DraInventory,
    extra: &'a [String],
    preferred: Vec<String>,
    pool_label: Option<&'a str>,
}

/// Nodes → server types and pools, in name order: the NRT layout where there is one, else the
/// default layout.
pub(super) fn read_nodes(
    snapshot: &Snapshot,
    inventory: &DraInventory,
    (extra, pool_label): (&[String], Option<&str>),
    summary: &mut ImportSummary,
) -> Result<NodeFacts, ImportError> {
    let Snapshot { nodes, nrts, .. } = snapshot;
    let reading = Reading {
        nrts,
        inventory,
        extra,
        preferred: whole_kind_preference(extra),
        pool_label,
    };
    let mut facts = NodeFacts::default();
    for node in nodes.values() {
        facts.add(node, &reading, summary)?;
    }
    for name in nrts.keys() {
        if !nodes.contains_key(name) {
            summary.dropped("nrt_objects_without_a_node", 1);
        }
    }
    Ok(facts)
}

/// A figure of a node's `resource`: allocatable, else capacity (`true`: not allocatable), else
/// 0.
fn figure(node: &NodeObject, resource: &str) -> Result<(f64, bool), ImportError> {
    let status = &node.object.status;
    match status
        .allocatable
        .get(resource)
        .map(|q| (q, false))
        .or_else(|| status.capacity.get(resource).map(|q| (q, true)))
    {
        Some((q, from_capacity)) => Ok((
            parse_quantity(
                &node.origin,
                node.doc_line,
                q,
                &format!("allocatable `{resource}`"),
            )?,
            from_capacity,
        )),
        None => Ok((0.0, true)),
    }
}

/// A node's devices: those its device plugins advertise (every device resource, in whole
/// units), then its DRA devices; at most the 64 a server holds.
fn node_devices(
    node: &NodeObject,
    reading: &Reading<'_>,
    summary: &mut ImportSummary,
) -> Result<Vec<DeviceFacts>, ImportError> {
    let status = &node.object.status;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for resource in status.allocatable.keys().chain(status.capacity.keys()) {
        if !is_device_resource(resource, reading.extra) || counts.contains_key(resource) {
            continue;
        }
        let (n, _) = floor_units(figure(node, resource)?.0);
        if n > 0 {
            counts.insert(resource.clone(), n);
        }
    }
    let labels = &node.object.metadata.labels;
    let mut devices = plugin_devices(labels, &counts, summary, &node.name);
    for d in &devices {
        summary.mapped(&format!("devices.{} (device-plugin)", d.kind), 1);
    }
    devices.extend(
        reading
            .inventory
            .devices
            .get(&node.name)
            .cloned()
            .unwrap_or_default(),
    );
    let most = crate::spec::limits::MAX_GPUS_PER_SERVER as usize;
    if devices.len() > most {
        summary.dropped(
            "devices_beyond_the_64_a_server_holds",
            (devices.len() - most) as u64,
        );
        summary.warn(format!(
            "node `{}` advertises more than {most} devices; coplan models at most {most} per server, the first {most} are kept",
            node.name
        ));
        devices.truncate(most);
    }
    Ok(devices)
}

impl NodeFacts {
    /// Adds a node as a server of its layout, unless it has no CPU and no device (counted).
    fn add(
        &mut self,
        node: &NodeObject,
        reading: &Reading<'_>,
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        let status = &node.object.status;
        let (cpu, cpu_defaulted) = figure(node, "cpu")?;
        let (gpus, _) = figure(node, GPU_RESOURCE)?;
        let labels = &node.object.metadata.labels;
        let devices = node_devices(node, reading, summary)?;
        let cpus = reading
            .inventory
            .cpus
            .get(&node.name)
            .cloned()
            .unwrap_or_default();
        self.nvidia_kind
            .insert(node.name.clone(), nvidia_gpu_kind(labels));
        if status.allocatable.contains_key("memory") || status.capacity.contains_key("memory") {
            summary.read("node_memory_figures_not_modelled", 1);
        }
        if cpu_defaulted {
            summary.defaulted("nodes_without_allocatable_cpu", 1);
        }
        let (cores, cores_rounded) = floor_units(cpu);
        if cores_rounded {
            summary.rounded("node_cpu_to_whole_cores", 1);
        }
        let (gpus, _) = floor_units(gpus);
        if cores == 0 && devices.is_empty() {
            summary.dropped("nodes_without_cpu_or_gpu", 1);
            summary.warn(format!(
                "node `{}` has no allocatable CPU or GPU; left out",
                node.name
            ));
            return Ok(());
        }
        let whole = whole_kind(&devices, &reading.preferred);
        let of_whole_kind = || devices.iter().filter(|d| Some(&d.kind) == whole.as_ref());
        let whole_count = of_whole_kind().count() as u64;
        let dra_product = of_whole_kind().find_map(|d| d.product.clone());
        let model = labels
            .get(GPU_PRODUCT_LABEL)
            .or_else(|| labels.get(AMD_PRODUCT_LABEL))
            .map(str::to_string)
            .or(dra_product);
        let hint = model.clone().unwrap_or_else(|| {
            if devices.is_empty() {
                "cpu".into()
            } else {
                "gpu".into()
            }
        });
        let nrt = match reading.nrts.get(&node.name) {
            Some((origin, doc_line, nrt)) => nrt_layout(
                nrt,
                origin,
                *doc_line,
                model.as_deref(),
                &node.name,
                summary,
            )?,
            None => None,
        };
        let mut layout = match nrt {
            Some(n) => self.reported_layout(&node.name, n, gpus, summary),
            None => {
                let named = (whole_count, &devices[..], &cpus[..]);
                self.derived_layout(&node.name, cores, named, model.as_deref(), summary)
            }
        };
        let ids = apply(&mut layout, &devices, &cpus, whole.as_deref());
        if !ids.ids.is_empty() || !ids.cpu_numa.is_empty() {
            self.device_ids.insert(node.name.clone(), ids);
        }
        let pool = reading.pool_label.and_then(|k| labels.get(k));
        self.builder.add_node_in(&node.name, &layout, &hint, pool);
        if model.is_none() && !devices.is_empty() {
            summary.defaulted("gpu_nodes_without_a_gpu_product_label", 1);
        }
        Ok(())
    }

    /// The layout a node's NRT object reports, with its policy, reserved cores and use.
    fn reported_layout(
        &mut self,
        name: &str,
        n: NrtLayout,
        gpus: u64,
        summary: &mut ImportSummary,
    ) -> ServerTypeSpec {
        let gpus_nrt = n.layout.gpu_numa.len() as u64;
        if gpus_nrt != gpus {
            summary.warn(format!(
                "node `{name}`: allocatable {GPU_RESOURCE} is {gpus} but its NRT zones hold {gpus_nrt}; the zones are used"
            ));
        }
        summary.mapped("nodes_with_nrt_layout", 1);
        self.policies.insert(name.to_string(), n.policy);
        if let Some(u) = n.in_use {
            self.in_use.insert(name.to_string(), u);
        }
        if n.reserved.iter().any(|&r| r > 0) {
            self.reserved.insert(name.to_string(), n.reserved);
        }
        n.layout
    }

    /// The layout of a node without an NRT object: from the NUMA nodes its devices name, else
    /// the default layout of its cores and `whole_count` whole GPUs.
    fn derived_layout(
        &mut self,
        name: &str,
        cores: u64,
        (whole_count, devices, cpus): (u64, &[DeviceFacts], &[CpuDevice]),
        model: Option<&str>,
        summary: &mut ImportSummary,
    ) -> ServerTypeSpec {
        let (layout, dropped) = match numa_nodes_named(devices, cpus) {
            // The devices name their NUMA nodes: that many, each its own socket.
            Some(numa) => {
                summary.mapped("nodes_with_numa_layout_from_dra_attributes", 1);
                device_numa_layout(cores, numa, cpus, model)
            }
            None => {
                summary.defaulted("nodes_with_the_default_layout", 1);
                summary.list("nodes_with_the_default_layout", name.to_string());
                default_layout(cores, whole_count, model)
            }
        };
        if dropped > 0 {
            summary.rounded("cores_dropped_by_the_default_layout", dropped);
        }
        self.policies.insert(name.to_string(), None);
        layout
    }
}

/// Most NUMA nodes a layout read from device attributes gets.
const MAX_NUMA_FROM_DEVICES: u64 = 64;

/// The layout of a node without an NRT object whose devices name `numa` NUMA nodes: each
/// its own socket, the cores split evenly (or as the CPU driver's per-NUMA devices count
/// them, the fewest of any NUMA node). Returns the layout and the cores it could not use.
fn device_numa_layout(
    cores: u64,
    numa: usize,
    cpus: &[CpuDevice],
    model: Option<&str>,
) -> (ServerTypeSpec, u64) {
    let (mut layout, _) = default_layout(cores, 0, model);
    // A NUMA attribute beyond any machine's (or beyond the cores) is clamped, its devices
    // put on the last NUMA node.
    let numa = (numa as u64).clamp(1, MAX_NUMA_FROM_DEVICES.min(cores.max(1)));
    let per = cores_per_numa_of(cpus, numa as usize)
        .unwrap_or(cores / numa)
        .max(1)
        .min(crate::spec::validate::MAX_CORES_PER_SERVER as u64 / numa);
    layout.sockets = numa as i64;
    layout.numa_per_socket = 1;
    layout.cores_per_numa = per as i64;
    (layout, cores.saturating_sub(per * numa))
}
