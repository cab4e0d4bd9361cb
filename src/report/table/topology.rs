//! `coplan topology --format table`: per server, its NUMA nodes with their cores and GPUs;
//! for a cluster with levels above the server (DESIGN §12.3), first the levels and their
//! domains, and each server's domain at every named level.

use std::fmt::Write;

use super::grid::render_table;
use crate::report::fabric::{DomainTree, count, gpus_of, penalty_text};
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel, ServerId};

/// Up to this many servers, the domains of the innermost named level list their servers by
/// name; a larger cluster's list only their counts (the server table names each server's
/// domains).
const NAMED_MAX_SERVERS: usize = 64;

/// A table: one row per server with used/total GPUs and cores overall and per NUMA node.
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let fabric = &cluster.fabric;
    let named: Vec<FabricLevel> = DomainTree::of(fabric).named_levels().collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let (mut used_g, mut used_c) = (0u32, 0u32);
    for (i, s) in cluster.servers.iter().enumerate() {
        let t = &cluster.types[s.type_id.index()];
        let (free_g, free_c, pods) = match state {
            Some(st) => {
                let a = &st.servers()[i];
                (a.free_gpus(), a.free_cores(), a.pods().len())
            }
            None => (t.whole().gpus, t.whole().cores, 0),
        };
        let ug = t.gpu_count() as u32 - free_g.len();
        let uc = t.core_count() as u32 - free_c.len();
        used_g += ug;
        used_c += uc;
        let numa: Vec<String> = (0..t.numa_count())
            .map(|j| {
                let d = t.numa_domain(j);
                format!(
                    "{}/{}g {}/{}c",
                    d.gpus.len() - free_g.and(d.gpus).len(),
                    d.gpus.len(),
                    d.cores.len() - free_c.and(d.cores).len(),
                    d.cores.len()
                )
            })
            .collect();
        let mut row = vec![s.name.clone(), t.name.clone()];
        for level in &named {
            let d = fabric.domain_of(*level, ServerId(i as u32)) as usize;
            let name = fabric.domains_at(*level).get(d).map(|d| d.name.clone());
            row.push(name.unwrap_or_else(|| "?".into()));
        }
        row.extend([
            format!("{ug}/{}", t.gpu_count()),
            format!("{uc}/{}", t.core_count()),
            pods.to_string(),
            numa.join(" | "),
        ]);
        rows.push(row);
    }
    let mut header = vec!["server", "type"];
    header.extend(named.iter().map(|l| fabric.level_name(*l)));
    header.extend(["gpus", "cores", "pods", "used per NUMA node (gpus, cores)"]);
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cluster {}: {} servers, {} GPUs ({used_g} used), {} cores ({used_c} used), {} pods",
        cluster.name,
        cluster.servers.len(),
        cluster.gpu_count(),
        cluster.core_count(),
        state.map_or(0, |s| s.pod_count())
    );
    if fabric.has_named_levels() {
        out.push_str(&levels(cluster));
        out.push('\n');
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (k, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if k + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let _ = write!(l, "{cell:<w$}  ");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(header.clone()));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// The levels of a cluster with named ones: a row per level (its domains, their sizes, the
/// penalty of a gang spread across one), then every domain of the named levels, each under
/// the one that holds it, with its servers and GPUs.
fn levels(cluster: &Cluster) -> String {
    let tree = DomainTree::of(&cluster.fabric);
    let fabric = tree.fabric;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "levels, outermost first: {}",
        fabric.levels.join(" > ")
    );
    let rows: Vec<Vec<String>> = (0..fabric.levels.len())
        .map(|l| {
            let level = FabricLevel(l as u16);
            let domains = fabric.domains_at(level);
            let sizes = domains.iter().map(|d| d.servers.len());
            let (lo, hi) = (sizes.clone().min(), sizes.max());
            let size = match (lo, hi) {
                (Some(lo), Some(hi)) if lo != hi => format!("{lo}-{hi}"),
                (Some(n), _) => n.to_string(),
                _ => "0".into(),
            };
            vec![
                fabric.level_name(level).to_string(),
                domains.len().to_string(),
                size,
                penalty_text(fabric.penalty_of(level)),
            ]
        })
        .collect();
    out.push_str(&render_table(
        &["level", "domains", "servers each", "gang penalty"],
        &rows,
    ));
    let names = cluster.servers.len() <= NAMED_MAX_SERVERS;
    let top = tree.outermost();
    for d in 0..fabric.domains_at(top).len() {
        domain_lines(&mut out, cluster, &tree, (top, d), names);
    }
    if !names {
        let _ = writeln!(
            out,
            "(servers by count above {NAMED_MAX_SERVERS} servers; the table below names each server's domains)"
        );
    }
    out
}

/// A domain's line, indented by its depth, then those of the domains inside it; the
/// innermost named level's lines end with their servers' names when `names`.
fn domain_lines(
    out: &mut String,
    cluster: &Cluster,
    tree: &DomainTree,
    (level, index): (FabricLevel, usize),
    names: bool,
) {
    let fabric = tree.fabric;
    let Some(domain) = tree.domain(level, index) else {
        return;
    };
    let indent = "  ".repeat(level.index().saturating_sub(1));
    let _ = write!(
        out,
        "{indent}{} {}: {}, {}",
        fabric.level_name(level),
        domain.name,
        count(domain.servers.len(), "server"),
        count(gpus_of(cluster, &domain.servers), "GPU"),
    );
    let inner = FabricLevel(level.0 + 1);
    if inner == fabric.host() {
        if names {
            let list: Vec<&str> = (domain.servers.iter())
                .map(|s| cluster.server(*s).name.as_str())
                .collect();
            let _ = write!(out, ": {}", list.join(" "));
        }
        out.push('\n');
        return;
    }
    out.push('\n');
    for child in tree.children(level, index) {
        domain_lines(out, cluster, tree, (inner, *child), names);
    }
}
