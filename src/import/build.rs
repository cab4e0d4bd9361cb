//! What every importer shares: server layouts (the documented default when the source says
//! nothing of NUMA), server types and pools with the nodes' own names, workload classes by pod
//! shape, the QoS table, and an allocation ledger that places running pods with the node
//! allocator and writes them with explicit GPU and core ids.

use std::collections::BTreeMap;

use crate::spec::eligibility::{AffinityTerm, PreemptionPolicy, Toleration};
use crate::spec::preemption::{
    IdsOrCount, PreemptEntry, PreemptionObjective, PreemptionPlanners, RunningPod,
    SimulationSettings, TopologyQos, WorkloadClass,
};
use crate::spec::validate::{MAX_CORES_PER_SERVER, MAX_GPUS_PER_SERVER};
use crate::spec::{ClusterSpec, Penalty, PoolSpec, PreemptionSpec, ServerTypeSpec, SpecKind};
use crate::topology::{CoreSet, DeviceKind, GpuSet, Request, ServerType, device_kinds, place};

/// Slowdowns assumed for a layout coplan derived itself (no NRT object, no template): a
/// placement across sockets is twice as slow, within a socket as fast as within one NUMA node
/// (the built-in `a100-8g` figures). They are a stated assumption, not a measurement.
pub const DEFAULT_PENALTY: Penalty = Penalty {
    numa: 1.0,
    socket: 1.0,
    cross_socket: 2.0,
};

/// Cores at and above which the default layout has two sockets.
pub const DEFAULT_TWO_SOCKET_CORES: u64 = 16;

/// The default layout of a node that reports only totals (DESIGN §11.1; `docs/import.md`):
/// two sockets of one NUMA node each when it has at least 16 cores and an even number of GPUs
/// (cores split evenly, an odd core dropped; the first half of the GPUs on NUMA node 0), else
/// one socket with one NUMA node. Returns the layout and the cores it could not use.
pub fn default_layout(cores: u64, gpus: u64, gpu_model: Option<&str>) -> (ServerTypeSpec, u64) {
    let cores = cores.min(MAX_CORES_PER_SERVER as u64);
    let gpus = gpus.min(MAX_GPUS_PER_SERVER as u64);
    let two = cores >= DEFAULT_TWO_SOCKET_CORES && gpus.is_multiple_of(2);
    let sockets = if two { 2 } else { 1 };
    let cores_per_numa = (cores / sockets).max(1);
    let dropped = cores.saturating_sub(cores_per_numa * sockets);
    let gpu_numa = (0..gpus)
        .map(|g| (g * sockets / gpus.max(1)) as i64)
        .collect();
    (
        ServerTypeSpec {
            name: String::new(),
            gpu_model: gpu_model.map(str::to_string),
            gpu_memory_mib: 0,
            sockets: sockets as i64,
            numa_per_socket: 1,
            cores_per_numa: cores_per_numa as i64,
            core_group_size: None,
            gpu_numa,
            penalty: DEFAULT_PENALTY,
            topology_policy: None,
            topology_scope: None,
            gpu_resource: None,
            gpu_pcie_root: Vec::new(),
            devices: Vec::new(),
        },
        dropped,
    )
}

/// A name fit for a spec: lower-case letters, digits and single dashes.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "x".into() } else { out }
}

/// Server types by layout and the nodes of each, in the order nodes were added.
#[derive(Debug, Default)]
pub struct ClusterBuilder {
    types: Vec<ServerTypeSpec>,
    /// (node name, index into `types`, pool label value), in the order added.
    nodes: Vec<(String, usize, Option<String>)>,
}

impl ClusterBuilder {
    /// Adds a node of layout `layout` (its `name` ignored); nodes with identical layouts share
    /// one server type, named from `hint` and the shape. Returns the type's name.
    pub fn add_node(&mut self, name: &str, layout: &ServerTypeSpec, hint: &str) -> String {
        self.add_node_in(name, layout, hint, None)
    }

