//! NodeResourceTopology objects → a server type: the NUMA zones, grouped into sockets by
//! their costs and trimmed to equal NUMA nodes, with the cores the kubelet reserves, the use
//! the zones report and the Topology Manager policy. One object, one layout; which layout a
//! node gets is `nodes`' choice.

use std::collections::BTreeMap;

use super::conventions::{GPU_RESOURCE, TopologyPolicy};
use super::read::{Origin, parse_quantity};
use crate::import::build::DEFAULT_PENALTY;
use crate::import::error::ImportError;
use crate::import::k8s_objects::{Object, Zone};
use crate::import::quantity::floor_units;
use crate::import::summary::ImportSummary;
use crate::spec::ServerTypeSpec;
use crate::spec::cluster::TopologyScopeSpec;
use crate::spec::validate::{MAX_CORES_PER_SERVER, MAX_GPUS_PER_SERVER};

/// Per NUMA node (socket-major): cores, GPUs, and the cores and GPUs in use per `available`.
#[derive(Debug, Clone)]
pub(super) struct NrtLayout {
    pub(super) layout: ServerTypeSpec,
    /// NUMA index → (cores in use, GPUs in use) per `allocatable − available`, when given.
    pub(super) in_use: Option<Vec<(u64, u64)>>,
    pub(super) policy: Option<TopologyPolicy>,
    /// NUMA index → cores the kubelet keeps for the system (capacity − allocatable).
    pub(super) reserved: Vec<u64>,
}

/// Sorts NRT zone names numerically where they end in a number (`node-2` before `node-10`).
fn zone_order(name: &str) -> (u64, String) {
    let digits: String = name
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (digits.parse().unwrap_or(u64::MAX), name.to_string())
}

/// The NUMA layout an NRT object reports, or `None` when it has no NUMA zones.
pub(super) fn nrt_layout(
    nrt: &Object,
    origin: &Origin,
    doc_line: usize,
    gpu_model: Option<&str>,
    node: &str,
    summary: &mut ImportSummary,
) -> Result<Option<NrtLayout>, ImportError> {
    let mut zones: Vec<&Zone> = nrt
        .zones
        .iter()
        .filter(|z| z.zone_type.eq_ignore_ascii_case("node"))
        .collect();
    zones.sort_by_key(|z| zone_order(&z.name));
    let mut figures: Vec<ZoneFigures> = Vec::new();
    let mut names = Vec::new();
    for z in &zones {
        let f = zone_figures(z, origin, doc_line, summary)?;
        if f.cores == 0 && f.gpus == 0 {
            summary.dropped("nrt_zones_without_cpu_or_gpu", 1);
            continue;
        }
        figures.push(f);
        names.push(z.name.clone());
    }
    if figures.is_empty() {
        return Ok(None);
    }
    let n = figures.len();
    let (order, sockets) = socket_order(&zones, &names, node, summary);
    let (cores_per_numa, reserved) = equal_numa_cores(&figures, &order, summary);
    let mut gpu_numa = Vec::new();
    for (numa, &z) in order.iter().enumerate() {
        for _ in 0..figures[z].gpus {
            if gpu_numa.len() < MAX_GPUS_PER_SERVER as usize {
                gpu_numa.push(numa as i64);
            }
        }
    }
    let in_use = order
        .iter()
        .map(|&z| match (figures[z].cores_used, figures[z].gpus_used) {
            (None, None) => None,
            (c, g) => Some((c.unwrap_or(0), g.unwrap_or(0))),
        })
        .collect::<Option<Vec<_>>>();
    let (policy, scope) = topology_manager(nrt);
    Ok(Some(NrtLayout {
        reserved,
        layout: ServerTypeSpec {
            name: String::new(),
            gpu_model: gpu_model.map(str::to_string),
            gpu_memory_mib: 0,
            sockets: sockets as i64,
            numa_per_socket: (n / sockets) as i64,
            cores_per_numa: cores_per_numa as i64,
            core_group_size: None,
            gpu_numa,
            penalty: DEFAULT_PENALTY,
            topology_policy: policy.map(TopologyPolicy::to_spec),
            topology_scope: scope,
            gpu_resource: None,
            gpu_pcie_root: Vec::new(),
            devices: Vec::new(),
        },
        in_use,
        policy,
    }))
}

/// One NUMA zone's figures.
struct ZoneFigures {
    /// Allocatable cores.
    cores: u64,
    /// Allocatable GPUs.
    gpus: u64,
    /// Cores in use (`allocatable − available`), when given.
    cores_used: Option<u64>,
    /// GPUs in use, when given.
    gpus_used: Option<u64>,
    /// The cores the hardware has (capacity).
    hardware_cores: u64,
}

