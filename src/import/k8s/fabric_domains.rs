//! Each server's domain at every level above it, and what the cluster spec says of them:
//! `[topology] levels` and `labels` (a level read from a node label keeps reading it), and a
//! `domain` entry on the servers whose domain no label gives — a HyperNode's, an NVLink
//! domain of a node without a clique, or a name made unique by its parent's (a rack name
//! reused under two blocks becomes `<block>-<rack>`).

use std::collections::{BTreeMap, BTreeSet};

use super::fabric_levels::{CLIQUE_LABEL, HOSTNAME_LABEL, Level, Source, levels_of};
use super::hypernodes::{TierPlaces, hypernode_places};
use super::read::{NodeObject, Snapshot, at_object};
use crate::import::error::ImportError;
use crate::import::summary::ImportSummary;
use crate::spec::ClusterSpec;
use crate::spec::cluster::ServerRulesSpec;
use crate::spec::fabric::{FabricSpec, HOST_LEVEL};

/// The levels of a snapshot and where its servers sit in them.
#[derive(Debug, Default)]
pub(super) struct Fabric {
    levels: Vec<Level>,
    /// What gave the levels, for messages.
    from: String,
    /// Per server: the `domain` entries it needs.
    domains: BTreeMap<String, BTreeMap<String, String>>,
}

impl Fabric {
    /// The level whose domains the node label `key` names: `kubernetes.io/hostname` is the
    /// host.
    pub(super) fn level_of_label(&self, key: &str) -> Option<&str> {
        if key == HOSTNAME_LABEL {
            return Some(HOST_LEVEL);
        }
        self.levels
            .iter()
            .find(|l| matches!(&l.source, Source::Label(k) if k == key))
            .map(|l| l.name.as_str())
    }

    /// The widest level a Volcano gang may spread across under `highestTierAllowed = n`: the
    /// level of the highest tier up to `n`, the host when there is none; `None` when no level
    /// comes from HyperNodes.
    pub(super) fn tier_level(&self, n: i64) -> Option<&str> {
        let tiers: Vec<(i64, &str)> = self
            .levels
            .iter()
            .filter_map(|l| match l.source {
                Source::Tier(t) => Some((t, l.name.as_str())),
                Source::Label(_) => None,
            })
            .collect();
        if tiers.is_empty() {
            return None;
        }
        Some(
            tiers
                .iter()
                .filter(|(t, _)| *t <= n)
                .max_by_key(|(t, _)| *t)
                .map_or(HOST_LEVEL, |(_, name)| name),
        )
    }

    /// The outermost and the innermost tier, when levels come from HyperNodes.
    pub(super) fn tier_range(&self) -> Option<(i64, i64)> {
        let tiers = self.levels.iter().filter_map(|l| match l.source {
            Source::Tier(t) => Some(t),
            Source::Label(_) => None,
        });
        Some((tiers.clone().max()?, tiers.min()?))
    }

    /// Every level, `cluster` first and `host` last: a smaller index is wider.
    pub(super) fn all_levels(&self) -> Vec<&str> {
        std::iter::once(crate::spec::fabric::CLUSTER_LEVEL)
            .chain(self.levels.iter().map(|l| l.name.as_str()))
            .chain(std::iter::once(HOST_LEVEL))
            .collect()
    }

    /// The levels and the labels that name them, for a message.
    pub(super) fn described(&self) -> String {
        let labelled: Vec<String> = self
            .levels
            .iter()
            .filter_map(|l| match &l.source {
                Source::Label(k) => Some(format!("{k} ({})", l.name)),
                Source::Tier(_) => None,
            })
            .chain(std::iter::once(format!("{HOSTNAME_LABEL} ({HOST_LEVEL})")))
            .collect();
        if self.levels.is_empty() {
            format!(
                "the snapshot has no levels above the server; {}",
                labelled.join(", ")
            )
        } else {
            format!("levels from {}: {}", self.from, labelled.join(", "))
        }
    }

