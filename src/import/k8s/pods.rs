//! What a pod says of itself, read as Kubernetes reads it: its whole-unit requests, the QoS
//! class it would be given, and its place in creation order. Whether it runs or waits, and
//! where, is decided by the import itself.

use super::conventions::QosClass;
use super::read::{PodObject, at_span, parse_quantity};
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
