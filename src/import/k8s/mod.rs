//! `coplan import k8s`: a Kubernetes snapshot (`kubectl get nodes,pods -A -o yaml|json`,
//! multi-document YAML, NodeResourceTopology objects) → a cluster spec and a preemption
//! workload whose preemptors are the Pending pods. The mapping rules are in `docs/import.md`.
//!
//! The steps have a file each, in the order `importer` runs them: `read` (documents → located
//! objects, each with its `origin`), `dra_inventory` (the DRA devices), `nodes` (nodes →
//! servers, with `nrt` for NodeResourceTopology layouts), `pod_mapping` (each pod to a
//! running pod or a preemptor, with `pods` and `pod_devices` for what it asks), `running` and
//! `placement` (running pods onto cores and ids), `rules` and `budgets`, then the levels above
//! the server (`fabric_levels`, `hypernodes`, `fabric_domains`, from the objects `fabric_read`
//! sorts) and the gangs of pending pods (`gang_asks`, `gangs`); `conventions` holds the
//! Kubernetes rules they share, `options` what the command line sets.

mod budgets;
mod claims;
mod conventions;
mod device_plugins;
mod devices;
mod dra_inventory;
mod fabric_domains;
mod fabric_levels;
mod fabric_read;
mod gang_asks;
mod gangs;
mod hypernodes;
mod importer;
mod nodes;
mod nrt;
mod options;
mod origin;
mod placement;
mod pod_devices;
mod pod_mapping;
mod pods;
mod read;
mod rules;
mod running;
#[cfg(test)]
mod tests;

pub use self::conventions::{
    GPU_PRODUCT_LABEL, GPU_RESOURCE, QosClass, SYSTEM_PRIORITY, SYSTEM_RESERVED_PRIORITY,
    TopologyPolicy, topology_qos,
};
pub use self::importer::{import, import_with};
pub use self::options::{CpuManager, K8sOptions};
pub use crate::import::imported::Imported;
