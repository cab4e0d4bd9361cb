//! The FlexTopo graph of a server (petgraph): hierarchy, GPU locality and NUMA proximity, with
//! free/used-by state. Renderers walk this graph.

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::cluster::Cluster;
use super::ids::ServerId;
use super::state::ClusterState;

/// A vertex of the FlexTopo graph.
#[derive(Debug, Clone, PartialEq)]
pub enum TopoNode {
    /// The root: one server.
    Server {
        /// Server name.
        name: String,
        /// Name of its server type.
        server_type: String,
    },
    /// A CPU socket.
    Socket {
        /// Socket index on the server.
        id: usize,
    },
    /// A NUMA node (numbered socket-major).
    Numa {
        /// NUMA node index on the server.
        id: usize,
    },
    /// A FlexTopo CoreGroup: `core_group_size` consecutive cores of one NUMA node.
    CoreGroup {
        /// The NUMA node it belongs to.
        numa: usize,
        /// Its position within that NUMA node, from 0.
        index: usize,
    },
    /// A CPU core.
    Core {
        /// Core id on the server.
        id: usize,
        /// Instance name of the pod holding it; `None` when free or no state is given.
        used_by: Option<String>,
    },
    /// A GPU.
    Gpu {
        /// GPU id on the server.
        id: usize,
        /// Instance name of the pod holding it; `None` when free or no state is given.
        used_by: Option<String>,
    },
}

/// An edge of the FlexTopo graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopoEdge {
    /// Server→Socket→Numa→CoreGroup→Core.
    Contains,
    /// Gpu→Numa: the NUMA node a GPU is attached to.
    Localized,
    /// Numa→Numa in the same socket (stored once per pair, lower id first).
    Nearby,
}

impl TopoEdge {
    /// The edge kind's name in DOT and JSON output: `contains`, `localized`, `nearby`.
    pub fn as_str(self) -> &'static str {
        match self {
            TopoEdge::Contains => "contains",
            TopoEdge::Localized => "localized",
            TopoEdge::Nearby => "nearby",
        }
    }
}

/// A server's FlexTopo graph: vertices are [`TopoNode`]s, edges [`TopoEdge`]s.
pub type TopoGraph = DiGraph<TopoNode, TopoEdge>;

/// Builds the graph of one server; `state` adds used-by marks.
pub fn server_graph(
    cluster: &Cluster,
    server: ServerId,
    state: Option<&ClusterState>,
) -> TopoGraph {
    let s = cluster.server(server);
    let t = cluster.type_of(server);
    let used_by = |gpu: Option<usize>, core: Option<usize>| {
        state
            .and_then(|st| st.holder(server, gpu, core))
            .map(|p| p.name.clone())
    };
    let mut g = TopoGraph::new();
    let root = g.add_node(TopoNode::Server {
        name: s.name.clone(),
        server_type: t.name.clone(),
    });
    let mut numa_nodes: Vec<NodeIndex> = Vec::with_capacity(t.numa_count());
    for socket in 0..t.sockets {
        let sn = g.add_node(TopoNode::Socket { id: socket });
        g.add_edge(root, sn, TopoEdge::Contains);
        for k in 0..t.numa_per_socket {
            let numa = socket * t.numa_per_socket + k;
            let nn = g.add_node(TopoNode::Numa { id: numa });
            g.add_edge(sn, nn, TopoEdge::Contains);
            numa_nodes.push(nn);
            let first = numa * t.cores_per_numa;
            let mut group_node = None;
            for core in first..first + t.cores_per_numa {
                let index = (core - first) / t.core_group_size;
                if (core - first).is_multiple_of(t.core_group_size) {
                    let gn = g.add_node(TopoNode::CoreGroup { numa, index });
                    g.add_edge(nn, gn, TopoEdge::Contains);
                    group_node = Some(gn);
                }
                let cn = g.add_node(TopoNode::Core {
                    id: core,
                    used_by: used_by(None, Some(core)),
                });
                if let Some(gn) = group_node {
                    g.add_edge(gn, cn, TopoEdge::Contains);
                }
            }
        }
        let in_socket = &numa_nodes[socket * t.numa_per_socket..];
        for a in 0..in_socket.len() {
            for b in a + 1..in_socket.len() {
                g.add_edge(in_socket[a], in_socket[b], TopoEdge::Nearby);
            }
        }
    }
    for (gpu, &numa) in t.gpu_numa.iter().enumerate() {
        let gn = g.add_node(TopoNode::Gpu {
            id: gpu,
            used_by: used_by(Some(gpu), None),
        });
        g.add_edge(gn, numa_nodes[numa], TopoEdge::Localized);
    }
    g
}

/// Targets of `kind` edges leaving `n`, in insertion order.
pub fn children(g: &TopoGraph, n: NodeIndex, kind: TopoEdge) -> Vec<NodeIndex> {
    let mut out: Vec<NodeIndex> = g
        .edges_directed(n, Direction::Outgoing)
        .filter(|e| *e.weight() == kind)
        .map(|e| e.target())
        .collect();
    out.sort();
    out
}

/// Sources of `kind` edges entering `n`, in insertion order.
pub fn parents(g: &TopoGraph, n: NodeIndex, kind: TopoEdge) -> Vec<NodeIndex> {
    let mut out: Vec<NodeIndex> = g
        .edges_directed(n, Direction::Incoming)
        .filter(|e| *e.weight() == kind)
        .map(|e| e.source())
        .collect();
    out.sort();
    out
}

/// The graph of every server, in server order.
pub fn server_graphs<'a>(
    cluster: &'a Cluster,
    state: Option<&'a ClusterState>,
) -> impl Iterator<Item = (ServerId, TopoGraph)> + 'a {
    (0..cluster.servers.len()).map(move |i| {
        let id = ServerId(i as u32);
        (id, server_graph(cluster, id, state))
    })
}
