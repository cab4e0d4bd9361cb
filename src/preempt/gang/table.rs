//! Combining server menus over the domains of a level: for every domain from the host up to
//! the gang's required level, the best way to hold `k` pods inside it (a min-plus
//! convolution of its children's tables), and the pods per server of a chosen domain.
//! Slices: at the slice level only multiples of the slice size count, so every slice lies
//! inside one domain of that level.

use std::ops::Add;

use super::menu::{HostMenu, HostOption};
use super::request::Gang;
use crate::topology::{Fabric, FabricLevel, ServerId};

/// What a table minimises: the canonical cost (`f64`) or FlexTopo's order ([`ImpKey`]).
pub trait Key: Copy + PartialOrd + Add<Output = Self> {
    /// Nothing evicted, nothing placed.
    fn zero() -> Self;
}

impl Key for f64 {
    fn zero() -> Self {
        0.0
    }
}

/// FlexTopo's order of a victim set: fewest victims, then the lowest priority sum, then the
/// lowest placement cost.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ImpKey(pub usize, pub i64, pub f64);

impl Add for ImpKey {
    type Output = ImpKey;
    fn add(self, o: ImpKey) -> ImpKey {
        ImpKey(self.0 + o.0, self.1 + o.1, self.2 + o.2)
    }
}

impl Key for ImpKey {
    fn zero() -> Self {
        ImpKey(0, 0, 0.0)
    }
}

/// Per level from the host up to the required level: per domain, `best[k]` for `k` pods.
pub struct Tables<K> {
    /// Index 0 is the host level, the last the required level.
    levels: Vec<(FabricLevel, Vec<Vec<Option<K>>>)>,
    /// Per level (same index): each domain's children at the level inside it.
    children: Vec<Vec<Vec<u32>>>,
    pods: u32,
}

/// One domain able to hold the gang, with its table's value for all of its pods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fitting<K> {
    /// Its level.
    pub level: FabricLevel,
    /// Its index among the domains of that level.
    pub domain: u32,
    /// The best value of holding every pod inside it.
    pub value: K,
}

impl<K: Key> Tables<K> {
    /// Builds every table of `gang` from the server menus (indexed by server id); `pick`
    /// reads a server option's value.
    pub fn build(
        fabric: &Fabric,
        gang: &Gang,
        menus: &[HostMenu],
        pick: &dyn Fn(&HostMenu, u32) -> Option<K>,
    ) -> Tables<K> {
        let pods = gang.pods;
        let host = fabric.host();
        let slice = gang.slice;
        let masked = |level: FabricLevel, mut t: Vec<Option<K>>| {
            if let Some((size, at)) = slice
                && at == level
            {
                for (k, v) in t.iter_mut().enumerate() {
                    if !(k as u32).is_multiple_of(size) {
                        *v = None;
                    }
                }
            }
            t
        };
        let host_tables: Vec<Vec<Option<K>>> = menus
            .iter()
            .map(|m| masked(host, (0..=pods.min(m.most())).map(|j| pick(m, j)).collect()))
            .collect();
        let mut levels = vec![(host, host_tables)];
        let mut children = vec![Vec::new()];
        let mut level = host;
        while level > gang.required {
            let up = FabricLevel(level.0 - 1);
            let mut kids: Vec<Vec<u32>> = vec![Vec::new(); fabric.domains_at(up).len()];
            for (c, d) in fabric.domains_at(level).iter().enumerate() {
                if let Some(first) = d.servers.first() {
                    kids[fabric.domain_of(up, *first) as usize].push(c as u32);
                }
            }
            let below = &levels[levels.len() - 1].1;
            let tables = kids
                .iter()
                .map(|ks| masked(up, convolve(ks.iter().map(|&c| &below[c as usize]), pods).0))
                .collect();
            levels.push((up, tables));
            children.push(kids);
            level = up;
        }
        Tables {
            levels,
            children,
            pods,
        }
    }

    /// Every domain, host to required level, that holds all the gang's pods.
    pub fn fitting(&self) -> Vec<Fitting<K>> {
        let mut out = Vec::new();
        for (level, tables) in &self.levels {
            for (d, t) in tables.iter().enumerate() {
                if let Some(Some(v)) = t.get(self.pods as usize) {
                    out.push(Fitting {
                        level: *level,
                        domain: d as u32,
                        value: *v,
                    });
                }
            }
        }
        out
    }

    /// The pods per server of the best way to hold every pod in `fitting`'s domain.
    pub fn pods_per_server(&self, fabric: &Fabric, fitting: &Fitting<K>) -> Vec<(ServerId, u32)> {
        let mut out = Vec::new();
        let Some(start) = self.levels.iter().position(|(l, _)| *l == fitting.level) else {
            return out;
        };
        self.descend(fabric, start, fitting.domain, self.pods, &mut out);
        out.sort_by_key(|(s, _)| *s);
        out
    }

    fn descend(
        &self,
        fabric: &Fabric,
        at: usize,
        domain: u32,
        k: u32,
        out: &mut Vec<(ServerId, u32)>,
    ) {
        if k == 0 {
            return;
        }
        if at == 0 {
            let level = self.levels[0].0;
            if let Some(server) = fabric.domains_at(level)[domain as usize].servers.first() {
                out.push((*server, k));
            }
            return;
        }
        let kids = &self.children[at][domain as usize];
        let below = &self.levels[at - 1].1;
        let (_, choices) = convolve(kids.iter().map(|&c| &below[c as usize]), self.pods);
        // Walk the choices back from the last child: each says how many pods it holds.
        let mut left = k as usize;
        for (i, &c) in kids.iter().enumerate().rev() {
            let here = choices[i][left];
            self.descend(fabric, at - 1, c, here, out);
            left -= here as usize;
        }
    }
}

/// The min-plus convolution of `tables` up to `pods` pods, with, per table and total, how
/// many pods that table holds in the best combination of it and those before it.
fn convolve<'t, K: Key + 't>(
    tables: impl Iterator<Item = &'t Vec<Option<K>>>,
    pods: u32,
) -> (Vec<Option<K>>, Vec<Vec<u32>>) {
    let width = pods as usize + 1;
    let mut best: Vec<Option<K>> = vec![None; width];
    best[0] = Some(K::zero());
    let mut choices = Vec::new();
    for t in tables {
        let mut next: Vec<Option<K>> = vec![None; width];
        let mut choice = vec![0u32; width];
        for (have, value) in best.iter().enumerate() {
            let Some(value) = value else { continue };
            for (j, option) in t.iter().enumerate().take(width - have) {
                let Some(option) = option else { continue };
                let total = *value + *option;
                let slot = &mut next[have + j];
                if slot.is_none_or(|s| total < s) {
                    *slot = Some(total);
                    choice[have + j] = j as u32;
                }
            }
        }
        best = next;
        choices.push(choice);
    }
    (best, choices)
}

/// The canonical cost of a server option (the optimum's tables).
pub fn cheapest(menu: &HostMenu, j: u32) -> Option<f64> {
    menu.cheapest
        .get(j as usize)
        .and_then(|o| o.as_ref())
        .map(HostOption::cost)
}

/// FlexTopo's key of a server option.
pub fn smallest(menu: &HostMenu, j: u32) -> Option<ImpKey> {
    menu.smallest
        .get(j as usize)
        .and_then(|o| o.as_ref())
        .map(|o| ImpKey(o.victims.len(), o.priority_sum, o.placement_cost))
}
