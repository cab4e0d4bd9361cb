//! The FlexTopo model (DESIGN §4): server layouts with their domains, the cluster, allocation
//! state, placement levels and the node allocator shared by every planner.

pub mod bits;
pub mod budgets;
mod cluster;
mod devices;
mod domain;
pub mod eligibility;
pub mod fabric;
pub mod graph;
mod ids;
mod placement;
mod server_type;
pub mod state;

pub use bits::{CoreSet, GpuSet};
pub use cluster::{Cluster, Server};
pub use devices::device_kinds;
pub use domain::{DeviceKind, Domain, Level, Request};
pub use fabric::{Fabric, FabricDomain, FabricLevel};
pub use ids::{PodId, ServerId, ServerTypeId};
pub use placement::{Placement, pick_cores, place};
pub use server_type::ServerType;

#[cfg(test)]
mod tests;
