//! Running pods onto their nodes' ids: the kubelet's reserved cores first, then each pod on
//! the NUMA nodes that explain what the NRT objects report in use (a small exact search), else
//! where the node allocator puts it. Apart from the import because the search is its own
//! algorithm, with its own test.

use std::collections::BTreeMap;

use super::conventions::SYSTEM_RESERVED_PRIORITY;
use crate::import::build::{ClassRegistry, Ledger, QosMapping};
use crate::import::summary::ImportSummary;
use crate::spec::preemption::TopologyQos;
use crate::topology::GpuSet;

/// The kubelet's reserved cores: the lowest cores of each NUMA node, held by a pod no planner
/// may evict. Placed before any running pod.
pub(super) fn hold_reserved_cores(
    reserved: &BTreeMap<String, Vec<u64>>,
    ledger: &mut Ledger,
    classes: &mut ClassRegistry,
    summary: &mut ImportSummary,
) {
    for (node_name, per_numa) in reserved {
        let Some(node) = ledger.node_index(node_name) else {
            continue;
        };
        for (z, &r) in per_numa.iter().enumerate() {
            let r = r.min(u64::from(u32::MAX)) as u32;
            if r == 0 {
                continue;
            }
            let class = classes.class_of(
                "system-reserved",
                QosMapping {
                    priority: SYSTEM_RESERVED_PRIORITY,
                    topology_qos: TopologyQos::None,
                    preemptible: false,
                },
                0,
                r,
            );
            let (_, free_cores) = ledger.free(node);
            let d = ledger.node_type(node).numa_domain(z);
            if let Some(cores) = free_cores.and(d.cores).lowest(r) {
                ledger.take(node, (&class, None), (GpuSet::empty(), cores), None);
                summary.mapped("reserved_cores_held_by_system_pods", u64::from(r));
            }
        }
    }
}

