//! JSON printers: one generic printer for every serialisable result, the topology view, and
//! the JSON Lines of sweeps.

use std::fmt::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::fabric::{DomainTree, gpus_of};
use crate::sim::sweep::SweepOutput;
use crate::spec::sorted_keys;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, FabricLevel, Level, ServerId};

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

/// The topology graph as JSON: servers → sockets → NUMA nodes → cores and GPUs, with the
/// running pods.
///
/// The view is serialised as it is walked, one server at a time, from the server types'
/// layouts: building the FlexTopo graph and a JSON value tree of every server first cost
/// about 100 KB of memory per server (a gigabyte at 10,000 servers) before a byte was
/// written. Fields are declared in key order: the text is the one the sorted value tree gave.
#[derive(Serialize)]
struct TopologyView<'a> {
    cluster: &'a str,
    kind: &'static str,
    /// Only for a cluster with levels above the server: a cluster without keeps its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    levels: Option<LevelsView<'a>>,
    pods: PodsView<'a>,
    schema_version: u32,
    servers: ServersView<'a>,
}

/// The levels above the server (DESIGN §12.3), outermost first from `cluster` to `host`: per
/// level its name, the penalty of a gang spread across one of its domains, and its domains,
/// each with its GPUs, the domain of the level outside that holds it (`null` for the
/// cluster) and its servers.
struct LevelsView<'a> {
    cluster: &'a Cluster,
}

#[derive(Serialize)]
struct LevelView<'a> {
    domains: Vec<DomainView<'a>>,
    name: &'a str,
    penalty: f64,
}

#[derive(Serialize)]
struct DomainView<'a> {
    gpus: usize,
    name: &'a str,
    parent: Option<&'a str>,
    servers: Vec<&'a str>,
}

impl Serialize for LevelsView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cluster = self.cluster;
        let tree = DomainTree::of(&cluster.fabric);
        let fabric = tree.fabric;
        serializer.collect_seq((0..fabric.levels.len()).map(|l| {
            let level = FabricLevel(l as u16);
            LevelView {
                domains: (fabric.domains_at(level).iter())
                    .map(|d| DomainView {
                        gpus: gpus_of(cluster, &d.servers),
                        name: &d.name,
                        parent: tree.parent_name(level, d),
                        servers: (d.servers.iter())
                            .map(|s| cluster.server(*s).name.as_str())
                            .collect(),
                    })
                    .collect(),
                name: fabric.level_name(level),
                penalty: fabric.penalty_of(level),
            }
        }))
    }
}

struct ServersView<'a> {
    cluster: &'a Cluster,
    state: Option<&'a ClusterState>,
}

impl Serialize for ServersView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            (0..self.cluster.servers.len())
                .map(|i| server_view(self.cluster, ServerId(i as u32), self.state)),
        )
    }
}

#[derive(Serialize)]
struct ServerView<'a> {
    name: &'a str,
    server_type: &'a str,
    sockets: Vec<SocketView<'a>>,
}

#[derive(Serialize)]
struct SocketView<'a> {
    id: usize,
    numa_nodes: Vec<NumaView<'a>>,
}

#[derive(Serialize)]
struct NumaView<'a> {
    cores: Vec<CoreView<'a>>,
    gpus: Vec<GpuView<'a>>,
    id: usize,
    nearby: Vec<usize>,
}

#[derive(Serialize)]
struct CoreView<'a> {
    core_group: usize,
    id: usize,
    used_by: Option<&'a str>,
}

#[derive(Serialize)]
struct GpuView<'a> {
    id: usize,
    used_by: Option<&'a str>,
}

/// One server as the FlexTopo graph has it (DESIGN §4): sockets, their NUMA nodes (with the
/// other NUMA nodes of the socket as `nearby`), each node's cores with their core group and
/// its GPUs, each GPU and core marked with the first resident pod (ascending id) holding it.
fn server_view<'a>(
    cluster: &'a Cluster,
    server: ServerId,
    state: Option<&'a ClusterState>,
) -> ServerView<'a> {
    let t = cluster.type_of(server);
    let mut core_holder: Vec<Option<&str>> = vec![None; t.core_count()];
    let mut gpu_holder: Vec<Option<&str>> = vec![None; t.gpu_count()];
    if let Some(st) = state {
        let residents = st.servers()[server.index()].pods();
        for pod in residents.iter().filter_map(|&id| st.pod(id)) {
            for (held, holders) in [
                (pod.cores.to_vec(), &mut core_holder),
                (pod.gpus.to_vec(), &mut gpu_holder),
            ] {
                for i in held {
                    if let Some(slot @ None) = holders.get_mut(i as usize) {
                        *slot = Some(pod.name.as_str());
                    }
                }
            }
        }
    }
    let group_size = t.core_group_size.max(1);
    let sockets = (0..t.sockets)
        .map(|socket| {
            let in_socket = socket * t.numa_per_socket..(socket + 1) * t.numa_per_socket;
            let numa_nodes = in_socket
                .clone()
                .map(|numa| {
                    let first = numa * t.cores_per_numa;
                    NumaView {
                        cores: (first..first + t.cores_per_numa)
                            .map(|core| CoreView {
                                core_group: (core - first) / group_size,
                                id: core,
                                used_by: core_holder.get(core).copied().flatten(),
                            })
                            .collect(),
                        gpus: (t.gpu_numa.iter().enumerate())
                            .filter(|&(_, &n)| n == numa)
                            .map(|(gpu, _)| GpuView {
                                id: gpu,
                                used_by: gpu_holder.get(gpu).copied().flatten(),
                            })
                            .collect(),
                        id: numa,
                        nearby: in_socket.clone().filter(|&n| n != numa).collect(),
                    }
                })
                .collect();
            SocketView {
                id: socket,
                numa_nodes,
            }
        })
        .collect();
    ServerView {
        name: &cluster.server(server).name,
        server_type: &t.name,
        sockets,
    }
}

