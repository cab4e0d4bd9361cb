//! `[topology]` of a cluster spec (DESIGN §12.3): the levels above the server (racks, blocks,
//! NVLink domains) and where each server sits in them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The implicit innermost level: one domain per server.
pub const HOST_LEVEL: &str = "host";
/// The implicit outermost level: one domain, the whole cluster.
pub const CLUSTER_LEVEL: &str = "cluster";

/// The levels above the server, outermost first, and how a server's domain at each is read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    /// Level names, outermost first (`["block", "rack"]`); the host is implicit below the
    /// last and the cluster above the first. Each server names its domain at every level.
    #[serde(default)]
    pub levels: Vec<String>,
    /// Level → node label whose value names a server's domain at that level (`rack =
    /// "topology.kubernetes.io/rack"`); a server's own `domain` entry wins over its label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The slowdown of a gang spread across a domain of each level (`host`, a named level,
    /// `cluster`), each ≥ 1.0 and non-decreasing outwards; a level left out costs as the
    /// level inside it (the host: 1.0).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub penalty: BTreeMap<String, f64>,
}

impl FabricSpec {
    /// Every level, innermost last: `cluster`, the named levels, `host`.
    pub fn all_levels(&self) -> Vec<&str> {
        std::iter::once(CLUSTER_LEVEL)
            .chain(self.levels.iter().map(String::as_str))
            .chain(std::iter::once(HOST_LEVEL))
            .collect()
    }
}

/// Where one server sits: its domain at each named level (`None` where neither its `domain`
/// entries nor its labels say).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPlace {
    /// The server's name.
    pub name: String,
    /// Index of its pool in the spec.
    pub pool: usize,
    /// Its domain at each `levels` entry, in that order.
    pub domains: Vec<Option<String>>,
}