    /// [`ClusterBuilder::add_node`] for a node of a named pool (`--pool-label`): the pool's
    /// nodes of one type form one pool of the cluster.
    pub fn add_node_in(
        &mut self,
        name: &str,
        layout: &ServerTypeSpec,
        hint: &str,
        pool: Option<&str>,
    ) -> String {
        let same = |t: &ServerTypeSpec| {
            ServerTypeSpec {
                name: String::new(),
                ..t.clone()
            } == ServerTypeSpec {
                name: String::new(),
                ..layout.clone()
            }
        };
        let index = match self.types.iter().position(same) {
            Some(i) => i,
            None => {
                let numa = layout.sockets * layout.numa_per_socket;
                let base = format!(
                    "{}-{}g-{}s{}n-{}c",
                    slug(hint),
                    layout.gpu_numa.len(),
                    layout.sockets,
                    numa,
                    layout.cores_per_numa * numa
                );
                let mut type_name = base.clone();
                let mut k = 2;
                while self.types.iter().any(|t| t.name == type_name) {
                    type_name = format!("{base}-{k}");
                    k += 1;
                }
                self.types.push(ServerTypeSpec {
                    name: type_name,
                    ..layout.clone()
                });
                self.types.len() - 1
            }
        };
        self.nodes
            .push((name.to_string(), index, pool.map(str::to_string)));
        self.types[index].name.clone()
    }

    /// Number of nodes added so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The cluster: the types that are not built-in templates, one pool per type with the
    /// nodes' own names in the order they were added. `builtin` names types taken as they are.
    pub fn build(&self, name: &str, builtin: &[String]) -> ClusterSpec {
        // Pools: one per type, or per (type, pool label value) when nodes name pools; a
        // named pool of one type is prefixed by its name, of several by name and type.
        let mut types_of_pool: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (_, t, pool) in &self.nodes {
            if let Some(p) = pool {
                let v = types_of_pool.entry(p).or_default();
                if !v.contains(t) {
                    v.push(*t);
                }
            }
        }
        let mut pools = Vec::new();
        for (i, t) in self.types.iter().enumerate() {
            let mut keys: Vec<Option<&str>> = Vec::new();
            for (_, ti, pool) in &self.nodes {
                if *ti == i && !keys.contains(&pool.as_deref()) {
                    keys.push(pool.as_deref());
                }
            }
            for key in keys {
                let names: Vec<String> = self
                    .nodes
                    .iter()
                    .filter(|(_, ti, p)| *ti == i && p.as_deref() == key)
                    .map(|(n, _, _)| n.clone())
                    .collect();
                let name_prefix = match key {
                    None => format!("{}-", t.name),
                    Some(p) if types_of_pool.get(p).is_some_and(|v| v.len() == 1) => {
                        format!("{}-", slug(p))
                    }
                    Some(p) => format!("{}-{}-", slug(p), t.name),
                };
                pools.push(PoolSpec {
                    server_type: t.name.clone(),
                    count: names.len() as i64,
                    name_prefix,
                    names: Some(names),
                    ..Default::default()
                });
            }
        }
        ClusterSpec {
            kind: None,
            name: name.to_string(),
            server_type: self
                .types
                .iter()
                .filter(|t| !builtin.contains(&t.name))
                .cloned()
                .collect(),
            pool: pools,
            ..Default::default()
        }
    }

    /// The layout of every type, by name.
    pub fn types(&self) -> &[ServerTypeSpec] {
        &self.types
    }

    /// Adds a node of a built-in template, used as it is.
    pub fn add_template_node(&mut self, name: &str, template: &ServerTypeSpec) {
        let index = match self.types.iter().position(|t| t.name == template.name) {
            Some(i) => i,
            None => {
                self.types.push(template.clone());
                self.types.len() - 1
            }
        };
        self.nodes.push((name.to_string(), index, None));
    }
}

