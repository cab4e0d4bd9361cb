//! The initial state of a preemption workload: its `[[running]]` pods placed in file order,
//! each on the server, devices and cores it names or the allocator picks.

use super::cluster_state::{ClusterState, ServerAlloc};
use super::pod::Pod;
use crate::p;
use crate::spec::Finding;
use crate::spec::preemption::{IdsOrCount, PreemptionSpec, RunningPod, WorkloadClass};
use crate::topology::bits::{CoreSet, GpuSet};
use crate::topology::cluster::Cluster;
use crate::topology::domain::Request;
use crate::topology::ids::ServerId;
use crate::topology::placement::place;
use crate::topology::server_type::ServerType;

/// Places the `[[running]]` pods of a preemption workload on an empty cluster. Cross-file
/// problems (unknown node, ids outside the server or already taken, no room) are findings that
/// point into the workload file.
pub fn running_state(
    cluster: &Cluster,
    spec: &PreemptionSpec,
) -> Result<ClusterState, Vec<Finding>> {
    let mut state = ClusterState::empty(cluster);
    let mut findings = unknown_device_kinds(cluster, spec);
    findings.extend(crate::spec::validate::gang_levels(
        &cluster.fabric.levels,
        spec,
    ));
    for (i, running) in spec.running.iter().enumerate() {
        match place_running(cluster, spec, &state, i, running) {
            Ok(mut pod) => {
                // The index is taken either way, so unnamed pods keep the names they have
                // without the named ones.
                let generated = state.next_name(pod.workload, &spec.workload[pod.workload].name);
                pod.name = running.name.clone().unwrap_or(generated);
                if let Err(e) = state.add(cluster, pod) {
                    findings.push(Finding::new(
                        "spec::resource-taken",
                        p!["running", i],
                        e.to_string(),
                        "conflicts with an earlier pod",
                    ));
                }
            }
            Err(f) => findings.extend(f),
        }
    }
    if findings.is_empty() {
        Ok(state)
    } else {
        Err(findings)
    }
}

/// One `[[running]]` entry being placed: where it stands in the file and the server it names.
struct Entry<'a> {
    i: usize,
    running: &'a RunningPod,
    server: ServerId,
    t: &'a ServerType,
    alloc: &'a ServerAlloc,
}

impl Entry<'_> {
    /// `running[i].key`, where a finding about this entry points.
    fn path(&self, key: &str) -> String {
        p!["running", self.i, key]
    }

    /// The pod does not fit what is left of its server.
    fn no_room(&self, key: &str, what: &str, free: u32, need: u32) -> Vec<Finding> {
        vec![
            Finding::new(
                "spec::no-room",
                self.path(key),
                format!(
                    "{} has {free} free {what}, the pod needs {need}",
                    self.running.node
                ),
                "does not fit",
            )
            .help("the [[running]] pods are placed in file order; move or shrink one"),
        ]
    }
}

/// One running pod of the workload, on the resources it names or the allocator picks.
fn place_running(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    state: &ClusterState,
    i: usize,
    running: &RunningPod,
) -> Result<Pod, Vec<Finding>> {
    let Some(wi) = spec
        .workload
        .iter()
        .position(|w| w.name == running.workload)
    else {
        // Reported by single-file validation.
        return Err(Vec::new());
    };
    let class = &spec.workload[wi];
    let server = named_server(cluster, i, running)?;
    let entry = Entry {
        i,
        running,
        server,
        t: cluster.type_of(server),
        alloc: &state.servers()[server.index()],
    };
    let mut findings = Vec::new();
    let fixed_gpus = match &running.gpus {
        Some(IdsOrCount::Ids(ids)) => Some(GpuSet::from_ids(explicit_ids(
            &entry,
            state,
            Resource::Gpu,
            ids,
            &mut findings,
        ))),
        _ => None,
    };
    let fixed_cores = match &running.cores {
        Some(IdsOrCount::Ids(ids)) => Some(CoreSet::from_ids(explicit_ids(
            &entry,
            state,
            Resource::Core,
            ids,
            &mut findings,
        ))),
        _ => None,
    };
    if !findings.is_empty() {
        return Err(findings);
    }
    let count = |v: &Option<IdsOrCount>, default: i64| match v {
        Some(IdsOrCount::Count(n)) => (*n).max(0) as u32,
        _ => default.max(0) as u32,
    };
    let want = cluster.request_of(
        class,
        count(&running.gpus, class.gpus),
        count(&running.cores, class.cores),
    );
    if let Some(g) = fixed_gpus
        && !entry.t.device_rule_holds(want, g)
    {
        return Err(vec![wrong_devices(cluster, &entry, class)]);
    }
    let (gpus, cores) = take_resources(&entry, want, fixed_gpus, fixed_cores)?;
    Ok(Pod::of_class(
        String::new(),
        (wi, class),
        server,
        (gpus, cores),
        running.start_time_s,
    ))
}

