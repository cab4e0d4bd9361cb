//! The resolved cluster: its server types and servers, looked up by id and by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::devices::device_kinds;
use super::domain::{DeviceKind, Request};
use super::fabric::Fabric;
use super::ids::{ServerId, ServerTypeId};
use super::server_type::ServerType;
use crate::spec::cluster::{ClusterSpec, ServerTypeSpec};
use crate::spec::eligibility::NodeRules;

/// A server of the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Server name, unique in the cluster (e.g. `node-07`).
    pub name: String,
    /// Its server type in [`Cluster::types`].
    pub type_id: ServerTypeId,
    /// Its labels, taints, cordon and readiness ([`eligibility`](super::eligibility) reads them).
    pub rules: Arc<NodeRules>,
}

/// The resolved cluster: server types and servers in pool order.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Cluster name from the spec.
    pub name: String,
    /// The server types that pools use, in first-use order.
    pub types: Vec<ServerType>,
    /// The device kinds of those types: `gpu` first, then by name ([`DeviceKind`] indexes it).
    pub kinds: Vec<String>,
    /// Every server of every pool, in pool order; indexed by [`ServerId`].
    pub servers: Vec<Server>,
    /// The levels above the server and each server's domain at each (DESIGN §12.3).
    pub fabric: Fabric,
    by_name: BTreeMap<String, ServerId>,
    /// Position of each server in ascending name order (for name tie-breaks without strings).
    name_rank: Vec<usize>,
}

impl Cluster {
    /// Builds the cluster from a validated spec.
    pub fn from_spec(spec: &ClusterSpec) -> Self {
        let used: Vec<ServerTypeSpec> = spec
            .pool
            .iter()
            .filter_map(|p| spec.server_type(&p.server_type))
            .collect();
        let kinds = device_kinds(&used);
        let mut types: Vec<ServerType> = Vec::new();
        let mut servers = Vec::new();
        for pool in &spec.pool {
            let Some(ts) = spec.server_type(&pool.server_type) else {
                continue;
            };
            let type_id = match types.iter().position(|t| t.name == ts.name) {
                Some(i) => i,
                None => {
                    types.push(ServerType::with_kinds(&ts, &kinds));
                    types.len() - 1
                }
            };
            // Servers without rules of their own share their pool's.
            let shared = Arc::new(pool.rules());
            for (name, rules) in spec.pool_server_rules(pool) {
                let rules = if rules == *shared {
                    Arc::clone(&shared)
                } else {
                    Arc::new(rules)
                };
                servers.push(Server {
                    name,
                    type_id: ServerTypeId(type_id as u16),
                    rules,
                });
            }
        }
        let by_name: BTreeMap<String, ServerId> = servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), ServerId(i as u32)))
            .collect();
        let mut name_rank = vec![0; servers.len()];
        for (rank, id) in by_name.values().enumerate() {
            name_rank[id.index()] = rank;
        }
        let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        Cluster {
            name: spec.name.clone(),
            fabric: Fabric::from_spec(spec, &spec.name, &names),
            types,
            kinds,
            servers,
            by_name,
            name_rank,
        }
    }

    /// Rank of a server's name in ascending order.
    pub fn name_rank(&self, id: ServerId) -> usize {
        self.name_rank[id.index()]
    }

    /// The server with this name, if any.
    pub fn server_id(&self, name: &str) -> Option<ServerId> {
        self.by_name.get(name).copied()
    }

    /// The server with this id; panics on an id from another cluster.
    pub fn server(&self, id: ServerId) -> &Server {
        &self.servers[id.index()]
    }

    /// The layout of a server's type.
    pub fn type_of(&self, id: ServerId) -> &ServerType {
        &self.types[self.servers[id.index()].type_id.index()]
    }

    /// The id of device kind `name`, [`DeviceKind::ABSENT`] when no server has it.
    pub fn kind_id(&self, name: &str) -> DeviceKind {
        self.kinds
            .iter()
            .position(|k| k == name)
            .map_or(DeviceKind::ABSENT, |i| DeviceKind(i as u16))
    }

    /// The name of a device kind.
    pub fn kind_name(&self, kind: DeviceKind) -> &str {
        self.kinds
            .get(kind.0 as usize)
            .map_or("(absent)", String::as_str)
    }

    /// The request of one pod of `class`: its devices of the class's kind and its cores.
    pub fn request_of(
        &self,
        class: &crate::spec::preemption::WorkloadClass,
        gpus: u32,
        cores: u32,
    ) -> Request {
        Request {
            gpus,
            cores,
            kind: self.kind_id(class.gpu_kind()),
            alignment: class.device_alignment,
        }
    }

    /// Total devices of the cluster, every kind.
    pub fn gpu_count(&self) -> usize {
        self.servers
            .iter()
            .map(|s| self.types[s.type_id.index()].gpu_count())
            .sum()
    }

    /// Total CPU cores of the cluster.
    pub fn core_count(&self) -> usize {
        self.servers
            .iter()
            .map(|s| self.types[s.type_id.index()].core_count())
            .sum()
    }
}
