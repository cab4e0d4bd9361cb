//! Property tests on random small clusters and workloads. The exact side is the oracle: every
//! plan passes the verifier (inside `plan`), an optimal `ilp-batch` bounds every planner, every
//! decision is at least the per-event optimum on the state it faced, `ilp` equals brute force on
//! single-preemptor instances, the exact per-event search agrees with the per-event MILP,
//! `ilp-batch`'s lazy decomposition agrees with solving every subproblem, IMP evicts
//! minimum-cardinality victim sets, and output is deterministic.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use coplan::plan::PlanStatus as Status;
use coplan::plan::error::PlanningError;
use coplan::plan::explain::ColumnKind;
use coplan::plan::preemption::EventOutcome as Outcome;
use coplan::plan::preemption::{PreemptionPlan as PlanReport, Preemptor, enactment_order};
use coplan::preempt::apply::apply;
use coplan::preempt::exact::ilp_batch::bounds::ServerBounds;
use coplan::preempt::exact::ilp_batch::list_bounds;
use coplan::preempt::exact::ilp_batch::{decomposed, model as batch_model};
use coplan::preempt::exact::{event_exact, ilp, per_event};
use coplan::preempt::explain::explain_events;
use coplan::preempt::flextopo::{Flextopo, Sourcing};
use coplan::preempt::planner::PreemptionPlanner;
use coplan::preempt::planning::{self as engine, PlanOptions};
use coplan::preempt::problem::{DecisionPoint, Problem};
use coplan::preempt::scenario;
use coplan::preempt::victims::for_each_subset;
use coplan::solver::{Deadline, SolverSettings};
use coplan::spec::preemption::{
    Admission, DisruptionBudget, EventSolver, FillAllocator, FillSpec, ImpScope, PreemptEntry,
    PreemptionSpec, PriorityNorm, RunningPod, TopologyQos, WorkloadClass,
};
use coplan::spec::{ClusterSpec, Penalty, ServerTypeSpec, SpecKind};
use coplan::topology::{Cluster, ServerId};
use proptest::prelude::*;

mod common;
use common::{cases, two_pools};

const PLANNERS: [&str; 6] = [
    "k8s-default",
    "k8s-nrt",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];
const EPS: f64 = 1e-6;

fn server_type(i: usize) -> impl Strategy<Value = ServerTypeSpec> {
    (1..=2i64, 1..=2i64, 2..=6i64, 0..=2usize, 0..3usize).prop_map(
        move |(sockets, numa, cores, gpn, pen)| {
            let penalty = [
                Penalty::default(),
                Penalty {
                    numa: 1.0,
                    socket: 1.2,
                    cross_socket: 3.2,
                },
                Penalty {
                    numa: 1.0,
                    socket: 1.0,
                    cross_socket: 2.0,
                },
            ][pen];
            common::server_type(i, (sockets, numa, cores, gpn), penalty)
        },
    )
}

fn cluster() -> impl Strategy<Value = ClusterSpec> {
    (server_type(0), server_type(1), 1..=2i64, 0..=1i64)
        .prop_map(|(a, b, na, nb)| two_pools(a, b, na, nb))
}

fn class(i: usize) -> impl Strategy<Value = WorkloadClass> {
    (0..5i64, 0..=2i64, 1..=5i64, 0..3usize, any::<bool>()).prop_map(
        move |(prio, gpus, cores, qos, preemptible)| WorkloadClass {
            name: format!("w{i}"),
            priority: prio * 10,
            gpus,
            cores,
            topology_qos: [
                TopologyQos::Guaranteed,
                TopologyQos::BestEffort,
                TopologyQos::None,
            ][qos],
            preemptible,
            ..Default::default()
        },
    )
}

fn workload() -> impl Strategy<Value = PreemptionSpec> {
    (
        prop::collection::vec((0..3usize, 0..3usize), 0..12),
        prop::collection::vec((0..3usize, 1..=3i64), 1..=3),
        class(0),
        class(1),
        class(2),
        prop::option::of(0..3usize),
        (any::<bool>(), 0..4usize, any::<bool>(), 0..3usize),
    )
        .prop_map(
            |(running, preempt, c0, c1, c2, fill, (bind, allocator, node_scope, norm))| {
                let classes = vec![c0, c1, c2];
                let running = running
                    .into_iter()
                    .map(|(w, s)| RunningPod {
                        name: None,
                        workload: format!("w{w}"),
                        node: ["a0", "a1", "b0"][s].into(),
                        gpus: None,
                        cores: None,
                        start_time_s: Some((w * 7 + s * 3) as f64),
                    })
                    .collect();
                let mut spec: PreemptionSpec =
                    toml::from_str("kind = \"preemption\"\nworkload = []").expect("base spec");
                spec.kind = SpecKind::Preemption;
                spec.workload = classes;
                spec.running = running;
                spec.preempt = preempt
                    .into_iter()
                    .map(|(w, count)| PreemptEntry {
                        workload: format!("w{w}"),
                        count,
                        name: None,
                    })
                    .collect();
                spec.fill = fill.map(|w| fill_spec(&format!("w{w}"), 0.8, allocator, 3));
                spec.planners.ilp_time_limit_s = 60.0;
                spec.simulation.admission = admission(bind);
                spec.flextopo.imp_scope = if node_scope {
                    ImpScope::Node
                } else {
                    ImpScope::Cluster
                };
                spec.flextopo.priority_norm = [
                    PriorityNorm::Candidates,
                    PriorityNorm::Spec,
                    PriorityNorm::InverseSum,
                ][norm];
                spec
            },
        )
}