/// How a pod class maps to the spec: priority, topology QoS and whether it may be evicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QosMapping {
    /// PriorityClass value given to pods of the class.
    pub priority: i64,
    /// Topology QoS the pods get when they preempt.
    pub topology_qos: TopologyQos,
    /// Whether pods of the class may be evicted.
    pub preemptible: bool,
}

/// Parses a `--qos CLASS=PRIORITY:TOPOLOGY[:preemptible]` value.
pub fn parse_qos_override(text: &str) -> Result<(String, QosMapping), String> {
    let usage = "expected CLASS=PRIORITY:TOPOLOGY[:preemptible], e.g. BE=100:none:preemptible \
                 (TOPOLOGY is guaranteed, best-effort or none)";
    let (class, rest) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: {usage}"))?;
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || class.trim().is_empty() {
        return Err(format!("`{text}`: {usage}"));
    }
    let priority: i64 = parts[0].trim().parse::<i32>().map(i64::from).map_err(|_| {
        format!(
            "`{text}`: priority `{}` is not a 32-bit integer; {usage}",
            parts[0]
        )
    })?;
    let topology_qos = match parts[1].trim() {
        "guaranteed" => TopologyQos::Guaranteed,
        "best-effort" => TopologyQos::BestEffort,
        "none" => TopologyQos::None,
        other => return Err(format!("`{text}`: unknown topology QoS `{other}`; {usage}")),
    };
    let preemptible = match parts.get(2).map(|p| p.trim()) {
        None => false,
        Some("preemptible") => true,
        Some(other) => return Err(format!("`{text}`: `{other}` is not `preemptible`; {usage}")),
    };
    Ok((
        class.trim().to_string(),
        QosMapping {
            priority,
            topology_qos,
            preemptible,
        },
    ))
}

/// What a pod asks of its node (DESIGN §12.1), as its workload class carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClassRules {
    /// `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity terms.
    pub node_affinity: Vec<AffinityTerm>,
    /// Tolerations, sorted.
    pub tolerations: Vec<Toleration>,
    /// Whether it may evict.
    pub preemption_policy: PreemptionPolicy,
    /// The device kind its GPUs are (`None`: whole GPUs of the default kind).
    pub gpu_resource: Option<String>,
    /// Its claim's constraint on where its devices lie.
    pub device_alignment: Option<crate::spec::preemption::DeviceAlignment>,
}

/// Workload classes by shape: pods of identical shape and rules share one class.
#[derive(Debug, Default)]
pub struct ClassRegistry {
    classes: Vec<WorkloadClass>,
    by_shape: BTreeMap<(i64, u32, u32, TopologyQos, bool, ClassRules), usize>,
}

impl ClassRegistry {
    /// The class of a pod of this shape (created on first use, named `<hint>-<g>g<c>c`).
    pub fn class_of(&mut self, hint: &str, qos: QosMapping, gpus: u32, cores: u32) -> String {
        self.class_with_rules(hint, qos, (gpus, cores), ClassRules::default())
    }

