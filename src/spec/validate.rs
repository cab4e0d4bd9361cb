//! Semantic checks of a parsed spec. Each check returns located findings; all are reported.

use std::collections::{BTreeMap, BTreeSet};

use super::cluster::{ClusterSpec, builtin_server_types};
use super::colocation::{COLOCATION_PLANNERS, ColocationSpec, TokenDist};
use super::preemption::{IdsOrCount, PREEMPTION_PLANNERS, PreemptionSpec, Seeds, TopologyScore};
use super::source::Finding;
use crate::p;

/// Largest server the allocator's bit sets hold.
pub const MAX_GPUS_PER_SERVER: i64 = 64;
pub const MAX_CORES_PER_SERVER: i64 = 256;

#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn push(&mut self, f: Finding) {
        self.0.push(f);
    }

    fn at_least(&mut self, path: String, value: i64, min: i64, what: &str) {
        if value < min {
            let label = if value <= 0 && min >= 1 {
                "must be positive"
            } else {
                "too small"
            };
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be at least {min}, got {value}"),
                    label,
                )
                .help(format!("use an integer ≥ {min}")),
            );
        }
    }

    fn in_range(&mut self, path: String, value: f64, lo: f64, hi: f64, what: &str) {
        if !(value.is_finite() && value >= lo && value <= hi) {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be in [{lo}, {hi}], got {value}"),
                    "out of range",
                )
                .help(format!("use a number between {lo} and {hi}")),
            );
        }
    }

    fn mip_gap(&mut self, value: f64) {
        self.in_range(
            p!["planners", "ilp_mip_gap"],
            value,
            0.0,
            0.99,
            "`ilp_mip_gap`",
        );
    }

    fn positive(&mut self, path: String, value: f64, what: &str) {
        if !(value.is_finite() && value > 0.0) {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must be positive, got {value}"),
                    "must be positive",
                )
                .help("use a number > 0"),
            );
        }
    }

    fn non_negative(&mut self, path: String, value: f64, what: &str) {
        if !(value.is_finite() && value >= 0.0) {
            self.push(
                Finding::new(
                    "spec::out-of-range",
                    path,
                    format!("{what} must not be negative, got {value}"),
                    "must be ≥ 0",
                )
                .help("use a number ≥ 0"),
            );
        }
    }

    fn duplicate(&mut self, path: String, what: &str, name: &str, first: &str) {
        self.push(
            Finding::new(
                "spec::duplicate-name",
                path,
                format!("duplicate {what} name `{name}`"),
                "defined again here",
            )
            .help(format!(
                "names must be unique; `{name}` is first defined at {first}"
            )),
        );
    }

    fn planner_names(&mut self, section: &str, run: &[String], known: &[&str]) {
        let mut seen = BTreeSet::new();
        for (i, name) in run.iter().enumerate() {
            if !known.contains(&name.as_str()) {
                self.push(
                    Finding::new(
                        "spec::unknown-planner",
                        p![section, "run", i],
                        format!("unknown planner `{name}`"),
                        "unknown planner",
                    )
                    .help(format!("expected one of {}", known.join(", "))),
                );
            } else if !seen.insert(name.as_str()) {
                self.push(Finding::new(
                    "spec::duplicate-name",
                    p![section, "run", i],
                    format!("planner `{name}` is listed twice"),
                    "listed again here",
                ));
            }
        }
    }
}