    /// Writes `[topology]` and the servers' `domain` entries into `cluster`.
    pub(super) fn apply(self, cluster: &mut ClusterSpec) {
        if self.levels.is_empty() {
            return;
        }
        cluster.topology = Some(FabricSpec {
            levels: self.levels.iter().map(|l| l.name.clone()).collect(),
            labels: self
                .levels
                .iter()
                .filter_map(|l| match &l.source {
                    Source::Label(k) => Some((l.name.clone(), k.clone())),
                    Source::Tier(_) => None,
                })
                .collect(),
            penalty: BTreeMap::new(),
        });
        let index: BTreeMap<String, usize> = cluster
            .server
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        for (name, domain) in self.domains {
            match index.get(&name) {
                Some(&i) => cluster.server[i].domain = domain,
                None => cluster.server.push(ServerRulesSpec {
                    name,
                    labels: BTreeMap::new(),
                    taints: Vec::new(),
                    unschedulable: false,
                    ready: true,
                    domain,
                }),
            }
        }
        cluster.server.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// The levels of the snapshot and the domain of each of `servers` at each.
pub(super) fn read_fabric(
    snapshot: &Snapshot,
    servers: &[&NodeObject],
    summary: &mut ImportSummary,
) -> Result<Fabric, ImportError> {
    let found = levels_of(&snapshot.fabric, servers, summary)?;
    let (levels, from) = (found.levels, found.from);
    if levels.is_empty() {
        return Ok(Fabric::default());
    }
    let places = if levels.iter().any(|l| matches!(l.source, Source::Tier(_))) {
        hypernode_places(&snapshot.fabric.hypernodes, servers, summary)?
    } else {
        TierPlaces::new()
    };
    // Per server and level: the domain, and whether no label gives it.
    let mut named: Vec<Vec<(String, bool)>> = Vec::with_capacity(servers.len());
    for node in servers {
        let mut row = Vec::with_capacity(levels.len());
        for level in &levels {
            row.push(raw_domain(node, level, &places, &from, summary)?);
        }
        named.push(row);
    }
    check_clique_names(servers, &levels, &named)?;
    for l in 1..levels.len() {
        prefix_reused(l, &levels, &mut named, summary);
        check_nested(l, &levels, servers, &named)?;
    }
    summary.mapped("topology_levels", levels.len() as u64);
    for level in &levels {
        let source = match &level.source {
            Source::Label(k) => format!("label {k}"),
            Source::Tier(t) => format!("HyperNodes of tier {t}"),
        };
        summary.list("topology_levels", format!("{} ({source})", level.name));
    }
    let mut domains = BTreeMap::new();
    for (node, row) in servers.iter().zip(&named) {
        let own: BTreeMap<String, String> = levels
            .iter()
            .zip(row)
            .filter(|(_, (_, explicit))| *explicit)
            .map(|(level, (domain, _))| (level.name.clone(), domain.clone()))
            .collect();
        if !own.is_empty() {
            domains.insert(node.name.clone(), own);
        }
    }
    summary.mapped("servers_with_domain_entries", domains.len() as u64);
    Ok(Fabric {
        levels,
        from,
        domains,
    })
}

/// A server's domain at `level` as the snapshot gives it, and whether no label gives it (a
/// HyperNode's, or the node's own NVLink domain).
fn raw_domain(
    node: &NodeObject,
    level: &Level,
    places: &TierPlaces,
    from: &str,
    summary: &mut ImportSummary,
) -> Result<(String, bool), ImportError> {
    match &level.source {
        Source::Label(key) => match node.object.metadata.labels.get(key) {
            Some(v) if !v.trim().is_empty() => Ok((v.to_string(), false)),
            _ if key == CLIQUE_LABEL => {
                summary.defaulted("nodes_without_a_clique_in_an_nvlink_domain_of_their_own", 1);
                summary.list("nodes_in_an_nvlink_domain_of_their_own", node.name.clone());
                Ok((node.name.clone(), true))
            }
            _ => Err(at_object(
                &node.origin,
                format!(
                    "node `{}` has no label `{key}`, which level `{}` reads (levels from {from})",
                    node.name, level.name
                ),
            )
            .with(
                "no label for a level",
                "every node sits in one domain per level: label it, or leave it out of the export",
            )),
        },
        Source::Tier(t) => match places.get(&node.name).and_then(|p| p.get(t)) {
            Some(h) => Ok((h.clone(), true)),
            None => Err(at_object(
                &node.origin,
                format!(
                    "node `{}` is in no HyperNode of tier {t} (level `{}`)",
                    node.name, level.name
                ),
            )
            .with(
                "in no HyperNode of a tier",
                "every node sits in one HyperNode per tier: add it to one, or leave it out of the export",
            )),
        },
    }
}

/// A node without a clique is its own NVLink domain, named after it: no clique may be
/// named so too.
fn check_clique_names(
    servers: &[&NodeObject],
    levels: &[Level],
    named: &[Vec<(String, bool)>],
) -> Result<(), ImportError> {
    let Some(l) = levels
        .iter()
        .position(|l| matches!(&l.source, Source::Label(k) if k == CLIQUE_LABEL))
    else {
        return Ok(());
    };
    let cliques: BTreeSet<&str> = named
        .iter()
        .filter(|row| !row[l].1)
        .map(|row| row[l].0.as_str())
        .collect();
    for (node, row) in servers.iter().zip(named) {
        if row[l].1 && cliques.contains(row[l].0.as_str()) {
            return Err(at_object(
                &node.origin,
                format!(
                    "node `{}` has no `{CLIQUE_LABEL}` label, and another node's clique is named `{}` as it is",
                    node.name, node.name
                ),
            )
            .with(
                "clique named as a node",
                "a node without a clique is an NVLink domain of its own, named after the node",
            ));
        }
    }
    Ok(())
}

/// Level `l`'s domains prefixed by their parents' (`<parent>-<name>`) when a name is reused
/// under two parents, with a warning; every server then names its domain there itself.
fn prefix_reused(
    l: usize,
    levels: &[Level],
    named: &mut [Vec<(String, bool)>],
    summary: &mut ImportSummary,
) {
    let mut parents: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for row in named.iter() {
        parents
            .entry(row[l].0.as_str())
            .or_default()
            .insert(row[l - 1].0.as_str());
    }
    let reused: Vec<String> = parents
        .iter()
        .filter(|(_, p)| p.len() > 1)
        .map(|(name, _)| name.to_string())
        .collect();
    if reused.is_empty() {
        return;
    }
    let (level, up) = (&levels[l].name, &levels[l - 1].name);
    summary.warn(format!(
        "{level} names reused under more than one {up} ({}): each {level} is named `<{up}>-<{level}>`",
        reused.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
    ));
    summary.defaulted("levels_whose_domains_are_prefixed_by_their_parent", 1);
    for row in named.iter_mut() {
        row[l] = (format!("{}-{}", row[l - 1].0, row[l].0), true);
    }
}

/// Each domain of level `l` inside one domain of the level above it.
fn check_nested(
    l: usize,
    levels: &[Level],
    servers: &[&NodeObject],
    named: &[Vec<(String, bool)>],
) -> Result<(), ImportError> {
    let mut parent: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for (node, row) in servers.iter().zip(named) {
        let (inner, outer) = (row[l].0.as_str(), row[l - 1].0.as_str());
        let (first, by) = *parent.entry(inner).or_insert((outer, node.name.as_str()));
        if first != outer {
            let (level, up) = (&levels[l].name, &levels[l - 1].name);
            return Err(at_object(
                &node.origin,
                format!(
                    "{level} `{inner}` lies in {up} `{first}` (node `{by}`) and in {up} `{outer}` (node `{}`), even with the names of its {up}s prefixed",
                    node.name
                ),
            )
            .with(
                "domains not nested",
                format!("each {level} sits inside one {up}: check the nodes' labels"),
            ));
        }
    }
    Ok(())
}