    /// [`ClassRegistry::class_of`] for pods that carry scheduling rules: pods of one shape
    /// with other rules are another class.
    pub fn class_with_rules(
        &mut self,
        hint: &str,
        qos: QosMapping,
        (gpus, cores): (u32, u32),
        rules: ClassRules,
    ) -> String {
        let key = (
            qos.priority,
            gpus,
            cores,
            qos.topology_qos,
            qos.preemptible,
            rules.clone(),
        );
        if let Some(&i) = self.by_shape.get(&key) {
            return self.classes[i].name.clone();
        }
        let base = match &rules.gpu_resource {
            None => format!("{}-{gpus}g{cores}c", slug(hint)),
            Some(kind) => {
                let short = kind.rsplit('/').next().unwrap_or(kind);
                format!("{}-{gpus}x{}-{cores}c", slug(hint), slug(short))
            }
        };
        let mut name = base.clone();
        let mut k = 2;
        while self.classes.iter().any(|c| c.name == name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        self.classes.push(WorkloadClass {
            name: name.clone(),
            priority: qos.priority,
            gpus: i64::from(gpus),
            cores: i64::from(cores),
            topology_qos: qos.topology_qos,
            preemptible: qos.preemptible,
            node_selector: rules.node_selector,
            node_affinity: rules.node_affinity,
            tolerations: rules.tolerations,
            preemption_policy: rules.preemption_policy,
            gpu_resource: rules.gpu_resource,
            device_alignment: rules.device_alignment,
        });
        self.by_shape.insert(key, self.classes.len() - 1);
        name
    }

    /// The workload classes, in order of first use.
    pub fn into_classes(self) -> Vec<WorkloadClass> {
        self.classes
    }
}

/// Preemptors in arrival order as (class, own name): a named pod is an entry of its own;
/// consecutive unnamed pods of one class are one entry.
pub fn preempt_entries(in_order: &[(String, Option<String>)]) -> Vec<PreemptEntry> {
    let mut out: Vec<PreemptEntry> = Vec::new();
    for (class, name) in in_order {
        match out.last_mut() {
            Some(last) if name.is_none() && last.name.is_none() && &last.workload == class => {
                last.count += 1
            }
            _ => out.push(PreemptEntry {
                name: name.clone(),
                ..PreemptEntry::pods_of(class, 1)
            }),
        }
    }
    out
}

/// A preemption workload of imported classes, running pods and preemptors; every setting
/// the import does not decide at its default.
pub fn preemption_workload(
    name: String,
    now_s: Option<f64>,
    classes: Vec<WorkloadClass>,
    running: Vec<RunningPod>,
    preemptors: &[(String, Option<String>)],
) -> PreemptionSpec {
    PreemptionSpec {
        kind: SpecKind::Preemption,
        name: Some(name),
        now_s,
        workload: classes,
        running,
        fill: None,
        preempt: preempt_entries(preemptors),
        disruption_budget: Vec::new(),
        flextopo: Default::default(),
        objective: PreemptionObjective::default(),
        planners: PreemptionPlanners::default(),
        simulation: SimulationSettings::default(),
    }
}

/// Free GPUs and cores of every node, and the running pods placed on them.
#[derive(Debug)]
pub struct Ledger {
    /// The layouts of the builder's server types, by type index.
    pub types: Vec<ServerType>,
    /// The device kinds of the cluster, numbered as the layouts number them.
    pub kinds: Vec<String>,
    /// Per node: (name, type index, free GPUs, free cores).
    nodes: Vec<(String, usize, GpuSet, CoreSet)>,
    by_name: BTreeMap<String, usize>,
    /// The pods placed so far, as `[[running]]` entries with explicit ids.
    pub running: Vec<RunningPod>,
    /// GPUs of every node.
    pub gpus_total: u64,
    /// GPUs held by the placed pods.
    pub gpus_used: u64,
}

impl Ledger {
    /// An empty ledger over the builder's nodes.
    pub fn new(builder: &ClusterBuilder) -> Self {
        let kinds = device_kinds(&builder.types);
        let types: Vec<ServerType> = builder
            .types
            .iter()
            .map(|t| ServerType::with_kinds(t, &kinds))
            .collect();
        let nodes: Vec<(String, usize, GpuSet, CoreSet)> = builder
            .nodes
            .iter()
            .map(|(n, t, _)| {
                let st = &types[*t];
                (
                    n.clone(),
                    *t,
                    GpuSet::range(0, st.gpu_count()),
                    CoreSet::range(0, st.core_count()),
                )
            })
            .collect();
        let by_name = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.0.clone(), i))
            .collect();
        let gpus_total = nodes.iter().map(|n| types[n.1].gpu_count() as u64).sum();
        Ledger {
            types,
            kinds,
            nodes,
            by_name,
            running: Vec::new(),
            gpus_total,
            gpus_used: 0,
        }
    }

    /// Index of the node named `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Name of node `node`.
    pub fn node_name(&self, node: usize) -> &str {
        &self.nodes[node].0
    }

    /// Layout of node `node`'s server type.
    pub fn node_type(&self, node: usize) -> &ServerType {
        &self.types[self.nodes[node].1]
    }

    /// Free (GPUs, cores) of a node.
    pub fn free(&self, node: usize) -> (GpuSet, CoreSet) {
        (self.nodes[node].2, self.nodes[node].3)
    }

    /// The node allocator's placement of a request of whole default GPUs on a node, if it fits.
    pub fn allocator_placement(
        &self,
        node: usize,
        gpus: u32,
        cores: u32,
    ) -> Option<(GpuSet, CoreSet)> {
        self.place_request(node, Request::plain(gpus, cores))
    }

    /// The node allocator's placement of `req` on a node, if it fits.
    pub fn place_request(&self, node: usize, req: Request) -> Option<(GpuSet, CoreSet)> {
        let (free_gpus, free_cores) = self.free(node);
        place(self.node_type(node), free_gpus, free_cores, req).map(|p| (p.gpus, p.cores))
    }

    /// The request of `gpus` devices of kind `kind` (`None`: whole GPUs) with a claim's
    /// constraint, and `cores` cores, as the layouts number kinds.
    pub fn request(
        &self,
        (gpus, cores): (u32, u32),
        kind: Option<&str>,
        alignment: Option<crate::spec::preemption::DeviceAlignment>,
    ) -> Request {
        let kind = kind.unwrap_or(crate::spec::cluster::DEFAULT_GPU_KIND);
        Request {
            gpus,
            cores,
            kind: self
                .kinds
                .iter()
                .position(|k| k == kind)
                .map_or(DeviceKind::ABSENT, |i| DeviceKind(i as u16)),
            alignment,
        }
    }

    /// The node a best-fit scheduler picks among `allowed` nodes: the fewest free GPUs left
    /// after the pod, then the fewest free cores, then the lowest name; the allocator must
    /// place it there.
    pub fn best_fit(
        &self,
        gpus: u32,
        cores: u32,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut best: Option<(u32, u32, &str, usize)> = None;
        for (i, (name, _, fg, fc)) in self.nodes.iter().enumerate() {
            if fg.len() < gpus || fc.len() < cores || !allowed(i) {
                continue;
            }
            let key = (fg.len() - gpus, fc.len() - cores, name.as_str(), i);
            if best.is_none_or(|b| (key.0, key.1, key.2) < (b.0, b.1, b.2)) {
                best = Some(key);
            }
        }
        best.map(|b| b.3)
    }

    /// Takes exactly these GPUs and cores on a node (they must be free) and records the pod.
    pub fn take(
        &mut self,
        node: usize,
        (class, name): (&str, Option<&str>),
        (gpus, cores): (GpuSet, CoreSet),
        start_time_s: Option<f64>,
    ) {
        let entry = &mut self.nodes[node];
        entry.2 = entry.2.minus(gpus);
        entry.3 = entry.3.minus(cores);
        self.gpus_used += u64::from(gpus.len());
        let ids = |v: Vec<usize>| IdsOrCount::Ids(v.into_iter().map(|i| i as i64).collect());
        self.running.push(RunningPod {
            name: name.map(str::to_string),
            workload: class.to_string(),
            node: entry.0.clone(),
            gpus: Some(ids(gpus.iter().collect())),
            cores: Some(ids(cores.iter().collect())),
            start_time_s,
        });
    }

    /// Share of the cluster's GPUs in use.
    pub fn gpu_utilization(&self) -> f64 {
        if self.gpus_total == 0 {
            0.0
        } else {
            self.gpus_used as f64 / self.gpus_total as f64
        }
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