/// The server a running pod names, or a finding listing the cluster's servers.
fn named_server(
    cluster: &Cluster,
    i: usize,
    running: &RunningPod,
) -> Result<ServerId, Vec<Finding>> {
    if let Some(server) = cluster.server_id(&running.node) {
        return Ok(server);
    }
    let names = &cluster.servers;
    let range = match (names.first(), names.last()) {
        (Some(a), Some(b)) => format!("{} … {}", a.name, b.name),
        _ => "none".into(),
    };
    Err(vec![
        Finding::new(
            "spec::undefined-reference",
            p!["running", i, "node"],
            format!("no server `{}` in cluster `{}`", running.node, cluster.name),
            "no such server",
        )
        .help(format!("servers of this cluster: {range}")),
    ])
}

/// The two kinds of ids a running pod may list.
#[derive(Clone, Copy, PartialEq)]
enum Resource {
    Gpu,
    Core,
}

impl Resource {
    fn key(self) -> &'static str {
        match self {
            Resource::Gpu => "gpus",
            Resource::Core => "cores",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Resource::Gpu => "GPU",
            Resource::Core => "core",
        }
    }

    /// How many the server type has.
    fn capacity(self, t: &ServerType) -> usize {
        match self {
            Resource::Gpu => t.gpu_count(),
            Resource::Core => t.core_count(),
        }
    }

    fn is_free(self, alloc: &ServerAlloc, id: usize) -> bool {
        match self {
            Resource::Gpu => alloc.free_gpus().contains(id),
            Resource::Core => alloc.free_cores().contains(id),
        }
    }

    /// `id` as a GPU id, for [`ClusterState::holder`].
    fn gpu(self, id: usize) -> Option<usize> {
        (self == Resource::Gpu).then_some(id)
    }

    /// `id` as a core id, for [`ClusterState::holder`].
    fn core(self, id: usize) -> Option<usize> {
        (self == Resource::Core).then_some(id)
    }
}

