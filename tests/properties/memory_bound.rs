//! The memory-aware lower bounds (`memory floors`, `memory stage relaxation`, `memory lp` in
//! `src/colocate/bounds.rs`) on random instances under memory pressure — tight GPU memory,
//! prompts and activations that never fit, offload and drop timeouts, long outputs: no
//! planner's objective falls below any bound part or below the best bound, and on tiny
//! instances no string of decisions (node, deferral, weight sync) does.

use crate::common;

use crate::common::decisions::{DecisionSpace, best_over_every_decision};
use coplan::colocate::bounds::{memory_costs, memory_floors, memory_task_floors, task_floors};
use coplan::colocate::planning::plan;
use coplan::colocate::setup::{Setup, setup};
use coplan::plan::colocation::ColocationPlan;
use coplan::spec::colocation::{DistKind, MemoryTimeout};
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;
use proptest::prelude::*;

const PLANNERS: [&str; 5] = ["separate", "mix-rr", "mix-luf", "lemix", "lemix-balanced"];

/// The memory-aware parts, by their names in the plan's `bounds`.
const MEMORY_PARTS: [&str; 3] = ["memory floors", "memory stage relaxation", "memory lp"];

fn base() -> ColocationSpec {
    let text =
        std::fs::read_to_string(common::root().join("examples/workloads/colocation-small.toml"))
            .expect("example");
    toml::from_str(&text).expect("valid")
}

fn cluster() -> Cluster {
    let text = std::fs::read_to_string(common::root().join("examples/clusters/a100-x16.toml"))
        .expect("example");
    let spec: ClusterSpec = toml::from_str(&text).expect("valid");
    Cluster::from_spec(&spec)
}

/// What a random instance varies.
#[derive(Debug, Clone)]
struct Pressure {
    nodes: i64,
    stages: i64,
    count: i64,
    rate: f64,
    /// MiB per token of KV (400: a prompt of 200 tokens fills a tight GPU).
    kv: f64,
    /// Activations per token, as a multiple of `kv`.
    activation: f64,
    threshold: f64,
    drop: bool,
    wait: f64,
    batch_max: i64,
    output_mean: f64,
}

fn instance(p: &Pressure) -> ColocationSpec {
    let mut s = base();
    s.nodes = Some(p.nodes);
    s.model.stages = p.stages;
    s.model.kv_mib_per_token = p.kv;
    s.model.activation_mib_per_token = p.kv * p.activation;
    s.inference.count = p.count;
    s.inference.prompt_tokens.max = 1024;
    s.inference.output_tokens.mean = p.output_mean;
    s.inference.output_tokens.sd = p.output_mean;
    s.inference.output_tokens.max = 256;
    s.training.rate = p.rate;
    s.training.tokens.max = 1024;
    s.lemix.memory_threshold = p.threshold;
    s.lemix.on_memory_timeout = if p.drop {
        MemoryTimeout::Drop
    } else {
        MemoryTimeout::Offload
    };
    s.lemix.max_wait_s = p.wait;
    s.lemix.batch_max = p.batch_max;
    s.planners.run = PLANNERS.iter().map(|p| p.to_string()).collect();
    s
}

fn pressure() -> impl Strategy<Value = Pressure> {
    (
        (1..=3i64, 1..=3i64, 1..=30i64, 0.0..0.6f64),
        (
            prop::sample::select(vec![0.1, 5.0, 20.0, 100.0, 400.0]),
            prop::sample::select(vec![1.0, 2.0, 4.0]),
            0.1..=1.0f64,
            any::<bool>(),
        ),
        (
            prop::sample::select(vec![0.0, 0.5, 2.0]),
            1..=8i64,
            prop::sample::select(vec![6.0, 40.0, 120.0]),
        ),
    )
        .prop_map(
            |(
                (nodes, stages, count, rate),
                (kv, activation, threshold, drop),
                (wait, batch_max, output_mean),
            )| Pressure {
                nodes,
                stages,
                count,
                rate,
                kv,
                activation,
                threshold,
                drop,
                wait,
                batch_max,
                output_mean,
            },
        )
}

