//! Single-file checks of a co-location workload: its own file because its rules (model costs,
//! request sources, token distributions, LeMix knobs) follow the co-location model alone.

use super::findings::Findings;
use super::ranges::{
    Field, ILP_TIME_LIMIT, IntRange::*, MIP_GAP, RealRange::*, int, maybe_int, maybe_real, real,
};
use crate::p;
use crate::spec::colocation::{
    COLOCATION_PLANNERS, ColocationObjective, ColocationPlanners, ColocationSpec, InferenceSpec,
    LemixSettings, ModelProfile, RequestSpec, TokenDist, TrainingSpec,
};
use crate::spec::limits::{
    MAX_BATCH, MAX_FACTOR, MAX_GPUS_PER_SERVER, MAX_MIB, MAX_OPERATION_S, MAX_REQUESTS,
    MAX_SECONDS, MAX_SERVERS, MAX_TOKENS, MAX_TRAINING_TASKS, MIN_SLO_S,
};
use crate::spec::source::Finding;

/// The size of the cluster a workload may ask for.
const NODES: &[Field<ColocationSpec>] = &[maybe_int("nodes", |s| s.nodes, Between(1, MAX_SERVERS))];

/// The model's stages, latency coefficients and memory figures.
const MODEL: &[Field<ModelProfile>] = &[
    int("stages", |m| m.stages, Between(1, MAX_GPUS_PER_SERVER)),
    real("eta_forward", |m| m.eta_forward, Positive),
    real("eta_backward", |m| m.eta_backward, Positive),
    real("delta_forward_s", |m| m.delta_forward_s, NonNegative),
    real("beta_forward", |m| m.beta_forward, NonNegative),
    real("delta_backward_s", |m| m.delta_backward_s, NonNegative),
    real("beta_backward", |m| m.beta_backward, NonNegative),
    real("decode_base_s", |m| m.decode_base_s, NonNegative),
    real("decode_per_token_s", |m| m.decode_per_token_s, NonNegative),
    real("weights_mib", |m| m.weights_mib, NonNegativeAtMost(MAX_MIB)),
    real(
        "kv_mib_per_token",
        |m| m.kv_mib_per_token,
        NonNegativeAtMost(MAX_MIB),
    ),
    real(
        "activation_mib_per_token",
        |m| m.activation_mib_per_token,
        NonNegativeAtMost(MAX_MIB),
    ),
];

/// One explicit request.
const REQUEST: &[Field<RequestSpec>] = &[
    real("arrival_s", |r| r.arrival_s, Seconds(MAX_SECONDS)),
    int("prompt_tokens", |r| r.prompt_tokens, Between(1, MAX_TOKENS)),
    int("output_tokens", |r| r.output_tokens, Between(0, MAX_TOKENS)),
];

/// The rate of synthetic arrivals scaled by `load`.
const LOAD: &[Field<InferenceSpec>] = &[maybe_real("load", |i| i.load, PositiveAtMost(MAX_FACTOR))];

/// The warm-up before requests count.
const WARMUP: &[Field<InferenceSpec>] = &[real("warmup_s", |i| i.warmup_s, Seconds(MAX_SECONDS))];

/// The number of synthetic requests and their SLO factor.
const REQUESTS: &[Field<InferenceSpec>] = &[
    int("count", |i| i.count, Between(1, MAX_REQUESTS)),
    real("slo_factor", |i| i.slo_factor, PositiveAtMost(MAX_FACTOR)),
];

/// A token distribution (`prompt_tokens`, `output_tokens`, training `tokens`).
const TOKENS: &[Field<TokenDist>] = &[
    real("mean", |d| d.mean, PositiveAtMost(MAX_TOKENS as f64)),
    real("sd", |d| d.sd, NonNegativeAtMost(MAX_TOKENS as f64)),
    int("min", |d| d.min, AtLeast(1)),
    int("max", |d| d.max, AtMost(MAX_TOKENS)),
];

/// The training batch.
const TRAINING: &[Field<TrainingSpec>] =
    &[int("batch_size", |t| t.batch_size, Between(1, MAX_BATCH))];

/// LeMix's score weights.
const LEMIX_SCORE: &[Field<LemixSettings>] = &[
    real("lambda1", |l| l.lambda1, NonNegativeAtMost(MAX_FACTOR)),
    real("lambda2", |l| l.lambda2, NonNegativeAtMost(MAX_FACTOR)),
    real("tau", |l| l.tau, NonNegativeAtMost(MAX_FACTOR)),
];

