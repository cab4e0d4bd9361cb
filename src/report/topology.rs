//! `coplan topology` printers: DOT (Graphviz), JSON and a table, all walking the FlexTopo graph.

use std::fmt::Write;

use petgraph::graph::NodeIndex;
use serde_json::{Value, json};

use crate::topology::graph::{TopoEdge, TopoGraph, TopoNode, children, parents, server_graph};
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, ServerId};

fn graphs<'a>(
    cluster: &'a Cluster,
    state: Option<&'a ClusterState>,
) -> impl Iterator<Item = (ServerId, TopoGraph)> + 'a {
    (0..cluster.servers.len()).map(move |i| {
        let id = ServerId(i as u32);
        (id, server_graph(cluster, id, state))
    })
}

/// JSON: servers → sockets → NUMA nodes → cores and GPUs, with used-by marks.
pub fn to_json(cluster: &Cluster, state: Option<&ClusterState>) -> Value {
    let servers: Vec<Value> = graphs(cluster, state)
        .map(|(_, g)| server_json(&g))
        .collect();
    let pods: Vec<Value> = state
        .map(|st| {
            st.pods()
                .map(|(_, p)| {
                    json!({
                        "name": p.name,
                        "node": cluster.server(p.server).name,
                        "priority": p.priority,
                        "preemptible": p.preemptible,
                        "gpus": p.gpus.to_vec(),
                        "cores": p.cores.to_vec(),
                        "level": cluster.type_of(p.server).level_of(p.gpus, p.cores),
                        "start_time_s": p.start_time_s,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "schema_version": 1,
        "kind": "topology",
        "cluster": cluster.name,
        "servers": servers,
        "pods": pods,
    })
}

fn server_json(g: &TopoGraph) -> Value {
    let root = NodeIndex::new(0);
    let (name, server_type) = match &g[root] {
        TopoNode::Server { name, server_type } => (name.clone(), server_type.clone()),
        _ => (String::new(), String::new()),
    };
    let sockets: Vec<Value> = children(g, root, TopoEdge::Contains)
        .into_iter()
        .map(|sn| {
            let id = match g[sn] {
                TopoNode::Socket { id } => id,
                _ => 0,
            };
            let numa: Vec<Value> = children(g, sn, TopoEdge::Contains)
                .into_iter()
                .map(|nn| numa_json(g, nn))
                .collect();
            json!({ "id": id, "numa_nodes": numa })
        })
        .collect();
    json!({ "name": name, "server_type": server_type, "sockets": sockets })
}

fn numa_json(g: &TopoGraph, nn: NodeIndex) -> Value {
    let id = match g[nn] {
        TopoNode::Numa { id } => id,
        _ => 0,
    };
    let mut nearby: Vec<usize> = children(g, nn, TopoEdge::Nearby)
        .into_iter()
        .chain(parents(g, nn, TopoEdge::Nearby))
        .filter_map(|n| match g[n] {
            TopoNode::Numa { id } => Some(id),
            _ => None,
        })
        .collect();
    nearby.sort_unstable();
    let mut cores = Vec::new();
    for gn in children(g, nn, TopoEdge::Contains) {
        let group = match g[gn] {
            TopoNode::CoreGroup { index, .. } => index,
            _ => 0,
        };
        for cn in children(g, gn, TopoEdge::Contains) {
            if let TopoNode::Core { id, used_by } = &g[cn] {
                cores.push(json!({ "id": id, "core_group": group, "used_by": used_by }));
            }
        }
    }
    let gpus: Vec<Value> = parents(g, nn, TopoEdge::Localized)
        .into_iter()
        .filter_map(|n| match &g[n] {
            TopoNode::Gpu { id, used_by } => Some(json!({ "id": id, "used_by": used_by })),
            _ => None,
        })
        .collect();
    json!({ "id": id, "nearby": nearby, "cores": cores, "gpus": gpus })
}

/// Graphviz DOT: one cluster subgraph per server; used cores and GPUs are filled.
pub fn to_dot(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&cluster.name));
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, fontsize=10];");
    for (sid, g) in graphs(cluster, state) {
        let prefix = format!("s{}", sid.0);
        let _ = writeln!(out, "  subgraph cluster_{prefix} {{");
        if let TopoNode::Server { name, server_type } = &g[NodeIndex::new(0)] {
            let _ = writeln!(
                out,
                "    label=\"{} ({})\";",
                escape(name),
                escape(server_type)
            );
        }
        for n in g.node_indices() {
            let (label, extra) = dot_node(&g[n]);
            let _ = writeln!(
                out,
                "    {prefix}_{} [label=\"{}\"{extra}];",
                n.index(),
                escape(&label)
            );
        }
        for e in g.edge_indices() {
            let Some((a, b)) = g.edge_endpoints(e) else {
                continue;
            };
            let style = match g[e] {
                TopoEdge::Contains => "",
                TopoEdge::Localized => ", style=dashed, label=\"localized\"",
                TopoEdge::Nearby => ", style=dotted, dir=none, label=\"nearby\"",
            };
            let _ = writeln!(
                out,
                "    {prefix}_{} -> {prefix}_{} [kind={}{style}];",
                a.index(),
                b.index(),
                g[e].as_str()
            );
        }
        let _ = writeln!(out, "  }}");
    }
    let _ = writeln!(out, "}}");
    out
}

fn dot_node(n: &TopoNode) -> (String, &'static str) {
    const USED: &str = ", style=filled, fillcolor=\"#f4a582\"";
    match n {
        TopoNode::Server { name, .. } => (name.clone(), ", shape=box3d"),
        TopoNode::Socket { id } => (format!("socket-{id}"), ", shape=component"),
        TopoNode::Numa { id } => (format!("numa-{id}"), ", shape=folder"),
        TopoNode::CoreGroup { numa, index } => (format!("coregroup-{numa}-{index}"), ""),
        TopoNode::Core { id, used_by } => match used_by {
            Some(p) => (format!("core-{id}\\n{p}"), USED),
            None => (format!("core-{id}"), ", shape=ellipse"),
        },
        TopoNode::Gpu { id, used_by } => match used_by {
            Some(p) => (
                format!("gpu-{id}\\n{p}"),
                ", shape=octagon, style=filled, fillcolor=\"#f4a582\"",
            ),
            None => (format!("gpu-{id}"), ", shape=octagon"),
        },
    }
}

fn escape(s: &str) -> String {
    s.replace('"', "\\\"")
}

/// A table: one row per server with used/total GPUs and cores overall and per NUMA node.
pub fn to_table(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let mut rows: Vec<[String; 6]> = Vec::new();
    let (mut used_g, mut used_c) = (0u32, 0u32);
    for (i, s) in cluster.servers.iter().enumerate() {
        let t = &cluster.types[s.type_id.index()];
        let (free_g, free_c, pods) = match state {
            Some(st) => {
                let a = &st.servers[i];
                (a.free_gpus, a.free_cores, a.pods.len())
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
