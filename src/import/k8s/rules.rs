//! The scheduling rules of nodes and pods, read as the scheduler reads them, into the spec's
//! eligibility fields (DESIGN §12.1): node labels, taints, cordon and readiness; pod node
//! selectors, required node affinity, tolerations and preemption policy (from the pod, else
//! its PriorityClass).

use std::collections::BTreeMap;

use super::read::{Origin, at_object};
use crate::import::build::ClassRules;
use crate::import::error::ImportError;
use crate::import::k8s_objects::{K8sRequirement, K8sTaint, K8sToleration, Object};
use crate::spec::cluster::ServerRulesSpec;
use crate::spec::eligibility::{
    AffinityTerm, PreemptionPolicy, Requirement, SelectorOperator, Taint, TaintEffect, Toleration,
    TolerationOperator,
};

fn effect(origin: &Origin, what: &str, text: &str) -> Result<TaintEffect, ImportError> {
    match text {
        "NoSchedule" => Ok(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Ok(TaintEffect::PreferNoSchedule),
        "NoExecute" => Ok(TaintEffect::NoExecute),
        other => Err(at_object(
            origin,
            format!(
                "{what}: taint effect `{other}` is not NoSchedule, PreferNoSchedule or NoExecute"
            ),
        )),
    }
}

fn taint(origin: &Origin, node: &str, t: &K8sTaint) -> Result<Taint, ImportError> {
    Ok(Taint {
        key: t.key.clone(),
        value: t.value.clone().unwrap_or_default(),
        effect: effect(origin, &format!("node `{node}`"), &t.effect)?,
    })
}

/// A node's rules: labels, taints, cordon, readiness (`Ready` condition not `True`:
/// NotReady; no conditions at all: ready).
pub(super) fn node_rules(
    origin: &Origin,
    name: &str,
    node: &Object,
) -> Result<ServerRulesSpec, ImportError> {
    let ready = node
        .status
        .conditions
        .iter()
        .find(|c| c.kind == "Ready")
        .is_none_or(|c| c.status == "True");
    Ok(ServerRulesSpec {
        name: name.to_string(),
        labels: node
            .metadata
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: node
            .spec
            .taints
            .iter()
            .map(|t| taint(origin, name, t))
            .collect::<Result<_, _>>()?,
        unschedulable: node.spec.unschedulable,
        ready,
        domain: Default::default(),
    })
}

fn requirement(origin: &Origin, pod: &str, r: &K8sRequirement) -> Result<Requirement, ImportError> {
    let operator = match r.operator.as_str() {
        "In" => SelectorOperator::In,
        "NotIn" => SelectorOperator::NotIn,
        "Exists" => SelectorOperator::Exists,
        "DoesNotExist" => SelectorOperator::DoesNotExist,
        "Gt" => SelectorOperator::Gt,
        "Lt" => SelectorOperator::Lt,
        other => {
            return Err(at_object(
                origin,
                format!(
                    "pod `{pod}`: node affinity operator `{other}` is not In, NotIn, Exists, DoesNotExist, Gt or Lt"
                ),
            ));
        }
    };
    Ok(Requirement {
        key: r.key.clone(),
        operator,
        values: r.values.clone(),
    })
}

fn toleration(origin: &Origin, pod: &str, t: &K8sToleration) -> Result<Toleration, ImportError> {
    let operator = match t.operator.as_deref() {
        None | Some("Equal") => TolerationOperator::Equal,
        Some("Exists") => TolerationOperator::Exists,
        Some(other) => {
            return Err(at_object(
                origin,
                format!("pod `{pod}`: toleration operator `{other}` is not Equal or Exists"),
            ));
        }
    };
    let effect = match t.effect.as_deref() {
        None | Some("") => None,
        Some(e) => Some(effect(origin, &format!("pod `{pod}`"), e)?),
    };
    Ok(Toleration {
        key: t.key.clone().unwrap_or_default(),
        operator,
        value: t.value.clone().unwrap_or_default(),
        effect,
    })
}

/// The policy a pod preempts by: its own `preemptionPolicy`, else its PriorityClass's.
fn policy(
    origin: &Origin,
    pod_name: &str,
    pod: &Object,
    classes: &BTreeMap<String, (Option<i64>, Option<String>)>,
) -> Result<PreemptionPolicy, ImportError> {
    let from_class = pod
        .spec
        .priority_class_name
        .as_ref()
        .and_then(|c| classes.get(c))
        .and_then(|c| c.1.clone());
    match pod.spec.preemption_policy.clone().or(from_class).as_deref() {
        None | Some("PreemptLowerPriority") => Ok(PreemptionPolicy::LowerPriority),
        Some("Never") => Ok(PreemptionPolicy::Never),
        Some(other) => Err(at_object(
            origin,
            format!(
                "pod `{pod_name}`: preemptionPolicy `{other}` is not PreemptLowerPriority or Never"
            ),
        )),
    }
}

/// A pod's rules.
pub(super) fn pod_rules(
    origin: &Origin,
    name: &str,
    pod: &Object,
    classes: &BTreeMap<String, (Option<i64>, Option<String>)>,
) -> Result<ClassRules, ImportError> {
    let mut node_affinity = Vec::new();
    if let Some(required) = &pod.spec.affinity.node_affinity.required {
        for term in &required.node_selector_terms {
            node_affinity.push(AffinityTerm {
                match_expressions: term
                    .match_expressions
                    .iter()
                    .map(|r| requirement(origin, name, r))
                    .collect::<Result<_, _>>()?,
                match_fields: term
                    .match_fields
                    .iter()
                    .map(|r| requirement(origin, name, r))
                    .collect::<Result<_, _>>()?,
            });
        }
    }
    let mut tolerations: Vec<Toleration> = pod
        .spec
        .tolerations
        .iter()
        .map(|t| toleration(origin, name, t))
        .collect::<Result<_, _>>()?;
    // Equal sets of tolerations in another order are one class.
    tolerations.sort();
    tolerations.dedup();
    Ok(ClassRules {
        node_selector: pod.spec.node_selector.clone(),
        node_affinity,
        tolerations,
        preemption_policy: policy(origin, name, pod, classes)?,
        gpu_resource: None,
        device_alignment: None,
    })
}