/// A fill of one workload to `utilization` by the `allocator`-th fill allocator, one churn
/// round.
fn fill_spec(workload: &str, utilization: f64, allocator: usize, seed: u64) -> FillSpec {
    FillSpec {
        mix: [(workload.to_string(), 1.0)].into_iter().collect(),
        target_gpu_utilization: utilization,
        allocator: [
            FillAllocator::Random,
            FillAllocator::NumaAligned,
            FillAllocator::BestFit,
            FillAllocator::Spread,
        ][allocator],
        churn_rounds: 1,
        seed,
    }
}

fn admission(bind: bool) -> Admission {
    if bind {
        Admission::Bind
    } else {
        Admission::Kubelet
    }
}

fn run(cluster: &Cluster, spec: &PreemptionSpec) -> Option<PlanReport> {
    let options = PlanOptions {
        planners: Some(PLANNERS.iter().map(|s| s.to_string()).collect()),
        seed: None,
        worst: None,
        ..PlanOptions::default()
    };
    match engine::plan(cluster, spec, &options) {
        Ok(r) => Some(r),
        // Random running pods may not fit the random cluster: not an instance.
        Err(PlanningError::Invalid(_)) => None,
        Err(e) => panic!("plan failed: {e}"),
    }
}

fn valid(cluster: &ClusterSpec, spec: &PreemptionSpec) -> bool {
    coplan::spec::validate::cluster(cluster).is_empty()
        && coplan::spec::validate::preemption(spec).is_empty()
}

fn canonical_json(r: &PlanReport) -> String {
    let mut r = r.clone();
    for p in &mut r.planners {
        p.runtime_ms = 0.0;
        p.metrics.runtime_ms = 0.0;
    }
    serde_json::to_string(&r).expect("serializes")
}

