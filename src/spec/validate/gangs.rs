//! Checks of gang preemptors (DESIGN §12.3): the single-file rules of a `[[preempt]]` gang
//! (its pods and slices, and what coplan does not model for gangs), and the cross-file rule
//! that its levels are levels of the cluster, nested as Kueue nests them.

use super::findings::Findings;
use crate::p;
use crate::spec::limits::MAX_GANG_PODS;
use crate::spec::preemption::PreemptEntry;
use crate::spec::preemption::PreemptionSpec;
use crate::spec::source::Finding;

fn unsupported(path: String, message: String, help: &str) -> Finding {
    Finding::new("spec::unsupported", path, message, "not modelled for gangs")
        .help(help.to_string())
}

/// The single-file rules of entry `i` when it is a gang.
pub(super) fn entry(out: &mut Findings, i: usize, e: &PreemptEntry, spec: &PreemptionSpec) {
    if !e.is_gang() {
        return;
    }
    let pods = e.pods.unwrap_or(1);
    if let Some(n) = e.pods {
        out.at_least(p!["preempt", i, "pods"], n, 1, "`pods`");
        out.at_most(p!["preempt", i, "pods"], n, MAX_GANG_PODS, "`pods`");
    }
    match (e.slice_size, &e.slice_level) {
        (Some(size), Some(_)) => {
            out.at_least(p!["preempt", i, "slice_size"], size, 1, "`slice_size`");
            if size >= 1 && pods >= 1 && pods % size != 0 {
                out.push(
                    Finding::new(
                        "spec::out-of-range",
                        p!["preempt", i, "slice_size"],
                        format!("slices of {size} pods do not divide the gang's {pods} pods"),
                        "does not divide `pods`",
                    )
                    .help("a gang is cut into whole slices: choose a slice_size that divides pods"),
                );
            }
        }
        (Some(_), None) => out.push(
            Finding::new(
                "spec::missing-key",
                p!["preempt", i, "slice_size"],
                "`slice_size` without `slice_level`".to_string(),
                "no slice level",
            )
            .help(
                "name the level one domain of which holds each slice, e.g. slice_level = \"host\"",
            ),
        ),
        (None, Some(_)) => out.push(
            Finding::new(
                "spec::missing-key",
                p!["preempt", i, "slice_level"],
                "`slice_level` without `slice_size`".to_string(),
                "no slice size",
            )
            .help("give the pods per slice, e.g. slice_size = 2"),
        ),
        (None, None) => {}
    }
    if let Some((w, class)) = spec
        .workload
        .iter()
        .enumerate()
        .find(|(_, w)| w.name == e.workload)
        && class.device_alignment.is_some()
    {
        out.push(unsupported(
            p!["workload", w, "device_alignment"],
            format!(
                "class `{}` preempts as a gang and sets device_alignment, which gang plans do not model",
                class.name
            ),
            "drop device_alignment from the gang's class, or plan its pods as single preemptors",
        ));
    }
    if spec.planners.respect_pdb && !spec.disruption_budget.is_empty() {
        out.push(unsupported(
            p!["preempt", i],
            "gang preemptors with hard PodDisruptionBudgets (respect_pdb) are not modelled".into(),
            "set [planners] respect_pdb = false (budgets are then counted, not enforced), or drop the budgets",
        ));
    }
}

/// The cross-file rule: every level a gang names is one of `levels` (the cluster's, outermost
/// first, `cluster` and `host` included), and its preferred and slice levels lie no wider
/// than its required one.
pub fn gang_levels(levels: &[String], spec: &PreemptionSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let index = |name: &str| levels.iter().position(|l| l == name);
    for (i, e) in spec.preempt.iter().enumerate() {
        let named = [
            ("required_level", &e.required_level),
            ("preferred_level", &e.preferred_level),
            ("slice_level", &e.slice_level),
        ];
        let mut found = [None; 3];
        for (k, (key, level)) in named.iter().enumerate() {
            let Some(level) = level else { continue };
            match index(level) {
                Some(at) => found[k] = Some(at),
                None => out.push(
                    Finding::new(
                        "spec::unknown-level",
                        p!["preempt", i, *key],
                        format!("`{level}` is not a level of the cluster"),
                        "no such level",
                    )
                    .help(format!(
                        "the cluster's levels, outermost first: {}",
                        levels.join(", ")
                    )),
                ),
            }
        }
        let required = found[0].unwrap_or(0);
        for (k, key) in [(1, "preferred_level"), (2, "slice_level")] {
            if let Some(at) = found[k]
                && at < required
            {
                out.push(
                    Finding::new(
                        "spec::bad-level",
                        p!["preempt", i, key],
                        format!(
                            "`{}` is wider than the required level `{}`",
                            levels[at], levels[required]
                        ),
                        "wider than required_level",
                    )
                    .help("a preferred or slice level lies inside the required one: name the same level or a narrower one"),
                );
            }
        }
    }
    out
}
