//! `coplan import k8s`: a Kubernetes snapshot (`kubectl get nodes,pods -A -o yaml|json`,
//! multi-document YAML, NodeResourceTopology objects) → a cluster spec and a preemption
//! workload whose preemptors are the Pending pods. The mapping rules are in `docs/import.md`.
//!
//! The steps have a file each, in the order `import` runs them: `read` (documents → located
//! objects), `nodes` (nodes → servers, with `nrt` for NodeResourceTopology layouts), `pods`
//! (what each pod asks for) and `placement` (running pods onto ids); `conventions` holds the
//! Kubernetes rules they share. Here: the import itself, which maps each pod to a running pod
//! or a preemptor.

mod budgets;
mod claims;
mod conventions;
mod device_plugins;
mod devices;
mod dra_inventory;
mod nodes;
mod nrt;
mod placement;
mod pod_devices;
mod pods;
mod read;
mod rules;

pub use self::conventions::{
    GPU_PRODUCT_LABEL, GPU_RESOURCE, QosClass, SYSTEM_PRIORITY, SYSTEM_RESERVED_PRIORITY,
    TopologyPolicy, topology_qos,
};

use std::collections::BTreeMap;

use self::dra_inventory::DraInventory;
use self::nodes::{NodeFacts, read_nodes};
use self::placement::{Held, ToPlace, hold_reserved_cores, place_running};
use self::pod_devices::{DeviceAsks, PodDevices};
use self::pods::{apportion_shared, derived_qos, has_sidecars, pod_request, pods_in_order};
use self::read::{read_objects, sort_objects};
use super::build::{ClassRegistry, ClassRules, Ledger, QosMapping, preemption_workload};
use super::error::ImportError;
use super::quantity::ceil_units;
use super::summary::ImportSummary;
use crate::spec::{ClusterSpec, PreemptionSpec};

/// What an import produced.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The generated cluster: one server type per distinct node layout (identical layouts share
    /// one), every node under its own name.
    pub cluster: ClusterSpec,
    /// The generated preemption workload: Running pods as `[[running]]`, Pending pods as
    /// `[[preempt]]` in creation order.
    pub workload: PreemptionSpec,
    /// Counts of what was read, mapped, defaulted, rounded and dropped.
    pub summary: ImportSummary,
    /// Comment lines for the top of both files: where they came from.
    pub comments: Vec<String>,
}

/// The CPU manager policy of the kubelets (`--cpu-manager`): who holds exclusive cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuManager {
    /// Guaranteed pods with whole CPUs get exclusive cores; the rest share a pool.
    #[default]
    Static,
    /// Every pod shares the node's pool.
    None,
}

/// How to read a snapshot.
#[derive(Debug, Clone, Default)]
pub struct K8sOptions {
    /// The kubelets' CPU manager policy.
    pub cpu_manager: CpuManager,
    /// Drop (with a warning) running pods that do not fit their node instead of failing.
    pub allow_misfit: bool,
    /// Extended resources read as whole devices of their own kind, beside `nvidia.com/gpu`,
    /// `amd.com/gpu` and the MIG profiles (`--gpu-resource`).
    pub gpu_resources: Vec<String>,
    /// The node label whose value groups servers into named pools (`--pool-label`).
    pub pool_label: Option<String>,
}

/// A running pod before its cores are known: exclusive pods hold their whole CPUs, the shared
/// pool of a node is apportioned over its pods once all are read.
struct RunningFacts {
    node: usize,
    hint: String,
    mapping: QosMapping,
    rules: ClassRules,
    gpus: u32,
    millis: u64,
    exclusive: bool,
    start: Option<f64>,
    name: String,
    /// The DRA devices it holds (ids on its node), and the cores its CPU claims hold per NUMA
    /// node.
    held: Option<Held>,
}