struct PodsView<'a> {
    cluster: &'a Cluster,
    state: Option<&'a ClusterState>,
}

#[derive(Serialize)]
struct PodView<'a> {
    cores: Vec<u32>,
    gpus: Vec<u32>,
    level: Level,
    name: &'a str,
    node: &'a str,
    preemptible: bool,
    priority: i64,
    start_time_s: Option<f64>,
}

impl Serialize for PodsView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cluster = self.cluster;
        serializer.collect_seq(
            self.state
                .into_iter()
                .flat_map(|st| st.pods())
                .map(|(_, p)| PodView {
                    cores: p.cores.to_vec(),
                    gpus: p.gpus.to_vec(),
                    level: cluster.type_of(p.server).level_of(p.gpus, p.cores),
                    name: &p.name,
                    node: &cluster.server(p.server).name,
                    preemptible: p.preemptible,
                    priority: p.priority,
                    start_time_s: p.start_time_s,
                }),
        )
    }
}

/// The topology graph as JSON text (pretty, sorted keys, final newline).
pub fn topology(cluster: &Cluster, state: Option<&ClusterState>) -> String {
    let view = TopologyView {
        cluster: &cluster.name,
        kind: "topology",
        levels: (cluster.fabric.has_named_levels()).then_some(LevelsView { cluster }),
        pods: PodsView { cluster, state },
        schema_version: 1,
        servers: ServersView { cluster, state },
    };
    // Sized up front (about 150 bytes per core or GPU are written; pages reserved beyond what
    // is written are never touched): growing by doubling held the text twice at its last copy,
    // 216 MB of memory for the 108 MB of mixed-10k.
    let items = cluster.gpu_count() + cluster.core_count();
    let pods = state.map_or(0, |s| s.pods().count());
    let mut bytes = Vec::with_capacity(256 * items + 2048 * (cluster.servers.len() + pods) + 4096);
    let written = serde_json::to_writer_pretty(&mut bytes, &view);
    match (written, String::from_utf8(bytes)) {
        (Ok(()), Ok(mut text)) => {
            text.push('\n');
            text
        }
        (Err(e), _) => format!("{{\"error\": \"{e}\"}}\n"),
        (_, Err(e)) => format!("{{\"error\": \"{e}\"}}\n"),
    }
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
        for (k, v) in r.params.iter() {
            obj.insert(k.clone(), json!(v));
        }
        obj.insert("planner".into(), json!(&*r.planner));
        obj.insert("seed".into(), json!(r.seed));
        obj.insert("metric".into(), json!(&*r.metric));
        obj.insert("value".into(), json!(r.value));
        let _ = writeln!(s, "{}", sorted_keys(Value::Object(obj)));
    }
    s
}

/// `plan --format evictions`: per planner, per preemptor, the node it goes to and the pods
/// evicted for it, by the names the spec gives them (`namespace/name` for an import): what an
/// operator acts on.
pub fn preemption_evictions(plan: &crate::plan::preemption::PreemptionPlan) -> String {
    #[derive(Serialize)]
    struct Evictions<'a> {
        schema_version: u32,
        kind: &'static str,
        cluster: &'a str,
        workload: Option<&'a str>,
        planners: Vec<PlannerEvictions<'a>>,
    }
    #[derive(Serialize)]
    struct PlannerEvictions<'a> {
        planner: &'a str,
        /// PodDisruptionBudgets the plan violates.
        pdb_violations: u64,
        evictions: Vec<Eviction<'a>>,
    }
    #[derive(Serialize)]
    struct Eviction<'a> {
        preemptor: &'a str,
        node: Option<&'a str>,
        placed: bool,
        victims: &'a [String],
        /// A gang's pods: each one's name and node (its victims may lie on any of them).
        #[serde(skip_serializing_if = "Option::is_none")]
        pods: Option<Vec<PodNode<'a>>>,
    }
    #[derive(Serialize)]
    struct PodNode<'a> {
        pod: &'a str,
        node: &'a str,
    }
    to_json(&Evictions {
        schema_version: 1,
        kind: "preemption-evictions",
        cluster: &plan.cluster,
        workload: plan.workload.as_deref(),
        planners: plan
            .planners
            .iter()
            .map(|p| PlannerEvictions {
                planner: &p.name,
                pdb_violations: p.metrics.pdb_violations,
                evictions: p
                    .events
                    .iter()
                    .map(|e| Eviction {
                        preemptor: &e.preemptor,
                        node: e.node.as_deref(),
                        placed: e.placed,
                        victims: &e.victims,
                        pods: e.gang.as_ref().map(|g| {
                            g.placements
                                .iter()
                                .map(|p| PodNode {
                                    pod: &p.pod,
                                    node: &p.node,
                                })
                                .collect()
                        }),
                    })
                    .collect(),
            })
            .collect(),
    })
}