/// The CPU and GPU figures of one zone (other resources are not read).
fn zone_figures(
    z: &Zone,
    origin: &Origin,
    doc_line: usize,
    summary: &mut ImportSummary,
) -> Result<ZoneFigures, ImportError> {
    let mut f = ZoneFigures {
        cores: 0,
        gpus: 0,
        cores_used: None,
        gpus_used: None,
        hardware_cores: 0,
    };
    for r in &z.resources {
        let is_cpu = r.name == "cpu";
        if !is_cpu && r.name != GPU_RESOURCE {
            continue;
        }
        let what = format!("zone `{}` resource `{}`", z.name, r.name);
        let total = match r.allocatable.as_ref().or(r.capacity.as_ref()) {
            Some(q) => parse_quantity(origin, doc_line, q, &what)?,
            None => 0.0,
        };
        let (units, rounded) = floor_units(total);
        if rounded {
            summary.rounded("nrt_zone_fractional_resources", 1);
        }
        let used = match &r.available {
            Some(q) => {
                let available = parse_quantity(origin, doc_line, q, &what)?;
                Some(floor_units((total - available).max(0.0)).0.min(units))
            }
            None => None,
        };
        if is_cpu {
            let capacity = match &r.capacity {
                Some(q) => floor_units(parse_quantity(origin, doc_line, q, &what)?).0,
                None => units,
            };
            f.hardware_cores = capacity.max(units);
            f.cores = units;
            f.cores_used = used;
        } else {
            f.gpus = units;
            f.gpus_used = used;
        }
    }
    Ok(f)
}

/// The NUMA nodes (indices into `names`) in socket-major order, and how many sockets: NUMA
/// nodes closer to each other than the farthest pair share a socket; sockets of unequal
/// sizes make each NUMA node its own.
fn socket_order(
    zones: &[&Zone],
    names: &[String],
    node: &str,
    summary: &mut ImportSummary,
) -> (Vec<usize>, usize) {
    let n = names.len();
    let cost = |a: usize, b: usize| -> Option<i64> {
        zones
            .iter()
            .find(|z| z.name == names[a])
            .and_then(|z| z.costs.iter().find(|c| c.name == names[b]))
            .map(|c| c.value)
    };
    let mut farthest = None::<i64>;
    for a in 0..n {
        for b in 0..n {
            if a != b
                && let Some(c) = cost(a, b)
            {
                farthest = Some(farthest.map_or(c, |f: i64| f.max(c)));
            }
        }
    }
    let mut socket_of: Vec<usize> = (0..n).collect();
    if let Some(far) = farthest {
        for a in 0..n {
            for b in 0..a {
                if cost(a, b).or(cost(b, a)).is_some_and(|c| c < far) {
                    let (from, to) = (socket_of[a], socket_of[b]);
                    for s in socket_of.iter_mut() {
                        if *s == from {
                            *s = to;
                        }
                    }
                }
            }
        }
    } else {
        summary.defaulted("nrt_without_costs_one_socket_per_numa", 1);
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (numa, s) in socket_of.iter().enumerate() {
        groups.entry(*s).or_default().push(numa);
    }
    let sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    if sizes.iter().any(|&s| s != sizes[0]) {
        summary.warn(format!(
            "{node}: NRT costs group NUMA nodes into sockets of unequal sizes {sizes:?}; each NUMA node is taken as its own socket"
        ));
        return ((0..n).collect(), n);
    }
    (groups.values().flatten().copied().collect(), groups.len())
}

/// Cores per NUMA node, equal on all: the hardware's fewest (capacity); and per NUMA node (in
/// `order`) the cores the kubelet reserves (capacity − allocatable), held by a system pod.
fn equal_numa_cores(
    figures: &[ZoneFigures],
    order: &[usize],
    summary: &mut ImportSummary,
) -> (u64, Vec<u64>) {
    let min_cores = order
        .iter()
        .map(|&z| figures[z].hardware_cores)
        .min()
        .unwrap_or(0)
        .max(1);
    let cores_per_numa = min_cores
        .min(MAX_CORES_PER_SERVER as u64 / figures.len() as u64)
        .max(1);
    let dropped_cores: u64 = order
        .iter()
        .map(|&z| figures[z].hardware_cores.saturating_sub(cores_per_numa))
        .sum();
    let reserved: Vec<u64> = order
        .iter()
        .map(|&z| cores_per_numa - figures[z].cores.min(cores_per_numa))
        .collect();
    if dropped_cores > 0 {
        summary.rounded("nrt_cores_trimmed_to_equal_numa_nodes", dropped_cores);
    }
    (cores_per_numa, reserved)
}

/// The Topology Manager's policy and scope the NRT object reports (its attributes first,
/// then its `topologyPolicies`).
fn topology_manager(nrt: &Object) -> (Option<TopologyPolicy>, Option<TopologyScopeSpec>) {
    let mut policy = None;
    let mut scope = None;
    for a in &nrt.attributes {
        if a.name == "topologyManagerPolicy" {
            policy = a.value.as_str().and_then(TopologyPolicy::parse);
        }
        if a.name == "topologyManagerScope" {
            scope = match a.value.as_str() {
                Some("pod") => Some(TopologyScopeSpec::Pod),
                Some("container") => Some(TopologyScopeSpec::Container),
                _ => None,
            };
        }
    }
    if policy.is_none() {
        policy = nrt
            .topology_policies
            .iter()
            .find_map(|p| TopologyPolicy::parse(p));
    }
    (policy, scope)
}
