//! Checks of a preemption workload's PodDisruptionBudgets (`[[disruption_budget]]`): each is
//! named once, covers pods that exist, and says how many may go in exactly one way.

use std::collections::{BTreeMap, BTreeSet};

use super::findings::Findings;
use crate::p;
use crate::spec::limits::MAX_DISRUPTION_BUDGETS;
use crate::spec::preemption::{IntOrPercent, PreemptionSpec};
use crate::spec::source::Finding;

/// The budgets of `spec`, against its classes and named running pods.
pub(super) fn disruption_budgets(out: &mut Findings, spec: &PreemptionSpec) {
    let budgets = &spec.disruption_budget;
    if budgets.len() > MAX_DISRUPTION_BUDGETS {
        out.at_most(
            p!["disruption_budget", MAX_DISRUPTION_BUDGETS],
            budgets.len() as i64,
            MAX_DISRUPTION_BUDGETS as i64,
            "the number of `[[disruption_budget]]` entries",
        );
        return;
    }
    let classes: BTreeSet<&str> = spec.workload.iter().map(|w| w.name.as_str()).collect();
    let pods: BTreeSet<&str> = spec
        .running
        .iter()
        .filter_map(|r| r.name.as_deref())
        .collect();
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in budgets.iter().enumerate() {
        let at = |key: &str| p!["disruption_budget", i, key];
        if b.name.trim().is_empty() {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    at("name"),
                    "a disruption budget needs a name",
                    "empty name",
                )
                .help("e.g. name = \"ml/trainer-pdb\""),
            );
        } else if let Some(&first) = names.get(b.name.as_str()) {
            out.duplicate(
                at("name"),
                "disruption budget",
                &b.name,
                &format!("disruption_budget[{first}]"),
            );
        } else {
            names.insert(&b.name, i);
        }
        if b.pods.is_empty() && b.workloads.is_empty() {
            out.push(
                Finding::new(
                    "spec::invalid-rule",
                    p!["disruption_budget", i],
                    format!("disruption budget `{}` covers no pod", b.name),
                    "nothing covered",
                )
                .help("list running pods in `pods` or workload classes in `workloads`"),
            );
        }
        let mut seen = BTreeSet::new();
        for (j, pod) in b.pods.iter().enumerate() {
            if !seen.insert(pod.as_str()) {
                out.push(Finding::new(
                    "spec::duplicate-name",
                    p!["disruption_budget", i, "pods", j],
                    format!("pod `{pod}` is listed twice"),
                    "listed again here",
                ));
            } else if !pods.contains(pod.as_str()) {
                out.push(
                    Finding::new(
                        "spec::undefined-reference",
                        p!["disruption_budget", i, "pods", j],
                        format!("no `[[running]]` pod is named `{pod}`"),
                        "no such pod",
                    )
                    .help("name the pod in its `[[running]]` entry (`name = \"ns/pod\"`)"),
                );
            }
        }
        for (j, class) in b.workloads.iter().enumerate() {
            if !classes.contains(class.as_str()) {
                out.push(
                    Finding::new(
                        "spec::undefined-reference",
                        p!["disruption_budget", i, "workloads", j],
                        format!("undefined workload `{class}`"),
                        "not defined",
                    )
                    .help(format!(
                        "defined workloads: {}",
                        classes.iter().copied().collect::<Vec<_>>().join(", ")
                    )),
                );
            }
        }
        let given = [
            b.disruptions_allowed.is_some(),
            b.min_available.is_some(),
            b.max_unavailable.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            out.push(
                Finding::new(
                    "spec::invalid-rule",
                    p!["disruption_budget", i],
                    format!(
                        "disruption budget `{}` needs exactly one of `disruptions_allowed`, `min_available` and `max_unavailable`",
                        b.name
                    ),
                    "how many may go is not said once",
                )
                .help("e.g. max_unavailable = 1, or min_available = \"80%\""),
            );
        }
        if let Some(n) = b.disruptions_allowed {
            out.at_least(at("disruptions_allowed"), n, 0, "`disruptions_allowed`");
        }
        for (key, value) in [
            ("min_available", &b.min_available),
            ("max_unavailable", &b.max_unavailable),
        ] {
            match value {
                Some(IntOrPercent::Int(n)) => out.at_least(at(key), *n, 0, format!("`{key}`")),
                Some(v @ IntOrPercent::Percent(text)) if v.scaled(0).is_none() => out.push(
                    Finding::new(
                        "spec::out-of-range",
                        at(key),
                        format!(
                            "`{key}` must be a count or a percentage from 0% to 100%, got `{text}`"
                        ),
                        "not a count or percentage",
                    )
                    .help("e.g. 2 or \"50%\""),
                ),
                _ => {}
            }
        }
    }
}
