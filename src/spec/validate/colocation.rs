//! Single-file checks of a co-location workload: its own file because its rules (model costs,
//! request sources, token distributions, LeMix knobs) follow the co-location model alone.

use super::findings::Findings;
use crate::p;
use crate::spec::colocation::{COLOCATION_PLANNERS, ColocationPlanners, ColocationSpec, TokenDist};
use crate::spec::limits::MAX_TIME_LIMIT_S;
use crate::spec::source::Finding;

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
    out.weight(
        p!["objective", "slo_miss"],
        spec.objective.slo_miss,
        "`slo_miss`",
    );
    out.weight(
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
    out.positive_at_most(
        p!["planners", "ilp_time_limit_s"],
        pl.ilp_time_limit_s,
        MAX_TIME_LIMIT_S,
        "`ilp_time_limit_s`",
    );
    out.mip_gap(pl.ilp_mip_gap);
    out.at_least(
        p!["planners", "ilp_exact_max_tasks"],
        pl.ilp_exact_max_tasks,
        0,
        "`ilp_exact_max_tasks`",
    );
    let (least, most) = ColocationPlanners::ILP_WINDOW_RANGE;
    out.at_least(
        p!["planners", "ilp_window"],
        pl.ilp_window,
        least,
        "`ilp_window`",
    );
    out.at_most(
        p!["planners", "ilp_window"],
        pl.ilp_window,
        most,
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
