//! `explain --task` of a co-location workload, at the library level: the offer records are
//! the planners' own (the recorded answer is the node the run used, LeMix's answer is its best
//! recorded score), the explained metrics are the run's, the objective terms add up to every
//! plan's objective, the output is deterministic, and recording changes no run.

use coplan::colocate::engine::DiscreteEventEngine;
use coplan::colocate::explain::{ExplainInput, explain_task, explain_tasks};
use coplan::colocate::planner::PlannerRun;
use coplan::colocate::planning::{plan, plan_with_worst};
use coplan::colocate::registry;
use coplan::colocate::setup::setup;
use coplan::plan::cancel::Cancel;
use coplan::plan::error::PlanningError;
use coplan::plan::explain_colocation::{OfferAnswer, OfferTerms, TaskExplanation};
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;

const CANDIDATES: [&str; 5] = ["separate", "mix-rr", "mix-luf", "lemix", "lemix-balanced"];

fn example<T: serde::de::DeserializeOwned>(rel: &str) -> T {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("example file");
    toml::from_str(&text).expect("valid example")
}

fn small() -> (Cluster, ColocationSpec) {
    let cluster: ClusterSpec = example("examples/clusters/a100-x16.toml");
    let spec: ColocationSpec = example("examples/workloads/colocation-small.toml");
    (Cluster::from_spec(&cluster), spec)
}

/// A smaller copy of `colocation-small` (fewer requests), for the tests that run `ilp`.
fn smaller() -> (Cluster, ColocationSpec) {
    let (cluster, mut spec) = small();
    spec.inference.count = 60;
    (cluster, spec)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// What `explain` reads for `planners` (`None`: the spec's own), without a trace or a seed.
fn explain_input<'a>(
    cluster: &'a Cluster,
    spec: &'a ColocationSpec,
    planners: Option<&'a [String]>,
) -> ExplainInput<'a> {
    ExplainInput {
        cluster,
        spec,
        trace: None,
        planners,
        seed: None,
        cancel: Cancel::never(),
    }
}

fn every_task(
    cluster: &Cluster,
    spec: &ColocationSpec,
    planners: &[String],
) -> Vec<TaskExplanation> {
    explain_tasks(&explain_input(cluster, spec, Some(planners)), None).expect("explained")
}

#[test]
fn recorded_answers_are_the_nodes_the_runs_used_and_lemix_takes_its_best_score() {
    let (cluster, spec) = small();
    let all = every_task(&cluster, &spec, &names(&CANDIDATES));
    assert!(!all.is_empty());
    for e in &all {
        for c in &e.planners {
            let run = c.run.as_ref().expect("candidates run");
            assert!(
                !c.offers.is_empty(),
                "{} never offered task {}",
                c.name,
                e.task.id
            );
            // Every offer before the last was a deferral; the last one placed the task.
            let (last, earlier) = c.offers.split_last().expect("offers");
            assert!(earlier.iter().all(|o| o.answer == OfferAnswer::Defer));
            assert_eq!(
                earlier.len() as u32,
                run.deferrals,
                "{} task {}",
                c.name,
                e.task.id
            );
            match last.answer {
                OfferAnswer::Node(n) => {
                    assert_eq!(run.node, Some(n), "{} task {}", c.name, e.task.id)
                }
                OfferAnswer::Defer => panic!("{} left task {} deferred", c.name, e.task.id),
            }
            for o in &c.offers {
                if let OfferTerms::Lemix(l) = &o.terms {
                    // The planner's own tie rule: the first node whose score beats the best
                    // so far by more than 1e-15.
                    let best = (0..l.nodes.len()).fold(0, |b, n| {
                        if l.nodes[n].score > l.nodes[b].score + 1e-15 {
                            n
                        } else {
                            b
                        }
                    });
                    assert_eq!(l.best, best, "{} task {}", c.name, e.task.id);
                    let expected = if l.deferral.defer {
                        OfferAnswer::Defer
                    } else {
                        OfferAnswer::Node(best)
                    };
                    assert_eq!(o.answer, expected);
                    if l.deferral.defer {
                        let r = l.deferral.compared_response_s.expect("a compared response");
                        assert!(r > l.deferral.slo_s);
                    }
                }
            }
        }
    }
}

