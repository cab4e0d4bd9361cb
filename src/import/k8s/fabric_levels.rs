//! Which levels above the server a snapshot has, outermost first, and where each reads a
//! node's domain: the node labels of a Kueue Topology, else the tiers of the Volcano
//! HyperNodes, else NVIDIA topograph's node labels; the GPU clique label adds an NVLink level
//! inside whichever of them there are (`docs/import.md`, *Levels above the server*).

use std::collections::BTreeSet;

use super::fabric_read::{FabricObjects, Placed};
use super::read::{NodeObject, at_object, at_span};
use crate::import::build::slug;
use crate::import::error::ImportError;
use crate::import::summary::ImportSummary;
use crate::spec::fabric::{CLUSTER_LEVEL, HOST_LEVEL};

/// The label every node carries with its own name: Kueue's host level.
pub(super) const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
/// The label of a node's NVLink domain (a GB200 NVL72 rack), `<cluster UUID>.<clique id>`.
pub(super) const CLIQUE_LABEL: &str = "nvidia.com/gpu.clique";
/// The level the clique label gives.
const NVLINK_LEVEL: &str = "nvlink";
/// NVIDIA topograph's node labels, outermost first.
const TOPOGRAPH_LABELS: [&str; 4] = [
    "network.topology.nvidia.com/core",
    "network.topology.nvidia.com/spine",
    "network.topology.nvidia.com/leaf",
    "network.topology.nvidia.com/accelerator",
];

/// Where a level reads a node's domain.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Source {
    /// The value of this node label.
    Label(String),
    /// The HyperNode of this tier that holds the node.
    Tier(i64),
}

/// One level above the server.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Level {
    /// Its name in `[topology] levels`.
    pub(super) name: String,
    pub(super) source: Source,
}

/// The levels of a snapshot, outermost first, and what gave them (for messages).
#[derive(Debug, Default)]
pub(super) struct Levels {
    pub(super) levels: Vec<Level>,
    pub(super) from: String,
}

/// The levels of a snapshot whose servers are `servers`.
pub(super) fn levels_of(
    objects: &FabricObjects,
    servers: &[&NodeObject],
    summary: &mut ImportSummary,
) -> Result<Levels, ImportError> {
    let mut out = if let Some(topology) = chosen_topology(objects, summary) {
        if !objects.hypernodes.is_empty() {
            summary.warn(format!(
                "both a Kueue Topology and Volcano HyperNodes: the levels are Topology `{}`'s, the HyperNodes are left out",
                topology.name
            ));
            summary.dropped(
                "volcano_hypernodes_not_used",
                objects.hypernodes.len() as u64,
            );
        }
        Levels {
            levels: kueue_levels(topology)?,
            from: format!("Kueue Topology `{}`", topology.name),
        }
    } else if !objects.hypernodes.is_empty() {
        let mut tiers = BTreeSet::new();
        for h in objects.hypernodes.values() {
            tiers.insert(tier_of(h)?);
        }
        Levels {
            levels: tiers
                .into_iter()
                .rev()
                .map(|t| Level {
                    name: format!("tier-{t}"),
                    source: Source::Tier(t),
                })
                .collect(),
            from: "the tiers of the Volcano HyperNodes".into(),
        }
    } else {
        let mut levels = Vec::new();
        for key in TOPOGRAPH_LABELS {
            if servers.iter().any(|n| has_label(n, key)) {
                levels.push(Level {
                    name: level_name(key, &levels),
                    source: Source::Label(key.to_string()),
                });
            }
        }
        Levels {
            levels,
            from: "topograph's network.topology.nvidia.com labels".into(),
        }
    };
    let clique = Source::Label(CLIQUE_LABEL.to_string());
    if servers.iter().any(|n| has_label(n, CLIQUE_LABEL))
        && !out.levels.iter().any(|l| l.source == clique)
    {
        let name = level_name(CLIQUE_LABEL, &out.levels);
        out.levels.push(Level {
            name,
            source: clique,
        });
        out.from = if out.levels.len() == 1 {
            format!("the {CLIQUE_LABEL} label")
        } else {
            format!("{} and the {CLIQUE_LABEL} label", out.from)
        };
    }
    Ok(out)
}

fn has_label(node: &NodeObject, key: &str) -> bool {
    node.object.metadata.labels.get(key).is_some()
}

/// The Topology the levels come from: the first one a ResourceFlavor names, else the first;
/// with several, a warning says which.
fn chosen_topology<'a>(
    objects: &'a FabricObjects,
    summary: &mut ImportSummary,
) -> Option<&'a Placed> {
    let first = objects.topologies.first()?;
    let n = objects.topologies.len();
    if n == 1 {
        return Some(first);
    }
    let named = objects
        .flavors
        .iter()
        .filter_map(|f| f.object.spec.topology_name.as_ref())
        .find_map(|name| objects.topologies.iter().find(|t| t.name == name.value));
    let chosen = named.unwrap_or(first);
    let why = if named.is_some() {
        "the first a ResourceFlavor's topologyName names"
    } else {
        "the first read; no ResourceFlavor names one of them"
    };
    summary.warn(format!(
        "{n} Kueue Topologies: `{}` gives the levels ({why}); the others are left out",
        chosen.name
    ));
    summary.dropped("kueue_topologies_not_used", (n - 1) as u64);
    Some(chosen)
}

