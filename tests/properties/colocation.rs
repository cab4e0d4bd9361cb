//! Co-location on random small instances: every planner's run passes the independent verifier
//! (inside `plan`), every task ends completed or dropped, and output is deterministic.

mod fixed_instances;

use crate::common::{
    self,
    decisions::{DecisionSpace, best_over_every_decision},
};
use coplan::colocate::bounds::{memory_task_floors, partial_floor};
use coplan::colocate::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use coplan::colocate::metrics::objective_term;
use coplan::colocate::planner::PlannerRun;
use coplan::colocate::planning::plan;
use coplan::colocate::registry;
use coplan::colocate::setup::setup;
use coplan::plan::colocation::{ColocationPlan, ColocationRun, Task};
use coplan::spec::colocation::{Deprioritize, MemoryTimeout};
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;
use proptest::prelude::*;

const PLANNERS: [&str; 5] = ["separate", "mix-rr", "mix-luf", "lemix", "lemix-balanced"];

fn base() -> ColocationSpec {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/workloads/colocation-small.toml"
    ))
    .expect("example");
    toml::from_str(&text).expect("valid")
}

fn cluster() -> Cluster {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/clusters/a100-x16.toml"
    ))
    .expect("example");
    let spec: ClusterSpec = toml::from_str(&text).expect("valid");
    Cluster::from_spec(&spec)
}

#[allow(clippy::too_many_arguments)]
fn instance(
    nodes: i64,
    stages: i64,
    count: i64,
    rate: f64,
    kv: f64,
    threshold: f64,
    drop: bool,
    batch_max: i64,
    wait: f64,
    depri: usize,
    chain: bool,
) -> ColocationSpec {
    let mut s = base();
    s.nodes = Some(nodes);
    s.model.stages = stages;
    s.model.kv_mib_per_token = kv;
    s.model.activation_mib_per_token = kv * 2.0;
    s.inference.count = count;
    s.inference.prompt_tokens.max = 512;
    s.inference.output_tokens.max = 16;
    s.inference.output_tokens.mean = 6.0;
    s.training.rate = rate;
    s.training.tokens.max = 512;
    s.lemix.memory_threshold = threshold;
    s.lemix.on_memory_timeout = if drop {
        MemoryTimeout::Drop
    } else {
        MemoryTimeout::Offload
    };
    s.lemix.max_wait_s = 0.5;
    s.lemix.batch_max = batch_max;
    s.lemix.batch_wait_factor = wait;
    s.lemix.deprioritize = [
        Deprioritize::Lookahead,
        Deprioritize::Threshold,
        Deprioritize::Off,
    ][depri];
    s.lemix.chain_stages = chain;
    s.planners.run = PLANNERS.iter().map(|p| p.to_string()).collect();
    s
}

fn canonical(r: &ColocationPlan) -> String {
    let mut r = r.clone();
    for p in &mut r.planners {
        p.runtime_ms = 0.0;
    }
    for b in &mut r.bounds {
        b.runtime_ms = 0.0;
    }
    serde_json::to_string(&r).expect("serializes")
}

proptest! {
    #![proptest_config(common::proptest_config(128))]

    #[test]
    fn every_run_is_verified_complete_and_deterministic(
        nodes in 1..=3i64, stages in 1..=3i64, count in 1..=25i64, rate in 0.0..0.6f64,
        kv in prop::sample::select(vec![0.1, 20.0, 400.0]), threshold in 0.1..=1.0f64, drop in any::<bool>(),
        batch_max in 1..=4i64, wait in 0.0..1.0f64, depri in 0..3usize, chain in any::<bool>(),
        seed in 1..1000u64,
    ) {
        let spec = instance(nodes, stages, count, rate, kv, threshold, drop, batch_max, wait, depri, chain);
        prop_assume!(coplan::spec::validate::colocation(&spec).is_empty());
        let c = cluster();
        let report = plan(&c, &spec, None, None, Some(seed)).expect("every run passes the verifier");
        for p in &report.planners {
            let m = p.metrics.as_ref().expect("heuristics run");
            prop_assert_eq!(m.tasks as usize, p.events.len());
            prop_assert!(p.events.iter().all(|e| e.end_s.is_some() != e.dropped));
            prop_assert!(m.gpu_utilization <= 1.0 + 1e-9 && m.bubble_rate <= 1.0 + 1e-9);
            // The per-task floors are a lower bound of every schedule.
            prop_assert!(p.gap.is_some_and(|g| g >= -1e-9), "{} below the bound: {:?}", p.name, p.gap);
        }
        let again = plan(&c, &spec, None, None, Some(seed)).expect("runs");
        prop_assert_eq!(canonical(&report), canonical(&again));
    }
}

