//! PodDisruptionBudgets: each budget's label selector matched against the running pods of its
//! namespace (as the disruption controller matches them), written as a
//! `[[disruption_budget]]` that names the pods it covers. What it allows is its
//! `status.disruptionsAllowed` (what kube-scheduler reads) when the export has a status, else
//! its `minAvailable` or `maxUnavailable`, which coplan scales over the covered pods.

use std::collections::{BTreeMap, BTreeSet};

use super::read::{Origin, at_object, at_span};
use crate::import::error::ImportError;
use crate::import::k8s_objects::{LabelSelector, Labels, Object};
use crate::import::summary::ImportSummary;
use crate::spec::preemption::{DisruptionBudget, IntOrPercent};

/// A running pod as a budget sees it: `namespace/name` and its labels.
pub(super) struct Labelled<'a> {
    pub(super) name: &'a str,
    pub(super) labels: &'a Labels,
}

/// The budgets of a snapshot (by `namespace/name`) over its running pods. A budget that
/// covers no running pod is counted and left out (it can refuse no eviction).
pub(super) fn disruption_budgets(
    budgets: &BTreeMap<String, (Origin, Object)>,
    running: &[Labelled<'_>],
    summary: &mut ImportSummary,
) -> Result<Vec<DisruptionBudget>, ImportError> {
    let mut by_namespace: BTreeMap<&str, Vec<&Labelled<'_>>> = BTreeMap::new();
    for pod in running {
        let namespace = pod.name.split_once('/').map_or("default", |(ns, _)| ns);
        by_namespace.entry(namespace).or_default().push(pod);
    }
    let mut out = Vec::new();
    for (id, (origin, object)) in budgets {
        let namespace = id.split_once('/').map_or("default", |(ns, _)| ns);
        let Some(selector) = &object.spec.selector else {
            // A null selector selects nothing (policy/v1).
            summary.dropped("pod_disruption_budgets_covering_no_running_pod", 1);
            continue;
        };
        check_selector(origin, id, selector)?;
        let pods: Vec<String> = by_namespace
            .get(namespace)
            .into_iter()
            .flatten()
            .filter(|pod| matches(selector, pod.labels))
            .map(|pod| pod.name.to_string())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if pods.is_empty() {
            summary.dropped("pod_disruption_budgets_covering_no_running_pod", 1);
            continue;
        }
        let min_available = amount(origin, id, "minAvailable", &object.spec.min_available)?;
        let max_unavailable = amount(origin, id, "maxUnavailable", &object.spec.max_unavailable)?;
        let disruptions_allowed = object.status.disruptions_allowed;
        if disruptions_allowed.is_some_and(|n| n < 0 || n > i64::from(i32::MAX)) {
            return Err(at_object(
                origin,
                format!(
                    "PodDisruptionBudget `{id}`: status.disruptionsAllowed {} is not a count of pods",
                    disruptions_allowed.unwrap_or_default()
                ),
            ));
        }
        let budget = match (disruptions_allowed, min_available, max_unavailable) {
            (Some(n), _, _) => DisruptionBudget {
                disruptions_allowed: Some(n),
                ..budget(id, pods)
            },
            (None, Some(_), Some(_)) => {
                return Err(at_object(
                    origin,
                    format!("PodDisruptionBudget `{id}` sets both minAvailable and maxUnavailable"),
                ));
            }
            (None, Some(min), None) => DisruptionBudget {
                min_available: Some(min),
                ..budget(id, pods)
            },
            (None, None, Some(max)) => DisruptionBudget {
                max_unavailable: Some(max),
                ..budget(id, pods)
            },
            (None, None, None) => {
                summary.warn(format!(
                    "PodDisruptionBudget `{id}` has no status.disruptionsAllowed, minAvailable or maxUnavailable: left out"
                ));
                summary.dropped("pod_disruption_budgets_without_an_amount", 1);
                continue;
            }
        };
        summary.honoured("pod_disruption_budgets", 1);
        out.push(budget);
    }
    Ok(out)
}

fn budget(id: &str, pods: Vec<String>) -> DisruptionBudget {
    DisruptionBudget {
        name: id.to_string(),
        pods,
        workloads: Vec::new(),
        disruptions_allowed: None,
        min_available: None,
        max_unavailable: None,
    }
}

/// `minAvailable` / `maxUnavailable` as written: a count or `N%` (0 to 100).
fn amount(
    origin: &Origin,
    id: &str,
    key: &str,
    value: &Option<serde_saphyr::Spanned<crate::import::k8s_objects::QuantityText>>,
) -> Result<Option<IntOrPercent>, ImportError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let text = value.value.0.trim();
    let parsed = if text.ends_with('%') {
        let p = IntOrPercent::Percent(text.to_string());
        p.scaled(0).map(|_| p)
    } else {
        text.parse::<i64>()
            .ok()
            .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
            .map(IntOrPercent::Int)
    };
    parsed.map(Some).ok_or_else(|| {
        // Places in an object's tree are lines of its file (its document starts at line 1).
        at_span(
            origin,
            1,
            value,
            format!(
                "PodDisruptionBudget `{id}`: {key} `{text}` is neither a count of pods nor a percentage from 0% to 100%"
            ),
        )
        .with("not a count or percentage", "e.g. `minAvailable: 2` or `maxUnavailable: 25%`")
    })
}

