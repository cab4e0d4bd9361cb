//! `coplan import alibaba-openb`: the Alibaba GPU cluster trace 2023 ("openb", Weng et al.,
//! FGD, USENIX ATC 2023) → a cluster spec and a preemption workload. Nodes become pools of
//! server types; the pods alive at a moment are placed by a best-fit scheduler and the node
//! allocator; the next pods to arrive are the preemptors. Rules: `docs/import.md`.
//!
//! The steps have a file each: `table` (the CSV files), `nodes` (the node list → servers),
//! `pods` (pods → classes, placed or queued) and `importer` (the moment or the fill, and the
//! specs); `options` holds what the command line sets.

mod importer;
mod nodes;
mod options;
mod pods;
mod table;
#[cfg(test)]
mod tests;

pub use self::importer::import;
pub use self::options::{AlibabaOptions, At, GpuShares, default_qos_table};