/// A run as bits: each GPU's ops in log order, then every outcome with its token times. The
/// log's interleaving of different GPUs is not part of a run.
fn run_bits(run: &ColocationRun) -> (Vec<Vec<String>>, Vec<String>) {
    let mut per_gpu: std::collections::BTreeMap<(usize, usize), Vec<String>> = Default::default();
    for op in &run.ops {
        per_gpu
            .entry((op.node, op.stage))
            .or_default()
            .push(format!(
                "{:?} {:?} {:x} {:x}",
                op.kind,
                op.tasks,
                op.start_s.to_bits(),
                op.end_s.to_bits()
            ));
    }
    let outcomes = run
        .outcomes
        .iter()
        .map(|o| {
            let bits: Vec<u64> = o.token_times.iter().map(|t| t.to_bits()).collect();
            format!(
                "{:?} {:?} {:?} {:?} {:?}",
                o,
                o.start_s.map(f64::to_bits),
                o.prefill_end_s.map(f64::to_bits),
                o.end_s.map(f64::to_bits),
                bits
            )
        })
        .collect();
    (per_gpu.into_values().collect(), outcomes)
}

/// Every heuristic planner's run of `spec` (and the exact search's, when asked), with
/// decode-op ends kept out of the event heap
/// and without.
fn runs_both_ways(
    spec: &ColocationSpec,
    seed: u64,
    with_ilp: bool,
) -> Vec<(String, ColocationRun, ColocationRun)> {
    let c = cluster();
    let mut s = setup(&c, spec, None, Some(seed));
    let mut out = Vec::new();
    let ilp = with_ilp.then_some("ilp");
    for name in PLANNERS.into_iter().chain(ilp) {
        let Some(planner) = registry::planner(name) else {
            panic!("{name} is a planner")
        };
        s.config.defer_decode_ends = true;
        let Ok(PlannerRun::Ran { run: fast, .. }) = planner.run(&s, 0.0) else {
            continue;
        };
        s.config.defer_decode_ends = false;
        let Ok(PlannerRun::Ran { run: reference, .. }) = planner.run(&s, 0.0) else {
            panic!("{name} ran once but not twice")
        };
        out.push((name.to_string(), fast, reference));
    }
    out
}

/// 96 cases, or `COPLAN_PROPTEST_CASES` to search longer.
fn equivalence_cases() -> u32 {
    std::env::var("COPLAN_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

proptest! {
    // About half the drawn specs are invalid (and skipped).
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * equivalence_cases(),
        ..common::proptest_config(equivalence_cases())
    })]

    /// Handling decode-op ends outside the heap changes nothing of a run: every GPU's ops,
    /// every outcome and token time, bit for bit (random instances, and tiny ones of constant
    /// sizes, where events tie).
    #[test]
    fn decode_ends_outside_the_heap_leave_every_run_as_it_was(
        nodes in 1..=3i64, stages in 1..=3i64, count in 1..=25i64, rate in 0.0..0.6f64,
        kv in prop::sample::select(vec![0.1, 20.0, 400.0]), threshold in 0.1..=1.0f64, drop in any::<bool>(),
        batch_max in 1..=4i64, wait in 0.0..1.0f64, depri in 0..3usize, chain in any::<bool>(),
        out in 0..=6i64, tiny_instance in any::<bool>(), windowed in any::<bool>(),
        seed in 1..1000u64,
    ) {
        let spec = if tiny_instance {
            let mut spec = tiny(nodes, stages, count.min(8), rate, out, depri, 0.5, false, 100);
            if windowed {
                // The rolling-window search, whose leaves drain one node at a time.
                spec.planners.ilp_exact_max_tasks = 2;
                spec.planners.ilp_window = 2;
            }
            spec
        } else {
            instance(nodes, stages, count, rate, kv, threshold, drop, batch_max, wait, depri, chain)
        };
        prop_assume!(coplan::spec::validate::colocation(&spec).is_empty());
        // The exact search (its engine clones and per-node drains) on the tiny instances.
        let runs = runs_both_ways(&spec, seed, tiny_instance);
        prop_assert!(!tiny_instance || runs.iter().any(|r| r.0 == "ilp"), "the exact search ran");
        for (name, fast, reference) in runs {
            prop_assert!(run_bits(&fast) == run_bits(&reference), "{} differs", name);
        }
    }
}