/// Single-file checks of a cluster spec.
pub fn cluster(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Findings::default();
    let mut type_names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in spec.server_type.iter().enumerate() {
        if let Some(first) = type_names.insert(&t.name, i) {
            out.duplicate(
                p!["server_type", i, "name"],
                "server type",
                &t.name,
                &format!("server_type[{first}]"),
            );
            type_names.insert(&t.name, first);
        }
        out.at_least(p!["server_type", i, "sockets"], t.sockets, 1, "`sockets`");
        out.at_least(
            p!["server_type", i, "numa_per_socket"],
            t.numa_per_socket,
            1,
            "`numa_per_socket`",
        );
        out.at_least(
            p!["server_type", i, "cores_per_numa"],
            t.cores_per_numa,
            1,
            "`cores_per_numa`",
        );
        if let Some(g) = t.core_group_size {
            out.at_least(
                p!["server_type", i, "core_group_size"],
                g,
                1,
                "`core_group_size`",
            );
        }
        let numa_count = t.sockets.max(0) * t.numa_per_socket.max(0);
        if t.sockets > 0 && t.numa_per_socket > 0 {
            for (g, &numa) in t.gpu_numa.iter().enumerate() {
                if numa < 0 || numa >= numa_count {
                    out.push(
                        Finding::new(
                            "spec::missing-numa",
                            p!["server_type", i, "gpu_numa", g],
                            format!(
                                "GPU {g} is attached to NUMA node {numa}, which does not exist"
                            ),
                            "no such NUMA node",
                        )
                        .help(format!(
                            "this server type has {numa_count} NUMA nodes (0…{}): {} sockets × {} per socket",
                            numa_count - 1,
                            t.sockets,
                            t.numa_per_socket
                        )),
                    );
                }
            }
        }
        if t.gpu_numa.len() as i64 > MAX_GPUS_PER_SERVER {
            out.push(
                Finding::new(
                    "spec::too-large",
                    p!["server_type", i, "gpu_numa"],
                    format!(
                        "{} GPUs per server; at most {MAX_GPUS_PER_SERVER} are supported",
                        t.gpu_numa.len()
                    ),
                    "too many GPUs",
                )
                .help("split the server into several server types"),
            );
        }
        let cores = numa_count.saturating_mul(t.cores_per_numa.max(0));
        if cores > MAX_CORES_PER_SERVER {
            out.push(
                Finding::new(
                    "spec::too-large",
                    p!["server_type", i, "cores_per_numa"],
                    format!(
                        "{cores} cores per server; at most {MAX_CORES_PER_SERVER} are supported"
                    ),
                    "too many cores",
                )
                .help("model SMT siblings as one core, or use fewer cores per NUMA node"),
            );
        }
        let pen = t.penalty;
        for (key, v) in [
            ("numa", pen.numa),
            ("socket", pen.socket),
            ("cross_socket", pen.cross_socket),
        ] {
            if !(v.is_finite() && v >= 1.0) {
                out.push(
                    Finding::new(
                        "spec::bad-penalty",
                        p!["server_type", i, "penalty", key],
                        format!("penalty `{key}` is {v}, below 1.0"),
                        "below 1.0",
                    )
                    .help(
                        "penalties are slowdowns relative to a single-NUMA placement: each ≥ 1.0",
                    ),
                );
            }
        }
        if pen.numa > pen.socket || pen.socket > pen.cross_socket {
            let key = if pen.numa > pen.socket {
                "socket"
            } else {
                "cross_socket"
            };
            out.push(
                Finding::new(
                    "spec::bad-penalty",
                    p!["server_type", i, "penalty", key],
                    format!(
                        "penalties are not monotone: numa {}, socket {}, cross_socket {}",
                        pen.numa, pen.socket, pen.cross_socket
                    ),
                    "smaller than the level below it",
                )
                .help("a wider placement cannot be faster: require numa ≤ socket ≤ cross_socket"),
            );
        }
    }
    if spec.pool.is_empty() {
        out.push(
            Finding::new(
                "spec::out-of-range",
                "pool",
                "the cluster has no pools",
                "empty",
            )
            .help("add at least one [[pool]] with a server_type and a count"),
        );
    }
    let builtins: Vec<String> = builtin_server_types().into_iter().map(|t| t.name).collect();
    let mut server_names: BTreeMap<String, usize> = BTreeMap::new();
    for (i, pool) in spec.pool.iter().enumerate() {
        if spec.server_type(&pool.server_type).is_none() {
            let mut known: Vec<&str> = type_names.keys().copied().collect();
            known.extend(builtins.iter().map(String::as_str));
            out.push(
                Finding::new(
                    "spec::undefined-reference",
                    p!["pool", i, "server_type"],
                    format!("pool names undefined server type `{}`", pool.server_type),
                    "not defined",
                )
                .help(format!("known server types: {}", known.join(", "))),
            );
        }
        out.at_least(p!["pool", i, "count"], pool.count, 1, "pool `count`");
        if let Some(names) = &pool.names
            && names.len() as i64 != pool.count
        {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["pool", i, "names"],
                    format!(
                        "pool {i} lists {} server names but has count = {}",
                        names.len(),
                        pool.count
                    ),
                    "one name per server",
                )
                .help("give exactly `count` names, or drop `names` to number the servers"),
            );
        }
        for name in ClusterSpec::pool_server_names(pool) {
            if let Some(first) = server_names.get(&name) {
                out.push(
                    Finding::new(
                        "spec::duplicate-name",
                        if pool.names.is_some() {
                            p!["pool", i, "names"]
                        } else {
                            p!["pool", i, "name_prefix"]
                        },
                        format!("pool {i} produces server name `{name}`, already produced by pool {first}"),
                        "names collide",
                    )
                    .help(if pool.names.is_some() {
                        "server names must be unique across the cluster"
                    } else {
                        "give each pool its own name_prefix"
                    }),
                );
                break;
            }
            server_names.insert(name, i);
        }
    }
    out.0
}

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
        out.at_least(p!["workload", i, "gpus"], w.gpus, 0, "`gpus`");
        out.at_least(p!["workload", i, "cores"], w.cores, 0, "`cores`");
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
    for (i, r) in spec.running.iter().enumerate() {
        if !names.contains_key(r.workload.as_str()) {
            out.push(undefined(p!["running", i, "workload"], &r.workload));
        }
        for (key, ids) in [("gpus", &r.gpus), ("cores", &r.cores)] {
            match ids {
                Some(IdsOrCount::Count(n)) => {
                    out.at_least(p!["running", i, key], *n, 0, &format!("`{key}`"))
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
            out.non_negative(p!["running", i, "start_time_s"], t, "`start_time_s`");
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
    }
    for (i, e) in spec.preempt.iter().enumerate() {
        if !names.contains_key(e.workload.as_str()) {
            out.push(undefined(p!["preempt", i, "workload"], &e.workload));
        }
        out.at_least(p!["preempt", i, "count"], e.count, 1, "`count`");
    }
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
        out.non_negative(p!["objective", key], v, &format!("weight `{key}`"));
    }
    out.planner_names("planners", &spec.planners.run, &PREEMPTION_PLANNERS);
    out.positive(
        p!["planners", "ilp_time_limit_s"],
        spec.planners.ilp_time_limit_s,
        "`ilp_time_limit_s`",
    );
    out.mip_gap(spec.planners.ilp_mip_gap);
    out.at_least(
        p!["simulation", "cycles"],
        spec.simulation.cycles,
        1,
        "`cycles`",
    );
    match &spec.simulation.seeds {
        Seeds::Count(0) => out.at_least(p!["simulation", "seeds"], 0, 1, "`seeds`"),
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
    out.0
}

fn token_dist(out: &mut Findings, path: &str, d: &TokenDist) {
    let base = path;
    out.positive(p![base, "mean"], d.mean, "`mean`");
    out.non_negative(p![base, "sd"], d.sd, "`sd`");
    out.at_least(p![base, "min"], d.min, 1, "`min`");
    if d.max < d.min {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p![base, "max"],
                format!("`max` ({}) is below `min` ({})", d.max, d.min),
                "below min",
            )
            .help("require min ≤ max"),
        );
    }
}

