//! Every planner on random instances: verified, bounded by the batch optimum, deterministic;
//! `ilp` against brute force, IMP's minimum victim sets, parallel against sequential
//! decisions, the exact and MILP per-event optima, the lazy and full batch decompositions.

use super::*;

proptest! {
    // COPLAN_PROPTEST_CASES=2000 cargo test --release --test properties plans:: searches longer.
    #![proptest_config(common::proptest_config(cases()))]

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
    #![proptest_config(common::proptest_config(cases()))]

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
    #![proptest_config(common::proptest_config(cases()))]

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
    #![proptest_config(common::proptest_config(cases()))]

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
            PreemptEntry::pods_of("w1", first),
            PreemptEntry::pods_of("w2", second),
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