#[test]
fn explained_metrics_are_the_runs_and_the_terms_sum_to_every_objective() {
    let (cluster, spec) = small();
    let planners = names(&CANDIDATES);
    let all = every_task(&cluster, &spec, &planners);
    let planned = plan(&cluster, &spec, None, Some(&planners), None).expect("planned");
    let s = setup(&cluster, &spec, None, None);
    for (i, report) in planned.planners.iter().enumerate() {
        let objective = report.objective.expect("an objective");
        let sum: f64 = all
            .iter()
            .map(|e| e.planners[i].run.as_ref().expect("ran").objective_term)
            .sum();
        assert!(
            (sum - objective).abs() <= 1e-9 * objective.abs().max(1.0),
            "{}: terms sum to {sum}, the plan's objective is {objective}",
            report.name
        );
        // The run as the plan's events show it, task by task.
        let name = &report.name;
        let planner = registry::planner(name).expect("a planner");
        let PlannerRun::Ran { run, .. } = planner.run(&s, 0.0).expect("runs") else {
            panic!("{name} did not run");
        };
        for (e, event) in all.iter().zip(&report.events) {
            let explained = e.planners[i].run.as_ref().expect("ran");
            let o = &run.outcomes[e.task.id as usize];
            assert_eq!(event.task, e.task.id);
            assert_eq!(explained.node, event.node, "{name} task {}", e.task.id);
            assert_eq!(explained.completion_s, event.end_s);
            assert_eq!(explained.slo_met, event.slo_met);
            assert_eq!(explained.dropped, event.dropped);
            if !o.training && !o.dropped {
                let ttft = o.prefill_end_s.map(|p| p - o.arrival_s);
                assert_eq!(explained.ttft_s, ttft, "{name} task {}", e.task.id);
                assert_eq!(explained.response_s, ttft);
                let mut previous = o.prefill_end_s.expect("a prefill");
                let mut gaps = Vec::new();
                for &t in &o.token_times {
                    gaps.push(t - previous);
                    previous = t;
                }
                assert_eq!(explained.tokens_decoded, o.token_times.len());
                let mean = (!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64);
                assert_eq!(explained.tbt_mean_s, mean, "{name} task {}", e.task.id);
                assert_eq!(explained.tbt_max_s, gaps.iter().copied().reduce(f64::max));
            }
            if o.training && !o.dropped {
                assert_eq!(explained.response_s, o.end_s.map(|end| end - o.arrival_s));
                assert_eq!(explained.ttft_s, None);
            }
        }
    }
}

#[test]
fn recording_offers_leaves_every_run_as_it_was() {
    for (cluster, spec) in [small(), smaller()] {
        let s = setup(&cluster, &spec, None, None);
        for name in CANDIDATES {
            let planner = registry::planner(name).expect("a planner");
            let PlannerRun::Ran { run: plain, .. } = planner.run(&s, 0.0).expect("runs") else {
                panic!("{name} did not run");
            };
            let mut recording = planner.dispatcher(&s).expect("a dispatcher");
            assert!(recording.record_offers(), "{name} keeps no records");
            let recorded = DiscreteEventEngine::new(&s.config, &s.tasks).run(recording.as_mut());
            assert_eq!(plain, recorded, "{name}: recording changed the run");
            let records = recording.take_offer_records();
            let deferrals: u32 = recorded.outcomes.iter().map(|o| o.deferrals).sum();
            assert_eq!(records.len(), s.tasks.len() + deferrals as usize, "{name}");
            assert!(recording.take_offer_records().is_empty(), "taken once");
        }
    }
}

