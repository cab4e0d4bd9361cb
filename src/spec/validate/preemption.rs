//! Single-file checks of a preemption workload: its own file because its rules (workload
//! references, id lists, FlexTopo scores) follow the preemption model alone.

use crate::spec::limits::{
    MAX_CHURN_ROUNDS, MAX_CYCLES, MAX_POD_CORES, MAX_POD_GPUS, MAX_PREEMPTORS, MAX_RUNNING_PODS,
    MAX_SEEDS, MAX_SUBSET_EVALUATIONS, MAX_TIME_LIMIT_S, MAX_TIMESTAMP_S,
};
use std::collections::{BTreeMap, BTreeSet};

use super::findings::Findings;
use crate::p;
use crate::spec::preemption::{
    IdsOrCount, PREEMPTION_PLANNERS, PreemptionSpec, Seeds, TopologyScore,
};
use crate::spec::source::Finding;

/// Single-file checks of a preemption workload.
pub fn preemption(spec: &PreemptionSpec) -> Vec<Finding> {
    let mut out = Findings::default();
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, w) in spec.workload.iter().enumerate() {
        if let Some(&first) = names.get(w.name.as_str()) {
            out.duplicate(
                p!["workload", i, "name"],
                "workload",
                &w.name,
                &format!("workload[{first}]"),
            );
        } else {
            names.insert(&w.name, i);
        }
        // A Kubernetes PriorityClass value is an int32; keeping to it also keeps the priority
        // sums and ranges of the scores and the objective far from i64 overflow.
        if i64::from(i32::MIN) > w.priority || w.priority > i64::from(i32::MAX) {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["workload", i, "priority"],
                    format!(
                        "`priority` must be a 32-bit integer (Kubernetes PriorityClass value), got {}",
                        w.priority
                    ),
                    "out of range",
                )
                .help(format!("use an integer in [{}, {}]", i32::MIN, i32::MAX)),
            );
        }
        super::eligibility::pod_rules(
            &mut out,
            &p!["workload", i],
            &w.node_affinity,
            &w.tolerations,
        );
        out.at_least(p!["workload", i, "gpus"], w.gpus, 0, "`gpus`");
        out.at_least(p!["workload", i, "cores"], w.cores, 0, "`cores`");
        out.at_most(p!["workload", i, "gpus"], w.gpus, MAX_POD_GPUS, "`gpus`");
        out.at_most(
            p!["workload", i, "cores"],
            w.cores,
            MAX_POD_CORES,
            "`cores`",
        );
        if w.gpus == 0 && w.cores == 0 {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["workload", i],
                    format!("workload `{}` requests no GPUs and no cores", w.name),
                    "empty request",
                )
                .help("set `gpus` or `cores` (or both) to a positive count"),
            );
        }
    }
    let undefined = |path: String, name: &str| {
        Finding::new(
            "spec::undefined-reference",
            path,
            format!("undefined workload `{name}`"),
            "not defined",
        )
        .help(format!(
            "defined workloads: {}",
            names.keys().copied().collect::<Vec<_>>().join(", ")
        ))
    };
    if let Some(t) = spec.now_s {
        out.seconds(p!["now_s"], t, MAX_TIMESTAMP_S, "`now_s`");
    }
    if spec.running.len() > MAX_RUNNING_PODS {
        // Located at the first pod past the limit: the list itself has no single span.
        out.at_most(
            p!["running", MAX_RUNNING_PODS],
            spec.running.len() as i64,
            MAX_RUNNING_PODS as i64,
            "the number of `[[running]]` pods",
        );
        return out.0;
    }
    for (i, r) in spec.running.iter().enumerate() {
        if !names.contains_key(r.workload.as_str()) {
            out.push(undefined(p!["running", i, "workload"], &r.workload));
        }
        for (key, ids) in [("gpus", &r.gpus), ("cores", &r.cores)] {
            match ids {
                Some(IdsOrCount::Count(n)) => {
                    let what = format!("`{key}`");
                    let most = if key == "gpus" {
                        MAX_POD_GPUS
                    } else {
                        MAX_POD_CORES
                    };
                    out.at_least(p!["running", i, key], *n, 0, &what);
                    out.at_most(p!["running", i, key], *n, most, &what);
                }
                Some(IdsOrCount::Ids(list)) => {
                    let mut seen = BTreeSet::new();
                    for (j, &id) in list.iter().enumerate() {
                        if id < 0 {
                            out.at_least(p!["running", i, key, j], id, 0, "an id");
                        } else if !seen.insert(id) {
                            out.push(Finding::new(
                                "spec::duplicate-name",
                                p!["running", i, key, j],
                                format!("id {id} is listed twice"),
                                "listed again here",
                            ));
                        }
                    }
                }
                None => {}
            }
        }
        if let Some(t) = r.start_time_s {
            out.seconds(
                p!["running", i, "start_time_s"],
                t,
                MAX_TIMESTAMP_S,
                "`start_time_s`",
            );
        }
    }
    if let Some(fill) = &spec.fill {
        for (name, &weight) in &fill.mix {
            if !names.contains_key(name.as_str()) {
                out.push(undefined(p!["fill", "mix", name.as_str()], name));
            }
            out.non_negative(p!["fill", "mix", name.as_str()], weight, "a mix weight");
        }
        if fill.mix.values().all(|&w| w <= 0.0) {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["fill", "mix"],
                    "the fill mix has no positive weight",
                    "nothing to fill with",
                )
                .help("e.g. mix = { batch-a = 1.0 }"),
            );
        }
        if !(fill.target_gpu_utilization > 0.0 && fill.target_gpu_utilization <= 1.0) {
            out.in_range(
                p!["fill", "target_gpu_utilization"],
                fill.target_gpu_utilization,
                0.0,
                1.0,
                "`target_gpu_utilization`",
            );
            if fill.target_gpu_utilization == 0.0 {
                out.push(
                    Finding::new(
                        "spec::out-of-range",
                        p!["fill", "target_gpu_utilization"],
                        "`target_gpu_utilization` must be above 0",
                        "must be positive",
                    )
                    .help("remove [fill] for an empty cluster"),
                );
            }
        }
        out.at_least(
            p!["fill", "churn_rounds"],
            fill.churn_rounds,
            0,
            "`churn_rounds`",
        );
        out.at_most(
            p!["fill", "churn_rounds"],
            fill.churn_rounds,
            MAX_CHURN_ROUNDS,
            "`churn_rounds`",
        );
    }
    let mut preemptors: i64 = 0;
    for (i, e) in spec.preempt.iter().enumerate() {
        if !names.contains_key(e.workload.as_str()) {
            out.push(undefined(p!["preempt", i, "workload"], &e.workload));
        }
        out.at_least(p!["preempt", i, "count"], e.count, 1, "`count`");
        preemptors = preemptors.saturating_add(e.count.max(0));
        // Named at the entry that crosses the limit: the sum has no single place in the file.
        if preemptors > MAX_PREEMPTORS {
            out.at_most(
                p!["preempt", i, "count"],
                preemptors,
                MAX_PREEMPTORS,
                "the number of preemptors (the sum of `[[preempt]] count`)",
            );
            break;
        }
    }
    super::budgets::disruption_budgets(&mut out, spec);
    let ft = &spec.flextopo;
    out.in_range(p!["flextopo", "alpha"], ft.alpha, 0.0, 1.0, "`alpha`");
    if let TopologyScore::Scores(s) = ft.topology_score {
        for (key, v) in [
            ("numa", s.numa),
            ("socket", s.socket),
            ("cross_socket", s.cross_socket),
        ] {
            out.in_range(
                p!["flextopo", "topology_score", key],
                v,
                0.0,
                1.0,
                &format!("topology score `{key}`"),
            );
        }
        // A better level must never score lower: the planners and the exact MILP rank
        // placements by these scores, and a non-monotone table makes the MILP's optimum
        // disagree with the allocator's placement.
        for (better, worse, key, bv, wv) in [
            ("numa", "socket", "socket", s.numa, s.socket),
            (
                "socket",
                "cross_socket",
                "cross_socket",
                s.socket,
                s.cross_socket,
            ),
        ] {
            if wv > bv {
                out.push(
                    Finding::new(
                        "spec::not-monotone",
                        p!["flextopo", "topology_score", key],
                        format!("topology score `{worse}` ({wv}) is above `{better}` ({bv})"),
                        "scores must not rise for a worse level",
                    )
                    .help("expected numa ≥ socket ≥ cross_socket"),
                );
            }
        }
    }
    if ft.max_subset_evaluations > MAX_SUBSET_EVALUATIONS {
        out.at_most(
            p!["flextopo", "max_subset_evaluations"],
            i64::try_from(ft.max_subset_evaluations).unwrap_or(i64::MAX),
            MAX_SUBSET_EVALUATIONS as i64,
            "`max_subset_evaluations`",
        );
    }
    if ft.max_subset_evaluations == 0 {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["flextopo", "max_subset_evaluations"],
                "`max_subset_evaluations` must be at least 1",
                "must be positive",
            )
            .help("the default is 100000"),
        );
    }
    let o = &spec.objective;
    for (key, v) in [
        ("unplaced", o.unplaced),
        ("per_victim", o.per_victim),
        ("victim_priority", o.victim_priority),
        ("topology", o.topology),
    ] {
        out.weight(p!["objective", key], v, &format!("weight `{key}`"));
    }
    out.planner_names("planners", &spec.planners.run, &PREEMPTION_PLANNERS);
    out.positive_at_most(
        p!["planners", "ilp_time_limit_s"],
        spec.planners.ilp_time_limit_s,
        MAX_TIME_LIMIT_S,
        "`ilp_time_limit_s`",
    );
    out.mip_gap(spec.planners.ilp_mip_gap);
    out.at_least(
        p!["simulation", "cycles"],
        spec.simulation.cycles,
        1,
        "`cycles`",
    );
    out.at_most(
        p!["simulation", "cycles"],
        spec.simulation.cycles,
        MAX_CYCLES as i64,
        "`cycles`",
    );
    match &spec.simulation.seeds {
        Seeds::Count(0) => out.at_least(p!["simulation", "seeds"], 0, 1, "`seeds`"),
        // Above the limit, the seed list would be allocated before anything else is checked.
        Seeds::Count(n) if *n > MAX_SEEDS => out.at_most(
            p!["simulation", "seeds"],
            i64::try_from(*n).unwrap_or(i64::MAX),
            MAX_SEEDS as i64,
            "`seeds`",
        ),
        Seeds::List(list) if list.len() as u64 > MAX_SEEDS => out.at_most(
            p!["simulation", "seeds"],
            list.len() as i64,
            MAX_SEEDS as i64,
            "the number of `seeds`",
        ),
        Seeds::List(list) if list.is_empty() => out.push(
            Finding::new(
                "spec::out-of-range",
                p!["simulation", "seeds"],
                "the seed list is empty",
                "empty",
            )
            .help("give a count (seeds = 10) or at least one seed"),
        ),
        _ => {}
    }
    pod_names(&mut out, spec);
    out.0
}

