//! `coplan import k8s`: a Kubernetes snapshot (`kubectl get nodes,pods -A -o yaml|json`,
//! multi-document YAML, NodeResourceTopology objects) → a cluster spec and a preemption
//! workload whose preemptors are the Pending pods. The mapping rules are in `docs/import.md`.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use super::build::{
    ClassRegistry, ClusterBuilder, DEFAULT_PENALTY, Ledger, QosMapping, default_layout,
    preemption_workload,
};
use super::error::ImportError;
use super::k8s_objects::{Document, Object, Quantity, documents, ignored_fields};
use super::quantity::{self, ceil_units, floor_units};
use super::summary::ImportSummary;
use super::time::rfc3339_seconds;
use crate::spec::preemption::TopologyQos;
use crate::spec::validate::{MAX_CORES_PER_SERVER, MAX_GPUS_PER_SERVER};
use crate::spec::{ClusterSpec, PreemptionSpec, ServerTypeSpec};
use crate::topology::GpuSet;

/// The GPU resource coplan reads.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The node label that names the GPU model (NVIDIA GPU feature discovery).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
/// Pods at or above this priority (the system-critical classes) are never made victims.
pub const SYSTEM_PRIORITY: i64 = 1_000_000_000;
/// The priority of the pods that stand for the kubelet's reserved cores
/// (`system-node-critical`).
pub const SYSTEM_RESERVED_PRIORITY: i64 = 2_000_001_000;

/// What an import produced.
#[derive(Debug, Clone)]
pub struct Imported {
    pub cluster: ClusterSpec,
    pub workload: PreemptionSpec,
    pub summary: ImportSummary,
    /// Comment lines for the top of both files: where they came from.
    pub comments: Vec<String>,
}

/// The kubelet Topology Manager policy of a node, as its NRT object reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TopologyPolicy {
    None,
    BestEffort,
    Restricted,
    SingleNumaNode,
}

impl TopologyPolicy {
    /// From a v1alpha2 `topologyManagerPolicy` attribute or a v1alpha1 `topologyPolicies`
    /// entry.
    fn parse(text: &str) -> Option<Self> {
        let t = text.to_ascii_lowercase().replace(['-', '_'], "");
        if t.starts_with("singlenumanode") {
            Some(Self::SingleNumaNode)
        } else if t.starts_with("restricted") {
            Some(Self::Restricted)
        } else if t.starts_with("besteffort") {
            Some(Self::BestEffort)
        } else if t.starts_with("none") {
            Some(Self::None)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::BestEffort => "best-effort",
            Self::Restricted => "restricted",
            Self::SingleNumaNode => "single-numa-node",
        }
    }
}

/// The pod QoS classes of Kubernetes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosClass {
    Guaranteed,
    Burstable,
    BestEffort,
}

/// The topology QoS of a pod (the table in `docs/import.md`): under `single-numa-node` or
/// `restricted`, Guaranteed pods need alignment; under `best-effort` they prefer it; under
/// `none` nothing aligns; with no NRT object the policy is unknown and the DESIGN defaults
/// apply (Guaranteed → guaranteed, Burstable → best-effort, BestEffort → none).
pub fn topology_qos(qos: QosClass, policy: Option<TopologyPolicy>) -> TopologyQos {
    use TopologyPolicy as P;
    match (qos, policy) {
        (_, Some(P::None)) | (QosClass::BestEffort, _) => TopologyQos::None,
        (QosClass::Guaranteed, Some(P::SingleNumaNode | P::Restricted) | None) => {
            TopologyQos::Guaranteed
        }
        (QosClass::Guaranteed, Some(P::BestEffort)) | (QosClass::Burstable, _) => {
            TopologyQos::BestEffort
        }
    }
}

/// Where an object came from: file, document, item, and the line it starts on.
#[derive(Debug, Clone, Copy)]
struct Origin {
    file: usize,
    document: usize,
    item: Option<usize>,
    line: usize,
}

impl Origin {
    fn describe(&self, files: &[(String, String)]) -> String {
        let item = self.item.map(|i| format!(", item {i}")).unwrap_or_default();
        format!("{}, document {}{item}", files[self.file].0, self.document)
    }
}

struct NodeObject {
    name: String,
    origin: Origin,
    /// First line of the node's document (spans inside it count from there).
    doc_line: usize,
    object: Object,
}

struct PodObject {
    origin: Origin,
    object: Object,
}

/// The located error of a value written at `at` (a line within the document), its message
/// naming the document (and the item of a List).
fn at_span<T>(origin: &Origin, doc_line: usize, s: &Spanned<T>, message: String) -> ImportError {
    let item = origin
        .item
        .map(|i| format!(", item {i}"))
        .unwrap_or_default();
    ImportError::at(
        origin.file,
        doc_line + s.referenced.line() as usize - 1,
        Some(s.referenced.column() as usize),
        format!("document {}{item}: {message}", origin.document),
    )
}