proptest! {
    // COPLAN_PROPTEST_CASES=2000 cargo test --release --test properties for a longer search.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn plans_are_verified_bounded_and_deterministic(cluster_spec in cluster(), spec in workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let by = |n: &str| report.planners.iter().find(|p| p.name == n).expect("ran");
        let batch = by("ilp-batch");
        // `gap_limit`: the model's optimum evicts pods no preemptor needs; its bound still
        // bounds every plan.
        prop_assert!(matches!(batch.status, Status::Optimal | Status::GapLimit), "{:?}", batch.status);
        let bound = batch.bound.expect("a solved batch has a bound");
        for p in &report.planners {
            let obj = p.objective.expect("objective");
            prop_assert!(bound <= obj + EPS, "{} objective {} below the batch optimum {}", p.name, obj, bound);
            let dg = p.decision_gap.expect("ilp ran");
            if p.name != "ilp-batch" {
                prop_assert!(dg >= -EPS, "{} decision_gap {}", p.name, dg);
            }
        }
        prop_assert!(by("ilp").decision_gap.expect("ran").abs() <= EPS);
        // The topology-aware filters never place a guaranteed pod below its level, so they never
        // waste an eviction on a refusal nor bind a miss.
        for name in ["k8s-nrt", "flextopo-imp", "flextopo-exhaustive"] {
            let p = by(name);
            prop_assert_eq!(p.metrics.wasted_evictions, 0, "{}", name);
            prop_assert!(p.events.iter().all(|e| e.outcome != Outcome::PlacedMiss), "{}", name);
        }
        // Misses of guaranteed pods show as `placed-miss` only where nothing refuses them.
        if spec.simulation.admission == Admission::Kubelet {
            for p in &report.planners {
                prop_assert!(p.events.iter().all(|e| e.outcome != Outcome::PlacedMiss), "{}", p.name);
            }
        }
        // Determinism: the same inputs give byte-identical output (timings aside).
        let again = run(&cluster, &spec).expect("ran before");
        prop_assert_eq!(canonical_json(&report), canonical_json(&again));
    }

    #[test]
    fn explained_terms_add_up_and_no_planner_beats_the_optimum_column(cluster_spec in cluster(), spec in workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let names: Vec<String> = PLANNERS.iter().map(|s| s.to_string()).collect();
        let explained = explain_events(&cluster, &spec, Some(names), None, None).expect("explains");
        prop_assert_eq!(explained.len(), report.planners[0].events.len());
        for p in &report.planners {
            let mut total = 0.0;
            for (i, e) in explained.iter().enumerate() {
                // A planner's own column; `ilp`'s is its optimum column.
                let c = e.columns.iter().find(|c| c.name == p.name && (c.column == ColumnKind::Planner || p.name == "ilp")).expect("a column per planner");
                let t = &c.terms;
                let sum = t.victims + t.priority + t.topology + t.unplaced;
                prop_assert!((sum - t.total).abs() <= EPS * t.total.abs().max(1.0), "{} event {}: terms {} vs total {}", p.name, i + 1, sum, t.total);
                // The explained decision is the plan's, cost for cost.
                prop_assert_eq!(t.total, p.events[i].cost, "{} event {}", &p.name, i + 1);
                total += t.total;
            }
            prop_assert_eq!(Some(total), p.objective, "{}: the explained costs sum to its objective", &p.name);
        }
        for e in &explained {
            for d in &e.differences {
                prop_assert!(d.excess >= -EPS, "event {}: {} below the optimum on its state by {}", e.event, d.planner, -d.excess);
            }
        }
        // The plan's decision gaps (per-event optima shared between planners that faced the
        // same state) equal the ones from explain's optima, solved afresh per state.
        for p in report.planners.iter().filter(|p| p.name != "ilp") {
            let (mut excess, mut optimum_sum) = (0.0, 0.0);
            for e in &explained {
                let d = e.differences.iter().find(|d| d.planner == p.name).expect("a difference per planner");
                let own = e.columns.iter().find(|c| c.name == p.name && c.column == ColumnKind::Planner).expect("own column");
                excess += d.excess;
                optimum_sum += own.terms.total - d.excess;
            }
            let fresh = excess / f64::max(optimum_sum.abs(), 1.0);
            let planned = p.decision_gap.expect("ilp ran");
            prop_assert!((fresh - planned).abs() <= 1e-9, "{}: decision gap {} against {} from fresh optima", &p.name, planned, fresh);
        }
    }

    #[test]
    fn single_preemptor_ilp_equals_brute_force(cluster_spec in cluster(), mut spec in workload()) {
        spec.preempt.truncate(1);
        spec.preempt[0].count = 1;
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let problem = Problem::new(&cluster, &spec);
        let mut state = scenario::initial_state(&cluster, &spec, None).expect("valid state");
        let preemptors = scenario::preemptors(&cluster, &spec, &mut state);
        let brute = ilp::brute_force_optimum(&problem, &state, &preemptors[0]);
        let objective = |n: &str| report.planners.iter().find(|p| p.name == n).and_then(|p| p.objective).expect("ran");
        prop_assert!((objective("ilp") - brute).abs() <= EPS, "ilp {} vs brute force {}", objective("ilp"), brute);
        prop_assert!((objective("ilp-batch") - brute).abs() <= EPS);
        for name in PLANNERS {
            prop_assert!(objective(name) >= brute - EPS, "{} beats the optimum", name);
        }
    }

    #[test]
    fn imp_evicts_a_minimum_cardinality_victim_set(cluster_spec in cluster(), mut spec in workload()) {
        // The brute force below replays under admission; IMP's filter is the QoS test, which
        // is admission under `kubelet`.
        spec.simulation.admission = Admission::Kubelet;
        let node_scope = spec.flextopo.imp_scope == ImpScope::Node;
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let problem = Problem::new(&cluster, &spec);
        let Ok(mut state) = scenario::initial_state(&cluster, &spec, None) else { return Ok(()) };
        let preemptors = scenario::preemptors(&cluster, &spec, &mut state);
        for p in &preemptors {
            let at = DecisionPoint { problem: &problem, state: &state, preemptor: p };
            let decision = Flextopo::new(Sourcing::IncrementalMinimal).decide(&at).expect("decides");
            // Cluster scope: the smallest set anywhere; node scope: the smallest on the server
            // chosen.
            let smallest = smallest_admitted_set(&problem, &state, p, decision.server.filter(|_| node_scope));
            match (decision.server, smallest) {
                (Some(_), Some(k)) => prop_assert_eq!(decision.victims.len(), k),
                (None, None) => {}
                (d, s) => prop_assert!(false, "IMP chose {:?}, smallest feasible set {:?}", d, s),
            }
            apply(&problem, &mut state, p, &decision).expect("applies");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The parallel per-server path (used on large clusters) decides exactly as the sequential
    /// one, with one rayon thread or two.
    #[test]
    fn parallel_decisions_equal_sequential_ones(cluster_spec in cluster(), spec in workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Ok(initial) = scenario::initial_state(&cluster, &spec, None) else { return Ok(()) };
        let decide_all = |parallel_min_servers: usize| {
            let mut problem = Problem::new(&cluster, &spec);
            problem.parallel_min_servers = parallel_min_servers;
            let mut state = initial.clone();
            let preemptors = scenario::preemptors(&cluster, &spec, &mut state);
            let mut out = Vec::new();
            for name in ["k8s-default", "k8s-nrt", "flextopo-imp", "flextopo-exhaustive"] {
                let planner = coplan::preempt::registry::planner(name).expect("planner");
                let mut state = state.clone();
                for p in &preemptors {
                    let at = DecisionPoint { problem: &problem, state: &state, preemptor: p };
                    let d = planner.decide(&at).expect("decides");
                    apply(&problem, &mut state, p, &d).expect("applies");
                    out.push((name, d));
                }
            }
            out
        };
        let sequential = decide_all(usize::MAX);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let parallel = pool.install(|| decide_all(0));
            prop_assert_eq!(&parallel, &sequential, "{} threads", threads);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The two per-event solvers agree on every state every planner's plan faces (what
    /// `decision_gap` solves on): both proven, the same cost, and the same decision — one
    /// total order on decisions (cost, then the candidate chain) — which replays to that cost.
    #[test]
    fn exact_and_milp_per_event_optima_agree(cluster_spec in cluster(), spec in workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let problem = Problem::new(&cluster, &spec);
        let Ok(mut initial) = scenario::initial_state(&cluster, &spec, None) else { return Ok(()) };
        let preemptors = scenario::preemptors(&cluster, &spec, &mut initial);
        for name in PLANNERS {
            let planner = coplan::preempt::registry::planner(name).expect("planner");
            let batch = if planner.joint() {
                let batch = planner.decide_batch(&problem, &initial, &preemptors, None).expect("decides");
                Some(batch.decisions)
            } else {
                None
            };
            let mut state = initial.clone();
            for i in enactment_order(&preemptors, planner.joint()) {
                let p = &preemptors[i];
                let exact = event_exact::exact_optimum(&problem, &state, p).expect("exact");
                let milp = per_event::milp_event_optimum(&problem, &state, p).expect("MILP");
                prop_assert!(exact.proven && milp.proven, "{}: {}", name, p.name);
                prop_assert!((exact.cost - milp.cost).abs() <= 1e-9,
                    "{} {}: exact {} against MILP {}", name, p.name, exact.cost, milp.cost);
                let (e, m) = (&exact.decision, &milp.decision);
                prop_assert_eq!((e.server, &e.victims), (m.server, &m.victims),
                    "{} {}: the solvers chose differently", name, p.name);
                let cost = match e.server {
                    Some(s) => ilp::replay_cost(&problem, &state, s, p, &e.victims),
                    None => Some(spec.objective.unplaced),
                };
                prop_assert!(cost.is_some_and(|c| (c - exact.cost).abs() <= 1e-9),
                    "{} {}: the decision {:?} replays to {:?}, not {}", name, p.name, e, cost, exact.cost);
                let decision = match &batch {
                    Some(decisions) => decisions[i].clone(),
                    None => planner
                        .decide(&DecisionPoint { problem: &problem, state: &state, preemptor: p })
                        .expect("decides"),
                };
                apply(&problem, &mut state, p, &decision).expect("applies");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// `ilp-batch`'s lazy decomposition (bounds first, a subproblem's MILP only where the best
    /// combination uses it) reaches the optimum of the decomposition with every subproblem
    /// solved; and every subproblem's bound is at most its MILP optimum, infeasible only where
    /// the MILP is.
    #[test]
    fn lazy_and_full_batch_decompositions_agree(cluster_spec in cluster(), spec in contested_workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let problem = Problem::new(&cluster, &spec);
        let Ok(mut initial) = scenario::initial_state(&cluster, &spec, None) else { return Ok(()) };
        let preemptors = scenario::preemptors(&cluster, &spec, &mut initial);
        let classes = batch_model::classes(&preemptors);
        prop_assume!(decomposed::decomposition_size(&problem, &initial, &preemptors, &classes).is_some());
        let deadline = Deadline::after(60.0).solving_with(SolverSettings {
            backend: spec.planners.solver,
            mip_gap: 0.0,
        });
        let lazy = decomposed::solve_decomposed(&problem, (&initial, &preemptors, &classes), &deadline)
            .expect("solves")
            .expect("a solution");
        let full = decomposed::solve_every_subproblem(&problem, (&initial, &preemptors, &classes), &deadline)
            .expect("solves")
            .expect("a solution");
        prop_assert_eq!(lazy.status, Status::Optimal);
        prop_assert_eq!(full.status, Status::Optimal);
        prop_assert!((lazy.objective - full.objective).abs() <= EPS,
            "lazy {} against every subproblem {}", lazy.objective, full.objective);
        for server in problem.servers() {
            let bounds = ServerBounds::new(&problem, &initial, &preemptors, &classes, server);
            for counts in every_count_vector(&classes) {
                let model = batch_model::build(&problem, &initial, &preemptors, &classes, &[server],
                    batch_model::Counts::Exactly(&counts));
                let milp = batch_model::solve_model(model, &deadline, None).expect("solves");
                match (bounds.lower_bound(&counts), milp) {
                    (Some(bound), Some(exact)) => prop_assert!(bound <= exact.objective + EPS,
                        "{:?} on {:?}: bound {} above the MILP's {}", counts, server, bound, exact.objective),
                    (None, Some(exact)) => prop_assert!(false,
                        "{:?} on {:?}: bound infeasible, the MILP found {}", counts, server, exact.objective),
                    (_, None) => {}
                }
            }
        }
    }
}

/// A cluster filled (by one of the fill allocators) with preemptible pods of the lowest
/// priority, and two higher classes preempting them: instances where the batch must choose
/// victims, servers and levels.
fn contested_workload() -> impl Strategy<Value = PreemptionSpec> {
    (workload(), 0..4usize, 1..=4i64, 1..=4i64).prop_map(|(mut spec, allocator, first, second)| {
        let filler = &mut spec.workload[0];
        filler.priority = 0;
        filler.preemptible = true;
        filler.gpus = filler.gpus.max(1);
        for class in &mut spec.workload[1..] {
            class.priority = class.priority.max(10);
        }
        spec.running.retain(|r| r.workload == "w0");
        spec.fill = Some(fill_spec("w0", 1.0, allocator, 3));
        spec.preempt = vec![
            PreemptEntry {
                workload: "w1".into(),
                count: first,
                name: None,
            },
            PreemptEntry {
                workload: "w2".into(),
                count: second,
                name: None,
            },
        ];
        spec
    })
}

/// Every non-zero vector of class counts up to the class sizes.
fn every_count_vector(classes: &[batch_model::Class]) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new()];
    for class in classes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..=class.members.len() as u32).map(move |n| {
                    let mut v = prefix.clone();
                    v.push(n);
                    v
                })
            })
            .collect();
    }
    out.retain(|v| v.iter().any(|&n| n > 0));
    out
}