/// The running pods with whole cores: exclusive ones their CPUs, the pods of each node's
/// shared pool their part of ⌈Σ millicores / 1000⌉; a pod left with no core and no GPU holds
/// nothing coplan allocates (its millicores are in a core another pod of the pool holds).
fn running_to_place(
    pods: Vec<RunningFacts>,
    classes: &mut ClassRegistry,
    summary: &mut ImportSummary,
) -> Vec<ToPlace> {
    let mut shared: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, p) in pods.iter().enumerate() {
        if !p.exclusive {
            shared.entry(p.node).or_default().push(i);
        }
    }
    let mut cores = vec![0u64; pods.len()];
    for (i, p) in pods.iter().enumerate() {
        if p.exclusive {
            cores[i] = p.millis / 1000;
        }
        // The CPU driver's cores are the pod's exclusive cores.
        if let Some(h) = &p.held
            && !h.cores.is_empty()
        {
            cores[i] = h.cores.iter().map(|c| c.1).sum();
        }
    }
    for members in shared.values() {
        let millis: Vec<u64> = members.iter().map(|&i| pods[i].millis).collect();
        for (&i, c) in members.iter().zip(apportion_shared(&millis)) {
            cores[i] = c;
        }
    }
    let mut out = Vec::with_capacity(pods.len());
    for (p, c) in pods.into_iter().zip(cores) {
        if c == 0 && p.gpus == 0 {
            summary.mapped("shared_pool_pods_within_another_pods_core", 1);
            continue;
        }
        let c = c.min(u64::from(u32::MAX)) as u32;
        let kind = p.rules.gpu_resource.clone();
        let alignment = p.rules.device_alignment;
        let class = classes.class_with_rules(&p.hint, p.mapping, (p.gpus, c), p.rules);
        out.push(ToPlace {
            node: p.node,
            class,
            ask: (p.gpus, c),
            start: p.start,
            name: p.name,
            kind,
            alignment,
            held: p.held,
        });
    }
    out
}

/// What a pod asks of the scheduler that coplan does not model, named in the summary.
fn not_modelled(pod: &crate::import::k8s_objects::Object, name: &str, summary: &mut ImportSummary) {
    let spec = &pod.spec;
    let mut note = |what: &str| summary.not_modelled(what, name.to_string());
    if !spec.affinity.node_affinity.preferred.is_empty() {
        note("preferred node affinity (a score)");
    }
    if spec.affinity.pod_affinity.is_some() || spec.affinity.pod_anti_affinity.is_some() {
        note("inter-pod affinity or anti-affinity");
    }
    if !spec.topology_spread_constraints.is_empty() {
        note("topology spread constraints");
    }
    if spec
        .volumes
        .iter()
        .any(|v| v.persistent_volume_claim.is_some())
    {
        note("persistent volume claims (volume zones)");
    }
    if !spec.scheduling_gates.is_empty() {
        note("scheduling gates");
    }
    let hugepages = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .any(|c| {
            c.resources
                .requests
                .keys()
                .chain(c.resources.limits.keys())
                .any(|k| k.starts_with("hugepages-"))
        });
    if hugepages {
        note("hugepages");
    }
}

/// Imports a Kubernetes snapshot from `files` (name, text) with the default options.
pub fn import(files: &[(String, String)]) -> Result<Imported, ImportError> {
    import_with(files, K8sOptions::default())
}