/// A YAML parser's message without the location it repeats (relative to the document, which
/// would mislead in a multi-document file; the diagnostic shows the real one).
fn parser_message(text: &str) -> String {
    let first = text.lines().next().unwrap_or("malformed");
    let mut m = first.strip_prefix("error: ").unwrap_or(first);
    if m.starts_with("line ")
        && let Some((_, rest)) = m.split_once(": ")
    {
        m = rest;
    }
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

/// Reads every document of every file into objects with their origin; counts ignored fields.
fn read_objects(
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Vec<(Origin, usize, Object)>, ImportError> {
    let mut out = Vec::new();
    for (fi, (_, text)) in files.iter().enumerate() {
        for (
            di,
            Document {
                text: doc,
                first_line,
            },
        ) in documents(text).into_iter().enumerate()
        {
            let document = di + 1;
            summary.read("documents", 1);
            let object: Object = serde_saphyr::from_str(doc).map_err(|e| {
                let (line, column) = e
                    .location()
                    .map(|l| (l.line() as usize, Some(l.column() as usize)))
                    .unwrap_or((1, None));
                let message = parser_message(&e.to_string());
                ImportError::at(
                    fi,
                    first_line + line.max(1) - 1,
                    column,
                    format!("document {document}: {message}"),
                )
                .with(
                    "malformed here",
                    "expected a Kubernetes object (Node, Pod, NodeResourceTopology) or a `kind: List` of them, as `kubectl get … -o yaml|json` writes",
                )
            })?;
            let generic: serde_json::Value =
                serde_saphyr::from_str(doc).unwrap_or(serde_json::Value::Null);
            let origin = Origin {
                file: fi,
                document,
                item: None,
                line: first_line,
            };
            if object.kind.as_deref() == Some("List") || !object.items.is_empty() {
                let generic_items = generic
                    .get("items")
                    .and_then(|v| v.as_array())
                    .cloned()
                    .unwrap_or_default();
                for (ii, item) in object.items.into_iter().enumerate() {
                    let origin = Origin {
                        item: Some(ii + 1),
                        line: first_line + item.referenced.line() as usize - 1,
                        ..origin
                    };
                    let kind = item.value.kind.clone().unwrap_or_default();
                    if let Some(g) = generic_items.get(ii) {
                        count_ignored(&kind, g, summary);
                    }
                    out.push((origin, first_line, item.value));
                }
            } else {
                let kind = object.kind.clone().unwrap_or_default();
                count_ignored(&kind, &generic, summary);
                out.push((origin, first_line, object));
            }
        }
    }
    Ok(out)
}

fn count_ignored(kind: &str, value: &serde_json::Value, summary: &mut ImportSummary) {
    if matches!(kind, "Node" | "Pod" | "NodeResourceTopology") {
        ignored_fields(kind, value, &mut summary.ignored_fields);
    }
}

/// A parsed quantity, or the located error of its text.
fn parse_quantity(
    origin: &Origin,
    doc_line: usize,
    q: &Quantity,
    what: &str,
) -> Result<f64, ImportError> {
    let v = quantity::parse(&q.value.0).map_err(|e| {
        at_span(origin, doc_line, q, format!("{what}: {e}")).with(
            "not a quantity",
            "Kubernetes quantities are a number with an optional suffix: 64, 63500m, 512Mi, 1e3",
        )
    })?;
    if v < 0.0 {
        return Err(at_span(
            origin,
            doc_line,
            q,
            format!("{what} is negative: `{}`", q.value.0),
        )
        .with("negative", "resource quantities are at least 0"));
    }
    Ok(v)
}

/// Per NUMA node (socket-major): cores, GPUs, and the cores and GPUs in use per `available`.
#[derive(Debug, Clone)]
struct NrtLayout {
    layout: ServerTypeSpec,
    /// NUMA index → (cores in use, GPUs in use) per `allocatable − available`, when given.
    in_use: Option<Vec<(u64, u64)>>,
    policy: Option<TopologyPolicy>,
    /// NUMA index → cores the kubelet keeps for the system (capacity − allocatable).
    reserved: Vec<u64>,
}

/// Sorts NRT zone names numerically where they end in a number (`node-2` before `node-10`).
fn zone_order(name: &str) -> (u64, String) {
    let digits: String = name
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (digits.parse().unwrap_or(u64::MAX), name.to_string())
}

/// The NUMA layout an NRT object reports, or `None` when it has no NUMA zones.
fn nrt_layout(
    nrt: &Object,
    origin: &Origin,
    doc_line: usize,
    gpu_model: Option<&str>,
    node: &str,
    summary: &mut ImportSummary,
) -> Result<Option<NrtLayout>, ImportError> {
    let mut zones: Vec<&super::k8s_objects::Zone> = nrt
        .zones
        .iter()
        .filter(|z| z.zone_type.eq_ignore_ascii_case("node"))
        .collect();
    zones.sort_by_key(|z| zone_order(&z.name));
    // Zones of one NUMA node: allocatable cores, GPUs, cores in use, GPUs in use; and the
    // cores the hardware has (capacity).
    let mut figures: Vec<(u64, u64, Option<u64>, Option<u64>)> = Vec::new();
    let mut hardware_cores: Vec<u64> = Vec::new();
    let mut names = Vec::new();
    for z in &zones {
        let mut f = (0, 0, None, None);
        let mut zone_capacity = 0;
        for r in &z.resources {
            let is_cpu = r.name == "cpu";
            if !is_cpu && r.name != GPU_RESOURCE {
                continue;
            }
            let what = format!("zone `{}` resource `{}`", z.name, r.name);
            let total = match r.allocatable.as_ref().or(r.capacity.as_ref()) {
                Some(q) => parse_quantity(origin, doc_line, q, &what)?,
                None => 0.0,
            };
            let (units, rounded) = floor_units(total);
            if rounded {
                summary.rounded("nrt_zone_fractional_resources", 1);
            }
            let used = match &r.available {
                Some(q) => {
                    let available = parse_quantity(origin, doc_line, q, &what)?;
                    Some(floor_units((total - available).max(0.0)).0.min(units))
                }
                None => None,
            };
            if is_cpu {
                let capacity = match &r.capacity {
                    Some(q) => floor_units(parse_quantity(origin, doc_line, q, &what)?).0,
                    None => units,
                };
                zone_capacity = capacity.max(units);
                f.0 = units;
                f.2 = used;
            } else {
                f.1 = units;
                f.3 = used;
            }
        }
        if f.0 == 0 && f.1 == 0 {
            summary.dropped("nrt_zones_without_cpu_or_gpu", 1);
            continue;
        }
        figures.push(f);
        hardware_cores.push(zone_capacity);
        names.push(z.name.clone());
    }
    if figures.is_empty() {
        return Ok(None);
    }
    let n = figures.len();
    // Sockets: NUMA nodes closer to each other than the farthest pair share a socket.
    let cost = |a: usize, b: usize| -> Option<i64> {
        zones
            .iter()
            .find(|z| z.name == names[a])
            .and_then(|z| z.costs.iter().find(|c| c.name == names[b]))
            .map(|c| c.value)
    };
    let mut farthest = None::<i64>;
    for a in 0..n {
        for b in 0..n {
            if a != b
                && let Some(c) = cost(a, b)
            {
                farthest = Some(farthest.map_or(c, |f: i64| f.max(c)));
            }
        }
    }
    let mut socket_of: Vec<usize> = (0..n).collect();
    if let Some(far) = farthest {
        for a in 0..n {
            for b in 0..a {
                if cost(a, b).or(cost(b, a)).is_some_and(|c| c < far) {
                    let (from, to) = (socket_of[a], socket_of[b]);
                    for s in socket_of.iter_mut() {
                        if *s == from {
                            *s = to;
                        }
                    }
                }
            }
        }
    } else {
        summary.defaulted("nrt_without_costs_one_socket_per_numa", 1);
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (numa, s) in socket_of.iter().enumerate() {
        groups.entry(*s).or_default().push(numa);
    }
    let sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    let mut order: Vec<usize> = groups.values().flatten().copied().collect();
    let mut sockets = groups.len();
    if sizes.iter().any(|&s| s != sizes[0]) {
        summary.warn(format!(
            "{node}: NRT costs group NUMA nodes into sockets of unequal sizes {sizes:?}; each NUMA node is taken as its own socket"
        ));
        order = (0..n).collect();
        sockets = n;
    }
    let numa_per_socket = n / sockets;
    // The hardware's cores per NUMA node (capacity); what the kubelet reserves (capacity −
    // allocatable) is held by a system pod, so NUMA nodes stay equal.
    let min_cores = order
        .iter()
        .map(|&z| hardware_cores[z])
        .min()
        .unwrap_or(0)
        .max(1);
    let cores_per_numa = min_cores.min(MAX_CORES_PER_SERVER as u64 / n as u64).max(1);
    let dropped_cores: u64 = order
        .iter()
        .map(|&z| hardware_cores[z].saturating_sub(cores_per_numa))
        .sum();
    let reserved: Vec<u64> = order
        .iter()
        .map(|&z| cores_per_numa - figures[z].0.min(cores_per_numa))
        .collect();
    if dropped_cores > 0 {
        summary.rounded("nrt_cores_trimmed_to_equal_numa_nodes", dropped_cores);
    }
    let mut gpu_numa = Vec::new();
    for (numa, &z) in order.iter().enumerate() {
        for _ in 0..figures[z].1 {
            if gpu_numa.len() < MAX_GPUS_PER_SERVER as usize {
                gpu_numa.push(numa as i64);
            }
        }
    }
    let in_use = order
        .iter()
        .map(|&z| match figures[z] {
            (_, _, None, None) => None,
            (_, _, c, g) => Some((c.unwrap_or(0), g.unwrap_or(0))),
        })
        .collect::<Option<Vec<_>>>();
    let mut policy = None;
    for a in &nrt.attributes {
        if a.name == "topologyManagerPolicy" {
            policy = a.value.as_str().and_then(TopologyPolicy::parse);
        }
    }
    if policy.is_none() {
        policy = nrt
            .topology_policies
            .iter()
            .find_map(|p| TopologyPolicy::parse(p));
    }
    Ok(Some(NrtLayout {
        reserved,
        layout: ServerTypeSpec {
            name: String::new(),
            gpu_model: gpu_model.map(str::to_string),
            gpu_memory_mib: 0,
            sockets: sockets as i64,
            numa_per_socket: numa_per_socket as i64,
            cores_per_numa: cores_per_numa as i64,
            core_group_size: None,
            gpu_numa,
            penalty: DEFAULT_PENALTY,
        },
        in_use,
        policy,
    }))
}

/// A pod's whole-unit request of a resource: the larger of the containers' sum and the
/// largest init container (as the scheduler counts it); a missing request falls back to the
/// limit.
fn pod_request(pod: &PodObject, doc_line: usize, resource: &str) -> Result<f64, ImportError> {
    let spec = &pod.object.spec;
    let one = |c: &super::k8s_objects::Container| -> Result<f64, ImportError> {
        match c
            .resources
            .requests
            .get(resource)
            .or_else(|| c.resources.limits.get(resource))
        {
            Some(q) => parse_quantity(&pod.origin, doc_line, q, &format!("request `{resource}`")),
            None => Ok(0.0),
        }
    };
    let mut sum = 0.0;
    for c in &spec.containers {
        sum += one(c)?;
    }
    let mut init: f64 = 0.0;
    for c in &spec.init_containers {
        init = init.max(one(c)?);
    }
    Ok(sum.max(init))
}

/// The QoS class Kubernetes would give a pod without `status.qosClass`.
fn derived_qos(pod: &Object) -> QosClass {
    let cs = &pod.spec.containers;
    let any = cs
        .iter()
        .any(|c| !c.resources.requests.is_empty() || !c.resources.limits.is_empty());
    if !any {
        return QosClass::BestEffort;
    }
    let guaranteed = cs.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = c.resources.limits.get(*r).map(|q| &q.value.0);
            let request = c.resources.requests.get(*r).map(|q| &q.value.0);
            limit.is_some() && (request.is_none() || request == limit)
        })
    });
    if guaranteed {
        QosClass::Guaranteed
    } else {
        QosClass::Burstable
    }
}

