//! The import itself, phase by phase: the snapshot read and sorted, the nodes made servers,
//! each pod mapped to a running pod or a preemptor, the running pods placed, the nodes' rules
//! and the disruption budgets added, and the two specs written out.

use std::collections::{BTreeMap, BTreeSet};

use super::budgets::{Labelled, disruption_budgets};
use super::conventions::TopologyPolicy;
use super::dra_inventory::DraInventory;
use super::fabric_domains::{Fabric, read_fabric};
use super::gang_asks::Pending;
use super::gangs::gang_entries;
use super::nodes::read_nodes;
use super::options::K8sOptions;
use super::placement::{hold_reserved_cores, place_running};
use super::pod_devices::DeviceAsks;
use super::pod_mapping::PodMapper;
use super::pods::{Prepared, pods_in_order};
use super::read::{NodeObject, Snapshot, read_objects, sort_objects};
use super::rules::node_rules;
use super::running::running_to_place;
use crate::import::build::{ClassRegistry, ClusterBuilder, Ledger, preemption_workload, slug};
use crate::import::error::ImportError;
use crate::import::imported::Imported;
use crate::import::summary::ImportSummary;
use crate::spec::ClusterSpec;
use crate::spec::preemption::{DisruptionBudget, PreemptEntry, RunningPod};

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
    let mut nodes = read_nodes(
        &snapshot,
        &inventory,
        (extra, options.pool_label.as_deref()),
        &mut summary,
    )?;
    let nvidia_kind = std::mem::take(&mut nodes.nvidia_kind);
    let devices = DeviceAsks::new(&snapshot, &inventory, &nodes.builder, nvidia_kind, extra);
    require_a_node(&nodes.builder, &summary)?;
    let policy = cluster_policy(&nodes.policies);
    let (prepared, t0) = pods_in_order(&snapshot.pods, &mut summary)?;
    let mut ledger = Ledger::new(&nodes.builder);
    let mut classes = ClassRegistry::default();
    hold_reserved_cores(&nodes.reserved, &mut ledger, &mut classes, &mut summary);
    let mut mapper = PodMapper {
        snapshot: &snapshot,
        devices: &devices,
        ledger: &ledger,
        device_ids: &nodes.device_ids,
        cpu_manager: options.cpu_manager,
        t0,
        claims_taken: BTreeSet::new(),
        classes,
        preemptors: Vec::new(),
        running: Vec::new(),
        now_s: 0.0,
    };
    for pod in &prepared {
        mapper.map(pod, &mut summary)?;
    }
    let PodMapper {
        mut classes,
        preemptors,
        running,
        now_s,
        ..
    } = mapper;
    let to_place = running_to_place(running, &mut classes, &mut summary);
    let misfits = place_running(&to_place, nodes.in_use, &mut ledger, &mut summary);
    if !misfits.is_empty() && !options.allow_misfit {
        return Err(misfit_error(&misfits));
    }
    if preemptors.is_empty() {
        summary
            .warn("no Pending pods without a node: the workload has no [[preempt]] entries".into());
    }
    summary.mapped("servers", nodes.builder.node_count() as u64);
    summary.mapped("server_types", nodes.builder.types().len() as u64);
    summary.mapped("running_pods", ledger.running.len() as u64);
    summary.mapped("preemptors", preemptors.len() as u64);
    if let Some(p) = policy {
        summary.list("cluster_topology_policy", p.as_str().to_string());
    }
    let stem = stem_of(files);
    let mut cluster = nodes.builder.build(&format!("k8s-{stem}"), &[]);
    add_node_rules(&snapshot, &ledger, &mut cluster, &mut summary)?;
    let servers: Vec<&NodeObject> = snapshot
        .nodes
        .values()
        .filter(|n| ledger.node_index(&n.name).is_some())
        .collect();
    let fabric = read_fabric(&snapshot, &servers, &mut summary)?;
    let running = std::mem::take(&mut ledger.running);
    let budgets = budgets_over(&running, &prepared, &snapshot, &mut summary)?;
    let preempt = preempt_with_gangs(
        &preemptors,
        &prepared,
        (&snapshot, &fabric),
        &running,
        &mut summary,
    )?;
    fabric.apply(&mut cluster);
    let classes = classes.into_classes();
    summary.mapped("workload_classes", classes.len() as u64);
    let mut workload = preemption_workload(
        format!("k8s snapshot {stem}"),
        Some(now_s),
        classes,
        running,
        &[],
    );
    workload.preempt = preempt;
    workload.disruption_budget = budgets;
    let sources = summary.files.join(", ");
    Ok(Imported::new(
        (cluster, workload),
        summary,
        ("k8s", &sources),
        &["# How Nodes, NodeResourceTopologies and Pods map to coplan: docs/import.md."],
    ))
}

