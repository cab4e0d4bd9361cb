//! Graphviz DOT of the topology graph (`coplan topology --format dot`).

use std::fmt::Write;

use petgraph::graph::NodeIndex;

use super::fabric::DomainTree;
use crate::topology::graph::{TopoEdge, TopoGraph, TopoNode, server_graph, server_graphs};
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel, ServerId};

/// Graphviz DOT of the cluster: one subgraph per server (sockets, NUMA nodes, core groups, cores,
/// GPUs, with containment, localized and nearby edges); with `state`, used cores and GPUs are
/// filled and labelled with their pod. A cluster with levels above the server (DESIGN §12.3)
/// nests the servers in a subgraph per domain of every named level, labelled with the level
/// and the domain's name (`block b1` ⊃ `rack b1-r1` ⊃ the servers).
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&cluster.name));
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, fontsize=10];");
    if cluster.fabric.has_named_levels() {
        let tree = DomainTree::of(&cluster.fabric);
        let top = tree.outermost();
        for d in 0..tree.fabric.domains_at(top).len() {
            domain(&mut out, cluster, state, &tree, (top, d));
        }
    } else {
        for (sid, g) in server_graphs(cluster, state) {
            server(&mut out, sid, &g, 1);
        }
    }
    let _ = writeln!(out, "}}");
    out
}

/// The subgraph of a domain of a named level, indented by its depth, around those of the
/// domains inside it or, at the innermost named level, its servers'.
fn domain(
    out: &mut String,
    cluster: &Cluster,
    state: Option<&ClusterState>,
    tree: &DomainTree,
    (level, index): (FabricLevel, usize),
) {
    let Some(d) = tree.domain(level, index) else {
        return;
    };
    let pad = "  ".repeat(level.index());
    let _ = writeln!(out, "{pad}subgraph cluster_l{}_d{index} {{", level.0);
    let _ = writeln!(
        out,
        "{pad}  label=\"{} {}\";",
        escape(tree.fabric.level_name(level)),
        escape(&d.name)
    );
    let _ = writeln!(out, "{pad}  style=rounded;");
    let inner = FabricLevel(level.0 + 1);
    if inner == tree.fabric.host() {
        for s in &d.servers {
            server(out, *s, &server_graph(cluster, *s, state), inner.index());
        }
    } else {
        for child in tree.children(level, index) {
            domain(out, cluster, state, tree, (inner, *child));
        }
    }
    let _ = writeln!(out, "{pad}}}");
}

/// A server's subgraph, indented by `depth` steps.
fn server(out: &mut String, sid: ServerId, g: &TopoGraph, depth: usize) {
    let pad = "  ".repeat(depth);
    let prefix = format!("s{}", sid.0);
    let _ = writeln!(out, "{pad}subgraph cluster_{prefix} {{");
    if let TopoNode::Server { name, server_type } = &g[NodeIndex::new(0)] {
        let _ = writeln!(
            out,
            "{pad}  label=\"{} ({})\";",
            escape(name),
            escape(server_type)
        );
    }
    for n in g.node_indices() {
        let (label, extra) = dot_node(&g[n]);
        let _ = writeln!(
            out,
            "{pad}  {prefix}_{} [label=\"{}\"{extra}];",
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
            "{pad}  {prefix}_{} -> {prefix}_{} [kind={}{style}];",
            a.index(),
            b.index(),
            g[e].as_str()
        );
    }
    let _ = writeln!(out, "{pad}}}");
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
