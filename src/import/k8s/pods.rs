//! What a pod says of itself, read as Kubernetes reads it: its whole-unit requests, the QoS
//! class it would be given, and its place in creation order. Whether it runs or waits, and
//! where, is decided by the import itself.

use super::conventions::QosClass;
use super::read::{PodObject, PriorityClasses, at_object, at_span, parse_quantity};
use crate::calendar::rfc3339_seconds;
use crate::import::error::ImportError;
use crate::import::k8s_objects::Object;
use crate::import::summary::ImportSummary;

/// A pod's request of a resource as the scheduler and kubelet count it: the larger of the app
/// containers plus the native sidecars (init containers with `restartPolicy: Always`, which
/// keep running) and of each ordinary init container plus the sidecars started before it; then
/// the pod overhead. A missing request falls back to the limit.
pub(super) fn pod_request(
    pod: &PodObject,
    doc_line: usize,
    resource: &str,
) -> Result<f64, ImportError> {
    let spec = &pod.object.spec;
    let quantity = |q: &crate::import::k8s_objects::Quantity, what: &str| {
        parse_quantity(&pod.origin, doc_line, q, &format!("{what} `{resource}`"))
    };
    let one = |c: &crate::import::k8s_objects::Container| -> Result<f64, ImportError> {
        match c
            .resources
            .requests
            .get(resource)
            .or_else(|| c.resources.limits.get(resource))
        {
            Some(q) => quantity(q, "request"),
            None => Ok(0.0),
        }
    };
    let mut app = 0.0;
    for c in &spec.containers {
        app += one(c)?;
    }
    let (mut sidecars, mut init_peak): (f64, f64) = (0.0, 0.0);
    for c in &spec.init_containers {
        let r = one(c)?;
        if c.restart_policy.as_deref() == Some("Always") {
            sidecars += r;
        } else {
            init_peak = init_peak.max(sidecars + r);
        }
    }
    let overhead = match spec.overhead.get(resource) {
        Some(q) => quantity(q, "overhead")?,
        None => 0.0,
    };
    Ok((app + sidecars).max(init_peak) + overhead)
}

/// Whether a pod has native sidecars (counted in the summary).
pub(super) fn has_sidecars(pod: &PodObject) -> bool {
    pod.object
        .spec
        .init_containers
        .iter()
        .any(|c| c.restart_policy.as_deref() == Some("Always"))
}

/// Whole cores for the pods of one node's shared CPU pool, from their millicores: the pool
/// holds ⌈Σ m / 1000⌉ cores, each pod its whole cores and the remainder goes to the pods with
/// the largest fractions (earliest first on a tie), so that no load moves between nodes and
/// evicting a pod frees about what it uses.
pub(super) fn apportion_shared(millis: &[u64]) -> Vec<u64> {
    let total: u64 = millis.iter().sum();
    let pool = total.div_ceil(1000);
    let mut cores: Vec<u64> = millis.iter().map(|m| m / 1000).collect();
    let mut left = pool - cores.iter().sum::<u64>();
    let mut by_fraction: Vec<usize> = (0..millis.len())
        .filter(|&i| !millis[i].is_multiple_of(1000))
        .collect();
    by_fraction.sort_by_key(|&i| (std::cmp::Reverse(millis[i] % 1000), i));
    for i in by_fraction {
        if left == 0 {
            break;
        }
        cores[i] += 1;
        left -= 1;
    }
    cores
}

/// The QoS class Kubernetes would give a pod without `status.qosClass`.
pub(super) fn derived_qos(pod: &Object) -> QosClass {
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

/// A pod with its creation time (seconds since the epoch), `namespace/name` and document line.
pub(super) type Prepared<'a> = (Option<f64>, String, &'a PodObject, usize);

/// Pods in creation order (then name), and the earliest creation time (0 when none has one).
pub(super) fn pods_in_order<'a>(
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

/// Whether a pod runs (`Some(true)`: it has a node), waits for one (`Some(false)`) or is
/// left out (`None`, counted), by its phase and node.
pub(super) fn runs(object: &Object, summary: &mut ImportSummary) -> Option<bool> {
    let phase = object.status.phase.as_deref();
    match (phase, object.spec.node_name.as_deref()) {
        (Some("Succeeded" | "Failed"), _) => {
            summary.dropped("pods_finished", 1);
            None
        }
        (Some("Running" | "Pending"), Some(_)) => Some(true),
        (Some("Pending"), None) => Some(false),
        (Some("Running"), None) => {
            summary.dropped("running_pods_without_a_node", 1);
            None
        }
        (Some(_), _) => {
            summary.dropped("pods_in_an_unknown_phase", 1);
            None
        }
        (None, n) => {
            summary.defaulted("pods_without_a_phase", 1);
            Some(n.is_some())
        }
    }
}

/// A pod's QoS class: as its status reports it, else derived from its requests.
pub(super) fn qos_class(object: &Object, summary: &mut ImportSummary) -> QosClass {
    match object.status.qos_class.as_deref() {
        Some("Guaranteed") => QosClass::Guaranteed,
        Some("Burstable") => QosClass::Burstable,
        Some("BestEffort") => QosClass::BestEffort,
        _ => {
            summary.defaulted("pods_qos_class_derived_from_requests", 1);
            derived_qos(object)
        }
    }
}

/// A pod's priority: its own, else its PriorityClass's, else 0; a value outside Kubernetes'
/// 32 bits is an error (the file is no Kubernetes export).
pub(super) fn priority(
    (pod, name): (&PodObject, &str),
    priority_classes: &PriorityClasses,
    summary: &mut ImportSummary,
) -> Result<i64, ImportError> {
    let object = &pod.object;
    let from_class = object
        .spec
        .priority_class_name
        .as_ref()
        .and_then(|c| priority_classes.get(c))
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
    if i32::try_from(priority).is_err() {
        return Err(at_object(
            &pod.origin,
            format!(
                "pod `{name}`: priority {priority} is outside Kubernetes' 32-bit range [{}, {}]",
                i32::MIN,
                i32::MAX
            ),
        ));
    }
    Ok(priority)
}

/// What a pod asks of the scheduler that coplan does not model, named in the summary.
pub(super) fn not_modelled(pod: &Object, name: &str, summary: &mut ImportSummary) {
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

#[cfg(test)]
mod tests {
    use super::apportion_shared;

    #[test]
    fn the_shared_pool_holds_the_ceiling_of_its_pods_millicores() {
        // Three 150m DaemonSet pods: one core between them, no job pushed off.
        assert_eq!(apportion_shared(&[150, 150, 150]), vec![1, 0, 0]);
        // 8.5 cores of a Burstable job and 450m of DaemonSets: 9 cores.
        assert_eq!(apportion_shared(&[8500, 150, 150, 150]), vec![9, 0, 0, 0]);
        assert_eq!(apportion_shared(&[2000, 3000]), vec![2, 3]);
        assert_eq!(apportion_shared(&[600, 600]), vec![1, 1]);
        assert_eq!(apportion_shared(&[]), Vec::<u64>::new());
    }
}
