//! The levels above the server as the printers show them (DESIGN §12.3): the domains of each
//! level nested in those of the level outside it, with their servers and GPUs. Every
//! `topology` format walks the same tree, in the same order: domains in order of their first
//! server, as the fabric keeps them.

use crate::topology::{Cluster, Fabric, FabricDomain, FabricLevel, ServerId};

/// The domains of every level and, for each, the domains of the next level inside it.
pub struct DomainTree<'a> {
    /// The cluster's fabric.
    pub fabric: &'a Fabric,
    /// Per level but the host, per domain of that level, the indices of the domains of the
    /// next level (one step inwards) inside it, in their order at that level.
    children: Vec<Vec<Vec<usize>>>,
}

impl<'a> DomainTree<'a> {
    /// The tree of `fabric`: each domain under the domain of the level outside it that holds
    /// its first server (a validated spec's domains nest, so that one holds all of them).
    pub fn of(fabric: &'a Fabric) -> Self {
        let depth = fabric.levels.len();
        let mut children = Vec::with_capacity(depth.saturating_sub(1));
        for outer in 0..depth.saturating_sub(1) {
            let outer_level = FabricLevel(outer as u16);
            let mut of_outer = vec![Vec::new(); fabric.domains_at(outer_level).len()];
            let inner_level = FabricLevel(outer as u16 + 1);
            for (d, domain) in fabric.domains_at(inner_level).iter().enumerate() {
                let Some(first) = domain.servers.first() else {
                    continue;
                };
                let parent = fabric.domain_of(outer_level, *first) as usize;
                if let Some(list) = of_outer.get_mut(parent) {
                    list.push(d);
                }
            }
            children.push(of_outer);
        }
        DomainTree { fabric, children }
    }

    /// The domains of the next level inside `domain` of `level` (none at the host level).
    pub fn children(&self, level: FabricLevel, domain: usize) -> &[usize] {
        self.children
            .get(level.index())
            .and_then(|l| l.get(domain))
            .map_or(&[], Vec::as_slice)
    }

    /// Domain `index` of `level`.
    pub fn domain(&self, level: FabricLevel, index: usize) -> Option<&'a FabricDomain> {
        self.fabric.domains_at(level).get(index)
    }

    /// The name of the domain of the level outside `level` that holds `domain` (`None` at
    /// the cluster level).
    pub fn parent_name(&self, level: FabricLevel, domain: &FabricDomain) -> Option<&'a str> {
        let outer = FabricLevel(level.0.checked_sub(1)?);
        let first = domain.servers.first()?;
        let parent = self.fabric.domain_of(outer, *first) as usize;
        self.fabric
            .domains_at(outer)
            .get(parent)
            .map(|d| d.name.as_str())
    }

    /// The named levels (between the cluster and the host), outermost first.
    pub fn named_levels(&self) -> impl Iterator<Item = FabricLevel> + use<> {
        (1..self.fabric.host().0).map(FabricLevel)
    }

    /// The outermost named level (the host where there is none).
    pub fn outermost(&self) -> FabricLevel {
        FabricLevel(1.min(self.fabric.host().0))
    }
}

/// The GPUs of `servers`.
pub fn gpus_of(cluster: &Cluster, servers: &[ServerId]) -> usize {
    servers
        .iter()
        .map(|s| cluster.type_of(*s).gpu_count())
        .sum()
}

/// A penalty as the outputs print it: one decimal at least (`1.0`, `1.05`, `1.4`).
pub fn penalty_text(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// `n` and the noun, plural unless one (`1 server`, `4 servers`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
