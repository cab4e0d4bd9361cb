//! Property tests on random small clusters and workloads. The exact side is the oracle: every
//! plan passes the verifier (inside `plan`), an optimal `ilp-batch` bounds every planner, every
//! decision is at least the per-event optimum on the state it faced, `ilp` equals brute force on
//! single-preemptor instances, the exact per-event search agrees with the per-event MILP,
//! `ilp-batch`'s lazy decomposition agrees with solving every subproblem, IMP evicts
//! minimum-cardinality victim sets, and output is deterministic.

mod batch;
mod optimality;
mod scheduling_rules;

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
    Admission, DisruptionBudget, EventSolver, FillSpec, ImpScope, PreemptEntry, PreemptionSpec,
    PriorityNorm, RunningPod, TopologyQos, WorkloadClass,
};
use coplan::spec::{ClusterSpec, Penalty, ServerTypeSpec, SpecKind};
use coplan::topology::{Cluster, ServerId};
use proptest::prelude::*;

use crate::common::{self, cases, two_pools};

const PLANNERS: [&str; 6] = common::fixtures::EVERY_PREEMPTION_PLANNER;
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
            topology_qos: common::topology_qos(qos),
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
                spec.preempt = common::preempt_entries(preempt);
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
        allocator: common::fill_allocator(allocator),
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
                        topology_qos: common::topology_qos(qos),
                        preemptible: true,
                        ..Default::default()
                    })
                    .collect();
                let mut spec: PreemptionSpec =
                    toml::from_str("kind = \"preemption\"\nworkload = []").expect("base spec");
                spec.kind = SpecKind::Preemption;
                spec.workload = classes;
                spec.preempt = common::preempt_entries(preempt);
                spec.fill = Some(fill_spec(&format!("w{filler}"), 1.0, allocator, 5));
                spec.planners.ilp_time_limit_s = 60.0;
                spec.simulation.admission = admission(bind);
                (cluster, spec)
            },
        )
}
