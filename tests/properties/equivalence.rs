//! The fast searches choose exactly what the reference enumeration chooses: FlexTopo's pruned
//! IMP and its one-pass exhaustive evaluation against `flextopo::decide_reference`, and the
//! bounded dry runs of `k8s-default` and `k8s-nrt` against a dry run of every server, on random
//! saturated clusters of up to twelve servers of two types, with random Eq. 1 settings
//! (including levels that score alike), several victim priorities and start times, and
//! small budgets that force the fallback; on the sequential and the parallel (large-cluster)
//! paths; the fast searches reuse the scan memos of a sequence of decisions, the reference
//! scans afresh.

use coplan::preempt::apply::apply;
use coplan::preempt::flextopo::{Sourcing, decide_reference};
use coplan::preempt::k8s::{default as k8s_default, nrt as k8s_nrt};
use coplan::preempt::problem::Decision;
use coplan::preempt::problem::{DecisionPoint, Problem};
use coplan::preempt::scenario;
use coplan::spec::preemption::{
    Admission, FillSpec, ImpScope, LevelScores, PreemptionSpec, PriorityNorm, ScoreBasis,
    TopologyScore, TopologyScoreName, WorkloadClass,
};
use coplan::spec::{ClusterSpec, Penalty, ServerTypeSpec, SpecKind};
use coplan::topology::Cluster;
use proptest::prelude::*;

use crate::common;
use crate::common::{cases, server_type, two_pools};

fn server_type_strategy(i: usize) -> impl Strategy<Value = ServerTypeSpec> {
    (1..=2i64, 1..=2i64, 3..=8i64, 1..=2usize).prop_map(move |shape| {
        let penalty = Penalty {
            numa: 1.0,
            socket: 1.2,
            cross_socket: 3.2,
        };
        server_type(i, shape, penalty)
    })
}

fn cluster() -> impl Strategy<Value = ClusterSpec> {
    (
        server_type_strategy(0),
        server_type_strategy(1),
        1..=8i64,
        0..=4i64,
    )
        .prop_map(|(a, b, na, nb)| two_pools(a, b, na, nb))
}

/// Victim classes (preemptible, priorities 10–30) and preemptor classes (priority 100+).
fn class(i: usize, preemptible: bool) -> impl Strategy<Value = WorkloadClass> {
    (1..=3i64, 0..=2i64, 1..=6i64, 0..3usize).prop_map(move |(prio, gpus, cores, qos)| {
        WorkloadClass {
            name: format!("w{i}"),
            priority: if preemptible { prio * 10 } else { 100 + prio },
            gpus: if preemptible {
                gpus.min(1)
            } else {
                gpus.max(1)
            },
            cores,
            topology_qos: common::topology_qos(qos),
            preemptible,
            ..Default::default()
        }
    })
}

fn settings() -> impl Strategy<Value = (f64, TopologyScore, ScoreBasis, PriorityNorm, u64)> {
    (
        0..=4usize,
        0..3usize,
        any::<bool>(),
        0..3usize,
        prop_oneof![Just(100_000u64), 1..40u64],
    )
        .prop_map(|(alpha, score, victims_basis, norm, budget)| {
            let scores = [
                TopologyScore::Scores(LevelScores {
                    numa: 1.0,
                    socket: 0.8,
                    cross_socket: 0.467,
                }),
                TopologyScore::Named(TopologyScoreName::Calibrated),
                // Two levels tie: the chain decides between them.
                TopologyScore::Scores(LevelScores {
                    numa: 0.9,
                    socket: 0.9,
                    cross_socket: 0.1,
                }),
            ];
            (
                alpha as f64 / 4.0,
                scores[score],
                if victims_basis {
                    ScoreBasis::Victims
                } else {
                    ScoreBasis::Placement
                },
                [
                    PriorityNorm::Candidates,
                    PriorityNorm::Spec,
                    PriorityNorm::InverseSum,
                ][norm],
                budget,
            )
        })
}