/// A Topology's levels: each `nodeLabel` a level, `kubernetes.io/hostname` (the last level
/// only) the implicit host.
fn kueue_levels(topology: &Placed) -> Result<Vec<Level>, ImportError> {
    let levels = &topology.object.spec.levels;
    let mut out: Vec<Level> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, level) in levels.iter().enumerate() {
        let what = format!("Topology `{}`", topology.name);
        let Some(label) = &level.node_label else {
            return Err(at_object(
                &topology.origin,
                format!("{what}: level {} has no nodeLabel", i + 1),
            )
            .with(
                "no nodeLabel",
                "each level names the node label whose value is a node's domain there",
            ));
        };
        let key = label.value.as_str();
        let refuse = |message: String, label_text: &str, help: &str| {
            Err(at_span(&topology.origin, 1, label, message).with(label_text, help))
        };
        if key.trim().is_empty() {
            return refuse(
                format!("{what}: level {} has an empty nodeLabel", i + 1),
                "empty",
                "name the node label of the level, e.g. cloud.provider.com/topology-rack",
            );
        }
        if !seen.insert(key) {
            return refuse(
                format!("{what}: node label `{key}` names two levels"),
                "repeated",
                "each level reads a label of its own",
            );
        }
        if key == HOSTNAME_LABEL {
            if i + 1 != levels.len() {
                return refuse(
                    format!(
                        "{what}: `{HOSTNAME_LABEL}` is level {} of {}; it can only be the last",
                        i + 1,
                        levels.len()
                    ),
                    "not the innermost level",
                    "the hostname level is one node; coplan's host level, inside every other",
                );
            }
            continue;
        }
        out.push(Level {
            name: level_name(key, &out),
            source: Source::Label(key.to_string()),
        });
    }
    Ok(out)
}

/// A HyperNode's tier: at least 1.
pub(super) fn tier_of(h: &Placed) -> Result<i64, ImportError> {
    match &h.object.spec.tier {
        None => Err(at_object(
            &h.origin,
            format!("HyperNode `{}` has no spec.tier", h.name),
        )
        .with(
            "no tier",
            "tier 1 holds nodes; each tier above holds the one below",
        )),
        Some(t) if t.value < 1 => Err(at_span(
            &h.origin,
            1,
            t,
            format!("HyperNode `{}`: tier {} is below 1", h.name, t.value),
        )
        .with("not a tier", "tier 1 is the innermost above the nodes")),
        Some(t) => Ok(t.value),
    }
}

/// The level name of a node label: the clique label is `nvlink`; any other its last path
/// segment in lower-case kebab case, without a leading `topology-` (`cloud.provider.com/
/// topology-rack` → `rack`, `topology.kubernetes.io/zone` → `zone`). A name `host`,
/// `cluster` or one an earlier level has is replaced by the whole label in kebab case, then
/// that with `-2`, `-3`, ….
pub(super) fn level_name(key: &str, taken: &[Level]) -> String {
    let free =
        |n: &str| n != HOST_LEVEL && n != CLUSTER_LEVEL && !taken.iter().any(|l| l.name == n);
    let last = slug(key.rsplit('/').next().unwrap_or(key));
    let short = match last.strip_prefix("topology-") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => last,
    };
    let whole = slug(key);
    let first = if key == CLIQUE_LABEL {
        NVLINK_LEVEL.to_string()
    } else {
        short
    };
    for candidate in [first, whole.clone()] {
        if free(&candidate) {
            return candidate;
        }
    }
    let mut k = 2;
    loop {
        let candidate = format!("{whole}-{k}");
        if free(&candidate) {
            return candidate;
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(name: &str) -> Level {
        Level {
            name: name.into(),
            source: Source::Label(String::new()),
        }
    }

    #[test]
    fn level_names_are_the_labels_last_segment_unique_and_never_reserved() {
        assert_eq!(
            level_name("cloud.provider.com/topology-block", &[]),
            "block"
        );
        assert_eq!(level_name("topology.kubernetes.io/zone", &[]), "zone");
        assert_eq!(level_name("network.topology.nvidia.com/leaf", &[]), "leaf");
        assert_eq!(level_name(CLIQUE_LABEL, &[]), "nvlink");
        assert_eq!(level_name("example.com/Rack_Name", &[]), "rack-name");
        assert_eq!(level_name("example.com/topology-", &[]), "topology");
        assert_eq!(level_name("example.com/host", &[]), "example-com-host");
        assert_eq!(
            level_name("b.example.com/rack", &[level("rack")]),
            "b-example-com-rack"
        );
        assert_eq!(
            level_name("rack", &[level("rack")]),
            "rack-2",
            "a bare key whose kebab case is taken too"
        );
    }
}
