//! What a pod says of itself, read as Kubernetes reads it: its whole-unit requests, the QoS
//! class it would be given, and its place in creation order. Whether it runs or waits, and
//! where, is decided by the import itself.

use super::conventions::QosClass;
use super::read::{PodObject, at_span, parse_quantity};
use crate::import::error::ImportError;
use crate::import::k8s_objects::Object;
use crate::import::summary::ImportSummary;
use crate::import::time::rfc3339_seconds;

/// A pod's whole-unit request of a resource: the larger of the containers' sum and the
/// largest init container (as the scheduler counts it); a missing request falls back to the
/// limit.
pub(super) fn pod_request(
    pod: &PodObject,
    doc_line: usize,
    resource: &str,
) -> Result<f64, ImportError> {
    let spec = &pod.object.spec;
    let one = |c: &crate::import::k8s_objects::Container| -> Result<f64, ImportError> {
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