/// LeMix's waits, offload link and batching.
const LEMIX_QUEUE: &[Field<LemixSettings>] = &[
    real("max_wait_s", |l| l.max_wait_s, Seconds(MAX_SECONDS)),
    real(
        "app_timeout_s",
        |l| l.app_timeout_s,
        PositiveAtMost(MAX_SECONDS),
    ),
    // A transfer of the largest memory figure at the slowest link must stay a finite time.
    real("offload_gbps", |l| l.offload_gbps, Within(1e-3, 1e6)),
    int("batch_max", |l| l.batch_max, Between(1, MAX_BATCH)),
    real(
        "batch_wait_factor",
        |l| l.batch_wait_factor,
        NonNegativeAtMost(MAX_FACTOR),
    ),
];

/// The weights of the co-location objective.
const OBJECTIVE: &[Field<ColocationObjective>] = &[
    real("slo_miss", |o| o.slo_miss, Weight),
    real("dropped", |o| o.dropped, Weight),
];

/// SEPARATE's sync period, the exact planners' solver budget and search sizes.
const PLANNERS: &[Field<ColocationPlanners>] = &[
    int("separate_sync_every", |p| p.separate_sync_every, AtLeast(1)),
    real("ilp_time_limit_s", |p| p.ilp_time_limit_s, ILP_TIME_LIMIT),
    real("ilp_mip_gap", |p| p.ilp_mip_gap, MIP_GAP),
    int("ilp_exact_max_tasks", |p| p.ilp_exact_max_tasks, AtLeast(0)),
    int(
        "ilp_window",
        |p| p.ilp_window,
        Between(
            ColocationPlanners::ILP_WINDOW_RANGE.0,
            ColocationPlanners::ILP_WINDOW_RANGE.1,
        ),
    ),
    int(
        "bound_lp_max_variables",
        |p| p.bound_lp_max_variables,
        AtLeast(0),
    ),
];

fn token_dist(out: &mut Findings, path: &str, d: &TokenDist) {
    out.fields(path, d, TOKENS);
    if d.max < d.min {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p![path, "max"],
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
    out.fields("", spec, NODES);
    out.fields("model", &spec.model, MODEL);
    let inf = &spec.inference;
    if inf.trace.is_none() {
        let explicit =
            |f: fn(&RequestSpec) -> i64| inf.requests.iter().flatten().map(f).max().unwrap_or(0);
        let (prompt, output) = if inf.requests.is_some() {
            (explicit(|r| r.prompt_tokens), explicit(|r| r.output_tokens))
        } else {
            (inf.prompt_tokens.max, inf.output_tokens.max)
        };
        operation_times(&mut out, spec, prompt, output);
    }
    request_sources(&mut out, inf);
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
        out.fields(&p!["inference", "requests", i], r, REQUEST);
    }
    arrivals(&mut out, inf);
    out.fields("inference", inf, WARMUP);
    token_dist(&mut out, "inference.prompt_tokens", &inf.prompt_tokens);
    token_dist(&mut out, "inference.output_tokens", &inf.output_tokens);
    out.fields("inference", inf, REQUESTS);
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
    out.fields("training", tr, TRAINING);
    token_dist(&mut out, "training.tokens", &tr.tokens);
    lemix(&mut out, &spec.lemix);
    out.fields("objective", &spec.objective, OBJECTIVE);
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
    out.fields("planners", pl, PLANNERS);
    out.0
}

/// Exactly one source of requests: synthetic arrivals, a trace or explicit requests.
fn request_sources(out: &mut Findings, inf: &InferenceSpec) {
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
}

/// Synthetic arrivals: a rate in range whose last arrival stays within `MAX_SECONDS`, and a
/// `load` only where there are synthetic arrivals for it to scale.
fn arrivals(out: &mut Findings, inf: &InferenceSpec) {
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
    out.fields("inference", inf, LOAD);
    if inf.load.is_some() && inf.arrival.is_none() {
        out.push(
            Finding::new(
                "spec::missing-key",
                p!["inference", "load"],
                "`load` sets the rate of synthetic arrivals, but there is no `arrival`",
                "needs `arrival`",
            )
            .help(
                r#"add arrival = { process = "poisson", rate_rps = 1 } (load replaces the rate)"#,
            ),
        );
    }
}

/// `[lemix]`: score weights, a memory threshold in (0, 1], waits, link and batching.
fn lemix(out: &mut Findings, l: &LemixSettings) {
    out.fields("lemix", l, LEMIX_SCORE);
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
    out.fields("lemix", l, LEMIX_QUEUE);
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