/// Imports a Kubernetes snapshot from `files` (name, text).
pub fn import_with(
    files: &[(String, String)],
    options: K8sOptions,
) -> Result<Imported, ImportError> {
    let names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let mut summary = ImportSummary::new("k8s", names);
    let objects = read_objects(files, &mut summary)?;
    let snapshot = sort_objects(objects, files, &mut summary)?;
    let inventory = DraInventory::read(&snapshot.dra, &mut summary);
    let extra = options.gpu_resources.as_slice();
    let NodeFacts {
        builder,
        policies,
        reserved,
        in_use,
        device_ids,
        nvidia_kind,
    } = read_nodes(
        &snapshot,
        &inventory,
        (extra, options.pool_label.as_deref()),
        &mut summary,
    )?;
    let devices = DeviceAsks::new(&snapshot, &inventory, &builder, nvidia_kind, extra);
    let mut claims_taken: std::collections::BTreeSet<String> = Default::default();
    // Every Node left out (no allocatable CPU or GPU) would write a cluster without servers,
    // which no command can read back.
    if builder.node_count() == 0 {
        return Err(ImportError::input(
            format!(
                "no Node in {} has allocatable CPU or GPUs",
                summary.files.join(", ")
            ),
            Some(
                "each node needs `status.allocatable` (or `status.capacity`) with `cpu` or `nvidia.com/gpu`"
                    .into(),
            ),
        ));
    }
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
    let mut preemptors: Vec<(String, Option<String>)> = Vec::new();
    let mut running_pods: Vec<RunningFacts> = Vec::new();
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
        let devices = match devices.of(
            (pod, *doc_line, name),
            running.then_some(node_name).flatten(),
            &mut claims_taken,
            &mut summary,
        )? {
            Ok(d) => d,
            Err(why) => {
                summary.dropped("pending_pods_whose_claims_cannot_be_planned", 1);
                summary.warn(format!("{why}; the pod is left out"));
                continue;
            }
        };
        let PodDevices {
            kind: gpu_kind,
            count: gpu,
            alignment,
            claim_cores,
            dra,
        } = devices;
        if has_sidecars(pod) {
            summary.honoured("pods_with_native_sidecars", 1);
        }
        if !object.spec.overhead.is_empty() {
            summary.honoured("pods_with_overhead", 1);
        }
        // Kubernetes counts CPU in whole millicores, rounding a finer request up.
        let millis = (cpu * 1000.0 - 1e-6).ceil().max(0.0) as u64;
        let (gpus, gpu_rounded) = ceil_units(gpu);
        if gpu_rounded {
            summary.rounded("pod_gpus_to_whole_gpus", 1);
        }
        if millis == 0 && gpus == 0 && claim_cores == 0 {
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
        let from_class = object
            .spec
            .priority_class_name
            .as_ref()
            .and_then(|c| snapshot.priority_classes.get(c))
            .and_then(|c| c.0);
        let priority = match (object.spec.priority, from_class) {
            (Some(p), _) => p,
            (None, Some(p)) => {
                summary.defaulted("pods_priority_from_their_priority_class", 1);
                p
            }
            (None, None) => {
                summary.defaulted("pods_without_priority_taken_as_0", 1);
                0
            }
        };
        // Kubernetes priorities are 32-bit: a value outside is not a Kubernetes export.
        if i32::try_from(priority).is_err() {
            return Err(read::at_object(
                &pod.origin,
                format!(
                    "pod `{name}`: priority {priority} is outside Kubernetes' 32-bit range [{}, {}]",
                    i32::MIN,
                    i32::MAX
                ),
            ));
        }
        let mut rules = rules::pod_rules(&pod.origin, name, object, &snapshot.priority_classes)?;
        rules.gpu_resource = gpu_kind;
        rules.device_alignment = alignment.filter(|_| gpus > 0);
        if rules.preemption_policy == crate::spec::eligibility::PreemptionPolicy::Never {
            summary.honoured("pods_with_preemption_policy_never", 1);
        }
        if !rules.node_selector.is_empty() || !rules.node_affinity.is_empty() {
            summary.honoured("pods_with_node_selectors_or_affinity", 1);
        }
        not_modelled(object, name, &mut summary);
        let mapping = QosMapping {
            priority,
            // The node's Topology Manager policy is its server type's (DESIGN §12.1): its kubelet
            // decides admission, so the class keeps the pod's own QoS.
            topology_qos: topology_qos(qos, None),
            preemptible: priority < SYSTEM_PRIORITY,
        };
        let hint = object
            .spec
            .priority_class_name
            .clone()
            .unwrap_or_else(|| format!("p{priority}"));
        let g = gpus.min(u64::from(u32::MAX)) as u32;
        // Under the static CPU manager a Guaranteed pod with whole CPUs gets exclusive cores;
        // every other pod draws millicores from its node's shared pool.
        let exclusive = options.cpu_manager == CpuManager::Static
            && qos == QosClass::Guaranteed
            && millis.is_multiple_of(1000);
        let start = created.map(|t| t - t0);
        if let Some(t) = start {
            now_s = now_s.max(t);
        }
        if !running {
            // A pending pod's share of a pool it has not joined yet: whole cores, rounded up;
            // the CPU driver's cores, when it claims them, are its cores.
            let c = if claim_cores > 0 {
                claim_cores
            } else {
                millis.div_ceil(1000)
            };
            let c = c.min(u64::from(u32::MAX)) as u32;
            if claim_cores == 0 && !exclusive && !millis.is_multiple_of(1000) {
                summary.rounded("preemptor_cpu_rounded_up_to_whole_cores", 1);
            }
            let class = classes.class_with_rules(&hint, mapping, (g, c), rules);
            preemptors.push((class, Some(name.clone())));
            continue;
        }
        let Some(node_name) = node_name else { continue };
        let Some(node) = ledger.node_index(node_name) else {
            summary.dropped("pods_on_nodes_not_in_the_snapshot", 1);
            continue;
        };
        let held = dra.map(|a| {
            let ids = device_ids.get(node_name);
            let devices: Vec<Option<usize>> = a
                .held
                .iter()
                .map(|d| ids.and_then(|m| m.ids.get(d).copied()))
                .collect();
            let cores: Vec<(Option<usize>, u64)> = a
                .held_cpus
                .iter()
                .map(|(d, n)| (ids.and_then(|m| m.cpu_numa.get(d).copied()), *n))
                .collect();
            Held { devices, cores }
        });
        let exclusive = exclusive || held.as_ref().is_some_and(|h| !h.cores.is_empty());
        if exclusive {
            summary.mapped("running_pods_with_exclusive_cores", 1);
        } else {
            summary.mapped("running_pods_in_the_shared_cpu_pool", 1);
        }
        running_pods.push(RunningFacts {
            node,
            hint,
            mapping,
            rules,
            gpus: g,
            millis,
            exclusive,
            start,
            name: name.clone(),
            held,
        });
    }
    let to_place = running_to_place(running_pods, &mut classes, &mut summary);
    let misfits = place_running(&to_place, in_use, &mut ledger, &mut summary);
    if !misfits.is_empty() && !options.allow_misfit {
        return Err(ImportError::input(
            format!(
                "{} running pod(s) do not fit the node the cluster runs them on, as coplan counts cores and GPUs: {}",
                misfits.len(),
                misfits.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
            ),
            Some(
                "check the node's allocatable figures and NRT objects; `--allow-misfit` drops these pods (their GPUs and cores then show as free)"
                    .into(),
            ),
        ));
    }
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
    let mut cluster = builder.build(&format!("k8s-{stem}"), &[]);
    // Every node in the cluster with a rule of its own (labels, taints, cordon, NotReady).
    for node in snapshot.nodes.values() {
        if ledger.node_index(&node.name).is_none() {
            continue;
        }
        let r = rules::node_rules(&node.origin, &node.name, &node.object)?;
        if r.unschedulable {
            summary.honoured("nodes_cordoned", 1);
        }
        if !r.ready {
            summary.honoured("nodes_not_ready", 1);
        }
        if !r.taints.is_empty() {
            summary.honoured("nodes_with_taints", 1);
        }
        if !r.labels.is_empty() || !r.taints.is_empty() || r.unschedulable || !r.ready {
            cluster.server.push(r);
        }
    }
    let running = std::mem::take(&mut ledger.running);
    let running_names: std::collections::BTreeSet<&str> =
        running.iter().filter_map(|r| r.name.as_deref()).collect();
    let labelled: Vec<budgets::Labelled<'_>> = prepared
        .iter()
        .filter(|(_, name, _, _)| running_names.contains(name.as_str()))
        .map(|(_, name, pod, _)| budgets::Labelled {
            name,
            labels: &pod.object.metadata.labels,
        })
        .collect();
    let disruption_budgets =
        budgets::disruption_budgets(&snapshot.budgets, &labelled, &mut summary)?;
    drop(labelled);
    let classes = classes.into_classes();
    summary.mapped("workload_classes", classes.len() as u64);
    let mut workload = preemption_workload(
        format!("k8s snapshot {stem}"),
        Some(now_s),
        classes,
        running,
        &preemptors,
    );
    workload.disruption_budget = disruption_budgets;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_whose_nodes_are_all_left_out_is_an_input_error() {
        let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\nstatus:\n  cpu: \"8\"\n";
        match import(&[("snapshot.yaml".into(), text.into())]) {
            Err(ImportError::Input { message, help }) => {
                assert!(message.contains("snapshot.yaml"), "{message}");
                assert!(help.is_some_and(|h| h.contains("allocatable")));
            }
            other => panic!("{other:?}"),
        }
    }
}