/// The objects of a snapshot by kind: nodes and NRT objects by name, pods in input order
/// with the first line of their document.
struct Snapshot {
    nodes: BTreeMap<String, NodeObject>,
    nrts: BTreeMap<String, (Origin, usize, Object)>,
    pods: Vec<(PodObject, usize)>,
}

/// Sorts the objects by kind; a Node, Pod or NRT object without a name is an error, other
/// kinds are counted and skipped.
fn sort_objects(
    objects: Vec<(Origin, usize, Object)>,
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Snapshot, ImportError> {
    let mut nodes: BTreeMap<String, NodeObject> = BTreeMap::new();
    let mut nrts: BTreeMap<String, (Origin, usize, Object)> = BTreeMap::new();
    let mut pods: Vec<(PodObject, usize)> = Vec::new();
    for (origin, doc_line, object) in objects {
        let kind = object.kind.clone().unwrap_or_default();
        summary.read(
            &format!(
                "objects.{}",
                if kind.is_empty() { "(no kind)" } else { &kind }
            ),
            1,
        );
        let name = object.metadata.name.clone();
        let missing_name = || {
            ImportError::at(
                origin.file,
                origin.line,
                None,
                format!("{}: a {kind} without metadata.name", origin.describe(files)),
            )
            .with(
                "no name",
                "every Node, Pod and NodeResourceTopology needs metadata.name",
            )
        };
        match kind.as_str() {
            "Node" => {
                let name = name.ok_or_else(missing_name)?;
                if nodes.contains_key(&name) {
                    summary.dropped("duplicate_nodes", 1);
                    summary.warn(format!(
                        "node `{name}` appears twice; the first ({}) is kept",
                        nodes[&name].origin.describe(files)
                    ));
                    continue;
                }
                nodes.insert(
                    name.clone(),
                    NodeObject {
                        name,
                        origin,
                        doc_line,
                        object,
                    },
                );
            }
            "NodeResourceTopology" => {
                let name = name.ok_or_else(missing_name)?;
                if nrts.contains_key(&name) {
                    summary.dropped("duplicate_nrt_objects", 1);
                    summary.warn(format!(
                        "NRT object `{name}` appears twice; the first is kept"
                    ));
                    continue;
                }
                nrts.insert(name, (origin, doc_line, object));
            }
            "Pod" => {
                name.as_ref().ok_or_else(missing_name)?;
                pods.push((PodObject { origin, object }, doc_line));
            }
            _ => summary.dropped("objects_of_other_kinds", 1),
        }
    }
    if nodes.is_empty() {
        return Err(ImportError::input(
            format!("no Node objects in {}", summary.files.join(", ")),
            Some("export the nodes too: `kubectl get nodes,pods -A -o yaml`".into()),
        ));
    }

    Ok(Snapshot { nodes, nrts, pods })
}

/// What the nodes say: the server types and pools, and per node its Topology Manager policy,
/// the cores its kubelet reserves per NUMA node and the use its NRT reports per NUMA node.
struct NodeFacts {
    builder: ClusterBuilder,
    policies: BTreeMap<String, Option<TopologyPolicy>>,
    reserved: BTreeMap<String, Vec<u64>>,
    in_use: BTreeMap<String, Vec<(u64, u64)>>,
}

/// Nodes → server types and pools, in name order: the NRT layout where there is one, else the
/// default layout.
fn read_nodes(snapshot: &Snapshot, summary: &mut ImportSummary) -> Result<NodeFacts, ImportError> {
    let Snapshot { nodes, nrts, .. } = snapshot;
    let mut builder = ClusterBuilder::default();
    let mut policies: BTreeMap<String, Option<TopologyPolicy>> = BTreeMap::new();
    let mut reserved: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut in_use: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for node in nodes.values() {
        let alloc = &node.object.status;
        let figure = |resource: &str| -> Result<(f64, bool), ImportError> {
            match alloc
                .allocatable
                .get(resource)
                .map(|q| (q, false))
                .or_else(|| alloc.capacity.get(resource).map(|q| (q, true)))
            {
                Some((q, from_capacity)) => Ok((
                    parse_quantity(
                        &node.origin,
                        node.doc_line,
                        q,
                        &format!("allocatable `{resource}`"),
                    )?,
                    from_capacity,
                )),
                None => Ok((0.0, true)),
            }
        };
        let (cpu, cpu_defaulted) = figure("cpu")?;
        let (gpus, _) = figure(GPU_RESOURCE)?;
        if alloc.allocatable.contains_key("memory") || alloc.capacity.contains_key("memory") {
            summary.read("node_memory_figures_not_modelled", 1);
        }
        if cpu_defaulted {
            summary.defaulted("nodes_without_allocatable_cpu", 1);
        }
        let (cores, cores_rounded) = floor_units(cpu);
        if cores_rounded {
            summary.rounded("node_cpu_to_whole_cores", 1);
        }
        let (gpus, _) = floor_units(gpus);
        if cores == 0 && gpus == 0 {
            summary.dropped("nodes_without_cpu_or_gpu", 1);
            summary.warn(format!(
                "node `{}` has no allocatable CPU or GPU; left out",
                node.name
            ));
            continue;
        }
        let model = node
            .object
            .metadata
            .labels
            .get(GPU_PRODUCT_LABEL)
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let hint = model.clone().unwrap_or_else(|| {
            if gpus == 0 {
                "cpu".into()
            } else {
                "gpu".into()
            }
        });
        let nrt = match nrts.get(&node.name) {
            Some((origin, doc_line, nrt)) => nrt_layout(
                nrt,
                origin,
                *doc_line,
                model.as_deref(),
                &node.name,
                summary,
            )?,
            None => None,
        };
        match nrt {
            Some(n) => {
                let gpus_nrt = n.layout.gpu_numa.len() as u64;
                if gpus_nrt != gpus {
                    summary.warn(format!(
                        "node `{}`: allocatable {GPU_RESOURCE} is {gpus} but its NRT zones hold {gpus_nrt}; the zones are used",
                        node.name
                    ));
                }
                summary.mapped("nodes_with_nrt_layout", 1);
                builder.add_node(&node.name, &n.layout, &hint);
                policies.insert(node.name.clone(), n.policy);
                if let Some(u) = n.in_use {
                    in_use.insert(node.name.clone(), u);
                }
                if n.reserved.iter().any(|&r| r > 0) {
                    reserved.insert(node.name.clone(), n.reserved);
                }
            }
            None => {
                let (layout, dropped) = default_layout(cores, gpus, model.as_deref());
                if dropped > 0 {
                    summary.rounded("cores_dropped_by_the_default_layout", dropped);
                }
                summary.defaulted("nodes_with_the_default_layout", 1);
                summary.list("nodes_with_the_default_layout", node.name.clone());
                builder.add_node(&node.name, &layout, &hint);
                policies.insert(node.name.clone(), None);
            }
        }
        if model.is_none() && gpus > 0 {
            summary.defaulted("gpu_nodes_without_a_gpu_product_label", 1);
        }
    }
    for name in nrts.keys() {
        if !nodes.contains_key(name) {
            summary.dropped("nrt_objects_without_a_node", 1);
        }
    }
    Ok(NodeFacts {
        builder,
        policies,
        reserved,
        in_use,
    })
}

/// A pod with its creation time (seconds since the epoch), `namespace/name` and document line.
type Prepared<'a> = (Option<f64>, String, &'a PodObject, usize);

