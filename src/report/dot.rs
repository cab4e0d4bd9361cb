//! Graphviz DOT of the topology graph (`coplan topology --format dot`).

use std::fmt::Write;

use petgraph::graph::NodeIndex;

use crate::topology::Cluster;
use crate::topology::graph::{TopoEdge, TopoNode, server_graphs};
use crate::topology::state::ClusterState;

/// Graphviz DOT of the cluster: one subgraph per server (sockets, NUMA nodes, core groups, cores,
/// GPUs, with containment, localized and nearby edges); with `state`, used cores and GPUs are
/// filled and labelled with their pod.
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&cluster.name));
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, fontsize=10];");
    for (sid, g) in server_graphs(cluster, state) {
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
