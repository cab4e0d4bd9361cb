//! Devices of several kinds on a server type: the device kinds of a cluster, the domains a
//! request of one kind and claim constraint may be placed in (built once per type, kind and
//! constraint), and the device half of every placement rule (which devices a request may
//! take, whether free devices hold it, whether taken ones keep its claim).

use std::collections::BTreeMap;

use super::{CoreSet, DeviceKind, Domain, GpuSet, Level, Request, ServerType};
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
    fn at(&self, level: Level) -> &[Domain] {
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

fn alignment_index(a: Option<DeviceAlignment>) -> usize {
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

impl ServerType {
    /// Whether `req` is served by the server's own domains: it takes no device, or a plain
    /// GPU request on a type whose devices are all whole GPUs of the default kind.
    fn plain_on_this_type(&self, req: Request) -> bool {
        req.gpus == 0
            || (self.only_default_gpus && req.kind == DeviceKind::GPU && req.alignment.is_none())
    }

    fn layout(&self, req: Request) -> &Layout {
        // A request of no device has nothing to align: any domain of the server will do.
        let (kind, alignment) = if req.gpus == 0 {
            (DeviceKind::GPU, None)
        } else {
            (req.kind, req.alignment)
        };
        self.layouts
            .get(kind.0 as usize)
            .unwrap_or(&self.absent)
            .get(alignment_index(alignment))
            .unwrap_or(&self.absent[0])
    }

    /// The domains `req` may be placed in at `level`: [`ServerType::domains`] with devices of
    /// other kinds left out, split by the claim's constraint.
    pub fn domains_for(&self, req: Request, level: Level) -> &[Domain] {
        if self.plain_on_this_type(req) {
            return self.domains(level);
        }
        self.layout(req).at(level)
    }

    /// The devices of `req`'s kind on this type (every device, for a request of none).
    pub fn usable(&self, req: Request) -> GpuSet {
        if req.gpus == 0 {
            return self.whole.gpus;
        }
        self.layout(req).usable
    }

    /// Whether the free devices `free` hold `req`'s devices as its claim demands (of its
    /// kind, and for a constrained claim, in one device group), cores aside: the device half
    /// of a scheduler's filter.
    pub fn devices_fit(&self, req: Request, free: GpuSet) -> bool {
        if req.gpus == 0 {
            return true;
        }
        if self.plain_on_this_type(req) {
            return free.and(self.whole.gpus).len() >= req.gpus;
        }
        let layout = self.layout(req);
        match req.alignment {
            None => free.and(layout.usable).len() >= req.gpus,
            Some(_) => layout
                .numa
                .iter()
                .any(|d| free.and(d.gpus).len() >= req.gpus),
        }
    }

    /// Whether a claim whose devices and cores must share a NUMA node finds one NUMA node
    /// with enough of both free (always true for any other request: its cores go anywhere).
    pub fn cores_fit_claim(&self, req: Request, gpus: GpuSet, cores: CoreSet) -> bool {
        if req.gpus == 0 || req.alignment != Some(DeviceAlignment::NumaWithCores) {
            return true;
        }
        self.layout(req)
            .numa
            .iter()
            .any(|d| gpus.and(d.gpus).len() >= req.gpus && cores.and(d.cores).len() >= req.cores)
    }

    /// The `free` devices of `req`'s kind in the first device group its claim accepts (the
    /// whole server when it has no constraint) that holds enough of them, if any.
    pub fn free_group(&self, req: Request, free: GpuSet) -> Option<GpuSet> {
        let groups = if req.alignment.is_some() {
            Level::Numa
        } else {
            Level::CrossSocket
        };
        self.domains_for(req, groups)
            .iter()
            .map(|group| free.and(group.gpus))
            .find(|g| g.len() >= req.gpus)
    }

    /// The lowest `req.gpus` devices of [`ServerType::free_group`].
    pub fn pick_devices(&self, req: Request, free: GpuSet) -> Option<GpuSet> {
        self.free_group(req, free)?.lowest(req.gpus)
    }

    /// Whether `gpus` are of `req`'s kind and lie together as its claim demands.
    pub fn device_rule_holds(&self, req: Request, gpus: GpuSet) -> bool {
        if gpus.is_empty() {
            return true;
        }
        gpus.is_subset(&self.usable(req))
            && self
                .domains_for(req, Level::CrossSocket)
                .iter()
                .chain(self.domains_for(req, Level::Numa))
                .any(|d| gpus.is_subset(&d.gpus))
    }

    /// The devices of kind `kind` on this type.
    pub fn devices_of(&self, kind: DeviceKind) -> GpuSet {
        self.layouts
            .get(kind.0 as usize)
            .map_or(GpuSet::empty(), |l| l[0].usable)
    }
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