/// The ids of `ids` that exist on the server and are free. One finding per kind of problem
/// (outside the server, already taken), pointing at the first offending id.
fn explicit_ids(
    entry: &Entry<'_>,
    state: &ClusterState,
    resource: Resource,
    ids: &[i64],
    findings: &mut Vec<Finding>,
) -> Vec<usize> {
    let (key, noun) = (resource.key(), resource.noun());
    let capacity = resource.capacity(entry.t);
    let mut outside: Vec<(usize, usize)> = Vec::new();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    let mut ok = Vec::new();
    for (j, &id) in ids.iter().enumerate() {
        let id = id.max(0) as usize;
        if id >= capacity {
            outside.push((j, id));
        } else if !resource.is_free(entry.alloc, id) {
            taken.push((j, id));
        } else {
            ok.push(id);
        }
    }
    let list = |v: &[(usize, usize)]| {
        v.iter()
            .map(|(_, id)| id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let node = &entry.running.node;
    if let Some(&(j, _)) = outside.first() {
        findings.push(
            Finding::new(
                "spec::id-out-of-range",
                p!["running", entry.i, key, j],
                format!(
                    "{noun} {} not exist on {node}",
                    if outside.len() == 1 {
                        format!("{} does", list(&outside))
                    } else {
                        format!("ids {} do", list(&outside))
                    },
                ),
                "outside the server",
            )
            .help(format!(
                "server type `{}` has {noun}s 0…{}",
                entry.t.name,
                capacity as i64 - 1
            )),
        );
    }
    if let Some(&(j, id)) = taken.first() {
        findings.push(
            Finding::new(
                "spec::resource-taken",
                p!["running", entry.i, key, j],
                format!(
                    "{noun} {} on {node} already in use (first: {id} by {})",
                    if taken.len() == 1 {
                        format!("{} is", list(&taken))
                    } else {
                        format!("ids {} are", list(&taken))
                    },
                    state
                        .holder(entry.server, resource.gpu(id), resource.core(id))
                        .map_or("?".into(), |p| p.name.clone())
                ),
                "already taken",
            )
            .help("each GPU and core is held by at most one pod"),
        );
    }
    ok
}

/// The listed devices are not of the class's kind, or not together as its claim demands.
fn wrong_devices(cluster: &Cluster, entry: &Entry<'_>, class: &WorkloadClass) -> Finding {
    let kind = class.gpu_kind();
    Finding::new(
        "spec::wrong-device",
        entry.path("gpus"),
        format!(
            "the devices of `{}` on {} are not {} devices of kind `{kind}`{}",
            entry.running.workload,
            entry.running.node,
            if class.device_alignment.is_some() {
                "aligned"
            } else {
                "all"
            },
            class
                .device_alignment
                .map_or(String::new(), |a| format!(" on one {}", a.as_str()))
        ),
        "not devices the class asks for",
    )
    .help(format!(
        "server type `{}` holds devices of kinds: {}",
        entry.t.name,
        device_kinds_of(cluster, entry.t)
    ))
}

/// The devices and cores the pod holds: the ids it lists, the rest near them (cores on the
/// listed GPUs' NUMA nodes first, GPUs on the listed cores' first), or the allocator's pick.
fn take_resources(
    entry: &Entry<'_>,
    want: Request,
    fixed_gpus: Option<GpuSet>,
    fixed_cores: Option<CoreSet>,
) -> Result<(GpuSet, CoreSet), Vec<Finding>> {
    let (t, alloc) = (entry.t, entry.alloc);
    let usable = t.usable(want);
    match (fixed_gpus, fixed_cores) {
        (Some(g), Some(c)) => Ok((g, c)),
        (None, None) => match place(t, alloc.free_gpus(), alloc.free_cores(), want) {
            Some(pl) => Ok((pl.gpus, pl.cores)),
            None if !t.devices_fit(want, alloc.free_gpus()) => {
                let free = alloc.free_gpus().and(usable).len();
                Err(entry.no_room("gpus", "GPUs", free, want.gpus))
            }
            None => Err(entry.no_room("cores", "cores", alloc.free_cores().len(), want.cores)),
        },
        (Some(g), None) => {
            let near = g
                .iter()
                .map(|x| t.numa_domain(t.gpu_numa[x]).cores)
                .fold(CoreSet::empty(), CoreSet::or);
            let free = alloc.free_cores();
            let first = free
                .and(near)
                .lowest(want.cores.min(free.and(near).len()))
                .unwrap_or_default();
            match free.minus(first).lowest(want.cores - first.len()) {
                Some(rest) => Ok((g, first.or(rest))),
                None => Err(entry.no_room("cores", "cores", free.len(), want.cores)),
            }
        }
        (None, Some(c)) => {
            let near = c
                .iter()
                .map(|x| t.numa_domain(t.numa_of_core(x)).gpus)
                .fold(GpuSet::empty(), GpuSet::or);
            let free = alloc.free_gpus().and(usable);
            let first = free
                .and(near)
                .lowest(want.gpus.min(free.and(near).len()))
                .unwrap_or_default();
            match free.minus(first).lowest(want.gpus - first.len()) {
                Some(rest) => Ok((first.or(rest), c)),
                None => Err(entry.no_room("gpus", "GPUs", free.len(), want.gpus)),
            }
        }
    }
}

/// A class asking for devices of a kind no server of the cluster has (a typo, or a workload
/// imported from another cluster) fits nowhere: an error, not a plan of unplaced pods.
fn unknown_device_kinds(cluster: &Cluster, spec: &PreemptionSpec) -> Vec<Finding> {
    spec.workload
        .iter()
        .enumerate()
        .filter(|(_, c)| c.gpus > 0 && c.gpu_resource.is_some())
        .filter(|(_, c)| {
            let kind = cluster.kind_id(c.gpu_kind());
            cluster.types.iter().all(|t| t.devices_of(kind).is_empty())
        })
        .map(|(i, c)| {
            Finding::new(
                "spec::unknown-device-kind",
                p!["workload", i, "gpu_resource"],
                format!(
                    "no server of cluster `{}` has devices of kind `{}`",
                    cluster.name,
                    c.gpu_kind()
                ),
                "no such device kind",
            )
            .help(format!(
                "the cluster's device kinds: {}",
                cluster.kinds.join(", ")
            ))
        })
        .collect()
}

/// The device kinds a server type holds, for a message.
fn device_kinds_of(cluster: &Cluster, t: &ServerType) -> String {
    let mut kinds: Vec<&str> = t
        .device_kind
        .iter()
        .map(|&k| cluster.kind_name(k))
        .collect();
    kinds.dedup();
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join(", ")
    }
}
