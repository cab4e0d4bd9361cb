//! Single-file checks of a co-location workload: its own file because its rules (model costs,
//! request sources, token distributions, LeMix knobs) follow the co-location model alone.

use super::findings::Findings;
use crate::p;
use crate::spec::colocation::{
    COLOCATION_PLANNERS, ColocationPlanners, ColocationSpec, RequestSpec, TokenDist,
};
use crate::spec::limits::{
    MAX_BATCH, MAX_FACTOR, MAX_GPUS_PER_SERVER, MAX_MIB, MAX_OPERATION_S, MAX_REQUESTS,
    MAX_SECONDS, MAX_SERVERS, MAX_TIME_LIMIT_S, MAX_TOKENS, MAX_TRAINING_TASKS, MIN_SLO_S,
};
use crate::spec::source::Finding;

fn token_dist(out: &mut Findings, path: &str, d: &TokenDist) {
    let base = path;
    out.positive_at_most(p![base, "mean"], d.mean, MAX_TOKENS as f64, "`mean`");
    out.non_negative_at_most(p![base, "sd"], d.sd, MAX_TOKENS as f64, "`sd`");
    out.at_least(p![base, "min"], d.min, 1, "`min`");
    out.at_most(p![base, "max"], d.max, MAX_TOKENS, "`max`");
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
        out.at_most(p!["nodes"], n, MAX_SERVERS, "`nodes`");
    }
    let m = &spec.model;
    out.at_least(p!["model", "stages"], m.stages, 1, "`stages`");
    out.at_most(
        p!["model", "stages"],
        m.stages,
        MAX_GPUS_PER_SERVER,
        "`stages`",
    );
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
        out.non_negative_at_most(p!["model", key], v, MAX_MIB, &format!("`{key}`"));
    }
    if spec.inference.trace.is_none() {
        let inf = &spec.inference;
        let explicit =
            |f: fn(&RequestSpec) -> i64| inf.requests.iter().flatten().map(f).max().unwrap_or(0);
        let (prompt, output) = if inf.requests.is_some() {
            (explicit(|r| r.prompt_tokens), explicit(|r| r.output_tokens))
        } else {
            (inf.prompt_tokens.max, inf.output_tokens.max)
        };
        operation_times(&mut out, spec, prompt, output);
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
    let requests = inf.requests.as_deref().unwrap_or_default();
    if requests.len() as i64 > MAX_REQUESTS {
        out.at_most(
            p!["inference", "requests", MAX_REQUESTS as usize],
            requests.len() as i64,
            MAX_REQUESTS,
            "the number of `requests`",
        );
        return out.0;
    }
    for (i, r) in requests.iter().enumerate() {
        out.seconds(
            p!["inference", "requests", i, "arrival_s"],
            r.arrival_s,
            MAX_SECONDS,
            "`arrival_s`",
        );
        for (key, value, least) in [
            ("prompt_tokens", r.prompt_tokens, 1),
            ("output_tokens", r.output_tokens, 0),
        ] {
            let what = format!("`{key}`");
            out.at_least(p!["inference", "requests", i, key], value, least, &what);
            out.at_most(
                p!["inference", "requests", i, key],
                value,
                MAX_TOKENS,
                &what,
            );
        }
    }
    if let Some(a) = &inf.arrival {
        out.positive_at_most(
            p!["inference", "arrival", "rate_rps"],
            a.rate_rps,
            MAX_FACTOR,
            "`rate_rps`",
        );
        // The last synthetic arrival lies near count / rate: it must stay a time coplan can
        // hold to the microsecond.
        if a.rate_rps.is_finite() && a.rate_rps > 0.0 && inf.count as f64 / a.rate_rps > MAX_SECONDS
        {
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["inference", "arrival", "rate_rps"],
                    format!(
                        "{} requests at {} per second would arrive over {:e} s, above the limit of {MAX_SECONDS:e} s",
                        inf.count, a.rate_rps, inf.count as f64 / a.rate_rps
                    ),
                    "too slow",
                )
                .help("raise `rate_rps` or lower `count` (docs/spec.md, \"Limits\")"),
            );
        }
    }
    if let Some(load) = inf.load {
        out.positive_at_most(p!["inference", "load"], load, MAX_FACTOR, "`load`");
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
    out.seconds(
        p!["inference", "warmup_s"],
        inf.warmup_s,
        MAX_SECONDS,
        "`warmup_s`",
    );
    token_dist(&mut out, "inference.prompt_tokens", &inf.prompt_tokens);
    token_dist(&mut out, "inference.output_tokens", &inf.output_tokens);
    out.at_least(p!["inference", "count"], inf.count, 1, "`count`");
    out.at_most(p!["inference", "count"], inf.count, MAX_REQUESTS, "`count`");
    out.positive_at_most(
        p!["inference", "slo_factor"],
        inf.slo_factor,
        MAX_FACTOR,
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
    if inf.trace.is_none() {
        let inference = if requests.is_empty() {
            inf.count
        } else {
            requests.len() as i64
        };
        training_tasks(&mut out, spec, inference.clamp(0, MAX_REQUESTS));
    }
    out.at_least(
        p!["training", "batch_size"],
        tr.batch_size,
        1,
        "`batch_size`",
    );
    out.at_most(
        p!["training", "batch_size"],
        tr.batch_size,
        MAX_BATCH,
        "`batch_size`",
    );
    token_dist(&mut out, "training.tokens", &tr.tokens);
    let l = &spec.lemix;
    for (key, v) in [
        ("lambda1", l.lambda1),
        ("lambda2", l.lambda2),
        ("tau", l.tau),
    ] {
        out.non_negative_at_most(p!["lemix", key], v, MAX_FACTOR, &format!("`{key}`"));
    }
    if !(l.memory_threshold > 0.0 && l.memory_threshold <= 1.0) {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["lemix", "memory_threshold"],
                format!(
                    "`memory_threshold` must be in (0, 1], got {}",
                    l.memory_threshold
                ),
                "out of range",
            )
            .help("the share of a GPU's memory LeMix fills before it waits or offloads: above 0, at most 1"),
        );
    }
    out.seconds(
        p!["lemix", "max_wait_s"],
        l.max_wait_s,
        MAX_SECONDS,
        "`max_wait_s`",
    );
    out.positive_at_most(
        p!["lemix", "app_timeout_s"],
        l.app_timeout_s,
        MAX_SECONDS,
        "`app_timeout_s`",
    );
    // A transfer of the largest memory figure at the slowest link must stay a finite time.
    out.in_range(
        p!["lemix", "offload_gbps"],
        l.offload_gbps,
        1e-3,
        1e6,
        "`offload_gbps`",
    );
    out.at_least(p!["lemix", "batch_max"], l.batch_max, 1, "`batch_max`");
    out.at_most(
        p!["lemix", "batch_max"],
        l.batch_max,
        MAX_BATCH,
        "`batch_max`",
    );
    out.non_negative_at_most(
        p!["lemix", "batch_wait_factor"],
        l.batch_wait_factor,
        MAX_FACTOR,
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

/// Checks of a co-location workload that need the requests of the trace it reads: the
/// operation-time limit at the trace's longest prompt and output, and the training count.
pub fn colocation_with_trace(
    spec: &ColocationSpec,
    requests: usize,
    longest_prompt: i64,
    longest_output: i64,
) -> Vec<Finding> {
    let mut out = Findings::default();
    operation_times(&mut out, spec, longest_prompt, longest_output);
    training_tasks(&mut out, spec, requests as i64);
    out.0
}

/// The training tasks a workload makes for `inference` requests, within `MAX_TRAINING_TASKS`.
fn training_tasks(out: &mut Findings, spec: &ColocationSpec, inference: i64) {
    let rate = spec.training.rate;
    if !(0.0..1.0).contains(&rate) {
        return; // the rate has its own finding
    }
    let training = crate::spec::colocation::training_count(inference.max(0) as usize, rate);
    if training as i64 > MAX_TRAINING_TASKS {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["training", "rate"],
                format!(
                    "a training `rate` of {rate} over {inference} requests makes {training} training tasks, above the limit of {MAX_TRAINING_TASKS}"
                ),
                "above the limit",
            )
            .help("n_train = round(count · rate / (1 − rate)); lower `rate` (docs/spec.md, \"Limits\")"),
        );
    }
}