/// Refuses an operator a label selector does not have.
fn check_selector(origin: &Origin, id: &str, selector: &LabelSelector) -> Result<(), ImportError> {
    for r in &selector.match_expressions {
        if !matches!(
            r.operator.as_str(),
            "In" | "NotIn" | "Exists" | "DoesNotExist"
        ) {
            return Err(at_object(
                origin,
                format!(
                    "PodDisruptionBudget `{id}`: selector operator `{}` (expected In, NotIn, Exists or DoesNotExist)",
                    r.operator
                ),
            ));
        }
    }
    Ok(())
}

/// Whether a pod's labels satisfy a label selector: every `matchLabels` entry and every
/// requirement (an empty selector selects every pod).
pub(super) fn matches(selector: &LabelSelector, labels: &Labels) -> bool {
    let value = |key: &str| labels.get(key).map(str::to_string);
    selector
        .match_labels
        .iter()
        .all(|(k, v)| value(k).as_deref() == Some(v.as_str()))
        && selector.match_expressions.iter().all(|r| {
            let v = value(&r.key);
            match r.operator.as_str() {
                "In" => v.is_some_and(|v| r.values.contains(&v)),
                "NotIn" => v.is_none_or(|v| !r.values.contains(&v)),
                "Exists" => v.is_some(),
                "DoesNotExist" => v.is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::k8s_objects::LabelRequirement;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        Labels::from_pairs(pairs.iter().copied())
    }

    fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelRequirement {
        LabelRequirement {
            key: key.into(),
            operator: operator.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn selectors_match_as_the_disruption_controller_matches() {
        let pod = labels(&[("app", "trainer"), ("tier", "gold")]);
        let cases: Vec<(LabelSelector, bool)> = vec![
            (LabelSelector::default(), true),
            (
                LabelSelector {
                    match_labels: [("app".to_string(), "trainer".to_string())].into(),
                    ..Default::default()
                },
                true,
            ),
            (
                LabelSelector {
                    match_labels: [("app".to_string(), "server".to_string())].into(),
                    ..Default::default()
                },
                false,
            ),
            (
                LabelSelector {
                    match_expressions: vec![requirement("tier", "In", &["gold", "silver"])],
                    ..Default::default()
                },
                true,
            ),
            (
                LabelSelector {
                    match_expressions: vec![requirement("tier", "NotIn", &["gold"])],
                    ..Default::default()
                },
                false,
            ),
            (
                LabelSelector {
                    match_expressions: vec![requirement("zone", "NotIn", &["a"])],
                    ..Default::default()
                },
                true,
            ),
            (
                LabelSelector {
                    match_expressions: vec![requirement("zone", "Exists", &[])],
                    ..Default::default()
                },
                false,
            ),
            (
                LabelSelector {
                    match_expressions: vec![requirement("zone", "DoesNotExist", &[])],
                    ..Default::default()
                },
                true,
            ),
        ];
        for (selector, expected) in cases {
            assert_eq!(matches(&selector, &pod), expected, "{selector:?}");
        }
    }
}
