//! The device half of the preemption verifier, read from the spec alone: which devices a
//! preemptor's class may take (its kind) and how they must lie together (its claim), and the
//! best level such a request reaches on an empty server.

use std::collections::{BTreeMap, BTreeSet};

use crate::spec::cluster::TopologyPolicySpec;
use crate::spec::preemption::DeviceAlignment;
use crate::topology::{Cluster, Level, ServerType};

/// NUMA node of a core, from the type's raw layout.
pub(super) fn numa_of_core(t: &ServerType, core: u32) -> usize {
    core as usize / t.cores_per_numa
}

/// What a preemptor's class asks of its devices, read from the spec: the kind's name and the
/// claim's constraint.
pub(super) struct DeviceAsk<'a> {
    pub(super) kind: &'a str,
    pub(super) alignment: Option<DeviceAlignment>,
}

impl DeviceAsk<'_> {
    /// Whether device `g` of `t` is of the asked kind.
    fn takes(&self, cluster: &Cluster, t: &ServerType, g: usize) -> bool {
        t.device_kind
            .get(g)
            .is_some_and(|&k| cluster.kind_name(k) == self.kind)
    }

    /// The groups of devices of the kind a claim may take together, each with the NUMA nodes
    /// its devices are on (`None`: no constraint, any devices of the kind).
    fn groups(
        &self,
        cluster: &Cluster,
        t: &ServerType,
    ) -> Option<Vec<(u32, BTreeMap<usize, u32>)>> {
        let mut by_key: BTreeMap<usize, (u32, BTreeMap<usize, u32>)> = BTreeMap::new();
        for g in (0..t.gpu_count()).filter(|&g| self.takes(cluster, t, g)) {
            let key = match self.alignment? {
                DeviceAlignment::Numa | DeviceAlignment::NumaWithCores => t.gpu_numa[g],
                DeviceAlignment::PcieRoot => t.device_pcie_root[g],
            };
            let e = by_key.entry(key).or_default();
            e.0 += 1;
            *e.1.entry(t.gpu_numa[g]).or_default() += 1;
        }
        Some(by_key.into_values().collect())
    }

    /// Why `gpus` (with `cores`) break the ask, if they do.
    pub(super) fn broken_by(
        &self,
        cluster: &Cluster,
        t: &ServerType,
        gpus: &BTreeSet<u32>,
        cores: &BTreeSet<u32>,
    ) -> Option<String> {
        if let Some(&g) = gpus.iter().find(|&&g| !self.takes(cluster, t, g as usize)) {
            return Some(format!(
                "device {g} is of kind {}, the pod asks for {}",
                t.device_kind
                    .get(g as usize)
                    .map_or("(none)", |&k| cluster.kind_name(k)),
                self.kind
            ));
        }
        // A request of no device has no claim to keep together (as the planners read it).
        if gpus.is_empty() {
            return None;
        }
        let numas: BTreeSet<usize> = gpus.iter().map(|&g| t.gpu_numa[g as usize]).collect();
        let roots: BTreeSet<usize> = gpus
            .iter()
            .map(|&g| t.device_pcie_root[g as usize])
            .collect();
        match self.alignment {
            Some(DeviceAlignment::Numa) if numas.len() > 1 => Some(format!(
                "its devices span NUMA nodes {numas:?}; its claim asks for one"
            )),
            Some(DeviceAlignment::PcieRoot) if roots.len() > 1 => Some(format!(
                "its devices span {} PCIe roots; its claim asks for one",
                roots.len()
            )),
            Some(DeviceAlignment::NumaWithCores) => {
                let all: BTreeSet<usize> = numas
                    .iter()
                    .copied()
                    .chain(cores.iter().map(|&c| numa_of_core(t, c)))
                    .collect();
                (all.len() > 1).then(|| {
                    format!("its devices and cores span NUMA nodes {all:?}; its claim asks for one")
                })
            }
            _ => None,
        }
    }
}

/// The best level a request can reach on an empty server, by counting per domain; under the
/// `single-numa-node` policy only one NUMA node will do.
pub(super) fn required_level(
    cluster: &Cluster,
    t: &ServerType,
    ask: &DeviceAsk<'_>,
    (gpus, cores): (u32, u32),
) -> Option<Level> {
    let level = best_level(cluster, t, ask, gpus, cores)?;
    match t.topology_policy {
        Some(TopologyPolicySpec::SingleNumaNode) if level != Level::Numa => None,
        _ => Some(level),
    }
}

fn best_level(
    cluster: &Cluster,
    t: &ServerType,
    ask: &DeviceAsk<'_>,
    gpus: u32,
    cores: u32,
) -> Option<Level> {
    let numa_count = t.sockets * t.numa_per_socket;
    let socket_numas =
        |s: usize| -> Vec<usize> { (s * t.numa_per_socket..(s + 1) * t.numa_per_socket).collect() };
    let cores_in = |numas: &[usize]| (numas.len() * t.cores_per_numa) as u32;
    // A request of no device has nothing of a kind to find.
    let groups = if gpus == 0 {
        None
    } else {
        ask.groups(cluster, t)
    };
    if let Some(groups) = groups {
        // A constrained claim: enough of one group's devices and the cores within one domain
        // of the level (any subset of a group keeps the claim).
        let fits_at = |numas: &dyn Fn(usize) -> Vec<usize>| {
            groups.iter().any(|(_, on)| {
                on.keys().any(|&first| {
                    let domain = numas(first);
                    let n: u32 = on
                        .iter()
                        .filter(|(x, _)| domain.contains(x))
                        .map(|(_, c)| *c)
                        .sum();
                    n >= gpus && cores_in(&domain) >= cores
                })
            })
        };
        if fits_at(&|numa| vec![numa]) {
            return Some(Level::Numa);
        }
        if ask.alignment == Some(DeviceAlignment::NumaWithCores) {
            return None;
        }
        if fits_at(&|numa| socket_numas(numa / t.numa_per_socket)) {
            return Some(Level::Socket);
        }
        return fits_at(&|_| (0..numa_count).collect()).then_some(Level::CrossSocket);
    }
    let gpus_in = |numas: &[usize]| {
        (0..t.gpu_count())
            .filter(|&g| numas.contains(&t.gpu_numa[g]) && (gpus == 0 || ask.takes(cluster, t, g)))
            .count() as u32
    };
    let numa_fit = (0..numa_count).any(|n| gpus_in(&[n]) >= gpus && cores_in(&[n]) >= cores);
    if numa_fit {
        return Some(Level::Numa);
    }
    let socket_fit = (0..t.sockets).any(|s| {
        let numas = socket_numas(s);
        gpus_in(&numas) >= gpus && cores_in(&numas) >= cores
    });
    if socket_fit {
        return Some(Level::Socket);
    }
    let all: Vec<usize> = (0..numa_count).collect();
    (gpus_in(&all) >= gpus && cores_in(&all) >= cores).then_some(Level::CrossSocket)
}