/// The shortest SLO the objective may divide by (`MIN_SLO_S`): τ_R = `slo_factor` × the SLO
/// base, bounded below by the base of a one-token prompt, S · (δ_F + β_F + η_F). A τ_R of
/// 1e-24 s (η = 1e-30) makes every response term a count of rounding steps of the clock.
fn shortest_slo(out: &mut Findings, spec: &ColocationSpec) {
    let m = &spec.model;
    let factor = spec.inference.slo_factor;
    if !(factor.is_finite() && factor > 0.0) {
        return; // `slo_factor` has its own finding
    }
    let terms = [
        ("delta_forward_s", m.delta_forward_s),
        ("beta_forward", m.beta_forward),
        ("eta_forward", m.eta_forward),
    ];
    let base = m.stages.max(1) as f64 * terms.iter().map(|(_, t)| t).sum::<f64>();
    if factor * base >= MIN_SLO_S {
        return;
    }
    let (key, _) = terms
        .iter()
        .copied()
        .fold(("eta_forward", f64::MIN), |best, t| {
            if t.1 > best.1 { t } else { best }
        });
    out.push(
        Finding::new(
            "spec::out-of-range",
            p!["model", key],
            format!(
                "the SLO of a one-token prompt would be {:.2e} s (`slo_factor` {factor} × {} stages × δ_F + β_F + η_F), below the limit of {MIN_SLO_S:e} s",
                factor * base,
                m.stages
            ),
            "makes the SLO too short",
        )
        .help("the latency coefficients are seconds (δ), seconds per token (β) and per token² (η); a forward pass that takes no time cannot be scheduled or priced (docs/spec.md, \"Limits\")"),
    );
}

