//! Release benchmark of the preemption planners on the paper preset (100 × rtx4090-8g filled to
//! saturation, 50 preemptors): per-decision time and subsets evaluated of each heuristic, and
//! the per-event solve time of `ilp`, measured side by side in one run over several fill seeds.
//!
//! Run: `cargo bench --bench preemption` (add `-- --seeds 5 --repeats 31` to change the sample,
//! `-- --workload examples/workloads/paper-preemption-kwok.toml` for the paper's set-up,
//! `-- --cluster examples/clusters/mixed-10k.toml` for another cluster: the workload's
//! `[[running]]` pods, which name the paper cluster's servers, are then dropped and `[fill]`
//! alone fills it; `--planners a,b` to time only some planners; `--no-cold` to skip the samples with scan memos
//! dropped; `--parallel-min-servers N` to
//! move the threshold of the per-server parallel path; `--milp-repeats N` to time the per-event
//! MILP N times per state; `--simulate` to time the workload's default `simulate` as well).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{arg_or, flag, number_arg};
use coplan::plan::preemption::Preemptor;
use coplan::preempt::apply::apply;
use coplan::preempt::planner::PreemptionPlanner;
use coplan::preempt::problem::{DecisionPoint, Problem};
use coplan::preempt::registry::registry;
use coplan::preempt::scenario;
use coplan::spec::{self, Expect, SourceFile, Spec};
use coplan::topology::state::ClusterState;
use coplan::topology::{Cluster, ServerId};

fn load(rel: &str) -> Spec {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    spec::load(SourceFile::new(rel, text), Expect::Any)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .spec
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn point<'a>(
    problem: &'a Problem<'a>,
    state: &'a ClusterState,
    preemptor: &'a Preemptor,
) -> DecisionPoint<'a> {
    DecisionPoint {
        problem,
        state,
        preemptor,
    }
}

struct Row {
    name: &'static str,
    /// Per decision, the median time on the state as the sequence left it.
    times_us: Vec<f64>,
    /// The same with every scan memo dropped (a first decision on a fresh state).
    cold_us: Vec<f64>,
    subsets: Vec<u64>,
}

/// The run's sample and what it is taken on, from the command line.
struct Setup {
    seeds: usize,
    repeats: usize,
    cluster_path: String,
    workload_path: String,
    /// `--planners a,b`, empty for every planner.
    only: String,
    no_cold: bool,
}

impl Setup {
    fn chosen(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.split(',').any(|n| n == name)
    }
}

