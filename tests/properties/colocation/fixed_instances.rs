//! Co-location runs of fixed instances: the exact search under a time limit and in windows,
//! TTFT under more training, capacity against the cluster size.

use coplan::plan::colocation::ColocationPlannerReport;

use super::*;

/// The `ilp` run of a plan.
fn ilp_run(report: &ColocationPlan) -> &ColocationPlannerReport {
    report
        .planners
        .iter()
        .find(|p| p.name == "ilp")
        .expect("ilp listed")
}

/// A time-limited exact search reports `time_limit` with its incumbent (a verified schedule),
/// and the plan's bound stays a valid lower bound of it.
#[test]
fn a_time_limited_exact_search_reports_time_limit() {
    let mut spec = tiny(3, 2, 12, 0.25, 3, 2, 0.5, false, 100);
    spec.planners.ilp_time_limit_s = 1e-6;
    let report = plan(&cluster(), &spec, None, None, Some(3)).expect("runs");
    let ilp = ilp_run(&report);
    assert_eq!(ilp.status, coplan::plan::PlanStatus::TimeLimit);
    assert!(ilp.bound.is_none(), "an incumbent is not a bound");
    let bound = report.bound.expect("the bounds need no solver time");
    assert!(ilp.objective.expect("an incumbent") >= bound - 1e-9);
}

/// Above `ilp_exact_max_tasks` the search runs rolling windows and says so.
#[test]
fn beyond_the_exact_size_ilp_runs_windows() {
    let mut spec = tiny(2, 2, 12, 0.25, 3, 2, 0.5, false, 100);
    spec.planners.ilp_exact_max_tasks = 4;
    spec.planners.ilp_window = 3;
    let report = plan(&cluster(), &spec, None, None, Some(5)).expect("runs");
    let ilp = ilp_run(&report);
    assert_eq!(ilp.status, coplan::plan::PlanStatus::Windowed);
    assert!(ilp.objective.expect("a schedule") >= report.bound.expect("bound") - 1e-9);
}

/// The windowed search honours the time limit: once it fires, each window keeps its first
/// dive, the run ends with a verified schedule, and the status says `time_limit` (never
/// `windowed`, whose schedule does not depend on the machine, nor `optimal`).
#[test]
fn a_time_limited_windowed_search_reports_time_limit() {
    let mut spec = tiny(3, 2, 12, 0.25, 3, 2, 0.5, false, 100);
    spec.planners.ilp_exact_max_tasks = 4;
    spec.planners.ilp_window = coplan::spec::limits::MAX_ILP_WINDOW;
    spec.planners.ilp_time_limit_s = 1e-6;
    let report = plan(&cluster(), &spec, None, None, Some(5)).expect("runs and verifies");
    let ilp = ilp_run(&report);
    assert_eq!(ilp.status, coplan::plan::PlanStatus::TimeLimit);
    assert!(ilp.bound.is_none(), "a schedule cut short is not a bound");
    assert!(ilp.objective.expect("a schedule") >= report.bound.expect("bound") - 1e-9);
}

/// Training shares the nodes' stages with inference under `mix-rr`: with the same inference
/// arrivals (the task set draws them before the training tasks), more training makes the
/// requests wait longer for their prefills.
#[test]
fn more_training_means_longer_ttft_for_mix_rr() {
    let ttft = |rate: f64| {
        let mut spec = base();
        spec.training.rate = rate;
        spec.planners.run = vec!["mix-rr".into()];
        let r = plan(&cluster(), &spec, None, None, Some(1)).expect("runs");
        let events = &r.planners[0].events;
        let m = r.planners[0].metrics.clone().expect("metrics");
        let responses: Vec<f64> = events
            .iter()
            .filter(|e| e.kind == "inference")
            .filter_map(|e| e.start_s.map(|s| s - e.arrival_s))
            .collect();
        let mean_wait = responses.iter().sum::<f64>() / responses.len() as f64;
        (m.ttft_p50_s.unwrap_or(0.0), mean_wait, m.inference_requests)
    };
    let (none, light, heavy) = (ttft(0.0), ttft(0.3), ttft(0.7));
    assert_eq!(none.2, heavy.2, "the same requests");
    assert!(
        none.0 < light.0 && light.0 < heavy.0,
        "TTFT p50 at training rates 0, 0.3, 0.7: {none:?} {light:?} {heavy:?}"
    );
    assert!(none.1 < light.1 && light.1 < heavy.1);
}

/// Capacity grows with the cluster, and `load` turns into that fraction of SEPARATE's rate.
#[test]
fn capacity_scales_with_nodes_and_load_is_a_fraction_of_separate_capacity() {
    use coplan::colocate::capacity::{Arrivals, resolve_load, sustainable_rate};
    use coplan::colocate::registry;
    let mix_rr = registry::planner("mix-rr").expect("mix-rr");
    let mut small = base();
    small.inference.count = 200;
    small.nodes = Some(2);
    let mut large = small.clone();
    large.nodes = Some(4);
    let c = cluster();
    let two =
        sustainable_rate(&c, &small, &Arrivals::Synthetic, mix_rr.as_ref(), 1).expect("probes");
    let four =
        sustainable_rate(&c, &large, &Arrivals::Synthetic, mix_rr.as_ref(), 1).expect("probes");
    assert!(
        two.rate_rps > 0.0 && four.rate_rps > 1.5 * two.rate_rps,
        "{two:?} {four:?}"
    );
    assert!(
        two.probes.iter().any(|p| !p.stable),
        "the search bracketed the rate"
    );
    let separate = registry::planner("separate").expect("separate");
    let capacity = sustainable_rate(
        &c,
        &small,
        &Arrivals::Synthetic,
        separate.as_ref(),
        small.planners.seed,
    )
    .expect("probes")
    .rate_rps;
    small.inference.load = Some(0.5);
    let resolved = resolve_load(&c, &small, None).expect("resolves");
    let rate = resolved.inference.arrival.as_ref().map(|a| a.rate_rps);
    assert_eq!(rate, Some(0.5 * capacity));
    assert_eq!(resolved.inference.load, None);
}
