//! `coplan topology --format table`: per server, its NUMA nodes with their cores and GPUs.

use std::fmt::Write;

use crate::topology::Cluster;
use crate::topology::state::ClusterState;

/// A table: one row per server with used/total GPUs and cores overall and per NUMA node.
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let mut rows: Vec<[String; 6]> = Vec::new();
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
        rows.push([
            s.name.clone(),
            t.name.clone(),
            format!("{ug}/{}", t.gpu_count()),
            format!("{uc}/{}", t.core_count()),
            pods.to_string(),
            numa.join(" | "),
        ]);
    }
    let header = [
        "server",
        "type",
        "gpus",
        "cores",
        "pods",
        "used per NUMA node (gpus, cores)",
    ];
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
    let _ = writeln!(out, "{}", line(header.to_vec()));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
    out
}
