//! Nodes → servers: each node's server type and pool, from its NRT layout where it has one,
//! else from the default layout, and what the later steps need of it (its policy, its reserved
//! cores, the use its NRT reports).

use std::collections::BTreeMap;

use super::conventions::{GPU_PRODUCT_LABEL, GPU_RESOURCE, TopologyPolicy};
use super::nrt::nrt_layout;
use super::read::{Snapshot, parse_quantity};
use crate::import::build::{ClusterBuilder, default_layout};
use crate::import::error::ImportError;
use crate::import::quantity::floor_units;
use crate::import::summary::ImportSummary;

/// What the nodes say: the server types and pools, and per node its Topology Manager policy,
/// the cores its kubelet reserves per NUMA node and the use its NRT reports per NUMA node.
pub(super) struct NodeFacts {
    pub(super) builder: ClusterBuilder,
    pub(super) policies: BTreeMap<String, Option<TopologyPolicy>>,
    pub(super) reserved: BTreeMap<String, Vec<u64>>,
    pub(super) in_use: BTreeMap<String, Vec<(u64, u64)>>,
}

/// Nodes → server types and pools, in name order: the NRT layout where there is one, else the
/// default layout.
pub(super) fn read_nodes(
    snapshot: &Snapshot,
    summary: &mut ImportSummary,
) -> Result<NodeFacts, ImportError> {
    let Snapshot { nodes, nrts, .. } = snapshot;
    let mut builder = ClusterBuilder::default();
    let mut policies: BTreeMap<String, Option<TopologyPolicy>> = BTreeMap::new();
    let mut reserved: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut in_use: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for node in nodes.values() {
        let alloc = &node.object.status;
        let figure = |resource: &str| -> Result<(f64, bool), ImportError> {
            match alloc
                .allocatable
                .get(resource)
                .map(|q| (q, false))
                .or_else(|| alloc.capacity.get(resource).map(|q| (q, true)))
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
        };
        let (cpu, cpu_defaulted) = figure("cpu")?;
        let (gpus, _) = figure(GPU_RESOURCE)?;
        if alloc.allocatable.contains_key("memory") || alloc.capacity.contains_key("memory") {
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
        if cores == 0 && gpus == 0 {
            summary.dropped("nodes_without_cpu_or_gpu", 1);
            summary.warn(format!(
                "node `{}` has no allocatable CPU or GPU; left out",
                node.name
            ));
            continue;
        }
        let model = node
            .object
            .metadata
            .labels
            .get(GPU_PRODUCT_LABEL)
            .map(str::to_string);
        let hint = model.clone().unwrap_or_else(|| {
            if gpus == 0 {
                "cpu".into()
            } else {
                "gpu".into()
            }
        });
        let nrt = match nrts.get(&node.name) {
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
        match nrt {
            Some(n) => {
                let gpus_nrt = n.layout.gpu_numa.len() as u64;
                if gpus_nrt != gpus {
                    summary.warn(format!(
                        "node `{}`: allocatable {GPU_RESOURCE} is {gpus} but its NRT zones hold {gpus_nrt}; the zones are used",
                        node.name
                    ));
                }
                summary.mapped("nodes_with_nrt_layout", 1);
                builder.add_node(&node.name, &n.layout, &hint);
                policies.insert(node.name.clone(), n.policy);
                if let Some(u) = n.in_use {
                    in_use.insert(node.name.clone(), u);
                }
                if n.reserved.iter().any(|&r| r > 0) {
                    reserved.insert(node.name.clone(), n.reserved);
                }
            }
            None => {
                let (layout, dropped) = default_layout(cores, gpus, model.as_deref());
                if dropped > 0 {
                    summary.rounded("cores_dropped_by_the_default_layout", dropped);
                }
                summary.defaulted("nodes_with_the_default_layout", 1);
                summary.list("nodes_with_the_default_layout", node.name.clone());
                builder.add_node(&node.name, &layout, &hint);
                policies.insert(node.name.clone(), None);
            }
        }
        if model.is_none() && gpus > 0 {
            summary.defaulted("gpu_nodes_without_a_gpu_product_label", 1);
        }
    }
    for name in nrts.keys() {
        if !nodes.contains_key(name) {
            summary.dropped("nrt_objects_without_a_node", 1);
        }
    }
    Ok(NodeFacts {
        builder,
        policies,
        reserved,
        in_use,
    })
}