/// Places the running pods, node by node in creation order: where the NRT figures say which
/// NUMA nodes are in use, on the NUMA nodes a small exact search finds to explain them; else
/// (and for a pod that spans NUMA nodes) by the node allocator. Warns of what the figures
/// report that no pod explains.
pub(super) fn place_running(
    to_place: &[ToPlace],
    mut in_use: BTreeMap<String, Vec<(u64, u64)>>,
    ledger: &mut Ledger,
    summary: &mut ImportSummary,
) -> Vec<String> {
    let mut not_fitting: Vec<String> = Vec::new();
    let mut zones_of: BTreeMap<usize, Vec<Option<usize>>> = BTreeMap::new();
    // Each node's requests in creation order, gathered in one pass over the pods.
    let mut requests_of: BTreeMap<usize, Vec<(u32, u32)>> = BTreeMap::new();
    for p in to_place {
        // The NRT figures count `nvidia.com/gpu`: devices of other kinds explain none of them.
        let (g, c) = p.ask;
        let g = if p.kind.is_none() { g } else { 0 };
        requests_of.entry(p.node).or_default().push((g, c));
    }
    for (node_name, budget) in &in_use {
        let Some(node) = ledger.node_index(node_name) else {
            continue;
        };
        let requests = requests_of.remove(&node).unwrap_or_default();
        // Room per NUMA node: what the reserved cores leave free.
        let t = ledger.node_type(node);
        let (free_gpus, free_cores) = ledger.free(node);
        let room: Vec<(u64, u64)> = (0..t.numa_count())
            .map(|z| {
                let d = t.numa_domain(z);
                (
                    u64::from(free_cores.and(d.cores).len()),
                    u64::from(free_gpus.and(d.gpus).len()),
                )
            })
            .collect();
        zones_of.insert(node, assign_zones(&requests, budget, &room));
    }
    let mut nth_on_node: BTreeMap<usize, usize> = BTreeMap::new();
    for pod in to_place {
        let (node, class, name) = (&pod.node, &pod.class, &pod.name);
        let (g, c) = pod.ask;
        let k = nth_on_node.entry(*node).or_default();
        let zone = zones_of.get(node).map(|z| z[*k]);
        *k += 1;
        let req = ledger.request((g, c), pod.kind.as_deref(), pod.alignment);
        let usable = ledger.node_type(*node).usable(req);
        let placed = match (&pod.held, zone) {
            (Some(held), _) => {
                let p = exactly_held(ledger, *node, held, c);
                if p.is_some() {
                    summary.mapped("running_pods_placed_on_their_dra_devices", 1);
                }
                p
            }
            (None, Some(Some(z))) => {
                let t = ledger.node_type(*node);
                let (fg, fc) = ledger.free(*node);
                let d = t.numa_domain(z);
                match (
                    fg.and(d.gpus).and(usable).lowest(g),
                    fc.and(d.cores).lowest(c),
                ) {
                    (Some(pg), Some(pc)) => {
                        summary.mapped("running_pods_placed_to_match_nrt", 1);
                        Some((pg, pc))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let placed = placed.or_else(|| {
            if pod.held.is_some() {
                return None;
            }
            let p = ledger.place_request(*node, req);
            if p.is_some() {
                summary.mapped(
                    if zone.is_some() {
                        "running_pods_spanning_nrt_zones_placed_by_the_allocator"
                    } else {
                        "running_pods_placed_by_the_allocator"
                    },
                    1,
                );
            }
            p
        });
        let Some(p) = placed else {
            summary.dropped("running_pods_that_do_not_fit", 1);
            not_fitting.push(name.clone());
            continue;
        };
        // What the pod explains of each NUMA node's reported use, wherever it landed.
        if let Some(budget) = in_use.get_mut(ledger.node_name(*node)) {
            let t = ledger.node_type(*node);
            for (z, b) in budget.iter_mut().enumerate() {
                let d = t.numa_domain(z);
                b.0 = b.0.saturating_sub(u64::from(p.1.and(d.cores).len()));
                b.1 = b.1.saturating_sub(u64::from(p.0.and(d.gpus).len()));
            }
        }
        ledger.take(*node, (class, Some(name)), p, pod.start);
    }
    if !not_fitting.is_empty() {
        summary.warn(format!(
            "{} running pod(s) do not fit their node as coplan counts whole cores and GPUs (first: {}); left out (--allow-misfit)",
            not_fitting.len(),
            not_fitting.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    // One line for all nodes: a snapshot of thousands would otherwise drown the summary.
    let mut unexplained: Vec<String> = Vec::new();
    let mut total = (0u64, 0u64);
    for (node, budget) in &in_use {
        let left: (u64, u64) = budget.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        if left != (0, 0) {
            total = (total.0 + left.0, total.1 + left.1);
            unexplained.push(format!("{node} ({} cores, {} GPUs)", left.0, left.1));
        }
    }
    if !unexplained.is_empty() {
        summary.dropped("nrt_use_no_imported_pod_explains_cores", total.0);
        summary.dropped("nrt_use_no_imported_pod_explains_gpus", total.1);
        summary.warn(format!(
            "{} node(s): their NRT objects report {} core(s) and {} GPU(s) in use that no imported pod explains (first: {})",
            unexplained.len(),
            total.0,
            total.1,
            unexplained.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    not_fitting
}

/// Exactly the devices a DRA pod's allocations give it, with its CPU claims' cores on their
/// NUMA nodes (the lowest free ones there) and any other cores near its devices; `None` when
/// one of them is unknown or taken.
fn exactly_held(
    ledger: &Ledger,
    node: usize,
    held: &Held,
    cores: u32,
) -> Option<(GpuSet, crate::topology::CoreSet)> {
    let t = ledger.node_type(node);
    let (free_gpus, free_cores) = ledger.free(node);
    let mut gpus = GpuSet::empty();
    for d in &held.devices {
        let id = (*d)?;
        if !free_gpus.contains(id) {
            return None;
        }
        gpus.insert(id);
    }
    let mut taken = crate::topology::CoreSet::empty();
    for (numa, n) in &held.cores {
        let numa = (*numa)?;
        let n = u32::try_from(*n).ok()?;
        let here = free_cores
            .minus(taken)
            .and(t.numa_domain(numa).cores)
            .lowest(n)?;
        taken = taken.or(here);
    }
    let rest = cores.checked_sub(taken.len())?;
    let more = crate::topology::pick_cores(t, gpus, free_cores.minus(taken), rest)?;
    Some((gpus, taken.or(more)))
}

/// A running pod waiting for its place.
pub(super) struct ToPlace {
    pub(super) node: usize,
    pub(super) class: String,
    /// (devices, cores).
    pub(super) ask: (u32, u32),
    pub(super) start: Option<f64>,
    pub(super) name: String,
    /// Its device kind (`None`: whole GPUs).
    pub(super) kind: Option<String>,
    /// Its claim's constraint.
    pub(super) alignment: Option<crate::spec::preemption::DeviceAlignment>,
    /// What its DRA claims' allocations hold.
    pub(super) held: Option<Held>,
}

/// The devices a running pod's DRA allocations hold: device ids on its node (`None`: a device
/// its node's type does not have), and cores per NUMA node from the CPU driver.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) devices: Vec<Option<usize>>,
    pub(super) cores: Vec<(Option<usize>, u64)>,
}

/// Search nodes the zone assignment of one node's pods may visit before it gives up.
const ZONE_SEARCH_LIMIT: usize = 200_000;

/// One NUMA node per pod (in order) such that each NUMA node's pods use exactly what its NRT
/// `available` figure leaves unexplained (`budget`: cores and GPUs in use per NUMA node) and
/// fit its `capacity`; `None` for a pod no single NUMA node can explain (the allocator places
/// it). An exact depth-first search, pods in creation order, NUMA nodes with the least left
/// over first; without an exact match within the search limit, the pods of the best partial
/// match keep their NUMA nodes.
fn assign_zones(
    requests: &[(u32, u32)],
    budget: &[(u64, u64)],
    capacity: &[(u64, u64)],
) -> Vec<Option<usize>> {
    search_zones(requests, budget, capacity, true)
}

/// [`assign_zones`]; `shortcut`: whether a search that cannot find an exact match ends once
/// its answer is settled (the tests compare it with the whole search).
fn search_zones(
    requests: &[(u32, u32)],
    budget: &[(u64, u64)],
    capacity: &[(u64, u64)],
    shortcut: bool,
) -> Vec<Option<usize>> {
    struct Search<'a> {
        requests: &'a [(u32, u32)],
        left: Vec<(u64, u64)>,
        room: Vec<(u64, u64)>,
        chosen: Vec<Option<usize>>,
        best: (usize, Vec<Option<usize>>),
        visited: usize,
        /// Pods of `chosen` with a NUMA node.
        placed: usize,
        /// One list of candidate NUMA nodes per pod, kept between visits.
        scratch: Vec<Vec<usize>>,
        /// No exact match exists: the pods together ask for fewer cores or GPUs than the
        /// figures report in use. Once every pod has a NUMA node the best partial match is
        /// final, and the search ends there with the answer the whole search would give.
        hopeless: bool,
    }
    impl Search<'_> {
        fn go(&mut self, i: usize) -> bool {
            self.visited += 1;
            if self.placed > self.best.0 {
                self.best = (self.placed, self.chosen.clone());
            }
            if self.hopeless && self.best.0 == self.requests.len() {
                return false;
            }
            if i == self.requests.len() {
                return self.left.iter().all(|&l| l == (0, 0));
            }
            if self.visited > ZONE_SEARCH_LIMIT {
                return false;
            }
            let (g, c) = (u64::from(self.requests[i].0), u64::from(self.requests[i].1));
            let mut zones = std::mem::take(&mut self.scratch[i]);
            zones.clear();
            zones.extend((0..self.left.len()).filter(|&z| {
                self.left[z].0 >= c
                    && self.left[z].1 >= g
                    && self.room[z].0 >= c
                    && self.room[z].1 >= g
            }));
            zones.sort_unstable_by_key(|&z| (self.left[z].1 - g, self.left[z].0 - c, z));
            for &z in &zones {
                self.left[z].0 -= c;
                self.left[z].1 -= g;
                self.room[z].0 -= c;
                self.room[z].1 -= g;
                self.chosen[i] = Some(z);
                self.placed += 1;
                if self.go(i + 1) {
                    self.scratch[i] = zones;
                    return true;
                }
                self.left[z].0 += c;
                self.left[z].1 += g;
                self.room[z].0 += c;
                self.room[z].1 += g;
                self.chosen[i] = None;
                self.placed -= 1;
            }
            self.scratch[i] = zones;
            // The pod spans NUMA nodes or the figures disagree: the allocator places it.
            self.go(i + 1)
        }
    }
    let mut s = Search {
        requests,
        left: budget.to_vec(),
        room: capacity.to_vec(),
        chosen: vec![None; requests.len()],
        best: (0, vec![None; requests.len()]),
        visited: 0,
        placed: 0,
        scratch: vec![Vec::new(); requests.len()],
        hopeless: {
            let asked = requests.iter().fold((0u64, 0u64), |a, r| {
                (a.0 + u64::from(r.1), a.1 + u64::from(r.0))
            });
            let in_use = budget
                .iter()
                .fold((0u64, 0u64), |a, b| (a.0 + b.0, a.1 + b.1));
            shortcut && (asked.0 < in_use.0 || asked.1 < in_use.1)
        },
    };
    if s.go(0) { s.chosen } else { s.best.1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortcut_gives_the_whole_search_s_answer() {
        // Small seeded instances, many of them with more in use than the pods ask for.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..400 {
            let zones = 1 + next(3) as usize;
            let pods = next(9) as usize;
            let requests: Vec<(u32, u32)> = (0..pods)
                .map(|_| (next(3) as u32, 1 + next(12) as u32))
                .collect();
            let budget: Vec<(u64, u64)> = (0..zones).map(|_| (next(40), next(5))).collect();
            let capacity: Vec<(u64, u64)> = budget
                .iter()
                .map(|b| (b.0 + next(8), b.1 + next(2)))
                .collect();
            assert_eq!(
                search_zones(&requests, &budget, &capacity, true),
                search_zones(&requests, &budget, &capacity, false),
                "{requests:?} {budget:?} {capacity:?}"
            );
        }
    }

    #[test]
    fn zones_are_found_that_explain_the_nrt_figures() {
        // Greedy would put the first 12-core pod on NUMA 1 (less left over) and strand the
        // two small pods; the search finds the packing that explains both NUMA nodes.
        let requests = [(1, 12), (1, 12), (2, 16), (1, 4), (1, 4)];
        let budget = [(28, 3), (20, 3)];
        let capacity = [(32, 4), (31, 4)];
        let z = assign_zones(&requests, &budget, &capacity);
        assert!(z.iter().all(Option::is_some), "{z:?}");
        let mut used = [(0u64, 0u64); 2];
        for (r, z) in requests.iter().zip(&z) {
            let z = z.unwrap();
            used[z].0 += u64::from(r.1);
            used[z].1 += u64::from(r.0);
        }
        assert_eq!(used, budget);
        // A pod no NUMA node explains is left to the allocator.
        let z = assign_zones(&[(4, 44)], &[(23, 2), (21, 2)], &[(23, 2), (24, 2)]);
        assert_eq!(z, vec![None]);
    }
}