#[test]
fn ilp_column_and_worst_tasks_compare_with_ilps_schedule() {
    let (cluster, spec) = smaller();
    let planners = names(&["lemix", "mix-luf", "ilp"]);
    let input = explain_input(&cluster, &spec, Some(&planners));
    let all = explain_tasks(&input, None).expect("explained");
    let planned = plan(&cluster, &spec, None, Some(&planners), None).expect("planned");
    let ilp_report = planned
        .planners
        .iter()
        .find(|r| r.name == "ilp")
        .expect("ilp's row");
    assert!(all.iter().all(|e| e.planners.len() == 2));
    for (e, event) in all.iter().zip(&ilp_report.events) {
        assert_eq!(e.ilp.status, ilp_report.status);
        assert!(e.ilp.offers.is_empty());
        let run = e.ilp.run.as_ref().expect("ilp ran");
        assert_eq!(run.node, event.node);
        assert_eq!(run.completion_s, event.end_s);
    }
    let ilp_sum: f64 = all
        .iter()
        .map(|e| e.ilp.run.as_ref().map_or(0.0, |r| r.objective_term))
        .sum();
    let ilp_objective = ilp_report.objective.expect("an objective");
    assert!((ilp_sum - ilp_objective).abs() <= 1e-9 * ilp_objective.max(1.0));

    let worst = plan_with_worst(&cluster, &spec, None, Some(&planners), None, Some(5))
        .expect("planned")
        .worst
        .expect("worst tasks");
    assert_eq!(worst.ilp_status, ilp_report.status);
    assert_eq!(worst.planners.len(), 2);
    for p in &worst.planners {
        let i = all[0]
            .planners
            .iter()
            .position(|c| c.name == p.planner)
            .expect("a column");
        // The largest differences over every task with a response in both runs.
        let mut expected: Vec<(f64, u32)> = all
            .iter()
            .filter_map(|e| {
                let r = e.planners[i].run.as_ref()?.response_s?;
                let ri = e.ilp.run.as_ref()?.response_s?;
                Some(((r - ri).abs(), e.task.id))
            })
            .collect();
        expected.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        expected.truncate(5);
        let got: Vec<(f64, u32)> = p.tasks.iter().map(|t| (t.difference_s, t.task)).collect();
        assert_eq!(got, expected, "{}", p.planner);
        for t in &p.tasks {
            assert_eq!(t.difference_s, (t.response_s - t.ilp_response_s).abs());
        }
    }
}

#[test]
fn explanations_are_deterministic_and_unknown_tasks_name_the_range() {
    let (cluster, spec) = smaller();
    let input = explain_input(&cluster, &spec, None);
    let first = serde_json::to_string(&explain_task(&input, 7).expect("explained")).expect("json");
    let second = serde_json::to_string(&explain_task(&input, 7).expect("explained")).expect("json");
    assert_eq!(first, second);
    let tasks = setup(&cluster, &spec, None, None).tasks.len();
    match explain_task(&input, tasks as u32) {
        Err(PlanningError::OutOfRange(message)) => {
            assert!(
                message.contains(&format!("ids 0–{}", tasks - 1)),
                "{message}"
            );
        }
        other => panic!("expected an out-of-range error, got {other:?}"),
    }
}

#[test]
fn the_table_shows_every_offer_and_a_row_per_planner_and_ilp() {
    let (cluster, spec) = smaller();
    let input = explain_input(&cluster, &spec, None);
    let e = explain_task(&input, 3).expect("explained");
    let text = coplan::report::table::explain_colocation::colocation_task(&e);
    assert!(
        text.starts_with("task 3 of co-location plan `colocation-small`"),
        "{text}"
    );
    for c in &e.planners {
        assert!(
            text.contains(&format!("\n{} (heuristic):\n", c.name)),
            "{text}"
        );
    }
    // LeMix's per-node table and the summary's header and ilp row.
    assert!(text.contains("II (s)") && text.contains("score"), "{text}");
    assert!(
        text.contains("TTFT (s)") && text.contains("\nilp "),
        "{text}"
    );
    let worst = plan_with_worst(&cluster, &spec, None, None, None, Some(3))
        .expect("planned")
        .worst
        .expect("worst tasks");
    let text = coplan::report::table::explain_colocation::colocation_worst(&worst);
    for p in &worst.planners {
        assert!(text.contains(&format!("\n{}:\n", p.planner)), "{text}");
    }
    assert!(text.contains("|ΔR| (s)"), "{text}");
}