/// The longest operation the latency model may price (`MAX_OPERATION_S`): a forward or backward
/// pass of the largest batch of the longest sequences, and a decode iteration over the largest
/// context. Named at the coefficient whose term dominates, so the user sees which one to fix.
fn operation_times(out: &mut Findings, spec: &ColocationSpec, prompt: i64, output: i64) {
    let m = &spec.model;
    let finite = [
        m.eta_forward,
        m.eta_backward,
        m.delta_forward_s,
        m.beta_forward,
        m.delta_backward_s,
        m.beta_backward,
        m.decode_base_s,
        m.decode_per_token_s,
    ]
    .iter()
    .all(|v| v.is_finite() && *v >= 0.0);
    let sized = [prompt, output, spec.training.tokens.max]
        .iter()
        .all(|t| *t <= MAX_TOKENS)
        && spec.training.batch_size <= MAX_BATCH
        && spec.lemix.batch_max <= MAX_BATCH;
    if !(finite && sized) {
        return; // each coefficient and size has its own finding
    }
    shortest_slo(out, spec);
    let longest = prompt.max(spec.training.tokens.max).clamp(0, MAX_TOKENS) as f64;
    let batch = spec
        .training
        .batch_size
        .max(spec.lemix.batch_max)
        .clamp(1, MAX_BATCH) as f64;
    let context = batch * (prompt.clamp(0, MAX_TOKENS) + output.clamp(0, MAX_TOKENS)) as f64;
    let passes = [
        (
            "forward",
            [
                ("delta_forward_s", m.delta_forward_s),
                ("beta_forward", m.beta_forward * batch * longest),
                ("eta_forward", m.eta_forward * batch * longest * longest),
            ],
        ),
        (
            "backward",
            [
                ("delta_backward_s", m.delta_backward_s),
                ("beta_backward", m.beta_backward * batch * longest),
                ("eta_backward", m.eta_backward * batch * longest * longest),
            ],
        ),
        (
            "decode",
            [
                ("decode_base_s", m.decode_base_s),
                ("decode_per_token_s", m.decode_per_token_s * context),
                ("decode_per_token_s", 0.0),
            ],
        ),
    ];
    for (pass, terms) in passes {
        let seconds: f64 = terms.iter().map(|(_, t)| t).sum();
        if seconds > MAX_OPERATION_S {
            let (key, _) =
                terms.iter().copied().fold(
                    ("", f64::MIN),
                    |best, t| if t.1 > best.1 { t } else { best },
                );
            out.push(
                Finding::new(
                    "spec::out-of-range",
                    p!["model", key],
                    format!(
                        "the longest {pass} operation would take {seconds:e} s (batch {batch}, {} tokens), above the limit of {MAX_OPERATION_S:e} s",
                        if pass == "decode" { context } else { longest }
                    ),
                    "makes an operation too long",
                )
                .help("check the coefficient's unit (seconds per token²·sequence for η, per token·sequence for β); docs/spec.md, \"Limits\""),
            );
        }
    }
}