fn main() {
    let setup = Setup {
        seeds: number_arg("--seeds", 3),
        repeats: number_arg("--repeats", 15),
        cluster_path: arg_or("--cluster", "examples/clusters/paper-4090-x100.toml"),
        workload_path: arg_or("--workload", "examples/workloads/paper-preemption.toml"),
        only: arg_or("--planners", ""),
        no_cold: flag("--no-cold"),
    };
    let (seeds, repeats) = (setup.seeds, setup.repeats);
    let Spec::Cluster(cluster_spec) = load(&setup.cluster_path) else {
        panic!("cluster expected")
    };
    let Spec::Preemption(mut workload) = load(&setup.workload_path) else {
        panic!("preemption workload expected")
    };
    if setup.cluster_path != "examples/clusters/paper-4090-x100.toml" {
        workload.running.clear();
    }
    let cluster = Cluster::from_spec(&cluster_spec);
    let mut problem = Problem::new(&cluster, &workload);
    // `--parallel-min-servers N`: move the threshold of the per-server parallel path (a huge N
    // times the sequential path).
    problem.parallel_min_servers =
        number_arg("--parallel-min-servers", problem.parallel_min_servers);
    let planners = registry();
    let mut rows: Vec<Row> = planners
        .iter()
        .filter(|p| !p.joint() && setup.chosen(p.name()))
        .map(|planner| time_planner(planner.as_ref(), &problem, &setup))
        .collect();
    println!(
        "{} on {} ({} servers), fill seeds 1..={seeds}, {} decisions per planner, median of {repeats} repeats per decision (ilp: {})\n",
        setup.workload_path,
        setup.cluster_path,
        cluster.servers.len(),
        rows.first().map_or(0, |r| r.times_us.len()),
        repeats.min(5)
    );
    print_rows(&mut rows);
    print_goals(&rows);
    if setup.chosen("k8s-default") && setup.chosen("k8s-nrt") {
        paired_default_and_nrt(&cluster, &problem, seeds, repeats);
    }
    if setup.chosen("ilp") {
        per_event_solvers(&problem, seeds, repeats, number_arg("--milp-repeats", 3));
    }
    if flag("--simulate") {
        default_simulation(&cluster, &workload);
    }
    if !setup.only.is_empty() {
        return;
    }
    // End to end, as `coplan plan` runs it (one seed, all planners, gaps and verification).
    let t0 = Instant::now();
    let report =
        coplan::preempt::planning::plan(&cluster, &workload, &Default::default()).expect("plan");
    println!(
        "\ncoplan plan, all {} planners with gaps and verification, seed 1: {:.2} s",
        report.planners.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// One planner's row: every decision of every seed's sequence, timed on the state as the
/// sequence left it and (unless `--no-cold`) with every scan memo dropped.
fn time_planner(planner: &dyn PreemptionPlanner, problem: &Problem<'_>, setup: &Setup) -> Row {
    let (cluster, workload) = (problem.cluster, problem.spec);
    let mut row = Row {
        name: planner.name(),
        times_us: Vec::new(),
        cold_us: Vec::new(),
        subsets: Vec::new(),
    };
    let reps = if planner.name() == "ilp" {
        setup.repeats.min(5)
    } else {
        setup.repeats
    };
    // Two passes over the same sequences of decisions: in the first, each sample decides
    // on the state as the sequence left it, scan memos included (the memos the first
    // sample fills on servers whose memo the sequence had emptied are emptied again
    // before the next); in the second, on a copy with every memo dropped, as a first
    // decision on a fresh state would. Cloning large states between samples disturbs the
    // allocator and the caches, so the passes are apart.
    for pass_cold in [false, true] {
        if pass_cold && setup.no_cold {
            continue;
        }
        for seed in 1..=setup.seeds as u64 {
            let mut state =
                scenario::initial_state(cluster, workload, Some(seed)).expect("valid preset");
            let preemptors = scenario::preemptors(cluster, workload, &mut state);
            for p in &preemptors {
                let median_us = sample_decision(planner, problem, &mut state, p, reps, pass_cold);
                let decision = planner.decide(&point(problem, &state, p)).expect("decides");
                if pass_cold {
                    row.cold_us.push(median_us);
                } else {
                    row.times_us.push(median_us);
                    row.subsets.push(decision.subsets_evaluated);
                }
                apply(problem, &mut state, p, &decision).expect("applies");
            }
        }
    }
    row
}

/// The median microseconds of `reps` decisions of `p` on `state` (on a copy with every memo
/// dropped when `cold`), leaving `state`'s memos as the sequence left them.
fn sample_decision(
    planner: &dyn PreemptionPlanner,
    problem: &Problem<'_>,
    state: &mut ClusterState,
    p: &Preemptor,
    reps: usize,
    cold: bool,
) -> f64 {
    let stale: Vec<ServerId> = problem
        .servers()
        .filter(|&s| state.memo(s).is_empty())
        .collect();
    let mut filled: Option<Vec<ServerId>> = None;
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let copy = cold.then(|| {
            let mut copy = state.clone();
            copy.forget_memos();
            copy
        });
        for &s in filled.iter().flatten() {
            state.forget_memo(s);
        }
        let at = point(problem, copy.as_ref().unwrap_or(state), p);
        let t0 = Instant::now();
        let _ = planner.decide(&at).expect("decides");
        samples.push(t0.elapsed().as_secs_f64() * 1e6);
        if filled.is_none() {
            let now_filled = stale.iter().copied();
            let now_filled = now_filled.filter(|&s| !state.memo(s).is_empty());
            filled = Some(now_filled.collect());
        }
    }
    for &s in filled.iter().flatten() {
        state.forget_memo(s);
    }
    samples.sort_by(f64::total_cmp);
    percentile(&samples, 0.5)
}

/// The table of every planner's per-decision times and subsets evaluated.
fn print_rows(rows: &mut [Row]) {
    println!(
        "| planner | median per decision | p90 | max | median, memos dropped | mean subsets evaluated | total subsets |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        r.times_us.sort_by(f64::total_cmp);
        r.cold_us.sort_by(f64::total_cmp);
        let total: u64 = r.subsets.iter().sum();
        let fmt = |us: f64| {
            if us >= 1000.0 {
                format!("{:.2} ms", us / 1000.0)
            } else {
                format!("{us:.1} µs")
            }
        };
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {} |",
            r.name,
            fmt(percentile(&r.times_us, 0.5)),
            fmt(percentile(&r.times_us, 0.9)),
            fmt(percentile(&r.times_us, 1.0)),
            fmt(percentile(&r.cold_us, 0.5)),
            total as f64 / r.subsets.len().max(1) as f64,
            total
        );
    }
}