/// Every Node left out (no allocatable CPU or GPU) would write a cluster without servers,
/// which no command can read back.
fn require_a_node(builder: &ClusterBuilder, summary: &ImportSummary) -> Result<(), ImportError> {
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
    Ok(())
}

/// The cluster's policy (for pending pods, which have no node yet): the most common reported
/// one, ties to the stricter; unknown when no node reports one.
fn cluster_policy(policies: &BTreeMap<String, Option<TopologyPolicy>>) -> Option<TopologyPolicy> {
    let mut counts: BTreeMap<TopologyPolicy, usize> = BTreeMap::new();
    for p in policies.values().flatten() {
        *counts.entry(*p).or_default() += 1;
    }
    counts
        .iter()
        .max_by_key(|(p, c)| (**c, **p))
        .map(|(p, _)| *p)
}

/// The error of running pods that do not fit their nodes (without `--allow-misfit`).
fn misfit_error(misfits: &[String]) -> ImportError {
    ImportError::input(
        format!(
            "{} running pod(s) do not fit the node the cluster runs them on, as coplan counts cores and GPUs: {}",
            misfits.len(),
            misfits.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        ),
        Some(
            "check the node's allocatable figures and NRT objects; `--allow-misfit` drops these pods (their GPUs and cores then show as free)"
                .into(),
        ),
    )
}

/// The stem of the first file's name, as a slug: the generated specs' names.
fn stem_of(files: &[(String, String)]) -> String {
    files
        .first()
        .map(|f| {
            let file = f.0.rsplit('/').next().unwrap_or(&f.0);
            slug(file.rsplit_once('.').map_or(file, |(stem, _)| stem))
        })
        .unwrap_or_else(|| "k8s".into())
}

/// Every node in the cluster with a rule of its own (labels, taints, cordon, NotReady).
fn add_node_rules(
    snapshot: &Snapshot,
    ledger: &Ledger,
    cluster: &mut ClusterSpec,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    for node in snapshot.nodes.values() {
        if ledger.node_index(&node.name).is_none() {
            continue;
        }
        let r = node_rules(&node.origin, &node.name, &node.object)?;
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
    Ok(())
}

/// The preemptors as `[[preempt]]` entries, the pods that ask for a gang together.
fn preempt_with_gangs(
    preemptors: &[(String, Option<String>)],
    prepared: &[Prepared<'_>],
    (snapshot, fabric): (&Snapshot, &Fabric),
    running: &[RunningPod],
    summary: &mut ImportSummary,
) -> Result<Vec<PreemptEntry>, ImportError> {
    let pending: BTreeMap<&str, Pending<'_>> = prepared
        .iter()
        .map(|(_, name, pod, doc_line)| (name.as_str(), (*pod, name.as_str(), *doc_line)))
        .collect();
    let taken = running.iter().filter_map(|r| r.name.clone()).collect();
    gang_entries(
        preemptors,
        &pending,
        (fabric, &snapshot.fabric.pod_groups),
        taken,
        summary,
    )
}

/// The snapshot's disruption budgets over the pods that run.
fn budgets_over(
    running: &[RunningPod],
    prepared: &[Prepared<'_>],
    snapshot: &Snapshot,
    summary: &mut ImportSummary,
) -> Result<Vec<DisruptionBudget>, ImportError> {
    let running_names: BTreeSet<&str> = running.iter().filter_map(|r| r.name.as_deref()).collect();
    let labelled: Vec<Labelled<'_>> = prepared
        .iter()
        .filter(|(_, name, _, _)| running_names.contains(name.as_str()))
        .map(|(_, name, pod, _)| Labelled {
            name,
            labels: &pod.object.metadata.labels,
        })
        .collect();
    disruption_budgets(&snapshot.budgets, &labelled, summary)
}
