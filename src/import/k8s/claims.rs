//! What a pod asks of DRA and what it holds: its `spec.resourceClaims` resolved to
//! ResourceClaims (by name, or the claim generated for a template, as
//! `status.resourceClaimStatuses` names it) or, for a pending pod, to the template itself;
//! the requests read as a device kind, a count and the claim's `matchAttribute` constraint;
//! the allocation results of a running pod's claims as exactly the devices it holds.

use std::collections::BTreeSet;

use super::devices::DeviceRef;
use super::dra_inventory::{DraInventory, NUMA_ATTRIBUTE, PCIE_ROOT_ATTRIBUTE};
use super::read::DraObjects;
use crate::import::dra_objects::{ClaimSpec, DeviceClaim, DevicesField, DraObject};
use crate::import::k8s_objects::Object;
use crate::import::quantity;
use crate::import::summary::ImportSummary;
use crate::spec::preemption::DeviceAlignment;

/// A pod's DRA devices.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct DraAsk {
    /// The device kind (a DeviceClass), when it asks for devices other than CPUs.
    pub(super) kind: Option<String>,
    /// How many devices of the kind.
    pub(super) count: u64,
    /// Where its devices must lie together.
    pub(super) alignment: Option<DeviceAlignment>,
    /// Exclusive cores its CPU claims ask for (or hold).
    pub(super) cores: u64,
    /// A running pod: the devices its claims' allocations give it.
    pub(super) held: Vec<DeviceRef>,
    /// A running pod: the CPU devices it draws cores from, with how many.
    pub(super) held_cpus: Vec<(DeviceRef, u64)>,
}

/// Why a pending pod's claims cannot be planned (it is left out, with this warning).
pub(super) type Unplannable = String;

/// The claim a pod's claim entry stands for: the ResourceClaim, or (pending pods only) the
/// template the claim would be stamped from.
enum ClaimSource<'a> {
    Claim(&'a str, &'a DraObject),
    Template(&'a str, &'a ClaimSpec),
}

fn claim_devices(object: &DraObject) -> Option<&DeviceClaim> {
    match &object.spec.devices {
        Some(DevicesField::Claim(c)) => Some(c),
        _ => None,
    }
}

