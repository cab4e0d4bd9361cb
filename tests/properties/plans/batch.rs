//! The batch optimum on instances built to stress it: a proven batch is its own replay and
//! below every planner; `ilp` plans alike under both event solvers.

use super::*;

proptest! {
    // At least 500 cases: the batch optimum must hold on every one (DESIGN §12.2).
    #![proptest_config(common::proptest_config(cases().max(500)))]

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
    #![proptest_config(common::proptest_config(cases()))]

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