/// The goals' figures: `flextopo-imp` against `flextopo-exhaustive`, and `ilp` per event.
fn print_goals(rows: &[Row]) {
    let find = |n: &str| rows.iter().find(|r| r.name == n);
    if let (Some(imp), Some(exh)) = (find("flextopo-imp"), find("flextopo-exhaustive")) {
        let (a, b): (u64, u64) = (imp.subsets.iter().sum(), exh.subsets.iter().sum());
        let (ta, tb) = (
            percentile(&imp.times_us, 0.5),
            percentile(&exh.times_us, 0.5),
        );
        println!(
            "\nflextopo-imp / flextopo-exhaustive: subsets {:.3}×, median time {:.3}× (goal: subsets ≤ 0.5×)",
            a as f64 / b.max(1) as f64,
            ta / tb
        );
        println!(
            "flextopo-imp median per decision: {:.1} µs (goal ≤ 20 µs)",
            ta
        );
    }
    if let Some(ilp) = find("ilp") {
        println!(
            "ilp median per event: {:.3} ms (goal ≤ 0.5 ms)",
            percentile(&ilp.times_us, 0.5) / 1000.0
        );
    }
}

/// `k8s-nrt` against `k8s-default` on the same states (those `k8s-nrt`'s plan faces): the
/// per-decision ratio of the two, so that a different trajectory does not enter the ratio.
fn paired_default_and_nrt(cluster: &Cluster, problem: &Problem<'_>, seeds: usize, repeats: usize) {
    let (Some(default), Some(nrt)) = (
        coplan::preempt::registry::planner("k8s-default"),
        coplan::preempt::registry::planner("k8s-nrt"),
    ) else {
        return;
    };
    let time = |planner: &dyn coplan::preempt::planner::PreemptionPlanner,
                at: &DecisionPoint<'_>| {
        let mut samples: Vec<f64> = (0..repeats)
            .map(|_| {
                let t0 = Instant::now();
                let _ = planner.decide(at).expect("decides");
                t0.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        percentile(&samples, 0.5)
    };
    let (mut d_times, mut n_times) = (Vec::new(), Vec::new());
    for seed in 1..=seeds as u64 {
        let mut state =
            scenario::initial_state(cluster, problem.spec, Some(seed)).expect("valid preset");
        let preemptors = scenario::preemptors(problem.cluster, problem.spec, &mut state);
        for p in &preemptors {
            let at = DecisionPoint {
                problem,
                state: &state,
                preemptor: p,
            };
            d_times.push(time(default.as_ref(), &at));
            n_times.push(time(nrt.as_ref(), &at));
            let decision = nrt.decide(&at).expect("decides");
            apply(problem, &mut state, p, &decision).expect("applies");
        }
    }
    d_times.sort_by(f64::total_cmp);
    n_times.sort_by(f64::total_cmp);
    let (d, n) = (percentile(&d_times, 0.5), percentile(&n_times, 0.5));
    println!(
        "\nsame states ({} decisions of k8s-nrt's plans): k8s-default {d:.1} µs, k8s-nrt {n:.1} µs median per decision; ratio {:.2}× (goal ≤ 2×)",
        d_times.len(),
        n / d
    );
}

/// The per-event optimum by both solvers on the same states: every state a sequential planner
/// faces in its plan (those `decision_gap` solves on), per state the median of `repeats`
/// exact searches and of `milp_repeats` MILP solves. Checks that both reach the same cost,
/// counts the decisions that differ (ties) and the servers the exact search handed to the MILP.
fn per_event_solvers(problem: &Problem<'_>, seeds: usize, repeats: usize, milp_repeats: usize) {
    use coplan::preempt::exact::event_exact::{NODE_BUDGET, exact_optimum_with_stats};
    use coplan::preempt::exact::per_event::milp_event_optimum as milp_optimum;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        percentile(&v, 0.5)
    };
    let (mut exact_us, mut milp_us) = (Vec::new(), Vec::new());
    let (mut states, mut differ, mut fallbacks, mut nodes, mut searched) = (0u64, 0u64, 0, 0, 0);
    for planner in registry().iter().filter(|p| !p.joint()) {
        for seed in 1..=seeds as u64 {
            let mut state =
                scenario::initial_state(problem.cluster, problem.spec, Some(seed)).expect("valid");
            let preemptors = scenario::preemptors(problem.cluster, problem.spec, &mut state);
            for p in &preemptors {
                let mut exact = None;
                exact_us.push(median(
                    (0..repeats)
                        .map(|_| {
                            let t0 = Instant::now();
                            let found = exact_optimum_with_stats(problem, &state, p, NODE_BUDGET)
                                .expect("exact search");
                            let us = t0.elapsed().as_secs_f64() * 1e6;
                            exact = Some(found);
                            us
                        })
                        .collect(),
                ));
                let mut milp = None;
                milp_us.push(median(
                    (0..milp_repeats.max(1))
                        .map(|_| {
                            let t0 = Instant::now();
                            milp = Some(milp_optimum(problem, &state, p).expect("MILP"));
                            t0.elapsed().as_secs_f64() * 1e6
                        })
                        .collect(),
                ));
                let (Some((exact, stats)), Some(milp)) = (exact, milp) else {
                    continue;
                };
                assert!(
                    (exact.cost - milp.cost).abs() <= 1e-9,
                    "{}: exact {} against MILP {}",
                    p.name,
                    exact.cost,
                    milp.cost
                );
                states += 1;
                differ += u64::from(
                    (exact.decision.server, &exact.decision.victims)
                        != (milp.decision.server, &milp.decision.victims),
                );
                fallbacks += stats.milp_fallbacks;
                nodes += stats.nodes;
                searched += stats.servers_searched;
                let decision = planner.decide(&point(problem, &state, p)).expect("decides");
                apply(problem, &mut state, p, &decision).expect("applies");
            }
        }
    }
    let (e, m) = (median(exact_us.clone()), median(milp_us.clone()));
    let p90 = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        percentile(&v, 0.9)
    };
    println!(
        "\nper-event optimum on the {states} states the sequential planners face (fill seeds 1..={seeds}): \
         exact {:.1} µs median (p90 {:.1} µs), MILP {:.2} ms median (p90 {:.2} ms): {:.0}× (goal ≤ 0.5 ms); \
         same cost on every state, {differ} decisions differ (ties), {:.1} servers searched and {:.0} nodes per event, \
         {fallbacks} MILP fallbacks",
        e,
        p90(exact_us),
        m / 1000.0,
        p90(milp_us) / 1000.0,
        m / e,
        searched as f64 / states.max(1) as f64,
        nodes as f64 / states.max(1) as f64,
    );
}

/// The workload's own `simulate` (its seeds, cycles and planners), as the CLI runs it, with
/// each planner's share of the CPU time.
fn default_simulation(cluster: &Cluster, workload: &coplan::spec::PreemptionSpec) {
    let options = coplan::sim::preemption::SimOptions::default();
    let t0 = Instant::now();
    let sim =
        coplan::sim::preemption::simulate(cluster, workload, &options, &|| {}).expect("simulates");
    let wall = t0.elapsed().as_secs_f64();
    let shares: Vec<String> = sim
        .planners
        .iter()
        .map(|p| format!("{} {:.1} s", p.name, p.totals.runtime_ms / 1000.0))
        .collect();
    println!(
        "\nsimulate, {} seeds × {} cycles, {} planners: {wall:.1} s wall ({} threads); planner time: {}",
        sim.seeds.len(),
        sim.cycles,
        sim.planners.len(),
        rayon::current_num_threads(),
        shares.join(", ")
    );
}