/// The pod's DRA ask; `Ok(None)` for a pod without claims.
pub(super) fn dra_ask(
    pod_id: &str,
    pod: &Object,
    running: bool,
    dra: &DraObjects,
    inventory: &DraInventory,
    taken: &mut BTreeSet<String>,
    summary: &mut ImportSummary,
) -> Result<Option<DraAsk>, Unplannable> {
    let entries = &pod.spec.resource_claims;
    if entries.is_empty() {
        return Ok(None);
    }
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let mut ask = DraAsk::default();
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for entry in entries {
        let generated = pod
            .status
            .resource_claim_statuses
            .iter()
            .find(|s| s.name == entry.name)
            .and_then(|s| s.resource_claim_name.as_deref());
        let claim_name = entry.resource_claim_name.as_deref().or(generated);
        let source = match claim_name
            .and_then(|n| dra.claims.get_key_value(&format!("{namespace}/{n}")))
        {
            Some((id, c)) => ClaimSource::Claim(id, &c.object),
            None => match entry
                .resource_claim_template_name
                .as_deref()
                .and_then(|t| dra.templates.get_key_value(&format!("{namespace}/{t}")))
                .and_then(|(id, t)| t.object.spec.spec.as_deref().map(|s| (id, s)))
            {
                Some((id, spec)) if !running => ClaimSource::Template(id, spec),
                _ => {
                    let what = claim_name
                        .map(|n| format!("ResourceClaim `{namespace}/{n}`"))
                        .or_else(|| {
                            entry.resource_claim_template_name.as_ref().map(|t| {
                                format!("the claim generated from template `{namespace}/{t}`")
                            })
                        })
                        .unwrap_or_else(|| format!("claim entry `{}`", entry.name));
                    let why = format!(
                        "pod `{pod_id}` uses {what}, which is not in the snapshot (export `kubectl get resourceclaims,resourceclaimtemplates -A -o yaml` too)"
                    );
                    if running {
                        summary.warn(format!(
                            "{why}; the devices it holds are not known and show as free"
                        ));
                        summary.dropped("running_pods_claims_not_in_the_snapshot", 1);
                        continue;
                    }
                    return Err(why);
                }
            },
        };
        let (id, spec) = match &source {
            ClaimSource::Claim(id, c) => (*id, claim_devices(c)),
            ClaimSource::Template(id, s) => (*id, Some(&s.devices)),
        };
        let request_kinds = read_requests(id, spec, inventory, &mut ask, &mut kinds, summary)?;
        ask.alignment = stronger(
            ask.alignment,
            constraint_of(id, spec, &request_kinds, summary),
        );
        if !running {
            continue;
        }
        let ClaimSource::Claim(id, claim) = source else {
            continue;
        };
        let Some(allocation) = &claim.status.allocation else {
            summary.warn(format!(
                "pod `{pod_id}` runs with ResourceClaim `{id}` that has no allocation; it holds no device"
            ));
            continue;
        };
        if !taken.insert(id.to_string()) {
            summary.not_modelled(
                "ResourceClaims shared by several pods (the first pod holds the devices)",
                id.to_string(),
            );
            continue;
        }
        summary.mapped("dra_claims_allocated_to_running_pods", 1);
        for r in &allocation.devices.results {
            if r.admin_access == Some(true) {
                summary.not_modelled(
                    "DRA admin access (monitors devices, holds none)",
                    id.to_string(),
                );
                continue;
            }
            let device = (r.driver.clone(), r.pool.clone(), r.device.clone());
            if inventory.kind_of.contains_key(&device) {
                ask.held.push(device);
                continue;
            }
            if inventory.cpu_devices.contains(&device) {
                let cores = r
                    .consumed_capacity
                    .iter()
                    .find(|(k, _)| *k == "cpu" || k.ends_with("/cpu"))
                    .and_then(|(_, v)| v.text())
                    .and_then(|t| quantity::parse(&t).ok())
                    .map_or(1, |c| c.max(0.0).ceil() as u64);
                ask.held_cpus.push((device, cores));
                continue;
            }
            summary.warn(format!(
                "ResourceClaim `{id}` is allocated device `{}/{}/{}`, which no ResourceSlice of the snapshot publishes; not modelled",
                r.driver, r.pool, r.device
            ));
        }
    }
    // One device kind per pod: the one it asks most of.
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if kinds.len() > 1 {
        summary.not_modelled(
            "pods asking for DRA devices of several kinds (the kind asked most of is planned)",
            pod_id.to_string(),
        );
    }
    if let Some((kind, count)) = kinds.first() {
        ask.kind = Some(kind.clone());
        ask.count = *count;
    }
    if running {
        if let Some(kind) = &ask.kind {
            let before = ask.held.len();
            ask.held.retain(|d| inventory.kind_of.get(d) == Some(kind));
            if ask.held.len() < before {
                summary.warn(format!(
                    "pod `{pod_id}` holds DRA devices of several kinds; only its `{kind}` devices are modelled, the others show as free"
                ));
            }
        } else if let Some(d) = ask.held.first() {
            // Held devices, no readable request: the devices' own kind.
            let kind = inventory.kind_of.get(d).cloned();
            ask.held
                .retain(|x| inventory.kind_of.get(x) == kind.as_ref());
            ask.kind = kind;
        }
        ask.count = ask.held.len() as u64;
        ask.cores = ask.held_cpus.iter().map(|c| c.1).sum();
    }
    Ok(Some(ask))
}

