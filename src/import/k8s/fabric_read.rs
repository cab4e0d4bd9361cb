//! The snapshot's objects of the levels above the server and of gangs, sorted by kind: Kueue
//! Topologies and ResourceFlavors in input order (the first counts), Volcano HyperNodes by
//! name and PodGroups by `namespace/name`.

use std::collections::BTreeMap;

use super::origin::Origin;
use crate::import::fabric_objects::FabricObject;
use crate::import::k8s_objects::Object;
use crate::import::summary::ImportSummary;

/// One object with its name and where it came from.
pub(super) struct Placed {
    /// Its name (`namespace/name` for a PodGroup).
    pub(super) name: String,
    pub(super) origin: Origin,
    pub(super) object: FabricObject,
}

/// The objects, by kind.
#[derive(Default)]
pub(super) struct FabricObjects {
    /// Kueue Topologies, in input order.
    pub(super) topologies: Vec<Placed>,
    /// Kueue ResourceFlavors, in input order.
    pub(super) flavors: Vec<Placed>,
    /// Volcano HyperNodes by name.
    pub(super) hypernodes: BTreeMap<String, Placed>,
    /// Volcano PodGroups by `namespace/name`.
    pub(super) pod_groups: BTreeMap<String, Placed>,
}

impl FabricObjects {
    /// Adds an object of `kind` named `name`; the second of two of one name is counted and
    /// left out, with a warning.
    pub(super) fn add(
        &mut self,
        kind: &str,
        name: String,
        origin: Origin,
        mut object: Object,
        summary: &mut ImportSummary,
    ) {
        let namespace = object.metadata.namespace.take();
        let Some(fabric) = object.fabric.take() else {
            return;
        };
        let (into, id) = match kind {
            "HyperNode" => (&mut self.hypernodes, name),
            "PodGroup" => (
                &mut self.pod_groups,
                format!("{}/{name}", namespace.as_deref().unwrap_or("default")),
            ),
            _ => {
                let list = if kind == "Topology" {
                    &mut self.topologies
                } else {
                    &mut self.flavors
                };
                if list.iter().any(|p| p.name == name) {
                    summary.dropped(&format!("duplicate_{}", plural(kind)), 1);
                    summary.warn(format!("{kind} `{name}` appears twice; the first is kept"));
                    return;
                }
                list.push(Placed {
                    name,
                    origin,
                    object: *fabric,
                });
                return;
            }
        };
        if into.contains_key(&id) {
            summary.dropped(&format!("duplicate_{}", plural(kind)), 1);
            summary.warn(format!("{kind} `{id}` appears twice; the first is kept"));
            return;
        }
        let placed = Placed {
            name: id.clone(),
            origin,
            object: *fabric,
        };
        into.insert(id, placed);
    }
}

/// A kind's objects as a summary key.
fn plural(kind: &str) -> &'static str {
    match kind {
        "Topology" => "kueue_topologies",
        "ResourceFlavor" => "kueue_resource_flavors",
        "HyperNode" => "volcano_hypernodes",
        _ => "volcano_pod_groups",
    }
}