fn workload() -> impl Strategy<Value = PreemptionSpec> {
    (
        (class(0, true), class(1, true), any::<bool>()),
        (class(2, false), class(3, false), 0..4usize),
        prop::collection::vec((2..4usize, 1..=6i64), 1..=2),
        (0..4usize, 1..=3i64, any::<u64>(), any::<bool>()),
        (settings(), any::<bool>()),
    )
        .prop_map(
            |(
                (v0, v1, one_priority),
                (p0, p1, variant),
                preempt,
                (allocator, churn_rounds, seed, bind),
                ((alpha, score, basis, norm, budget), node_scope),
            )| {
                let mut spec: PreemptionSpec =
                    toml::from_str("kind = \"preemption\"\nworkload = []").expect("base spec");
                spec.kind = SpecKind::Preemption;
                let mut v1 = v1;
                if one_priority {
                    v1.priority = v0.priority;
                }
                // Preemptor classes that differ in one input of the filter only (the scan
                // memos are kept per class): the same request with another QoS, or a priority
                // between the victims' (fewer potential victims).
                let mut p1 = p1;
                if variant == 1 || variant == 3 {
                    (p1.gpus, p1.cores) = (p0.gpus, p0.cores);
                }
                if variant >= 2 {
                    p1.priority = 25;
                }
                spec.workload = vec![v0, v1, p0, p1];
                spec.preempt = common::preempt_entries(preempt);
                spec.fill = Some(FillSpec {
                    mix: [("w0".to_string(), 1.0), ("w1".to_string(), 1.0)]
                        .into_iter()
                        .collect(),
                    target_gpu_utilization: 1.0,
                    allocator: common::fill_allocator(allocator),
                    churn_rounds,
                    seed,
                });
                spec.simulation.admission = if bind {
                    Admission::Bind
                } else {
                    Admission::Kubelet
                };
                spec.flextopo.alpha = alpha;
                spec.flextopo.topology_score = score;
                spec.flextopo.score_basis = basis;
                spec.flextopo.priority_norm = norm;
                spec.flextopo.max_subset_evaluations = budget;
                spec.flextopo.imp_scope = if node_scope {
                    ImpScope::Node
                } else {
                    ImpScope::Cluster
                };
                spec
            },
        )
}

fn valid(cluster: &ClusterSpec, spec: &PreemptionSpec) -> bool {
    coplan::spec::validate::cluster(cluster).is_empty()
        && coplan::spec::validate::preemption(spec).is_empty()
}

/// Every decision of `sourcing`'s planner, on the states its own plan reaches (with the scan
/// memos its earlier decisions left), equals the reference's on the same state without memos
/// (server, victims and whether the budget cut it short).
/// The planners under test: their registry name and their reference decision.
type Reference = fn(&DecisionPoint<'_>) -> Decision;

fn check(
    cluster_spec: &ClusterSpec,
    spec: &PreemptionSpec,
    sourcing: Sourcing,
    parallel: bool,
) -> Result<(), TestCaseError> {
    let name = match sourcing {
        Sourcing::IncrementalMinimal => "flextopo-imp",
        Sourcing::Exhaustive => "flextopo-exhaustive",
    };
    let reference: Reference = match sourcing {
        Sourcing::IncrementalMinimal => |at| decide_reference(at, Sourcing::IncrementalMinimal),
        Sourcing::Exhaustive => |at| decide_reference(at, Sourcing::Exhaustive),
    };
    check_planner(cluster_spec, spec, name, reference, parallel)
}

fn check_planner(
    cluster_spec: &ClusterSpec,
    spec: &PreemptionSpec,
    name: &str,
    reference: Reference,
    parallel: bool,
) -> Result<(), TestCaseError> {
    let cluster = Cluster::from_spec(cluster_spec);
    let mut problem = Problem::new(&cluster, spec);
    if parallel {
        problem.parallel_min_servers = 0;
    }
    let Ok(mut state) = scenario::initial_state(&cluster, spec, None) else {
        return Ok(());
    };
    let preemptors = scenario::preemptors(&cluster, spec, &mut state);
    let planner = coplan::preempt::registry::planner(name).expect("a planner");
    for p in &preemptors {
        let at = DecisionPoint {
            problem: &problem,
            state: &state,
            preemptor: p,
        };
        let fast = planner.decide(&at).expect("decides");
        // The reference decides on a copy without the scan memos the sequence has filled,
        // so that a stale or misapplied memo shows as a difference.
        let mut fresh = state.clone();
        fresh.forget_memos();
        let reference = reference(&DecisionPoint {
            state: &fresh,
            ..at
        });
        prop_assert_eq!(
            (&fast.server, &fast.victims, fast.truncated),
            (&reference.server, &reference.victims, reference.truncated),
            "{} on preemptor {}",
            name,
            p.name
        );
        apply(&problem, &mut state, p, &fast).expect("applies");
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(cases()))]

    #[test]
    fn pruned_imp_chooses_what_the_reference_chooses(cluster_spec in cluster(), spec in workload(), parallel in any::<bool>()) {
        prop_assume!(valid(&cluster_spec, &spec));
        check(&cluster_spec, &spec, Sourcing::IncrementalMinimal, parallel)?;
    }

    #[test]
    fn bounded_dry_runs_choose_what_every_server_dry_run_chooses(cluster_spec in cluster(), spec in workload(), parallel in any::<bool>()) {
        prop_assume!(valid(&cluster_spec, &spec));
        check_planner(&cluster_spec, &spec, "k8s-default", k8s_default::decide_reference, parallel)?;
        check_planner(&cluster_spec, &spec, "k8s-nrt", k8s_nrt::decide_reference, parallel)?;
    }

    #[test]
    fn exhaustive_evaluation_chooses_what_the_reference_chooses(cluster_spec in cluster(), spec in workload(), parallel in any::<bool>()) {
        prop_assume!(valid(&cluster_spec, &spec));
        check(&cluster_spec, &spec, Sourcing::Exhaustive, parallel)?;
    }
}