/// Every bound part with a value, and the best, lie at or below `objective`.
fn bounds_below(report: &ColocationPlan, who: &str, objective: f64) -> Result<(), TestCaseError> {
    let tolerance = 1e-6 * objective.abs().max(1.0);
    for b in &report.bounds {
        if let Some(v) = b.value {
            prop_assert!(
                v <= objective + tolerance,
                "{}: bound part `{}` = {} above the objective {}",
                who,
                b.name,
                v,
                objective
            );
        }
    }
    let best = report.bound.expect("a bound");
    prop_assert!(
        best <= objective + tolerance,
        "{}: best bound {} above {}",
        who,
        best,
        objective
    );
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(common::cases()))]

    /// Every planner's objective is at least every bound part (the memory parts among them)
    /// and the best bound, on instances where memory decides: waits, offloads, drops, tasks
    /// that never fit.
    #[test]
    fn no_planner_falls_below_the_memory_bounds(p in pressure(), seed in 1..1000u64) {
        let spec = instance(&p);
        prop_assume!(coplan::spec::validate::colocation(&spec).is_empty());
        let c = cluster();
        let report = plan(&c, &spec, None, None, Some(seed)).expect("every run passes the verifier");
        for name in MEMORY_PARTS {
            prop_assert!(report.bounds.iter().any(|b| b.name == name), "`{}` is reported", name);
        }
        for planner in &report.planners {
            let objective = planner.objective.expect("heuristics run");
            bounds_below(&report, &planner.name, objective)?;
        }
        // The memory floors never fall below the floors that ignore memory.
        let s = setup(&c, &spec, None, Some(seed));
        let floors = report.bounds.iter().find(|b| b.name == "request floors").and_then(|b| b.value);
        let memory = report.bounds.iter().find(|b| b.name == "memory floors").and_then(|b| b.value);
        prop_assert!(memory.unwrap_or(0.0) >= floors.unwrap_or(0.0) - 1e-9 * floors.unwrap_or(0.0).abs().max(1.0));
        for (plain, seen) in task_floors(&s).iter().zip(memory_task_floors(&s)) {
            prop_assert!(seen.first_s >= plain.first_s && seen.total_s() >= plain.total_s());
        }
    }
}

/// Decisions for the bounds' check: the planners' own, and a sync of the last node at every
/// completed training task (a superset of SEPARATE's sync points: the bounds hold for every run
/// of the engine).
fn every_completion(s: &Setup) -> DecisionSpace {
    DecisionSpace {
        nodes: s.config.nodes,
        sync_every: 1,
        serving: vec![s.config.nodes - 1],
    }
}

proptest! {
    #![proptest_config(common::proptest_config(common::cases() / 2))]

    /// On tiny instances under memory pressure no schedule of any planner — every node
    /// assignment, deferral and weight sync, enumerated — scores below any bound part.
    #[test]
    fn no_decision_falls_below_the_memory_bounds(
        nodes in 1..=2i64, stages in 1..=2i64, count in 1..=3i64,
        rate in prop::sample::select(vec![0.0, 0.3, 0.5]),
        kv in prop::sample::select(vec![0.5, 20.0, 400.0, 1500.0]),
        threshold in prop::sample::select(vec![0.1, 0.2, 0.8]),
        drop in any::<bool>(), wait in prop::sample::select(vec![0.0, 0.5]),
        out in 1..=40i64, seed in 1..100u64,
    ) {
        let mut spec = instance(&Pressure {
            nodes, stages, count, rate, kv, activation: 2.0, threshold, drop, wait,
            batch_max: 2, output_mean: out as f64,
        });
        spec.inference.prompt_tokens.dist = DistKind::Constant;
        spec.inference.prompt_tokens.mean = 200.0;
        spec.inference.output_tokens.dist = DistKind::Constant;
        spec.inference.output_tokens.min = 1;
        spec.training.tokens.dist = DistKind::Constant;
        spec.training.tokens.mean = 200.0;
        prop_assume!(coplan::spec::validate::colocation(&spec).is_empty());
        let c = cluster();
        let s = setup(&c, &spec, None, Some(seed));
        prop_assume!(s.tasks.len() <= 5);
        let Some(best) = best_over_every_decision(&s, &every_completion(&s), 5_000) else {
            return Err(TestCaseError::reject("too many decision strings"));
        };
        let report = plan(&c, &spec, None, None, Some(seed)).expect("runs and verifies");
        bounds_below(&report, "every decision", best)?;
    }
}