/// A tiny instance whose every decision can be enumerated: `count` requests of fixed size, a
/// little training, on `nodes` nodes; `kv` MiB per token (400: memory pressure, waits,
/// offloads or drops) and SEPARATE's sync every `sync_every` training tasks.
#[allow(clippy::too_many_arguments)]
fn tiny(
    nodes: i64,
    stages: i64,
    count: i64,
    rate: f64,
    out: i64,
    depri: usize,
    kv: f64,
    drop: bool,
    sync_every: i64,
) -> ColocationSpec {
    let mut spec = instance(
        nodes, stages, count, rate, kv, 0.8, drop, 2, 0.5, depri, true,
    );
    spec.model.eta_forward = 1.0e-4;
    spec.model.eta_backward = 0.5e-4;
    spec.model.decode_base_s = 0.05;
    spec.model.decode_per_token_s = 0.001;
    spec.inference.prompt_tokens.dist = coplan::spec::colocation::DistKind::Constant;
    spec.inference.prompt_tokens.mean = 100.0;
    spec.inference.output_tokens.dist = coplan::spec::colocation::DistKind::Constant;
    spec.inference.output_tokens.mean = out as f64;
    spec.inference.output_tokens.min = 0;
    spec.training.tokens.dist = coplan::spec::colocation::DistKind::Constant;
    spec.training.tokens.mean = 100.0;
    if let Some(a) = spec.inference.arrival.as_mut() {
        a.rate_rps = 4.0;
    }
    spec.planners.separate_sync_every = sync_every;
    spec.planners.ilp_time_limit_s = 60.0;
    spec.planners.run = [
        "separate",
        "mix-rr",
        "mix-luf",
        "lemix",
        "lemix-balanced",
        "ilp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    spec
}

/// Plans `spec` and checks that the exact `ilp` is proven and equals an independent
/// enumeration of every decision, each run from scratch: (the plan, its optimum, the
/// enumeration's best).
fn proven_against_enumeration(
    spec: &ColocationSpec,
    seed: u64,
) -> Result<(ColocationPlan, f64, f64), TestCaseError> {
    let findings = coplan::spec::validate::colocation(spec);
    prop_assert!(findings.is_empty(), "{:?}", findings);
    let c = cluster();
    let s = coplan::colocate::setup::setup(&c, spec, None, Some(seed));
    prop_assume!(s.tasks.len() <= 7);
    let Some(best) = best_over_every_decision(&s, &DecisionSpace::of(&s), 20_000) else {
        return Err(TestCaseError::reject("too many decision strings"));
    };
    let report = plan(&c, spec, None, None, Some(seed)).expect("runs and verifies");
    let ilp = report
        .planners
        .iter()
        .find(|p| p.name == "ilp")
        .expect("ilp listed");
    prop_assert_eq!(ilp.status, coplan::plan::PlanStatus::Optimal);
    let optimal = ilp.objective.expect("ran");
    prop_assert!(
        (optimal - best).abs() <= 1e-6 * best.max(1.0),
        "ilp {} against the enumeration {}",
        optimal,
        best
    );
    Ok((report, optimal, best))
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// On tiny instances with deferral, syncs and memory pressure, the exact `ilp` is proven
    /// optimal and equals the best of an independent enumeration of every decision, each run
    /// from scratch; no planner (all six) scores below it; every gap is exact and against it;
    /// the proven bound lies below it.
    #[test]
    fn exact_ilp_equals_an_enumeration_of_every_decision(
        nodes in 1..=3i64, stages in 1..=2i64, count in 2..=4i64,
        rate in prop::sample::select(vec![0.0, 0.3, 0.5, 0.6]),
        out in 1..=3i64, seed in 1..100u64, depri in 0..3usize,
        kv in prop::sample::select(vec![0.5, 400.0, 1500.0]), drop in any::<bool>(),
        sync_every in 1..=2i64,
    ) {
        let mut spec = tiny(nodes, stages, count, rate, out, depri, kv, drop, sync_every);
        spec.inference.output_tokens.min = 1;
        let (report, optimal, best) = proven_against_enumeration(&spec, seed)?;
        let ilp = report.planners.iter().find(|p| p.name == "ilp").expect("ilp listed");
        prop_assert_eq!(ilp.bound, Some(optimal));
        prop_assert_eq!(report.bound, Some(optimal));
        let proven = report.bounds.iter().filter_map(|b| b.value).fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(proven <= best + 1e-6, "bound {} above the optimum {}", proven, best);
        for p in &report.planners {
            let obj = p.objective.expect("objective");
            prop_assert!(obj >= optimal - 1e-6, "{} scores {} below the optimum {}", p.name, obj, optimal);
            prop_assert!(!p.gap_is_bound, "{}: a proven optimum gives exact gaps", p.name);
            prop_assert!(p.gap.is_some_and(|g| g >= -1e-9));
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(128))]

    /// Requests that decode together in groups (up to 4 per batch, 4–12 tokens each, arriving
    /// while earlier ones decode), so that the search's cut counts what each member's iterations take
    /// for the others (`bounds::shared_decode_s`): the exact `ilp` still equals an enumeration
    /// of every decision, each run from scratch.
    #[test]
    fn exact_ilp_equals_the_enumeration_when_requests_decode_in_groups(
        nodes in 1..=2i64, stages in 1..=2i64, count in 3..=5i64,
        rate in prop::sample::select(vec![0.0, 0.3]),
        out in 4..=12i64, seed in 1..100u64, depri in 0..3usize,
        sync_every in 1..=2i64,
    ) {
        let mut spec = tiny(nodes, stages, count, rate, out, depri, 0.5, false, sync_every);
        // Lengths uniform on [4, out]: members leave their group at different iterations.
        let tokens = &mut spec.inference.output_tokens;
        tokens.dist = coplan::spec::colocation::DistKind::Uniform;
        tokens.mean = (4 + out) as f64 / 2.0;
        tokens.sd = (out - 4) as f64 / 12f64.sqrt();
        tokens.min = 4;
        tokens.max = out;
        spec.lemix.batch_max = 4;
        // Short prefills and long decodes: later requests arrive while earlier ones decode.
        spec.model.eta_forward = 1.0e-6;
        if let Some(a) = spec.inference.arrival.as_mut() {
            a.rate_rps = 6.0;
        }
        proven_against_enumeration(&spec, seed)?;
    }
}

/// Answers the engine at random: a node or (while an inference arrival is ahead) deferral for
/// each offer, and each sync point synced or not.
struct RandomWalk {
    rng: coplan::rng::SeededRng,
    space: DecisionSpace,
}

impl RandomWalk {
    fn answer(&mut self, view_defers: bool, training: bool) -> Assignment {
        let defer = training && view_defers;
        let pick = self.rng.below(self.space.nodes + usize::from(defer));
        if pick < self.space.nodes {
            Assignment::Node(pick)
        } else {
            Assignment::Defer
        }
    }
}

impl Dispatcher for RandomWalk {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        self.answer(view.next_inference_arrival.is_some(), task.is_training())
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        if !completed.is_multiple_of(self.space.sync_every.max(1)) {
            return None;
        }
        (self.rng.below(2) == 1).then(|| self.space.serving.clone())
    }
}

