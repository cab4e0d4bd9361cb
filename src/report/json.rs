//! JSON printers: one generic printer for every serialisable result, the topology view, and
//! the JSON Lines of sweeps.

use std::fmt::Write;

use petgraph::graph::NodeIndex;
use serde::Serialize;
use serde_json::{Value, json};

use crate::sim::sweep::SweepOutput;
use crate::spec::sorted_keys;
use crate::topology::Cluster;
use crate::topology::graph::{TopoEdge, TopoGraph, TopoNode, children, parents, server_graphs};
use crate::topology::state::ClusterState;

/// Pretty JSON with a final newline.
pub fn to_json<T: Serialize>(value: &T) -> String {
    let mut s =
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// One-line JSON with a final newline.
pub fn to_json_line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// The topology graph as JSON: servers → sockets → NUMA nodes → cores and GPUs.
pub fn topology_value(cluster: &Cluster, state: Option<&ClusterState>) -> Value {
    let servers: Vec<Value> = server_graphs(cluster, state)
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
    sorted_keys(json!({
        "schema_version": 1,
        "kind": "topology",
        "cluster": cluster.name,
        "servers": servers,
        "pods": pods,
    }))
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
/// The topology graph as JSON text.
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    to_json(&topology_value(cluster, state))
}

/// JSON Lines: a metadata object, then one object per row.
pub fn sweep_lines(out: &SweepOutput) -> String {
    let mut s = String::new();
    let mut header = json!({
        "scenarios": out.scenario_count,
        "shard": [out.shard.0, out.shard.1],
        "keys": out.keys,
        "rows": out.rows_per_scenario().into_iter().collect::<Vec<_>>(),
    });
    if let Some(inputs) = &out.inputs {
        header["fingerprint"] = json!(inputs.fingerprint());
        header["inputs"] = json!(inputs);
    }
    let meta = json!({ "coplan_sweep": header });
    let _ = writeln!(s, "{}", sorted_keys(meta));
    for r in &out.rows {
        let mut obj = serde_json::Map::new();
        obj.insert("scenario".into(), json!(r.scenario));
        for (k, v) in &r.params {
            obj.insert(k.clone(), json!(v));
        }
        obj.insert("planner".into(), json!(r.planner));
        obj.insert("seed".into(), json!(r.seed));
        obj.insert("metric".into(), json!(r.metric));
        obj.insert("value".into(), json!(r.value));
        let _ = writeln!(s, "{}", sorted_keys(Value::Object(obj)));
    }
    s
}