/// Single-file checks of a co-location workload.
pub fn colocation(spec: &ColocationSpec) -> Vec<Finding> {
    let mut out = Findings::default();
    if let Some(n) = spec.nodes {
        out.at_least(p!["nodes"], n, 1, "`nodes`");
    }
    let m = &spec.model;
    out.at_least(p!["model", "stages"], m.stages, 1, "`stages`");
    out.positive(p!["model", "eta_forward"], m.eta_forward, "`eta_forward`");
    out.positive(
        p!["model", "eta_backward"],
        m.eta_backward,
        "`eta_backward`",
    );
    for (key, v) in [
        ("delta_forward_s", m.delta_forward_s),
        ("beta_forward", m.beta_forward),
        ("delta_backward_s", m.delta_backward_s),
        ("beta_backward", m.beta_backward),
    ] {
        out.non_negative(p!["model", key], v, &format!("`{key}`"));
    }
    out.non_negative(
        p!["model", "decode_base_s"],
        m.decode_base_s,
        "`decode_base_s`",
    );
    out.non_negative(
        p!["model", "decode_per_token_s"],
        m.decode_per_token_s,
        "`decode_per_token_s`",
    );
    for (key, v) in [
        ("weights_mib", m.weights_mib),
        ("kv_mib_per_token", m.kv_mib_per_token),
        ("activation_mib_per_token", m.activation_mib_per_token),
    ] {
        out.non_negative(p!["model", key], v, &format!("`{key}`"));
    }
    let inf = &spec.inference;
    let sources = [
        inf.arrival.is_some(),
        inf.trace.is_some(),
        inf.requests.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if sources > 1 {
        let key = if inf.requests.is_some() {
            "requests"
        } else {
            "trace"
        };
        out.push(
            Finding::new(
                "spec::conflict",
                p!["inference", key],
                "more than one of `arrival`, `trace` and `requests` is given",
                "conflicts with another request source",
            )
            .help("keep one: synthetic arrivals, a trace file or explicit requests"),
        );
    } else if sources == 0 {
        out.push(
            Finding::new(
                "spec::missing-key",
                p!["inference"],
                "[inference] needs `arrival`, `trace` or `requests`",
                "no arrivals",
            )
            .help(r#"e.g. arrival = { process = "poisson", rate_rps = 12 }"#),
        );
    }
    for (i, r) in inf.requests.iter().flatten().enumerate() {
        out.non_negative(
            p!["inference", "requests", i, "arrival_s"],
            r.arrival_s,
            "`arrival_s`",
        );
        out.at_least(
            p!["inference", "requests", i, "prompt_tokens"],
            r.prompt_tokens,
            1,
            "`prompt_tokens`",
        );
        out.at_least(
            p!["inference", "requests", i, "output_tokens"],
            r.output_tokens,
            0,
            "`output_tokens`",
        );
    }
    if let Some(a) = &inf.arrival {
        out.positive(
            p!["inference", "arrival", "rate_rps"],
            a.rate_rps,
            "`rate_rps`",
        );
    }
    if let Some(load) = inf.load {
        out.positive(p!["inference", "load"], load, "`load`");
        if inf.arrival.is_none() {
            out.push(
                Finding::new(
                    "spec::missing-key",
                    p!["inference", "load"],
                    "`load` sets the rate of synthetic arrivals, but there is no `arrival`",
                    "needs `arrival`",
                )
                .help(r#"add arrival = { process = "poisson", rate_rps = 1 } (load replaces the rate)"#),
            );
        }
    }
    out.non_negative(p!["inference", "warmup_s"], inf.warmup_s, "`warmup_s`");
    token_dist(&mut out, "inference.prompt_tokens", &inf.prompt_tokens);
    token_dist(&mut out, "inference.output_tokens", &inf.output_tokens);
    out.at_least(p!["inference", "count"], inf.count, 1, "`count`");
    out.positive(
        p!["inference", "slo_factor"],
        inf.slo_factor,
        "`slo_factor`",
    );
    let tr = &spec.training;
    if !(tr.rate >= 0.0 && tr.rate < 1.0) {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["training", "rate"],
                format!("training `rate` must be in [0, 1), got {}", tr.rate),
                "out of range",
            )
            .help("the training share of all tasks; 0 = inference only"),
        );
    }
    out.at_least(
        p!["training", "batch_size"],
        tr.batch_size,
        1,
        "`batch_size`",
    );
    token_dist(&mut out, "training.tokens", &tr.tokens);
    let l = &spec.lemix;
    for (key, v) in [
        ("lambda1", l.lambda1),
        ("lambda2", l.lambda2),
        ("tau", l.tau),
    ] {
        out.non_negative(p!["lemix", key], v, &format!("`{key}`"));
    }
    if !(l.memory_threshold > 0.0 && l.memory_threshold <= 1.0) {
        out.in_range(
            p!["lemix", "memory_threshold"],
            l.memory_threshold,
            0.0,
            1.0,
            "`memory_threshold`",
        );
    }
    out.non_negative(p!["lemix", "max_wait_s"], l.max_wait_s, "`max_wait_s`");
    out.positive(
        p!["lemix", "app_timeout_s"],
        l.app_timeout_s,
        "`app_timeout_s`",
    );
    out.positive(
        p!["lemix", "offload_gbps"],
        l.offload_gbps,
        "`offload_gbps`",
    );
    out.at_least(p!["lemix", "batch_max"], l.batch_max, 1, "`batch_max`");
    out.non_negative(
        p!["lemix", "batch_wait_factor"],
        l.batch_wait_factor,
        "`batch_wait_factor`",
    );
    out.non_negative(
        p!["objective", "slo_miss"],
        spec.objective.slo_miss,
        "`slo_miss`",
    );
    out.non_negative(
        p!["objective", "dropped"],
        spec.objective.dropped,
        "`dropped`",
    );
    let pl = &spec.planners;
    out.planner_names("planners", &pl.run, &COLOCATION_PLANNERS);
    if let Some(split) = pl.separate_split
        && !(split > 0.0 && split < 1.0)
    {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["planners", "separate_split"],
                format!("`separate_split` must be in (0, 1), got {split}"),
                "out of range",
            )
            .help("the share of nodes SEPARATE gives to training"),
        );
    }
    out.at_least(
        p!["planners", "separate_sync_every"],
        pl.separate_sync_every,
        1,
        "`separate_sync_every`",
    );
    out.positive(
        p!["planners", "ilp_time_limit_s"],
        pl.ilp_time_limit_s,
        "`ilp_time_limit_s`",
    );
    out.mip_gap(pl.ilp_mip_gap);
    out.at_least(
        p!["planners", "ilp_exact_max_tasks"],
        pl.ilp_exact_max_tasks,
        0,
        "`ilp_exact_max_tasks`",
    );
    out.in_range(
        p!["planners", "ilp_window"],
        pl.ilp_window as f64,
        1.0,
        12.0,
        "`ilp_window`",
    );
    out.at_least(
        p!["planners", "bound_lp_max_variables"],
        pl.bound_lp_max_variables,
        0,
        "`bound_lp_max_variables`",
    );
    out.0
}
