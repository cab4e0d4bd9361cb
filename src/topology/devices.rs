//! The domains a request of one device kind and claim constraint may be placed in, built
//! once per server type, kind and constraint ([`ServerType`](super::ServerType) keeps them and
//! answers the placement rules from them), and the device kinds of a cluster.

use std::collections::BTreeMap;

use super::bits::{CoreSet, GpuSet};
use super::domain::{Domain, Level};
use crate::spec::ServerTypeSpec;
use crate::spec::cluster::DEFAULT_GPU_KIND;
use crate::spec::preemption::DeviceAlignment;

/// The domains a request of one device kind and claim constraint may be placed in, per level:
/// the server's domains with the devices of other kinds taken out, and for a constrained
/// claim, one domain per device group (NUMA node or PCIe root) at each level its cores reach.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Layout {
    pub(super) numa: Vec<Domain>,
    pub(super) socket: Vec<Domain>,
    pub(super) whole: Vec<Domain>,
    /// The devices of the kind.
    pub(super) usable: GpuSet,
}

impl Layout {
    pub(super) fn at(&self, level: Level) -> &[Domain] {
        match level {
            Level::Numa => &self.numa,
            Level::Socket => &self.socket,
            Level::CrossSocket => &self.whole,
        }
    }
}

/// The claim constraints a layout is built for, in [`ServerType`]'s table order.
pub(super) const ALIGNMENTS: [Option<DeviceAlignment>; 4] = [
    None,
    Some(DeviceAlignment::Numa),
    Some(DeviceAlignment::PcieRoot),
    Some(DeviceAlignment::NumaWithCores),
];

pub(super) fn alignment_index(a: Option<DeviceAlignment>) -> usize {
    match a {
        None => 0,
        Some(DeviceAlignment::Numa) => 1,
        Some(DeviceAlignment::PcieRoot) => 2,
        Some(DeviceAlignment::NumaWithCores) => 3,
    }
}

/// The device kinds of a cluster's server types: `gpu` first, then the others by name.
pub fn device_kinds<'a>(types: impl IntoIterator<Item = &'a ServerTypeSpec>) -> Vec<String> {
    let mut others: std::collections::BTreeSet<&str> = Default::default();
    for t in types {
        for (kind, ..) in t.all_devices() {
            if kind != DEFAULT_GPU_KIND {
                others.insert(kind);
            }
        }
    }
    std::iter::once(DEFAULT_GPU_KIND)
        .chain(others)
        .map(str::to_string)
        .collect()
}

/// What a [`Layout`] is built from.
pub(super) struct Shape<'a> {
    pub(super) numa: &'a [Domain],
    pub(super) numa_per_socket: usize,
    pub(super) gpu_numa: &'a [usize],
    pub(super) device_pcie_root: &'a [usize],
}

impl Shape<'_> {
    fn socket_cores(&self, numa: usize) -> CoreSet {
        let s = numa / self.numa_per_socket;
        self.numa[s * self.numa_per_socket..(s + 1) * self.numa_per_socket]
            .iter()
            .fold(CoreSet::empty(), |acc, d| acc.or(d.cores))
    }

    pub(super) fn layout(&self, usable: GpuSet, alignment: Option<DeviceAlignment>) -> Layout {
        let all_cores = self
            .numa
            .iter()
            .fold(CoreSet::empty(), |a, d| a.or(d.cores));
        let masked = |d: &Domain| Domain {
            gpus: d.gpus.and(usable),
            cores: d.cores,
        };
        // Device groups a claim's devices must share, with the NUMA node of each.
        let groups: Vec<(GpuSet, usize)> = match alignment {
            None => {
                let numa: Vec<Domain> = self.numa.iter().map(masked).collect();
                let socket: Vec<Domain> = (0..self.numa.len() / self.numa_per_socket)
                    .map(|s| Domain {
                        gpus: numa[s * self.numa_per_socket..(s + 1) * self.numa_per_socket]
                            .iter()
                            .fold(GpuSet::empty(), |a, d| a.or(d.gpus)),
                        cores: self.socket_cores(s * self.numa_per_socket),
                    })
                    .collect();
                let whole = vec![Domain {
                    gpus: usable,
                    cores: all_cores,
                }];
                return Layout {
                    numa,
                    socket,
                    whole,
                    usable,
                };
            }
            Some(DeviceAlignment::Numa | DeviceAlignment::NumaWithCores) => self
                .numa
                .iter()
                .enumerate()
                .map(|(j, d)| (d.gpus.and(usable), j))
                .collect(),
            Some(DeviceAlignment::PcieRoot) => {
                let mut roots: BTreeMap<usize, (GpuSet, usize)> = BTreeMap::new();
                for g in usable.iter() {
                    let entry = roots
                        .entry(self.device_pcie_root[g])
                        .or_insert((GpuSet::empty(), self.gpu_numa[g]));
                    entry.0.insert(g);
                }
                roots.into_values().collect()
            }
        };
        let groups: Vec<(GpuSet, usize)> =
            groups.into_iter().filter(|(g, _)| !g.is_empty()).collect();
        // At each level, a group's devices within each domain of that level (any subset of a
        // group keeps the claim; a PCIe root may span NUMA nodes, even sockets).
        let sockets: Vec<Domain> = (0..self.numa.len() / self.numa_per_socket)
            .map(|s| Domain {
                gpus: self.numa[s * self.numa_per_socket..(s + 1) * self.numa_per_socket]
                    .iter()
                    .fold(GpuSet::empty(), |acc, d| acc.or(d.gpus)),
                cores: self.socket_cores(s * self.numa_per_socket),
            })
            .collect();
        let whole_domain = [Domain {
            gpus: usable,
            cores: all_cores,
        }];
        let at = |level: &[Domain]| -> Vec<Domain> {
            groups
                .iter()
                .flat_map(|&(gpus, _)| {
                    level.iter().filter_map(move |d| {
                        let inside = gpus.and(d.gpus);
                        (!inside.is_empty()).then_some(Domain {
                            gpus: inside,
                            cores: d.cores,
                        })
                    })
                })
                .collect()
        };
        let numa = at(self.numa);
        let (socket, whole) = if alignment == Some(DeviceAlignment::NumaWithCores) {
            (Vec::new(), Vec::new())
        } else {
            (at(&sockets), at(&whole_domain))
        };
        Layout {
            numa,
            socket,
            whole,
            usable,
        }
    }
}
