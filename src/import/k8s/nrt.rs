//! NodeResourceTopology objects → a server type: the NUMA zones, grouped into sockets by
//! their costs and trimmed to equal NUMA nodes, with the cores the kubelet reserves, the use
//! the zones report and the Topology Manager policy. One object, one layout; which layout a
//! node gets is `nodes`' choice.

use std::collections::BTreeMap;

use super::conventions::{GPU_RESOURCE, TopologyPolicy};
use super::read::{Origin, parse_quantity};
use crate::import::build::DEFAULT_PENALTY;
use crate::import::error::ImportError;
use crate::import::k8s_objects::Object;
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
    let mut zones: Vec<&crate::import::k8s_objects::Zone> = nrt
        .zones
        .iter()
        .filter(|z| z.zone_type.eq_ignore_ascii_case("node"))
        .collect();
    zones.sort_by_key(|z| zone_order(&z.name));
    // Zones of one NUMA node: allocatable cores, GPUs, cores in use, GPUs in use; and the
    // cores the hardware has (capacity).
    let mut figures: Vec<(u64, u64, Option<u64>, Option<u64>)> = Vec::new();
    let mut hardware_cores: Vec<u64> = Vec::new();
    let mut names = Vec::new();
    for z in &zones {
        let mut f = (0, 0, None, None);
        let mut zone_capacity = 0;
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
                zone_capacity = capacity.max(units);
                f.0 = units;
                f.2 = used;
            } else {
                f.1 = units;
                f.3 = used;
            }
        }
        if f.0 == 0 && f.1 == 0 {
            summary.dropped("nrt_zones_without_cpu_or_gpu", 1);
            continue;
        }
        figures.push(f);
        hardware_cores.push(zone_capacity);
        names.push(z.name.clone());
    }
    if figures.is_empty() {
        return Ok(None);
    }
    let n = figures.len();
    // Sockets: NUMA nodes closer to each other than the farthest pair share a socket.
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
    let mut order: Vec<usize> = groups.values().flatten().copied().collect();
    let mut sockets = groups.len();
    if sizes.iter().any(|&s| s != sizes[0]) {
        summary.warn(format!(
            "{node}: NRT costs group NUMA nodes into sockets of unequal sizes {sizes:?}; each NUMA node is taken as its own socket"
        ));
        order = (0..n).collect();
        sockets = n;
    }
    let numa_per_socket = n / sockets;
    // The hardware's cores per NUMA node (capacity); what the kubelet reserves (capacity −
    // allocatable) is held by a system pod, so NUMA nodes stay equal.
    let min_cores = order
        .iter()
        .map(|&z| hardware_cores[z])
        .min()
        .unwrap_or(0)
        .max(1);
    let cores_per_numa = min_cores.min(MAX_CORES_PER_SERVER as u64 / n as u64).max(1);
    let dropped_cores: u64 = order
        .iter()
        .map(|&z| hardware_cores[z].saturating_sub(cores_per_numa))
        .sum();
    let reserved: Vec<u64> = order
        .iter()
        .map(|&z| cores_per_numa - figures[z].0.min(cores_per_numa))
        .collect();
    if dropped_cores > 0 {
        summary.rounded("nrt_cores_trimmed_to_equal_numa_nodes", dropped_cores);
    }
    let mut gpu_numa = Vec::new();
    for (numa, &z) in order.iter().enumerate() {
        for _ in 0..figures[z].1 {
            if gpu_numa.len() < MAX_GPUS_PER_SERVER as usize {
                gpu_numa.push(numa as i64);
            }
        }
    }
    let in_use = order
        .iter()
        .map(|&z| match figures[z] {
            (_, _, None, None) => None,
            (_, _, c, g) => Some((c.unwrap_or(0), g.unwrap_or(0))),
        })
        .collect::<Option<Vec<_>>>();
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
    Ok(Some(NrtLayout {
        reserved,
        layout: ServerTypeSpec {
            name: String::new(),
            gpu_model: gpu_model.map(str::to_string),
            gpu_memory_mib: 0,
            sockets: sockets as i64,
            numa_per_socket: numa_per_socket as i64,
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
