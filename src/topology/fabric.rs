//! The levels above the server (DESIGN §12.3): `cluster`, the named levels of `[topology]`
//! (racks, blocks, NVLink domains), `host`. Every server sits in exactly one domain per level
//! and the domains nest, so a domain of one level is a union of domains of the level inside.

use std::collections::BTreeMap;

use super::ids::ServerId;
use crate::spec::ClusterSpec;
use crate::spec::fabric::{CLUSTER_LEVEL, HOST_LEVEL};

/// A level above the server, by its index in [`Fabric::levels`]: 0 is `cluster` (outermost),
/// the last is `host`. A smaller index is a wider level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FabricLevel(pub u16);

impl FabricLevel {
    /// The whole cluster.
    pub const CLUSTER: FabricLevel = FabricLevel(0);

    /// The level as an index into the fabric's tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One domain of a level: its name and its servers, ascending id.
#[derive(Debug, Clone, PartialEq)]
pub struct FabricDomain {
    /// The domain's name (a server's name at the `host` level, the cluster's at `cluster`).
    pub name: String,
    /// Its servers, ascending id.
    pub servers: Vec<ServerId>,
}

/// Every level of the cluster and its domains.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fabric {
    /// Level names, outermost first: `cluster`, the named levels, `host`.
    pub levels: Vec<String>,
    /// Per level, its domains in order of first server.
    pub domains: Vec<Vec<FabricDomain>>,
    /// Per level, the domain (index into `domains[level]`) of each server.
    of_server: Vec<Vec<u32>>,
    /// Per level, the slowdown of a gang spread across one of its domains (host 1.0 unless
    /// set; a level left out costs as the level inside it).
    pub penalty: Vec<f64>,
}

impl Fabric {
    /// The fabric of a validated spec whose servers are `names` in pool order. An invalid
    /// spec's server without a domain lands in a domain named `?`.
    pub fn from_spec(spec: &ClusterSpec, cluster_name: &str, names: &[String]) -> Fabric {
        let settings = spec.topology.clone().unwrap_or_default();
        let places = spec.server_places();
        let mut levels = vec![CLUSTER_LEVEL.to_string()];
        levels.extend(settings.levels.iter().cloned());
        levels.push(HOST_LEVEL.to_string());
        let mut fabric = Fabric {
            levels,
            ..Fabric::default()
        };
        let count = names.len();
        fabric.push_level((0..count).map(|_| cluster_name.to_string()));
        for l in 0..settings.levels.len() {
            fabric.push_level((0..count).map(|s| {
                places
                    .get(s)
                    .and_then(|p| p.domains.get(l).cloned().flatten())
                    .unwrap_or_else(|| "?".to_string())
            }));
        }
        fabric.push_level(names.iter().cloned());
        let mut penalty = Vec::with_capacity(fabric.levels.len());
        let mut inner = 1.0;
        for level in fabric.levels.iter().rev() {
            inner = settings.penalty.get(level).copied().unwrap_or(inner);
            penalty.push(inner);
        }
        penalty.reverse();
        fabric.penalty = penalty;
        fabric
    }

    fn push_level(&mut self, names: impl Iterator<Item = String>) {
        let mut index: BTreeMap<String, u32> = BTreeMap::new();
        let mut domains: Vec<FabricDomain> = Vec::new();
        let mut of_server = Vec::new();
        for (s, name) in names.enumerate() {
            let d = *index.entry(name.clone()).or_insert_with(|| {
                domains.push(FabricDomain {
                    name,
                    servers: Vec::new(),
                });
                (domains.len() - 1) as u32
            });
            domains[d as usize].servers.push(ServerId(s as u32));
            of_server.push(d);
        }
        self.domains.push(domains);
        self.of_server.push(of_server);
    }

    /// The `host` level (the innermost).
    pub fn host(&self) -> FabricLevel {
        FabricLevel(self.levels.len().saturating_sub(1) as u16)
    }

    /// The level of this name (`cluster`, a named level, `host`).
    pub fn level(&self, name: &str) -> Option<FabricLevel> {
        self.levels
            .iter()
            .position(|l| l == name)
            .map(|i| FabricLevel(i as u16))
    }

    /// The name of a level.
    pub fn level_name(&self, level: FabricLevel) -> &str {
        self.levels.get(level.index()).map_or("?", String::as_str)
    }

    /// Whether the cluster has levels between the host and the cluster.
    pub fn has_named_levels(&self) -> bool {
        self.levels.len() > 2
    }

    /// The domain of `server` at `level`.
    pub fn domain_of(&self, level: FabricLevel, server: ServerId) -> u32 {
        self.of_server[level.index()][server.index()]
    }

    /// The domains of `level`.
    pub fn domains_at(&self, level: FabricLevel) -> &[FabricDomain] {
        &self.domains[level.index()]
    }

    /// The narrowest level at which all of `servers` share one domain (the `host` level for
    /// one server, `cluster` for none).
    pub fn spread_level(&self, servers: &[ServerId]) -> FabricLevel {
        let Some(first) = servers.first() else {
            return FabricLevel::CLUSTER;
        };
        (0..self.levels.len())
            .rev()
            .map(|l| FabricLevel(l as u16))
            .find(|&l| {
                let d = self.domain_of(l, *first);
                servers.iter().all(|s| self.domain_of(l, *s) == d)
            })
            .unwrap_or(FabricLevel::CLUSTER)
    }

    /// The penalty of a spread at `level`.
    pub fn penalty_of(&self, level: FabricLevel) -> f64 {
        self.penalty.get(level.index()).copied().unwrap_or(1.0)
    }
}
