//! What a pod asks of its node's devices: the device-plugin resources of its containers (by
//! kind: `nvidia.com/gpu` is a MIG profile on a single-strategy node) and its DRA claims,
//! brought to one device kind, count and claim constraint, and the cores its CPU claims take.

use std::collections::{BTreeMap, BTreeSet};

use super::claims::{DraAsk, Unplannable, dra_ask};
use super::conventions::GPU_PRODUCT_LABEL;
use super::device_plugins::resource_kind;
use super::dra_inventory::DraInventory;
use super::pods::pod_request;
use super::read::{PodObject, Snapshot};
use crate::import::build::ClusterBuilder;
use crate::import::error::ImportError;
use crate::import::k8s_objects::Object;
use crate::import::summary::ImportSummary;
use crate::spec::cluster::DEFAULT_GPU_KIND;
use crate::spec::preemption::DeviceAlignment;

/// A pod's devices as one ask.
pub(super) struct PodDevices {
    /// The device kind (`None`: whole GPUs of the default kind).
    pub(super) kind: Option<String>,
    /// How many devices, as requested (a fraction is rounded by the caller).
    pub(super) count: f64,
    /// Its claim's constraint on where its devices lie.
    pub(super) alignment: Option<DeviceAlignment>,
    /// Exclusive cores its CPU claims ask for or hold.
    pub(super) claim_cores: u64,
    /// What its DRA claims ask and hold, if it has any.
    pub(super) dra: Option<DraAsk>,
}

/// What reading pods' device asks needs of the snapshot.
pub(super) struct DeviceAsks<'a> {
    snapshot: &'a Snapshot,
    inventory: &'a DraInventory,
    /// Per node, the kind `nvidia.com/gpu` is there.
    nvidia_kind: BTreeMap<String, String>,
    pending_nvidia: PendingNvidiaKind,
    extra: &'a [String],
}

impl<'a> DeviceAsks<'a> {
    pub(super) fn new(
        snapshot: &'a Snapshot,
        inventory: &'a DraInventory,
        builder: &ClusterBuilder,
        nvidia_kind: BTreeMap<String, String>,
        extra: &'a [String],
    ) -> Self {
        let pending_nvidia = PendingNvidiaKind::new(builder, &nvidia_kind, snapshot);
        DeviceAsks {
            snapshot,
            inventory,
            nvidia_kind,
            pending_nvidia,
            extra,
        }
    }

    /// The devices of `pod`, running on `node` (`None`: pending). `Ok(Err(why))`: a pending
    /// pod whose claims cannot be planned; `Err`: a malformed quantity.
    pub(super) fn of(
        &self,
        (pod, doc_line, name): (&PodObject, usize, &str),
        node: Option<&str>,
        taken: &mut BTreeSet<String>,
        summary: &mut ImportSummary,
    ) -> Result<Result<PodDevices, Unplannable>, ImportError> {
        let object = &pod.object;
        let running = node.is_some();
        let nvidia = match node {
            Some(n) => self
                .nvidia_kind
                .get(n)
                .cloned()
                .unwrap_or_else(|| DEFAULT_GPU_KIND.into()),
            None => self.pending_nvidia.of(object),
        };
        let mut plugin: Vec<(String, f64)> = Vec::new();
        for resource in device_resources(object) {
            if let Some(kind) = resource_kind(&resource, &nvidia, self.extra) {
                let n = pod_request(pod, doc_line, &resource)?;
                if n > 0.0 {
                    match plugin.iter_mut().find(|(k, _)| *k == kind) {
                        Some(e) => e.1 += n,
                        None => plugin.push((kind, n)),
                    }
                }
            }
        }
        plugin.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if plugin.len() > 1 {
            summary.not_modelled(
                "pods asking for devices of several kinds (the kind asked most of is planned)",
                name.to_string(),
            );
        }
        let dra = match dra_ask(
            name,
            object,
            running,
            &self.snapshot.dra,
            self.inventory,
            taken,
            summary,
        ) {
            Ok(a) => a,
            Err(why) => return Ok(Err(why)),
        };
        let (mut kind, mut count) = plugin
            .first()
            .map_or((None, 0.0), |(k, n)| (Some(k.clone()), *n));
        let mut alignment = None;
        if let Some(a) = &dra {
            summary.mapped(
                if running {
                    "running_pods_with_dra_claims"
                } else {
                    "preemptors_with_dra_claims"
                },
                1,
            );
            if a.kind.is_some() && a.count > 0 {
                if count > 0.0 {
                    summary.not_modelled(
                        "pods asking for device-plugin devices and DRA devices (the DRA devices are planned)",
                        name.to_string(),
                    );
                }
                kind = a.kind.clone();
                count = a.count as f64;
                alignment = a.alignment;
            }
        }
        Ok(Ok(PodDevices {
            // A kind of the default GPUs is written as none.
            kind: kind.filter(|k| k != DEFAULT_GPU_KIND),
            count,
            alignment,
            claim_cores: dra.as_ref().map_or(0, |a| a.cores),
            dra,
        }))
    }
}

/// The extended resources a pod's containers or overhead name, each once, in name order.
fn device_resources(pod: &Object) -> Vec<String> {
    let spec = &pod.spec;
    let mut out: BTreeSet<&String> = Default::default();
    for c in spec.containers.iter().chain(&spec.init_containers) {
        out.extend(c.resources.requests.keys().filter(|k| k.contains('/')));
        out.extend(c.resources.limits.keys().filter(|k| k.contains('/')));
    }
    out.extend(spec.overhead.keys().filter(|k| k.contains('/')));
    out.into_iter().cloned().collect()
}

/// The kind a pending pod asking `nvidia.com/gpu` gets: the MIG profile of the product its
/// node selector names under the single strategy; else whole GPUs, unless the cluster has
/// none and its nodes all slice their GPUs into one profile.
struct PendingNvidiaKind {
    by_product: BTreeMap<String, String>,
    fallback: String,
}

impl PendingNvidiaKind {
    fn new(
        builder: &ClusterBuilder,
        per_node: &BTreeMap<String, String>,
        snapshot: &Snapshot,
    ) -> Self {
        let mut by_product = BTreeMap::new();
        for node in snapshot.nodes.values() {
            let labels = &node.object.metadata.labels;
            if let (Some(product), Some(kind)) =
                (labels.get(GPU_PRODUCT_LABEL), per_node.get(&node.name))
                && kind != DEFAULT_GPU_KIND
            {
                by_product.insert(product.to_string(), kind.clone());
            }
        }
        let whole = builder
            .types()
            .iter()
            .any(|t| !t.gpu_numa.is_empty() && t.gpu_resource.is_none());
        let kinds: BTreeSet<&String> = by_product.values().collect();
        let fallback = match kinds.iter().next() {
            Some(k) if !whole && kinds.len() == 1 => (*k).clone(),
            _ => DEFAULT_GPU_KIND.to_string(),
        };
        PendingNvidiaKind {
            by_product,
            fallback,
        }
    }

    fn of(&self, pod: &Object) -> String {
        pod.spec
            .node_selector
            .get(GPU_PRODUCT_LABEL)
            .and_then(|p| self.by_product.get(p))
            .cloned()
            .unwrap_or_else(|| self.fallback.clone())
    }
}