/// Pods in creation order (then name), and the earliest creation time (0 when none has one).
fn pods_in_order<'a>(
    pods: &'a [(PodObject, usize)],
    summary: &mut ImportSummary,
) -> Result<(Vec<Prepared<'a>>, f64), ImportError> {
    let mut prepared = Vec::new();
    let mut t0 = f64::INFINITY;
    for (pod, doc_line) in pods {
        let created = match &pod.object.metadata.creation_timestamp {
            Some(ts) => Some(rfc3339_seconds(&ts.value).ok_or_else(|| {
                at_span(
                    &pod.origin,
                    *doc_line,
                    ts,
                    format!("creationTimestamp `{}` is not an RFC 3339 time", ts.value),
                )
                .with("not a timestamp", "expected e.g. 2024-05-01T10:00:00Z")
            })?),
            None => None,
        };
        if let Some(t) = created {
            t0 = t0.min(t);
        }
        let meta = &pod.object.metadata;
        let name = format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or("default"),
            meta.name.as_deref().unwrap_or_default()
        );
        prepared.push((created, name, pod, *doc_line));
    }
    if prepared.iter().any(|p| p.0.is_none()) {
        summary.defaulted(
            "pods_without_creation_timestamp_ordered_last",
            prepared.iter().filter(|p| p.0.is_none()).count() as u64,
        );
    }
    prepared.sort_by(|a, b| {
        a.0.unwrap_or(f64::INFINITY)
            .total_cmp(&b.0.unwrap_or(f64::INFINITY))
            .then_with(|| a.1.cmp(&b.1))
    });
    let t0 = if t0.is_finite() { t0 } else { 0.0 };

    Ok((prepared, t0))
}