/// A request whose prompt KV never fits is dropped under `on_memory_timeout = "drop"`: the
/// memory floors see it and equal every planner's objective; under "offload" each of its
/// stages waits, moves the KV out and streams it back for every token, and the memory floors
/// count that time.
#[test]
fn a_request_that_never_fits_is_dropped_or_offloaded_on_every_stage() {
    let mut spec = instance(&Pressure {
        nodes: 2,
        stages: 2,
        count: 6,
        rate: 0.0,
        kv: 400.0,
        activation: 1.0,
        threshold: 0.2,
        drop: true,
        wait: 0.5,
        batch_max: 4,
        output_mean: 20.0,
    });
    spec.inference.prompt_tokens.dist = DistKind::Constant;
    spec.inference.prompt_tokens.mean = 300.0;
    let c = cluster();
    let s = setup(&c, &spec, None, None);
    assert!(
        memory_costs(&s).iter().all(|m| m.forced),
        "120,000 MiB per stage never fit"
    );
    let report = plan(&c, &spec, None, None, None).expect("plans");
    let dropped = spec.objective.dropped * 6.0;
    assert!((memory_floors(&s) - dropped).abs() < 1e-9);
    assert_eq!(report.bound, Some(dropped));
    assert_eq!(report.bound_source, "memory floors");
    for p in &report.planners {
        assert_eq!(p.objective, Some(dropped), "{}", p.name);
    }

    spec.lemix.on_memory_timeout = MemoryTimeout::Offload;
    let s = setup(&c, &spec, None, None);
    let report = plan(&c, &spec, None, None, None).expect("plans");
    let before = report
        .bounds
        .iter()
        .filter(|b| ["request floors", "stage relaxation", "interval lp"].contains(&b.name))
        .filter_map(|b| b.value)
        .fold(0.0, f64::max);
    let bound = report.bound.expect("a bound");
    assert!(
        memory_floors(&s) > 10.0 * before,
        "the transfers dominate: {} against {before}",
        memory_floors(&s)
    );
    for p in &report.planners {
        let objective = p.objective.expect("ran");
        assert!(objective >= bound - 1e-6 * objective, "{}", p.name);
    }
}

/// Requests that fit on a GPU one at a time and arrive together, with a memory wait long
/// enough that offloading never pays: the memory LP sees that they hold the GPU's memory in
/// turn, rises above every bound that ignores memory, and stays below the best of every
/// decision on one node and on two.
#[test]
fn requests_that_fit_one_at_a_time_hold_memory_in_turn() {
    for nodes in [1, 2] {
        let mut spec = instance(&Pressure {
            nodes,
            stages: 1,
            count: 6,
            rate: 0.0,
            kv: 20.0,
            activation: 1.0,
            // 7,660 MiB of weights plus room for one request (4,800 MiB), not two.
            threshold: (7660.0 + 8000.0) / 81920.0,
            drop: false,
            wait: 30.0,
            batch_max: 8,
            output_mean: 40.0,
        });
        // Times only: a miss would hide how close the bound comes.
        spec.objective.slo_miss = 0.0;
        spec.inference.arrival = None;
        spec.inference.requests = Some(
            (0..6)
                .map(|k| coplan::spec::colocation::RequestSpec {
                    arrival_s: 0.01 * f64::from(k),
                    prompt_tokens: 200,
                    output_tokens: 40,
                })
                .collect(),
        );
        assert!(coplan::spec::validate::colocation(&spec).is_empty());
        let c = cluster();
        let s = setup(&c, &spec, None, None);
        let best = best_over_every_decision(&s, &every_completion(&s), 1_000)
            .expect("64 assignments at most");
        let report = plan(&c, &spec, None, None, None).expect("plans");
        let part = |name: &str| {
            report
                .bounds
                .iter()
                .find(|b| b.name == name)
                .and_then(|b| b.value)
                .unwrap_or(0.0)
        };
        let blind = ["request floors", "stage relaxation", "interval lp"]
            .map(part)
            .into_iter()
            .fold(0.0, f64::max);
        let memory = part("memory lp");
        eprintln!("{nodes} nodes: memory lp {memory}, blind {blind}, best {best}");
        assert!(
            memory > 1.1 * blind,
            "{nodes} nodes: memory lp {memory} against {blind}"
        );
        assert!(
            memory <= best + 1e-6 * best,
            "{nodes} nodes: {memory} above {best}"
        );
    }
}