/// Smallest number of victims that admits a placement anywhere, by brute force.
fn smallest_admitted_set(
    problem: &Problem<'_>,
    state: &coplan::topology::state::ClusterState,
    p: &Preemptor,
    only: Option<ServerId>,
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for i in 0..problem.cluster.servers.len() {
        let server = ServerId(i as u32);
        if only.is_some_and(|o| o != server) {
            continue;
        }
        let victims = problem.potential_victims(state, server, p);
        for k in 0..=victims.len() {
            if best.is_some_and(|b| k >= b) {
                break;
            }
            let mut found = false;
            for_each_subset(victims.len(), k, |idx| {
                let chosen: Vec<_> = idx.iter().map(|&j| victims[j]).collect();
                found = ilp::replay_cost(problem, state, server, p, &chosen).is_some();
                !found
            });
            if found {
                best = Some(k);
                break;
            }
        }
    }
    best
}

/// Instances built to stress the batch optimum: up to four servers of two types, three or four
/// classes with equal priorities (ties), QoS none / best-effort / guaranteed, preemptors of a
/// lower priority than what runs (no victims), preemptors larger than every server
/// (unplaceable), both admissions (refusals under `kubelet`).
fn batch_workload() -> impl Strategy<Value = (ClusterSpec, PreemptionSpec)> {
    (
        (server_type(0), server_type(1), 1..=3i64, 0..=1i64),
        prop::collection::vec((0..4usize, 1..=4i64), 1..=4),
        prop::collection::vec((0..3i64, 0..=3i64, 1..=6i64, 0..3usize), 4),
        (0..4usize, 0..4usize, any::<bool>(), 0..3usize),
    )
        .prop_map(
            |((a, b, na, nb), preempt, shapes, (filler, allocator, bind, unplaceable))| {
                let cluster = two_pools(a, b, na, nb);
                let classes: Vec<WorkloadClass> = shapes
                    .iter()
                    .enumerate()
                    .map(|(i, &(prio, gpus, cores, qos))| WorkloadClass {
                        name: format!("w{i}"),
                        // Priorities 0, 10, 20: classes often tie.
                        priority: prio * 10,
                        // One class asks for more than any server holds.
                        gpus: if i == unplaceable + 1 && i == 3 {
                            64
                        } else {
                            gpus
                        },
                        cores,
                        topology_qos: [
                            TopologyQos::Guaranteed,
                            TopologyQos::BestEffort,
                            TopologyQos::None,
                        ][qos],
                        preemptible: true,
                        ..Default::default()
                    })
                    .collect();
                let mut spec: PreemptionSpec =
                    toml::from_str("kind = \"preemption\"\nworkload = []").expect("base spec");
                spec.kind = SpecKind::Preemption;
                spec.workload = classes;
                spec.preempt = preempt
                    .into_iter()
                    .map(|(w, count)| PreemptEntry {
                        workload: format!("w{w}"),
                        count,
                        name: None,
                    })
                    .collect();
                spec.fill = Some(fill_spec(&format!("w{filler}"), 1.0, allocator, 5));
                spec.planners.ilp_time_limit_s = 60.0;
                spec.simulation.admission = admission(bind);
                (cluster, spec)
            },
        )
}

