use super::*;
use crate::plan::preemption::PreemptionMetrics;
use crate::preempt::problem::Decision;

fn report(
    name: &str,
    status: PlanStatus,
    objective: Option<f64>,
    bound: Option<f64>,
) -> PreemptionPlannerReport {
    PreemptionPlannerReport {
        name: name.into(),
        role: if name == "ilp-batch" {
            PlannerRole::BatchReference
        } else {
            PlannerRole::Candidate
        },
        status,
        objective,
        gap: None,
        gap_is_bound: false,
        bound,
        decision_gap: None,
        worst: None,
        runtime_ms: 0.0,
        truncated: false,
        metrics: PreemptionMetrics {
            preemptions: 1,
            ..metrics::compute(&|_, _| 1.0, &[], None)
        },
        events: Vec::new(),
    }
}

#[test]
fn gaps_use_the_batch_optimum_or_its_bound() {
    let mut optimal = vec![
        report("k8s-default", PlanStatus::Heuristic, Some(150.0), None),
        report("ilp-batch", PlanStatus::Optimal, Some(100.0), Some(100.0)),
    ];
    apply_gaps(&mut optimal);
    assert_eq!(optimal[0].gap, Some(0.5));
    assert!(!optimal[0].gap_is_bound);
    assert_eq!(optimal[1].gap, Some(0.0));

    // A proven optimum whose solver value differs from its replay in the last digits is
    // still the reference: exact gaps, its own gap 0.
    let noisy_bound = reported_bound(PlanStatus::Optimal, Some(100.0 - 1e-9), Some(100.0));
    let mut noisy = vec![
        report("k8s-default", PlanStatus::Heuristic, Some(150.0), None),
        report("ilp-batch", PlanStatus::Optimal, Some(100.0), noisy_bound),
    ];
    apply_gaps(&mut noisy);
    assert_eq!(noisy[0].gap, Some(0.5));
    assert!(!noisy[0].gap_is_bound, "no ≤ on a proven optimum");
    assert_eq!(noisy[1].gap, Some(0.0));

    let mut stopped = vec![
        report("k8s-default", PlanStatus::Heuristic, Some(150.0), None),
        report("ilp-batch", PlanStatus::TimeLimit, Some(140.0), Some(120.0)),
    ];
    apply_gaps(&mut stopped);
    assert_eq!(stopped[0].gap, Some(0.25));
    assert!(
        stopped[0].gap_is_bound,
        "a time-limited reference gives an upper bound"
    );

    let mut none = vec![
        report("k8s-default", PlanStatus::Heuristic, Some(150.0), None),
        report("ilp-batch", PlanStatus::TimeLimit, None, None),
    ];
    apply_gaps(&mut none);
    assert_eq!(none[0].gap, None, "no incumbent and no bound: no gap");

    let mut tiny = vec![report(
        "ilp-batch",
        PlanStatus::Optimal,
        Some(0.4),
        Some(0.4),
    )];
    apply_gaps(&mut tiny);
    assert_eq!(
        tiny[0].gap,
        Some(0.0),
        "max(1, |reference|) keeps small references sane"
    );
}

#[test]
fn only_proven_bounds_are_reported() {
    use PlanStatus::*;
    assert_eq!(reported_bound(Optimal, None, Some(10.0)), Some(10.0));
    assert_eq!(
        reported_bound(Optimal, Some(10.0 - 1e-12), Some(10.0)),
        Some(10.0),
        "a proven optimum is its own bound, whatever the solver's last digits"
    );
    assert_eq!(
        reported_bound(Optimal, Some(9.5), Some(10.0)),
        Some(9.5),
        "a replay dearer than the solver's optimum keeps the solver's bound"
    );
    assert_eq!(
        reported_bound(TimeLimit, None, Some(10.0)),
        None,
        "an incumbent is not a bound"
    );
    assert_eq!(reported_bound(TimeLimit, Some(8.0), Some(10.0)), Some(8.0));
    assert_eq!(reported_bound(NoSolution, None, None), None);
    assert_eq!(reported_bound(Heuristic, Some(1.0), Some(10.0)), None);
}

/// A joint planner whose solver found nothing before its deadline.
struct NothingFound;
impl PreemptionPlanner for NothingFound {
    fn name(&self) -> &'static str {
        "nothing-found"
    }
    fn joint(&self) -> bool {
        true
    }
    fn decide(&self, _: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        Ok(Decision::default())
    }
    fn decide_batch(
        &self,
        _: &Problem<'_>,
        _: &ClusterState,
        _: &[Preemptor],
        _: Option<&[AppliedDecision]>,
    ) -> Result<BatchDecision, PlanningError> {
        Ok(BatchDecision {
            decisions: Vec::new(),
            status: PlanStatus::TimeLimit,
            bound: None,
            objective: None,
        })
    }
}

#[test]
fn a_solve_without_incumbent_is_no_solution_not_an_error() {
    use crate::spec::{ClusterSpec, PoolSpec};
    let cluster_spec = ClusterSpec {
        kind: None,
        name: "one".into(),
        server_type: Vec::new(),
        pool: vec![PoolSpec {
            server_type: "gpu-2s4n8g".into(),
            count: 1,
            name_prefix: "n".into(),
            names: None,
            ..Default::default()
        }],
        ..Default::default()
    };
    let cluster = Cluster::from_spec(&cluster_spec);
    let spec: PreemptionSpec = toml::from_str(
        "kind = \"preemption\"\n[[workload]]\nname = \"w\"\npriority = 1\ngpus = 1\ncores = 1\n[[preempt]]\nworkload = \"w\"\ncount = 1\n",
    )
    .expect("valid");
    let problem = Problem::new(&cluster, &spec);
    let initial = ClusterState::empty(&cluster);
    let preemptors = scenario::preemptors(&cluster, &spec, &mut initial.clone());
    let run = run_joint(
        &problem,
        &NothingFound,
        &initial,
        &preemptors,
        None,
        None,
        &SharedOptima::default(),
    )
    .expect("runs");
    assert_eq!(run.status, PlanStatus::NoSolution);
    let none = PerEvent {
        decision_gap: false,
        worst: None,
    };
    let report = measure(&problem, &NothingFound, &run, none, &[]).expect("measured");
    assert_eq!((report.objective, report.bound), (None, None));
}
