//! The vocabulary of placement shared by the layout, the allocator and the planners:
//! placement levels, device kinds, requests and domains.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bits::{CoreSet, GpuSet};
use crate::spec::Penalty;
use crate::spec::preemption::DeviceAlignment;

/// A placement level: the smallest domain that contains a set of GPUs and cores.
/// Ordered from best (`Numa`) to worst (`CrossSocket`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// All of it within one NUMA node (the best level).
    Numa,
    /// Within one socket, across several of its NUMA nodes.
    Socket,
    /// Across sockets (the worst level).
    CrossSocket,
}

impl Level {
    /// Every level, best first (the order the node allocator tries them in).
    pub const ALL: [Level; 3] = [Level::Numa, Level::Socket, Level::CrossSocket];

    /// The kebab-case name used in specs and output: `numa`, `socket`, `cross-socket`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Numa => "numa",
            Level::Socket => "socket",
            Level::CrossSocket => "cross-socket",
        }
    }

    /// The server type's measured slowdown of a placement at this level.
    pub fn penalty(self, p: &Penalty) -> f64 {
        match self {
            Level::Numa => p.numa,
            Level::Socket => p.socket,
            Level::CrossSocket => p.cross_socket,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A device kind, interned per cluster ([`Cluster::kinds`]); kind 0 is `gpu`, the whole GPUs
/// of a server type that names no kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DeviceKind(pub u16);

impl DeviceKind {
    /// The kind of whole GPUs when nothing names one (`gpu`).
    pub const GPU: DeviceKind = DeviceKind(0);
    /// A kind no server of the cluster has: nothing fits it.
    pub const ABSENT: DeviceKind = DeviceKind(u16::MAX);
}

/// A request of whole devices (GPUs, or devices of another kind) and cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Request {
    /// Devices requested (may be 0).
    pub gpus: u32,
    /// Whole CPU cores requested (may be 0).
    pub cores: u32,
    /// The kind of the devices.
    pub kind: DeviceKind,
    /// Where the devices must lie together (a DRA claim's `matchAttribute`), if anywhere.
    pub alignment: Option<DeviceAlignment>,
}

impl Request {
    /// Whole GPUs of the default kind and cores, with no claim constraint.
    pub fn plain(gpus: u32, cores: u32) -> Self {
        Request {
            gpus,
            cores,
            kind: DeviceKind::GPU,
            alignment: None,
        }
    }
}

/// The GPUs and cores of one domain (a NUMA node, a socket, or the whole server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Domain {
    /// GPU ids of the domain.
    pub gpus: GpuSet,
    /// Core ids of the domain.
    pub cores: CoreSet,
}

impl Domain {
    pub(super) fn empty() -> Self {
        Domain {
            gpus: GpuSet::empty(),
            cores: CoreSet::empty(),
        }
    }

    pub(super) fn union(self, other: &Domain) -> Domain {
        Domain {
            gpus: self.gpus.or(other.gpus),
            cores: self.cores.or(other.cores),
        }
    }
}
