//! The node allocator (DESIGN §4): where on one server a request goes, and the levels it
//! can reach there.

use super::bits::{CoreSet, GpuSet};
use super::domain::{Domain, Level, Request};
use super::server_type::ServerType;
use crate::spec::cluster::TopologyPolicySpec;

/// Where the node allocator put a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// GPU ids taken.
    pub gpus: GpuSet,
    /// Core ids taken.
    pub cores: CoreSet,
    /// The smallest domain containing all of them.
    pub level: Level,
}

/// The node allocator (DESIGN §4): place `req` on the free GPUs and cores of a server at the
/// best level it can reach. Within a level, the domain with the fewest free resources left
/// over wins (GPUs first, then cores), ties by lowest index. Inside the domain it takes the
/// lowest free GPU ids, then cores on those GPUs' NUMA nodes first, then the lowest other ids.
pub fn place(
    t: &ServerType,
    free_gpus: GpuSet,
    free_cores: CoreSet,
    req: Request,
) -> Option<Placement> {
    for level in Level::ALL {
        let mut best: Option<(u32, u32, &Domain)> = None;
        for d in t.domains_for(req, level) {
            let g = free_gpus.and(d.gpus).len();
            let c = free_cores.and(d.cores).len();
            if g < req.gpus || c < req.cores {
                continue;
            }
            let left = (g - req.gpus, c - req.cores);
            if best.is_none_or(|(bg, bc, _)| left < (bg, bc)) {
                best = Some((left.0, left.1, d));
            }
        }
        if let Some((_, _, d)) = best {
            let gpus = free_gpus.and(d.gpus).lowest(req.gpus)?;
            let cores = pick_cores(t, gpus, free_cores.and(d.cores), req.cores)?;
            return Some(Placement {
                gpus,
                cores,
                level: t.level_of(gpus, cores),
            });
        }
    }
    None
}

/// Picks `n` of the `free` cores for a pod holding `gpus`: the lowest ids on those GPUs'
/// NUMA nodes first, then the lowest others; `None` when fewer than `n` are free.
pub fn pick_cores(t: &ServerType, gpus: GpuSet, free: CoreSet, n: u32) -> Option<CoreSet> {
    let near = gpus
        .iter()
        .map(|g| t.numa_domain(t.gpu_numa[g]).cores)
        .fold(CoreSet::empty(), CoreSet::or)
        .and(free);
    let first = near.lowest(n.min(near.len()))?;
    let rest = free.minus(first).lowest(n - first.len())?;
    Some(first.or(rest))
}

impl ServerType {
    /// The smallest domain kind that could hold `req` on an empty server of this type, or
    /// `None` when the request exceeds the server. Under the `single-numa-node` policy only a
    /// single NUMA node will do: a request no NUMA node holds has no level the kubelet admits.
    pub fn required_level(&self, req: Request) -> Option<Level> {
        let whole = self.whole();
        let level = place(self, whole.gpus, whole.cores, req).map(|p| p.level)?;
        match self.topology_policy {
            Some(TopologyPolicySpec::SingleNumaNode) if level != Level::Numa => None,
            _ => Some(level),
        }
    }

    /// Whether `req` fits an empty server of this type at all, aligned or not.
    pub fn fits_empty(&self, req: Request) -> bool {
        let whole = self.whole();
        place(self, whole.gpus, whole.cores, req).is_some()
    }
}