/// Given pod names (`[[running]] name`, `[[preempt]] name`): unique in the spec, one pod per
/// name, and not of the form `<workload>-<index>` that unnamed pods are given.
fn pod_names(out: &mut Findings, spec: &PreemptionSpec) {
    let generated = |name: &str| {
        name.rsplit_once('-').is_some_and(|(class, index)| {
            !index.is_empty()
                && index.bytes().all(|b| b.is_ascii_digit())
                && spec.workload.iter().any(|w| w.name == class)
        })
    };
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    let given = spec
        .running
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.name.as_deref().map(|n| (p!["running", i, "name"], n)))
        .chain(
            spec.preempt
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.name.as_deref().map(|n| (p!["preempt", i, "name"], n))),
        );
    for (path, name) in given {
        if name.is_empty() {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    "a pod name may not be empty",
                    "empty name",
                )
                .help("give `namespace/name`, or drop `name`"),
            );
            continue;
        }
        if generated(name) {
            out.push(
                Finding::new(
                    "spec::duplicate-name",
                    path.clone(),
                    format!(
                        "`{name}` has the form `<workload>-<index>` that unnamed pods are given"
                    ),
                    "reserved form",
                )
                .help("use `namespace/name`, or another name"),
            );
        }
        if let Some(first) = seen.get(name) {
            out.duplicate(path, "pod", name, first);
        } else {
            seen.insert(name, path);
        }
    }
    for (i, e) in spec.preempt.iter().enumerate() {
        if e.name.is_some() && e.count != 1 {
            out.push(
                Finding::new(
                    "spec::conflict",
                    p!["preempt", i, "name"],
                    format!("a named preemptor is one pod, but `count` is {}", e.count),
                    "one pod per name",
                )
                .help("drop `count` (or set it to 1), or drop `name`"),
            );
        }
    }
}