proptest! {
    // At least 500 cases: the batch optimum must hold on every one (DESIGN §12.2).
    #![proptest_config(ProptestConfig { cases: cases().max(500), ..ProptestConfig::default() })]

    /// A proven `ilp-batch` is the plan it replays: its objective is the replayed plan's (its
    /// bound equals it), no planner scores below it, and it never reports a refusal that
    /// evicted nothing.
    #[test]
    fn a_proven_batch_is_its_replay_and_below_every_planner((cluster_spec, spec) in batch_workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let batch = report.planners.iter().find(|p| p.name == "ilp-batch").expect("ran");
        // `gap_limit`: the model's optimum evicts pods no preemptor needs, and the plan is the
        // best one the cluster would enact, above that bound.
        prop_assert!(matches!(batch.status, Status::Optimal | Status::GapLimit), "{:?}", batch.status);
        let objective = batch.objective.expect("a solved batch has an objective");
        if batch.status == Status::Optimal {
            prop_assert_eq!(batch.bound, Some(objective), "the bound is the replayed objective");
        } else {
            let bound = batch.bound.expect("a gap_limit batch has a bound");
            prop_assert!(bound <= objective + EPS, "bound {} above the plan {}", bound, objective);
        }
        for p in &report.planners {
            let other = p.objective.expect("objective");
            prop_assert!(objective <= other + EPS, "{} scores {} below the batch optimum {}", p.name, other, objective);
        }
        // The placement floor is a proven bound: never above the optimum.
        let problem = Problem::new(&cluster, &spec);
        let mut initial = scenario::initial_state(&cluster, &spec, None).expect("planned from it");
        let preemptors = scenario::preemptors(&cluster, &spec, &mut initial);
        // The placement floor and the Lagrangian bound are proven bounds: never above the
        // optimum (nor above the model's optimum, which is at most the plan's objective).
        let (floor, lagrangian) = list_bounds(&problem, &initial, &preemptors, &Deadline::after(5.0))
            .expect("bounds");
        let model_optimum = batch.bound.expect("bound");
        prop_assert!(floor <= model_optimum + EPS, "floor {} above the optimum {}", floor, model_optimum);
        if let Some(l) = lagrangian {
            prop_assert!(l <= model_optimum + EPS, "Lagrangian bound {} above the optimum {}", l, model_optimum);
        }
        for e in &batch.events {
            prop_assert!(e.outcome != Outcome::Refused || !e.victims.is_empty(),
                "{} refused with no victims", e.preemptor);
            prop_assert!(e.outcome != Outcome::Refused || e.topology_qos == TopologyQos::Guaranteed,
                "{} ({:?}) refused", e.preemptor, e.topology_qos);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// `ilp`'s plans are byte-identical under `event_solver = "exact"` and `"milp"` (timings
    /// aside): the two solvers make the same choice on every tie, so the states they face never
    /// part.
    #[test]
    fn ilp_plans_are_identical_under_both_event_solvers((cluster_spec, mut spec) in batch_workload()) {
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let options = PlanOptions {
            planners: Some(vec!["ilp".to_string()]),
            seed: None,
            worst: None,
            ..PlanOptions::default()
        };
        spec.planners.event_solver = EventSolver::Exact;
        let Ok(exact) = engine::plan(&cluster, &spec, &options) else { return Ok(()) };
        spec.planners.event_solver = EventSolver::Milp;
        let milp = engine::plan(&cluster, &spec, &options).expect("plans as the search did");
        let strip = |r: &PlanReport| {
            let mut r = r.clone();
            for p in &mut r.planners {
                p.runtime_ms = 0.0;
                p.metrics.runtime_ms = 0.0;
                p.metrics.subsets_evaluated = 0;
                for e in &mut p.events {
                    // A cost unit of the search itself (servers the MILP solved), not a choice.
                    e.subsets_evaluated = 0;
                }
            }
            serde_json::to_string(&r).expect("serializes")
        };
        prop_assert_eq!(strip(&exact), strip(&milp));
    }
}

/// Random scheduling rules over a random instance: zone labels per pool, a taint on pool b,
/// a cordoned or NotReady server; per class a zone selector, tolerations and the preemption
/// policy.
#[allow(clippy::type_complexity)]
fn with_rules(
    (mut cluster, mut spec): (ClusterSpec, PreemptionSpec),
    (zones, taint_b, (named, policy)): ((usize, usize), bool, (usize, usize)),
    classes: Vec<(usize, bool, bool)>,
) -> (ClusterSpec, PreemptionSpec) {
    use coplan::spec::cluster::ServerRulesSpec;
    use coplan::spec::eligibility::{PreemptionPolicy, Taint, TaintEffect, Toleration};
    let zone = ["x", "y"];
    for (i, pool) in cluster.pool.iter_mut().enumerate() {
        let z = if i == 0 { zones.0 } else { zones.1 };
        pool.labels.insert("zone".into(), zone[z].into());
        if i == 1 && taint_b {
            pool.taints.push(Taint {
                key: "team".into(),
                value: "llm".into(),
                effect: TaintEffect::NoSchedule,
            });
        }
    }
    // A Topology Manager policy on the first server type (4: none given).
    use coplan::spec::cluster::TopologyPolicySpec as P;
    cluster.server_type[0].topology_policy = [
        Some(P::None),
        Some(P::BestEffort),
        Some(P::Restricted),
        Some(P::SingleNumaNode),
        None,
    ][policy];
    // 0: none, 1: a0 cordoned, 2: a1 NotReady (when it exists), 3: a0 NotReady.
    let which = named;
    let rule = |name: &str, unschedulable: bool, ready: bool| ServerRulesSpec {
        name: name.into(),
        labels: Default::default(),
        taints: vec![],
        unschedulable,
        ready,
    };
    match which {
        1 => cluster.server.push(rule("a0", true, true)),
        2 if cluster.pool[0].count > 1 => cluster.server.push(rule("a1", false, false)),
        3 => cluster.server.push(rule("a0", false, false)),
        _ => {}
    }
    for (class, (selector, tolerate, never)) in spec.workload.iter_mut().zip(classes) {
        if selector < 2 {
            class
                .node_selector
                .insert("zone".into(), zone[selector].into());
        }
        if tolerate {
            class.tolerations.push(Toleration {
                key: "team".into(),
                operator: coplan::spec::eligibility::TolerationOperator::Exists,
                value: String::new(),
                effect: None,
            });
        }
        if never {
            class.preemption_policy = PreemptionPolicy::Never;
        }
    }
    // Running pods stay where the spec puts them, whatever the rules say now.
    (cluster, spec)
}

proptest! {
    // Most random instances do not fit their running pods; twice the cases keep enough.
    #![proptest_config(ProptestConfig { cases: 2 * cases(), ..ProptestConfig::default() })]

    /// No planner, the exact ones included, places a pod where the filter refuses it or lets
    /// a `never` pod evict; the batch optimum still bounds every plan.
    #[test]
    fn no_planner_places_where_the_filter_refuses(
        base in (cluster(), workload()),
        node_rules in ((0..2usize, 0..2usize), any::<bool>(), (0..4usize, 0..5usize)),
        class_rules in prop::collection::vec((0..3usize, any::<bool>(), prop::bool::weighted(0.25)), 3),
    ) {
        let (cluster_spec, spec) = with_rules(base, node_rules, class_rules);
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let classes: std::collections::BTreeMap<String, usize> = spec
            .workload
            .iter()
            .enumerate()
            .map(|(i, w)| (w.name.clone(), i))
            .collect();
        let batch = report.planners.iter().find(|p| p.name == "ilp-batch").expect("ran");
        let bound = batch.bound.expect("a solved batch has a bound");
        for p in &report.planners {
            prop_assert!(bound <= p.objective.expect("objective") + EPS, "{}", p.name);
            for e in &p.events {
                // Preemptor names are `<class>-<index>`.
                let class = e.preemptor.rsplit_once('-').map(|(c, _)| c).unwrap_or_default();
                let ci = classes[class];
                if let Some(node) = &e.node {
                    let server = cluster.server_id(node).expect("a server of the cluster");
                    let why = coplan::topology::eligibility::Eligibility::why(&cluster, &spec, ci, server);
                    prop_assert!(why.is_none(), "{} put {} on {}: {:?}", p.name, e.preemptor, node, why);
                }
                if spec.workload[ci].preemption_policy == coplan::spec::eligibility::PreemptionPolicy::Never {
                    prop_assert!(e.victims.is_empty(), "{}: {} evicts", p.name, e.preemptor);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// PodDisruptionBudgets over the classes of a contested, filled cluster. Hard
    /// (`respect_pdb`): no plan violates one (the verifier checks every eviction), and the
    /// batch's bound still bounds every plan. Soft: the plans are counted; a hard plan is
    /// never below the soft batch's bound (it solves a restriction of the same problem).
    #[test]
    fn hard_budgets_are_never_exceeded_and_the_batch_still_bounds(
        (cluster_spec, spec) in batch_workload(),
        budgets in prop::collection::vec((0..4usize, 0..=1i64), 1..=4),
    ) {
        let mut spec = spec;
        spec.disruption_budget = budgets
            .iter()
            .enumerate()
            .map(|(i, &(w, allowed))| DisruptionBudget {
                name: format!("ns/pdb-{i}"),
                pods: Vec::new(),
                workloads: vec![format!("w{w}")],
                disruptions_allowed: Some(allowed),
                min_available: None,
                max_unavailable: None,
            })
            .collect();
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(soft) = run(&cluster, &spec) else { return Ok(()) };
        spec.planners.respect_pdb = true;
        let hard = run(&cluster, &spec).expect("the same instance");
        let soft_bound = soft
            .planners
            .iter()
            .find(|p| p.name == "ilp-batch")
            .and_then(|p| p.bound)
            .expect("a solved batch has a bound");
        let batch = hard.planners.iter().find(|p| p.name == "ilp-batch").expect("ran");
        let bound = batch.bound.expect("a solved batch has a bound");
        for p in &hard.planners {
            prop_assert_eq!(p.metrics.pdb_violations, 0, "{} violates a hard budget", p.name);
            let objective = p.objective.expect("objective");
            prop_assert!(bound <= objective + EPS, "{} scores {} below the bound {}", p.name, objective, bound);
            prop_assert!(soft_bound <= objective + EPS, "{} scores {} below the soft bound {}", p.name, objective, soft_bound);
        }
    }
}

/// `base` with devices of two kinds on type `t0` (whole GPUs on PCIe roots, and a group of
/// slices `mig-a`), and classes asking for a kind and a claim constraint.
fn with_devices(
    (mut cluster, mut spec): (ClusterSpec, PreemptionSpec),
    (slices, roots): (usize, usize),
    asks: Vec<(bool, usize)>,
) -> (ClusterSpec, PreemptionSpec) {
    use coplan::spec::cluster::DeviceGroupSpec;
    use coplan::spec::preemption::DeviceAlignment;
    if let Some(t) = cluster.server_type.iter_mut().find(|t| t.name == "t0") {
        let numa = t.sockets * t.numa_per_socket;
        t.gpu_pcie_root = (0..t.gpu_numa.len() as i64)
            .map(|g| g % roots.max(1) as i64)
            .collect();
        t.devices = vec![DeviceGroupSpec {
            kind: "mig-a".into(),
            numa: (0..slices as i64).map(|i| i % numa).collect(),
            pcie_root: Vec::new(),
            gpu_fraction: Some(1.0 / 7.0),
            memory_mib: None,
        }];
    }
    for (class, (sliced, alignment)) in spec.workload.iter_mut().zip(asks) {
        class.gpu_resource = sliced.then(|| "mig-a".to_string());
        class.device_alignment = [
            None,
            Some(DeviceAlignment::Numa),
            Some(DeviceAlignment::PcieRoot),
            Some(DeviceAlignment::NumaWithCores),
        ][alignment];
    }
    (cluster, spec)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2 * cases(), ..ProptestConfig::default() })]

    /// No planner, the exact ones included, places a pod on devices of another kind or
    /// outside its claim's `matchAttribute` group; the batch optimum still bounds every plan.
    #[test]
    fn no_planner_places_a_claim_on_another_kind_or_outside_its_constraint(
        base in (cluster(), workload()),
        devices in (0..=6usize, 1..=3usize),
        asks in prop::collection::vec((any::<bool>(), 0..4usize), 3),
    ) {
        let (cluster_spec, spec) = with_devices(base, devices, asks);
        prop_assume!(valid(&cluster_spec, &spec));
        let cluster = Cluster::from_spec(&cluster_spec);
        let Some(report) = run(&cluster, &spec) else { return Ok(()) };
        let class_of: std::collections::BTreeMap<&str, &coplan::spec::preemption::WorkloadClass> =
            spec.workload.iter().map(|w| (w.name.as_str(), w)).collect();
        let batch = report.planners.iter().find(|p| p.name == "ilp-batch").expect("ran");
        let bound = batch.bound.expect("a solved batch has a bound");
        for p in &report.planners {
            prop_assert!(bound <= p.objective.expect("objective") + EPS, "{}", p.name);
            for e in &p.events {
                let Some(node) = &e.node else { continue };
                if e.gpus.is_empty() {
                    continue;
                }
                let class = class_of[e.preemptor.rsplit_once('-').map(|(c, _)| c).unwrap_or_default()];
                let server = cluster.server_id(node).expect("a server");
                let t = cluster.type_of(server);
                let kind = cluster.kind_id(class.gpu_kind());
                for &g in &e.gpus {
                    prop_assert_eq!(t.device_kind[g as usize], kind, "{}: {} on device {} of {}", p.name, e.preemptor, g, node);
                }
                let numas: std::collections::BTreeSet<usize> = e.gpus.iter().map(|&g| t.gpu_numa[g as usize]).collect();
                let roots: std::collections::BTreeSet<usize> = e.gpus.iter().map(|&g| t.device_pcie_root[g as usize]).collect();
                use coplan::spec::preemption::DeviceAlignment as A;
                match class.device_alignment {
                    Some(A::Numa) => prop_assert_eq!(numas.len(), 1, "{}: {}", p.name, e.preemptor),
                    Some(A::PcieRoot) => prop_assert_eq!(roots.len(), 1, "{}: {}", p.name, e.preemptor),
                    Some(A::NumaWithCores) => {
                        let all: std::collections::BTreeSet<usize> = numas
                            .iter()
                            .copied()
                            .chain(e.cores.iter().map(|&c| t.numa_of_core(c as usize)))
                            .collect();
                        prop_assert_eq!(all.len(), 1, "{}: {}", p.name, e.preemptor);
                    }
                    None => {}
                }
            }
        }
    }
}