/// Reads a claim's requests into `ask` (cores) and `kinds` (devices per kind); returns, per
/// request name, whether it asks for CPUs.
fn read_requests(
    claim: &str,
    spec: Option<&DeviceClaim>,
    inventory: &DraInventory,
    ask: &mut DraAsk,
    kinds: &mut Vec<(String, u64)>,
    summary: &mut ImportSummary,
) -> Result<Vec<(String, bool)>, Unplannable> {
    let mut out = Vec::new();
    let Some(spec) = spec else {
        return Ok(out);
    };
    if !spec.config.is_empty() {
        summary.honoured("dra_claims_with_driver_config_not_needed_for_placement", 1);
    }
    for request in &spec.requests {
        let (exact, passed_over) = request.resolved();
        if passed_over {
            summary.not_modelled(
                "DRA firstAvailable alternatives (the first is planned)",
                claim.to_string(),
            );
        }
        if request.has_selectors() {
            summary.not_modelled(
                "CEL selectors on a claim's request (devices of the class are taken as alike)",
                claim.to_string(),
            );
        }
        if exact.admin_access == Some(true) {
            summary.not_modelled(
                "DRA admin access (monitors devices, holds none)",
                claim.to_string(),
            );
            continue;
        }
        let Some(class) = exact.device_class_name.clone() else {
            return Err(format!(
                "ResourceClaim `{claim}`: request `{}` names no deviceClassName",
                request.name
            ));
        };
        if inventory.cpu_classes.contains(&class) {
            let cores = exact
                .capacity
                .as_ref()
                .and_then(|c| {
                    c.requests
                        .iter()
                        .find(|(k, _)| *k == "cpu" || k.ends_with("/cpu"))
                        .and_then(|(_, v)| v.text())
                })
                .and_then(|t| quantity::parse(&t).ok())
                .map(|c| c.max(0.0).ceil() as u64)
                .unwrap_or_else(|| exact.count.unwrap_or(1).max(0) as u64);
            ask.cores += cores;
            out.push((request.name.clone(), true));
            continue;
        }
        let kind = match inventory.class_kinds.get(&class) {
            Some(Some(k)) => k.clone(),
            Some(None) => {
                return Err(format!(
                    "ResourceClaim `{claim}` asks for DeviceClass `{class}`, whose selectors coplan cannot read"
                ));
            }
            // No DeviceClass object: a class named as a driver stands for its devices.
            None if inventory.most_per_node.contains_key(&class) => class.clone(),
            None => {
                return Err(format!(
                    "ResourceClaim `{claim}` asks for DeviceClass `{class}`, which is not in the snapshot and no driver of that name publishes devices (export `kubectl get deviceclasses -o yaml` too)"
                ));
            }
        };
        let count = if exact.allocation_mode.as_deref() == Some("All") {
            let most = inventory.most_per_node.get(&kind).copied().unwrap_or(0);
            if inventory.fewest_per_node.get(&kind).copied().unwrap_or(0) != most {
                summary.not_modelled(
                    "allocationMode All on nodes with different device counts (the most any node has is asked)",
                    claim.to_string(),
                );
            }
            most
        } else {
            exact.count.unwrap_or(1).max(0) as u64
        };
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some(k) => k.1 += count,
            None => kinds.push((kind, count)),
        }
        out.push((request.name.clone(), false));
    }
    Ok(out)
}

/// The alignment a claim's `matchAttribute` constraints demand.
fn constraint_of(
    claim: &str,
    spec: Option<&DeviceClaim>,
    requests: &[(String, bool)],
    summary: &mut ImportSummary,
) -> Option<DeviceAlignment> {
    let mut out = None;
    for c in spec.map(|s| s.constraints.as_slice()).unwrap_or_default() {
        if c.distinct_attribute.is_some() {
            summary.not_modelled("DRA distinctAttribute constraints", claim.to_string());
        }
        let Some(attr) = c.match_attribute.as_deref() else {
            continue;
        };
        let covered: Vec<&(String, bool)> = requests
            .iter()
            .filter(|(name, _)| c.requests.is_empty() || c.requests.contains(name))
            .collect();
        let with_cpus = covered.iter().any(|r| r.1);
        let with_devices = covered.iter().any(|r| !r.1);
        let numa =
            attr == NUMA_ATTRIBUTE || attr.ends_with("/numaNode") || attr.ends_with("/numaNodeID");
        let a = if numa && with_cpus && with_devices {
            Some(DeviceAlignment::NumaWithCores)
        } else if numa && with_devices {
            Some(DeviceAlignment::Numa)
        } else if attr == PCIE_ROOT_ATTRIBUTE && with_devices {
            Some(DeviceAlignment::PcieRoot)
        } else if numa || attr == PCIE_ROOT_ATTRIBUTE {
            // Over CPUs alone: the CPU driver keeps one claim's cores together anyway.
            None
        } else {
            summary.not_modelled(
                "matchAttribute constraints on other attributes",
                format!("{claim} ({attr})"),
            );
            None
        };
        out = stronger(out, a);
    }
    out
}

/// The tighter of two alignments: devices and cores on one NUMA node, then one PCIe root,
/// then one NUMA node.
fn stronger(a: Option<DeviceAlignment>, b: Option<DeviceAlignment>) -> Option<DeviceAlignment> {
    let rank = |x: Option<DeviceAlignment>| match x {
        None => 0,
        Some(DeviceAlignment::Numa) => 1,
        Some(DeviceAlignment::PcieRoot) => 2,
        Some(DeviceAlignment::NumaWithCores) => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}
