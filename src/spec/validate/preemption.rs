//! Single-file checks of a preemption workload: its own file because its rules (workload
//! references, id lists, FlexTopo scores) follow the preemption model alone.

use crate::spec::limits::{
    MAX_CHURN_ROUNDS, MAX_CYCLES, MAX_GANG_PODS, MAX_POD_CORES, MAX_POD_GPUS, MAX_PREEMPTORS,
    MAX_RUNNING_PODS, MAX_SEEDS, MAX_SUBSET_EVALUATIONS, MAX_TIMESTAMP_S,
};
use std::collections::{BTreeMap, BTreeSet};

use super::findings::Findings;
use super::ranges::{
    Field, ILP_TIME_LIMIT, IntRange::*, MIP_GAP, RealRange::*, int, maybe_real, real, titled,
};
use crate::p;
use crate::spec::preemption::{
    FillSpec, FlextopoSettings, IdsOrCount, LevelScores, PREEMPTION_PLANNERS, PreemptionObjective,
    PreemptionPlanners, PreemptionSpec, RunningPod, Seeds, SimulationSettings, TopologyScore,
    WorkloadClass,
};
use crate::spec::source::Finding;

/// The ranges of a workload class's request.
const WORKLOAD: &[Field<WorkloadClass>] = &[
    int("gpus", |w| w.gpus, AtLeast(0)),
    int("cores", |w| w.cores, AtLeast(0)),
    int("gpus", |w| w.gpus, AtMost(MAX_POD_GPUS)),
    int("cores", |w| w.cores, AtMost(MAX_POD_CORES)),
];

/// The workload's clock.
const CLOCK: &[Field<PreemptionSpec>] =
    &[maybe_real("now_s", |s| s.now_s, Seconds(MAX_TIMESTAMP_S))];

/// The range of a `[[running]]` pod's start time.
const RUNNING: &[Field<RunningPod>] = &[maybe_real(
    "start_time_s",
    |r| r.start_time_s,
    Seconds(MAX_TIMESTAMP_S),
)];

/// The range of `[fill] churn_rounds`.
const FILL: &[Field<FillSpec>] = &[int(
    "churn_rounds",
    |f| f.churn_rounds,
    Between(0, MAX_CHURN_ROUNDS),
)];

/// The range of FlexTopo's `alpha`.
const FLEXTOPO: &[Field<FlextopoSettings>] = &[real("alpha", |f| f.alpha, Within(0.0, 1.0))];

/// The ranges of explicit topology scores.
const TOPOLOGY_SCORES: &[Field<LevelScores>] = &[
    titled("topology score", real("numa", |s| s.numa, Within(0.0, 1.0))),
    titled(
        "topology score",
        real("socket", |s| s.socket, Within(0.0, 1.0)),
    ),
    titled(
        "topology score",
        real("cross_socket", |s| s.cross_socket, Within(0.0, 1.0)),
    ),
];

/// The weights of the preemption objective.
const OBJECTIVE: &[Field<PreemptionObjective>] = &[
    titled("weight", real("unplaced", |o| o.unplaced, Weight)),
    titled("weight", real("per_victim", |o| o.per_victim, Weight)),
    titled(
        "weight",
        real("victim_priority", |o| o.victim_priority, Weight),
    ),
    titled("weight", real("topology", |o| o.topology, Weight)),
];

/// The solver budget of the exact planners.
const PLANNERS: &[Field<PreemptionPlanners>] = &[
    real("ilp_time_limit_s", |p| p.ilp_time_limit_s, ILP_TIME_LIMIT),
    real("ilp_mip_gap", |p| p.ilp_mip_gap, MIP_GAP),
];

/// The range of `[simulation] cycles`.
const SIMULATION: &[Field<SimulationSettings>] =
    &[int("cycles", |s| s.cycles, Between(1, MAX_CYCLES as i64))];

/// Single-file checks of a preemption workload.
pub fn preemption(spec: &PreemptionSpec) -> Vec<Finding> {
    let mut out = Findings::default();
    let names = workloads(&mut out, spec);
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
    out.fields("", spec, CLOCK);
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
        running_ids(&mut out, i, r);
        out.fields(&p!["running", i], r, RUNNING);
    }
    if let Some(fill) = &spec.fill {
        for (name, &weight) in &fill.mix {
            if !names.contains_key(name.as_str()) {
                out.push(undefined(p!["fill", "mix", name.as_str()], name));
            }
            out.non_negative(p!["fill", "mix", name.as_str()], weight, "a mix weight");
        }
        fill_target(&mut out, fill);
    }
    let mut preemptors: i64 = 0;
    for (i, e) in spec.preempt.iter().enumerate() {
        if !names.contains_key(e.workload.as_str()) {
            out.push(undefined(p!["preempt", i, "workload"], &e.workload));
        }
        out.at_least(p!["preempt", i, "count"], e.count, 1, "`count`");
        super::gangs::entry(&mut out, i, e, spec);
        preemptors = preemptors.saturating_add(
            e.count
                .max(0)
                .saturating_mul(e.pods.unwrap_or(1).clamp(1, MAX_GANG_PODS)),
        );
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
    flextopo(&mut out, &spec.flextopo);
    out.fields("objective", &spec.objective, OBJECTIVE);
    out.planner_names("planners", &spec.planners.run, &PREEMPTION_PLANNERS);
    out.fields("planners", &spec.planners, PLANNERS);
    out.fields("simulation", &spec.simulation, SIMULATION);
    seeds(&mut out, &spec.simulation.seeds);
    pod_names(&mut out, spec);
    out.0
}

/// The workload classes: unique names, Kubernetes priorities, scheduling rules and a request
/// in range. Returns the index of each class by name (the first of a repeated one).
fn workloads<'s>(out: &mut Findings, spec: &'s PreemptionSpec) -> BTreeMap<&'s str, usize> {
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
        super::eligibility::pod_rules(out, &p!["workload", i], &w.node_affinity, &w.tolerations);
        out.fields(&p!["workload", i], w, WORKLOAD);
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
    names
}

/// A running pod's `gpus` and `cores`: a count in range, or ids that are not negative and
/// not repeated.
fn running_ids(out: &mut Findings, i: usize, r: &RunningPod) {
    for (key, ids, most) in [
        ("gpus", &r.gpus, MAX_POD_GPUS),
        ("cores", &r.cores, MAX_POD_CORES),
    ] {
        match ids {
            Some(IdsOrCount::Count(n)) => {
                out.int(
                    p!["running", i, key],
                    *n,
                    Between(0, most),
                    format!("`{key}`"),
                );
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
}

/// `[fill]`: a mix with a positive weight, a target utilization in (0, 1], and the churn.
fn fill_target(out: &mut Findings, fill: &FillSpec) {
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
    out.fields("fill", fill, FILL);
}

/// `[flextopo]`: `alpha`, explicit topology scores in [0, 1] that never rise for a worse
/// level, and a subset budget in range.
fn flextopo(out: &mut Findings, ft: &FlextopoSettings) {
    out.fields("flextopo", ft, FLEXTOPO);
    if let TopologyScore::Scores(s) = ft.topology_score {
        out.fields("flextopo.topology_score", &s, TOPOLOGY_SCORES);
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
}

/// `[simulation] seeds`: a positive count or a non-empty list, within `MAX_SEEDS`.
fn seeds(out: &mut Findings, seeds: &Seeds) {
    match seeds {
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
