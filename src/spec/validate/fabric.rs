//! Checks of `[topology]` (DESIGN §12.3): the levels above the server, their penalties, and
//! that every server sits in exactly one domain per level, the domains nested.

use std::collections::{BTreeMap, BTreeSet};

use super::findings::Findings;
use crate::p;
use crate::spec::cluster::ClusterSpec;
use crate::spec::fabric::{CLUSTER_LEVEL, FabricSpec, HOST_LEVEL};
use crate::spec::limits::MAX_PENALTY;
use crate::spec::source::Finding;

/// Every check of `[topology]` and of the `domain` entries of pools and servers.
pub fn fabric(out: &mut Findings, spec: &ClusterSpec) {
    let fabric = spec.topology.clone().unwrap_or_default();
    levels(out, &fabric);
    penalties(out, &fabric);
    domain_keys(out, spec, &fabric);
    if out.0.is_empty() && !fabric.levels.is_empty() {
        placement(out, spec, &fabric);
    }
}

fn levels(out: &mut Findings, fabric: &FabricSpec) {
    let mut seen = BTreeSet::new();
    for (i, level) in fabric.levels.iter().enumerate() {
        let path = p!["topology", "levels", i];
        if level.is_empty() || level == HOST_LEVEL || level == CLUSTER_LEVEL {
            out.push(
                Finding::new(
                    "spec::bad-level",
                    path,
                    format!("`{level}` cannot name a level"),
                    "reserved or empty",
                )
                .help("`host` and `cluster` are implicit; name the levels between them, outermost first, e.g. [\"block\", \"rack\"]"),
            );
        } else if !seen.insert(level.as_str()) {
            out.duplicate(path, "level", level, "an earlier entry of `levels`");
        }
    }
    for key in fabric.labels.keys() {
        if !fabric.levels.contains(key) {
            out.push(unknown_level(
                p!["topology", "labels", key.as_str()],
                key,
                fabric,
                false,
            ));
        }
    }
}

/// A key that names no level of `[topology] levels` (`implicit`: `host` and `cluster` count).
fn unknown_level(path: String, key: &str, fabric: &FabricSpec, implicit: bool) -> Finding {
    let known = if implicit {
        fabric.all_levels().join(", ")
    } else if fabric.levels.is_empty() {
        "none: the cluster has no [topology] levels".to_string()
    } else {
        fabric.levels.join(", ")
    };
    Finding::new(
        "spec::unknown-level",
        path,
        format!("`{key}` is not a level of [topology] levels"),
        "no such level",
    )
    .help(format!("known levels: {known}"))
}

/// Each penalty in [1, `MAX_PENALTY`], of a known level, and non-decreasing outwards.
fn penalties(out: &mut Findings, fabric: &FabricSpec) {
    let order = fabric.all_levels();
    let mut inner: Option<(&str, f64)> = None;
    for level in order.iter().rev() {
        let Some(&v) = fabric.penalty.get(*level) else {
            continue;
        };
        let path = p!["topology", "penalty", *level];
        if !(v.is_finite() && (1.0..=MAX_PENALTY).contains(&v)) {
            out.push(
                Finding::new(
                    "spec::bad-penalty",
                    path,
                    format!("penalty `{level}` is {v}; it must lie in [1, {MAX_PENALTY:e}]"),
                    "out of range",
                )
                .help("a penalty is the slowdown of a gang spread across a domain of that level, relative to one host: ≥ 1.0"),
            );
            continue;
        }
        if let Some((below, w)) = inner
            && v < w
        {
            out.push(
                Finding::new(
                    "spec::bad-penalty",
                    path,
                    format!("penalty `{level}` is {v}, below `{below}`'s {w}"),
                    "smaller than the level inside it",
                )
                .help("a wider spread cannot be faster: penalties must not decrease from host outwards"),
            );
        }
        inner = Some((level, v));
    }
    for key in fabric.penalty.keys() {
        if !order.contains(&key.as_str()) {
            out.push(unknown_level(
                p!["topology", "penalty", key.as_str()],
                key,
                fabric,
                true,
            ));
        }
    }
}

/// Every `domain` key of a pool or a named server is a level.
fn domain_keys(out: &mut Findings, spec: &ClusterSpec, fabric: &FabricSpec) {
    for (i, pool) in spec.pool.iter().enumerate() {
        for key in pool.domain.keys() {
            if !fabric.levels.contains(key) {
                out.push(unknown_level(
                    p!["pool", i, "domain", key.as_str()],
                    key,
                    fabric,
                    false,
                ));
            }
        }
    }
    for (i, server) in spec.server.iter().enumerate() {
        for key in server.domain.keys() {
            if !fabric.levels.contains(key) {
                out.push(unknown_level(
                    p!["server", i, "domain", key.as_str()],
                    key,
                    fabric,
                    false,
                ));
            }
        }
    }
}

/// Every server in one domain per level; each domain inside one domain of the level above.
fn placement(out: &mut Findings, spec: &ClusterSpec, fabric: &FabricSpec) {
    let places = spec.server_places();
    let mut reported_missing = BTreeSet::new();
    for place in &places {
        for (l, domain) in place.domains.iter().enumerate() {
            if domain.is_none() && reported_missing.insert((place.pool, l)) {
                let level = &fabric.levels[l];
                let via = match fabric.labels.get(level) {
                    Some(key) => format!(" and carries no label `{key}`"),
                    None => String::new(),
                };
                out.push(
                    Finding::new(
                        "spec::missing-domain",
                        p!["pool", place.pool],
                        format!(
                            "server `{}` has no domain at level `{level}`: no `domain.{level}` entry{via}",
                            place.name
                        ),
                        "no domain",
                    )
                    .help(format!(
                        "every server sits in exactly one domain per level: add `domain = {{ {level} = \"…\" }}` to the pool or the server, or map the level to a node label in [topology] labels"
                    )),
                );
            }
        }
    }
    if !reported_missing.is_empty() {
        return;
    }
    // (inner level, inner domain) → (outer domain, first server seen there).
    let mut parent: BTreeMap<(usize, &str), (&str, &str)> = BTreeMap::new();
    let mut reported = BTreeSet::new();
    for place in &places {
        for l in 1..fabric.levels.len() {
            let (Some(inner), Some(outer)) = (&place.domains[l], &place.domains[l - 1]) else {
                continue;
            };
            let entry = parent
                .entry((l, inner.as_str()))
                .or_insert((outer.as_str(), place.name.as_str()));
            if entry.0 != outer && reported.insert((l, inner.as_str())) {
                let (level, up) = (&fabric.levels[l], &fabric.levels[l - 1]);
                out.push(
                    Finding::new(
                        "spec::domain-not-nested",
                        p!["pool", place.pool],
                        format!(
                            "{level} `{inner}` lies in {up} `{}` (server `{}`) and in {up} `{outer}` (server `{}`)",
                            entry.0, entry.1, place.name
                        ),
                        "domains not nested",
                    )
                    .help(format!(
                        "each {level} must sit inside one {up}; name domains uniquely across the cluster, e.g. `{outer}-{inner}`"
                    )),
                );
            }
        }
    }
}