/// Walks `walks` random schedules of `s` and checks that the cut of the exact search
/// (`bounds::partial_floor`) at every offer along each is at most what the schedule scores:
/// the run is one completion of every state on its way.
fn floors_hold_along_random_walks(
    s: &coplan::colocate::setup::Setup,
    seed: u64,
    walks: u64,
) -> Result<(), TestCaseError> {
    let tau = (s.spec.inference.slo_factor * s.slo_base_s).max(1e-12);
    let floors = memory_task_floors(s);
    for walk in 0..walks {
        let mut walker = RandomWalk {
            rng: coplan::rng::SeededRng::new(seed * 1000 + walk),
            space: DecisionSpace::of(s),
        };
        let mut engine = DiscreteEventEngine::new(&s.config, &s.tasks);
        engine.quiet();
        let mut seen: Vec<f64> = Vec::new();
        while let Some(id) = engine.advance(&mut walker) {
            seen.push(partial_floor(s, &floors, &engine, false));
            let task = s.tasks[id.index()];
            let answer = walker.answer(
                engine.view().next_inference_arrival.is_some(),
                task.is_training(),
            );
            engine.place(id, answer, None);
        }
        let run = engine.finish();
        let cost: f64 = run
            .outcomes
            .iter()
            .map(|o| objective_term(o, tau, &s.spec.objective))
            .sum();
        for (k, floor) in seen.iter().enumerate() {
            prop_assert!(
                *floor <= cost + 1e-6 * cost.abs().max(1.0),
                "walk {}: the floor {} at offer {} is above the schedule's {}",
                walk,
                floor,
                k,
                cost
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    /// The exact search's cut is a lower bound of every completion of the state it cuts: on
    /// random instances (long prefills and training ops beside decoding requests, memory
    /// pressure, offloads and drops, deferral and syncs) and on the measured Llama-3-8B profile,
    /// the floor at every offer of a random schedule is at most the schedule's objective.
    #[test]
    fn the_search_floor_bounds_every_completion_of_random_schedules(
        nodes in 1..=3i64, stages in 1..=3i64, count in 3..=12i64,
        rate in prop::sample::select(vec![0.0, 0.3, 0.6]),
        out in 2..=12i64, seed in 1..1000u64, depri in 0..3usize,
        kv in prop::sample::select(vec![0.5, 40.0, 400.0]), drop in any::<bool>(),
        sync_every in 1..=2i64, measured in any::<bool>(),
    ) {
        let spec = if measured {
            let mut spec = instance(nodes, stages, count + 8, rate, 0.0625, 0.8, false, 8, 0.5, depri, true);
            spec.inference.output_tokens.max = 64;
            spec.inference.output_tokens.mean = 2.0 * out as f64;
            spec.planners.separate_sync_every = sync_every;
            spec
        } else {
            let mut spec = tiny(nodes, stages, count, rate, out, depri, kv, drop, sync_every);
            let tokens = &mut spec.inference.output_tokens;
            tokens.dist = coplan::spec::colocation::DistKind::Uniform;
            tokens.mean = (1 + out) as f64 / 2.0;
            tokens.sd = (out - 1) as f64 / 12f64.sqrt();
            tokens.min = 1;
            tokens.max = out;
            spec.lemix.batch_max = 4;
            if let Some(a) = spec.inference.arrival.as_mut() {
                a.rate_rps = 2.0;
            }
            spec
        };
        let c = cluster();
        let s = coplan::colocate::setup::setup(&c, &spec, None, Some(seed));
        floors_hold_along_random_walks(&s, seed, 8)?;
    }
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    /// The exact search starts from the best candidate's schedule, so even stopped at once by
    /// its time limit, `ilp` never scores above a candidate planner.
    #[test]
    fn a_stopped_exact_search_is_no_worse_than_any_candidate(
        nodes in 1..=3i64, stages in 1..=2i64, count in 4..=10i64,
        rate in prop::sample::select(vec![0.0, 0.3, 0.5]),
        out in 1..=4i64, seed in 1..100u64, depri in 0..3usize,
        kv in prop::sample::select(vec![0.5, 400.0]), drop in any::<bool>(),
        sync_every in 1..=2i64,
    ) {
        let mut spec = tiny(nodes, stages, count, rate, out, depri, kv, drop, sync_every);
        spec.planners.ilp_time_limit_s = 1e-6;
        let report = plan(&cluster(), &spec, None, None, Some(seed)).expect("runs and verifies");
        let ilp = report.planners.iter().find(|p| p.name == "ilp").expect("ilp listed");
        let ilp_objective = ilp.objective.expect("an incumbent");
        for p in report.planners.iter().filter(|p| p.name != "ilp") {
            let obj = p.objective.expect("objective");
            prop_assert!(ilp_objective <= obj + 1e-9,
                "ilp ({:?}) {} above {} {}", ilp.status, ilp_objective, p.name, obj);
        }
    }
}
