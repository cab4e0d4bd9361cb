//! Release benchmark of co-location: LeMix node decisions per second on a 16-node,
//! 10 000-task instance, and end-to-end simulation time of one hour of the Azure conversation
//! trace on 16 nodes for every heuristic planner.
//!
//! Run: `cargo bench --bench colocation` (the Azure part reads
//! `../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv` or `$COPLAN_AZURE_TRACE`,
//! and is skipped when neither exists).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

mod common;

use common::{arg, azure_hour, example, flag, median, on_hour};
use coplan::colocate::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use coplan::colocate::lemix::{LemixPlanner, LemixScore};
use coplan::colocate::planner::PlannerRun;
use coplan::colocate::planning::candidate_run;
use coplan::colocate::registry;
use coplan::colocate::setup::{Setup, setup};
use coplan::plan::colocation::{ColocationRun, Task};
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;
use coplan::verify::colocation::verify_run;

/// Forwards to a planner and times its decisions alone.
struct Timed {
    inner: Box<dyn Dispatcher>,
    seconds: f64,
    decisions: u64,
}

impl Dispatcher for Timed {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let t0 = Instant::now();
        let a = self.inner.assign(view, task);
        self.seconds += t0.elapsed().as_secs_f64();
        self.decisions += 1;
        a
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        self.inner.on_training_done(completed)
    }
}

/// A digest of everything a run recorded (every op and outcome, times bit for bit), to check
/// that a faster engine or verifier leaves the runs exactly as they were. Ops are hashed GPU
/// by GPU, each GPU's in log order: the order of the log across GPUs is not part of a run
/// (ops of different nodes that end between two events may be logged node by node).
fn digest(run: &ColocationRun) -> u64 {
    let mut h = DefaultHasher::new();
    let stages = run.ops.iter().map(|o| o.stage + 1).max().unwrap_or(1);
    let mut by_gpu: Vec<Vec<u32>> = Vec::new();
    for (k, op) in run.ops.iter().enumerate() {
        let g = op.node * stages + op.stage;
        if by_gpu.len() <= g {
            by_gpu.resize(g + 1, Vec::new());
        }
        by_gpu[g].push(k as u32);
    }
    for k in by_gpu.into_iter().flatten() {
        let Some(op) = run.ops.get(k as usize) else {
            continue;
        };
        (op.node, op.stage, op.kind as u8).hash(&mut h);
        op.tasks.iter().for_each(|t| t.0.hash(&mut h));
        (op.start_s.to_bits(), op.end_s.to_bits()).hash(&mut h);
    }
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    for o in &run.outcomes {
        (o.task.0, o.training, o.node, o.arrival_s.to_bits()).hash(&mut h);
        (bits(o.start_s), bits(o.prefill_end_s), bits(o.end_s)).hash(&mut h);
        (o.dropped, o.offloaded, o.staleness, o.deferrals).hash(&mut h);
        o.token_times.iter().for_each(|t| t.to_bits().hash(&mut h));
    }
    h.finish()
}

fn main() {
    let mut cluster_spec: ClusterSpec = example("examples/clusters/a100-x16.toml");
    cluster_spec.pool[0].count = 16;
    let cluster = Cluster::from_spec(&cluster_spec);
    let mut spec: ColocationSpec = example("examples/workloads/colocation-small.toml");
    spec.nodes = Some(16);
    // 10 000 tasks: 7 000 inference requests at a rate 16 nodes can serve, 3 000 training.
    spec.inference.count = 7000;
    if let Some(a) = spec.inference.arrival.as_mut() {
        a.rate_rps = 16.0;
    }
    spec.training.rate = 0.3;
    let s = setup(&cluster, &spec, None, Some(1));
    // `--azure-only`: the Azure hour alone; `--planners a,b`: only these planners there.
    let azure_only = flag("--azure-only");
    let only: Vec<String> = arg("--planners")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    if !azure_only {
        decisions_and_whole_run(&s);
    }
    azure(&cluster, &spec, &only);
}

/// LeMix's decisions alone, and the whole 10 000-task simulation.
fn decisions_and_whole_run(s: &Setup) {
    println!(
        "instance: 16 nodes × {} stages, {} tasks",
        s.config.stages,
        s.tasks.len()
    );
    let mut rates = Vec::new();
    for _ in 0..5 {
        let mut timed = Timed {
            inner: Box::new(LemixPlanner::new(LemixScore::Faithful).dispatcher(s)),
            seconds: 0.0,
            decisions: 0,
        };
        let _ = DiscreteEventEngine::new(&s.config, &s.tasks).run(&mut timed);
        rates.push((
            timed.decisions as f64 / timed.seconds,
            timed.seconds / timed.decisions as f64,
        ));
    }
    let rate = median(rates.iter().map(|r| r.0).collect());
    println!(
        "lemix decisions alone: median {:.0} decisions/s ({:.2} µs per decision, incl. re-offers of deferred tasks)",
        rate,
        1e6 / rate
    );
    let mut runs = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        let Ok(Some(run)) = candidate_run("lemix", s) else {
            panic!("lemix runs")
        };
        runs.push((t0.elapsed().as_secs_f64(), run.outcomes.len()));
    }
    let whole = median(runs.iter().map(|r| r.0).collect());
    let decisions = runs[0].1 as f64;
    println!(
        "lemix, whole simulation incl. {decisions} node decisions: median {:.3} s → {:.0} decisions/s end to end",
        whole,
        decisions / whole
    );
}

/// The first hour of the Azure conversation trace, per planner.
fn azure(cluster: &Cluster, base: &ColocationSpec, only: &[String]) {
    let hour = match azure_hour() {
        Ok(hour) => hour,
        Err(path) => {
            println!("Azure trace not found at {path}: skipping the end-to-end hour");
            return;
        }
    };
    let spec = on_hour(base, &hour);
    let s = setup(cluster, &spec, Some(&hour), Some(1));
    println!(
        "\nAzure conv trace, first hour: {} requests + {} training tasks on 16 nodes",
        hour.len(),
        s.tasks.len() - hour.len()
    );
    println!(
        "| planner | median end-to-end simulation (3 runs) | tasks/s simulated | engine alone | verifier alone | ops | run digest |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for name in ["separate", "mix-rr", "mix-luf", "lemix"] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let times: Vec<f64> = (0..3)
            .map(|_| {
                let t0 = Instant::now();
                let _ = candidate_run(name, &s).expect("runs");
                t0.elapsed().as_secs_f64()
            })
            .collect();
        let m = median(times);
        // The same run split in two: the engine alone, then the verifier alone.
        let Some(planner) = registry::planner(name) else {
            panic!("{name} is a planner")
        };
        let mut engine = Vec::new();
        let mut verifier = Vec::new();
        let mut ops = 0;
        let mut sums = Vec::new();
        for _ in 0..3 {
            let t0 = Instant::now();
            let Ok(PlannerRun::Ran { run, .. }) = planner.run(&s, 0.0) else {
                panic!("{name} runs")
            };
            engine.push(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            verify_run(&s.config.bounds(), &s.tasks, &run).expect("the run verifies");
            verifier.push(t0.elapsed().as_secs_f64());
            ops = run.ops.len();
            sums.push(digest(&run));
        }
        sums.dedup();
        let [sum] = sums[..] else {
            panic!("{name}: runs differ from one another")
        };
        println!(
            "| {name} | {m:.3} s | {:.0} | {:.3} s | {:.3} s | {ops} | {sum:016x} |",
            s.tasks.len() as f64 / m,
            median(engine),
            median(verifier)
        );
    }
}