/// The kubelet's reserved cores: the lowest cores of each NUMA node, held by a pod no planner
/// may evict. Placed before any running pod.
fn hold_reserved_cores(
    reserved: &BTreeMap<String, Vec<u64>>,
    ledger: &mut Ledger,
    classes: &mut ClassRegistry,
    summary: &mut ImportSummary,
) {
    for (node_name, per_numa) in reserved {
        let Some(node) = ledger.node_index(node_name) else {
            continue;
        };
        for (z, &r) in per_numa.iter().enumerate() {
            let r = r.min(u64::from(u32::MAX)) as u32;
            if r == 0 {
                continue;
            }
            let class = classes.class_of(
                "system-reserved",
                QosMapping {
                    priority: SYSTEM_RESERVED_PRIORITY,
                    topology_qos: TopologyQos::None,
                    preemptible: false,
                },
                0,
                r,
            );
            let (_, free_cores) = ledger.free(node);
            let d = ledger.node_type(node).numa_domain(z);
            if let Some(cores) = free_cores.and(d.cores).lowest(r) {
                ledger.take(node, &class, (GpuSet::empty(), cores), None);
                summary.mapped("reserved_cores_held_by_system_pods", u64::from(r));
            }
        }
    }
}

/// Places the running pods, node by node in creation order: where the NRT figures say which
/// NUMA nodes are in use, on the NUMA nodes a small exact search finds to explain them; else
/// (and for a pod that spans NUMA nodes) by the node allocator. Warns of what the figures
/// report that no pod explains.
fn place_running(
    to_place: &[ToPlace],
    mut in_use: BTreeMap<String, Vec<(u64, u64)>>,
    ledger: &mut Ledger,
    summary: &mut ImportSummary,
) {
    let mut not_fitting: Vec<String> = Vec::new();
    let mut zones_of: BTreeMap<usize, Vec<Option<usize>>> = BTreeMap::new();
    for (node_name, budget) in &in_use {
        let Some(node) = ledger.node_index(node_name) else {
            continue;
        };
        let requests: Vec<(u32, u32)> = to_place
            .iter()
            .filter(|p| p.0 == node)
            .map(|p| p.2)
            .collect();
        // Room per NUMA node: what the reserved cores leave free.
        let t = ledger.node_type(node);
        let (free_gpus, free_cores) = ledger.free(node);
        let room: Vec<(u64, u64)> = (0..t.numa_count())
            .map(|z| {
                let d = t.numa_domain(z);
                (
                    u64::from(free_cores.and(d.cores).len()),
                    u64::from(free_gpus.and(d.gpus).len()),
                )
            })
            .collect();
        zones_of.insert(node, assign_zones(&requests, budget, &room));
    }
    let mut nth_on_node: BTreeMap<usize, usize> = BTreeMap::new();
    for (node, class, (g, c), start, name) in to_place {
        let k = nth_on_node.entry(*node).or_default();
        let zone = zones_of.get(node).map(|z| z[*k]);
        *k += 1;
        let placed = match zone {
            Some(Some(z)) => {
                let t = ledger.node_type(*node);
                let (fg, fc) = ledger.free(*node);
                let d = t.numa_domain(z);
                match (fg.and(d.gpus).lowest(*g), fc.and(d.cores).lowest(*c)) {
                    (Some(pg), Some(pc)) => {
                        summary.mapped("running_pods_placed_to_match_nrt", 1);
                        Some((pg, pc))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let placed = placed.or_else(|| {
            let p = ledger.allocator_placement(*node, *g, *c);
            if p.is_some() {
                summary.mapped(
                    if zone.is_some() {
                        "running_pods_spanning_nrt_zones_placed_by_the_allocator"
                    } else {
                        "running_pods_placed_by_the_allocator"
                    },
                    1,
                );
            }
            p
        });
        let Some(p) = placed else {
            summary.dropped("running_pods_that_do_not_fit", 1);
            not_fitting.push(name.clone());
            continue;
        };
        // What the pod explains of each NUMA node's reported use, wherever it landed.
        if let Some(budget) = in_use.get_mut(ledger.node_name(*node)) {
            let t = ledger.node_type(*node);
            for (z, b) in budget.iter_mut().enumerate() {
                let d = t.numa_domain(z);
                b.0 = b.0.saturating_sub(u64::from(p.1.and(d.cores).len()));
                b.1 = b.1.saturating_sub(u64::from(p.0.and(d.gpus).len()));
            }
        }
        ledger.take(*node, class, p, *start);
    }
    if !not_fitting.is_empty() {
        summary.warn(format!(
            "{} running pod(s) do not fit their node as coplan counts whole cores and GPUs (first: {}); left out",
            not_fitting.len(),
            not_fitting.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    for (node, budget) in &in_use {
        let left: (u64, u64) = budget.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        if left != (0, 0) {
            summary.warn(format!(
                "node `{node}`: its NRT reports {} core(s) and {} GPU(s) in use that no imported pod explains",
                left.0, left.1
            ));
        }
    }
}

/// Imports a Kubernetes snapshot from `files` (name, text).
pub fn import(files: &[(String, String)]) -> Result<Imported, ImportError> {
    let names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let mut summary = ImportSummary::new("k8s", names);
    let objects = read_objects(files, &mut summary)?;
    let snapshot = sort_objects(objects, files, &mut summary)?;
    let NodeFacts {
        builder,
        policies,
        reserved,
        in_use,
    } = read_nodes(&snapshot, &mut summary)?;
    // The cluster's policy (for pending pods, which have no node yet): the most common
    // reported one, ties to the stricter; unknown when no node reports one.
    let mut counts: BTreeMap<TopologyPolicy, usize> = BTreeMap::new();
    for p in policies.values().flatten() {
        *counts.entry(*p).or_default() += 1;
    }
    let cluster_policy = counts
        .iter()
        .max_by_key(|(p, c)| (**c, **p))
        .map(|(p, _)| *p);
    let (prepared, t0) = pods_in_order(&snapshot.pods, &mut summary)?;
    let mut ledger = Ledger::new(&builder);
    let mut classes = ClassRegistry::default();
    hold_reserved_cores(&reserved, &mut ledger, &mut classes, &mut summary);
    let mut preemptors: Vec<String> = Vec::new();
    let mut to_place: Vec<ToPlace> = Vec::new();
    let mut now_s: f64 = 0.0;
    for (created, name, pod, doc_line) in &prepared {
        let object = &pod.object;
        summary.read("pods", 1);
        let phase = object.status.phase.as_deref();
        let node_name = object.spec.node_name.as_deref();
        let running = match (phase, node_name) {
            (Some("Succeeded" | "Failed"), _) => {
                summary.dropped("pods_finished", 1);
                continue;
            }
            (Some("Running" | "Pending"), Some(_)) => true,
            (Some("Pending"), None) => false,
            (Some("Running"), None) => {
                summary.dropped("running_pods_without_a_node", 1);
                continue;
            }
            (Some(_), _) => {
                summary.dropped("pods_in_an_unknown_phase", 1);
                continue;
            }
            (None, n) => {
                summary.defaulted("pods_without_a_phase", 1);
                n.is_some()
            }
        };
        let cpu = pod_request(pod, *doc_line, "cpu")?;
        let gpu = pod_request(pod, *doc_line, GPU_RESOURCE)?;
        let (cores, cpu_rounded) = ceil_units(cpu);
        let (gpus, gpu_rounded) = ceil_units(gpu);
        if cpu_rounded {
            summary.rounded("pod_cpu_to_whole_cores", 1);
        }
        if gpu_rounded {
            summary.rounded("pod_gpus_to_whole_gpus", 1);
        }
        if cores == 0 && gpus == 0 {
            summary.dropped("pods_without_cpu_or_gpu_requests", 1);
            continue;
        }
        let qos = match object.status.qos_class.as_deref() {
            Some("Guaranteed") => QosClass::Guaranteed,
            Some("Burstable") => QosClass::Burstable,
            Some("BestEffort") => QosClass::BestEffort,
            _ => {
                summary.defaulted("pods_qos_class_derived_from_requests", 1);
                derived_qos(object)
            }
        };
        let priority = object.spec.priority.unwrap_or_else(|| {
            summary.defaulted("pods_without_priority_taken_as_0", 1);
            0
        });
        // Kubernetes priorities are 32-bit.
        let clamped = priority.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
        if clamped != priority {
            summary.rounded("pod_priorities_clamped_to_32_bits", 1);
        }
        let priority = clamped;
        let policy = match (running, node_name) {
            (true, Some(n)) => policies.get(n).copied().flatten(),
            _ => cluster_policy,
        };
        let mapping = QosMapping {
            priority,
            topology_qos: topology_qos(qos, policy),
            preemptible: priority < SYSTEM_PRIORITY,
        };
        let hint = object
            .spec
            .priority_class_name
            .clone()
            .unwrap_or_else(|| format!("p{priority}"));
        let (g, c) = (
            gpus.min(u64::from(u32::MAX)) as u32,
            cores.min(u64::from(u32::MAX)) as u32,
        );
        let class = classes.class_of(&hint, mapping, g, c);
        let start = created.map(|t| t - t0);
        if let Some(t) = start {
            now_s = now_s.max(t);
        }
        if !running {
            preemptors.push(class);
            continue;
        }
        let Some(node_name) = node_name else { continue };
        let Some(node) = ledger.node_index(node_name) else {
            summary.dropped("pods_on_nodes_not_in_the_snapshot", 1);
            continue;
        };
        to_place.push((node, class, (g, c), start, name.clone()));
    }
    place_running(&to_place, in_use, &mut ledger, &mut summary);
    if preemptors.is_empty() {
        summary
            .warn("no Pending pods without a node: the workload has no [[preempt]] entries".into());
    }
    summary.mapped("servers", builder.node_count() as u64);
    summary.mapped("server_types", builder.types().len() as u64);
    summary.mapped("running_pods", ledger.running.len() as u64);
    summary.mapped("preemptors", preemptors.len() as u64);
    if let Some(p) = cluster_policy {
        summary.list("cluster_topology_policy", p.as_str().to_string());
    }
    let stem = files
        .first()
        .map(|f| {
            let file = f.0.rsplit('/').next().unwrap_or(&f.0);
            super::build::slug(file.rsplit_once('.').map_or(file, |(stem, _)| stem))
        })
        .unwrap_or_else(|| "k8s".into());
    let cluster = builder.build(&format!("k8s-{stem}"), &[]);
    let running = std::mem::take(&mut ledger.running);
    let classes = classes.into_classes();
    summary.mapped("workload_classes", classes.len() as u64);
    let workload = preemption_workload(
        format!("k8s snapshot {stem}"),
        Some(now_s),
        classes,
        running,
        &preemptors,
    );
    let comments = vec![
        format!(
            "# Imported by `coplan import k8s` from {}.",
            summary.files.join(", ")
        ),
        "# How Nodes, NodeResourceTopologies and Pods map to coplan: docs/import.md.".into(),
    ];
    Ok(Imported {
        cluster,
        workload,
        summary,
        comments,
    })
}

/// A running pod waiting for its place: node, class, (GPUs, cores), start time, name.
type ToPlace = (usize, String, (u32, u32), Option<f64>, String);

/// Search nodes the zone assignment of one node's pods may visit before it gives up.
const ZONE_SEARCH_LIMIT: usize = 200_000;

/// One NUMA node per pod (in order) such that each NUMA node's pods use exactly what its NRT
/// `available` figure leaves unexplained (`budget`: cores and GPUs in use per NUMA node) and
/// fit its `capacity`; `None` for a pod no single NUMA node can explain (the allocator places
/// it). An exact depth-first search, pods in creation order, NUMA nodes with the least left
/// over first; without an exact match within the search limit, the pods of the best partial
/// match keep their NUMA nodes.
fn assign_zones(
    requests: &[(u32, u32)],
    budget: &[(u64, u64)],
    capacity: &[(u64, u64)],
) -> Vec<Option<usize>> {
    struct Search<'a> {
        requests: &'a [(u32, u32)],
        left: Vec<(u64, u64)>,
        room: Vec<(u64, u64)>,
        chosen: Vec<Option<usize>>,
        best: (usize, Vec<Option<usize>>),
        visited: usize,
    }
    impl Search<'_> {
        fn go(&mut self, i: usize) -> bool {
            self.visited += 1;
            let placed = self.chosen.iter().filter(|z| z.is_some()).count();
            if placed > self.best.0 {
                self.best = (placed, self.chosen.clone());
            }
            if i == self.requests.len() {
                return self.left.iter().all(|&l| l == (0, 0));
            }
            if self.visited > ZONE_SEARCH_LIMIT {
                return false;
            }
            let (g, c) = (u64::from(self.requests[i].0), u64::from(self.requests[i].1));
            let mut zones: Vec<usize> = (0..self.left.len())
                .filter(|&z| {
                    self.left[z].0 >= c
                        && self.left[z].1 >= g
                        && self.room[z].0 >= c
                        && self.room[z].1 >= g
                })
                .collect();
            zones.sort_by_key(|&z| (self.left[z].1 - g, self.left[z].0 - c, z));
            for z in zones {
                self.left[z].0 -= c;
                self.left[z].1 -= g;
                self.room[z].0 -= c;
                self.room[z].1 -= g;
                self.chosen[i] = Some(z);
                if self.go(i + 1) {
                    return true;
                }
                self.left[z].0 += c;
                self.left[z].1 += g;
                self.room[z].0 += c;
                self.room[z].1 += g;
                self.chosen[i] = None;
            }
            // The pod spans NUMA nodes or the figures disagree: the allocator places it.
            self.go(i + 1)
        }
    }
    let mut s = Search {
        requests,
        left: budget.to_vec(),
        room: capacity.to_vec(),
        chosen: vec![None; requests.len()],
        best: (0, vec![None; requests.len()]),
        visited: 0,
    };
    if s.go(0) { s.chosen } else { s.best.1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_topology_qos_table() {
        use QosClass::*;
        use TopologyPolicy as P;
        let g = TopologyQos::Guaranteed;
        let b = TopologyQos::BestEffort;
        let n = TopologyQos::None;
        let table = [
            (Guaranteed, Some(P::SingleNumaNode), g),
            (Guaranteed, Some(P::Restricted), g),
            (Guaranteed, Some(P::BestEffort), b),
            (Guaranteed, Some(P::None), n),
            (Guaranteed, None, g),
            (Burstable, Some(P::SingleNumaNode), b),
            (Burstable, None, b),
            (Burstable, Some(P::None), n),
            (BestEffort, Some(P::SingleNumaNode), n),
            (BestEffort, None, n),
        ];
        for (qos, policy, want) in table {
            assert_eq!(topology_qos(qos, policy), want, "{qos:?} {policy:?}");
        }
        assert_eq!(
            TopologyPolicy::parse("single-numa-node"),
            Some(P::SingleNumaNode)
        );
        assert_eq!(
            TopologyPolicy::parse("SingleNUMANodeContainerLevel"),
            Some(P::SingleNumaNode)
        );
        assert_eq!(TopologyPolicy::parse("best-effort"), Some(P::BestEffort));
        assert_eq!(TopologyPolicy::parse("Restricted"), Some(P::Restricted));
        assert_eq!(TopologyPolicy::parse("whatever"), None);
    }

    #[test]
    fn parser_messages_lose_their_document_relative_places() {
        assert_eq!(
            parser_message(
                "error: line 5 column 22: unexpected event: expected string scalar at line 5, column 22"
            ),
            "unexpected event: expected string scalar"
        );
        assert_eq!(parser_message("invalid i64"), "invalid i64");
    }

    #[test]
    fn zones_are_found_that_explain_the_nrt_figures() {
        // Greedy would put the first 12-core pod on NUMA 1 (less left over) and strand the
        // two small pods; the search finds the packing that explains both NUMA nodes.
        let requests = [(1, 12), (1, 12), (2, 16), (1, 4), (1, 4)];
        let budget = [(28, 3), (20, 3)];
        let capacity = [(32, 4), (31, 4)];
        let z = assign_zones(&requests, &budget, &capacity);
        assert!(z.iter().all(Option::is_some), "{z:?}");
        let mut used = [(0u64, 0u64); 2];
        for (r, z) in requests.iter().zip(&z) {
            let z = z.unwrap();
            used[z].0 += u64::from(r.1);
            used[z].1 += u64::from(r.0);
        }
        assert_eq!(used, budget);
        // A pod no NUMA node explains is left to the allocator.
        let z = assign_zones(&[(4, 44)], &[(23, 2), (21, 2)], &[(23, 2), (24, 2)]);
        assert_eq!(z, vec![None]);
    }
}
