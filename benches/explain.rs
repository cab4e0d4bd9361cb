//! The explain goals (docs/performance.md): `coplan explain --event N` of one event on the
//! paper preset within 0.2 s, and `plan --worst 10` within 10 % of `plan`, as a user's plain
//! run sees them: the `coplan` binary, cold processes, the example's own planners. Medians of
//! `--runs` (default 7); `plan` and `plan --worst 10` alternate within each run.
//!
//! Then the co-location side: `explain --task 3` and `plan` against `plan --worst 10` on the
//! default co-location example.
//!
//! `cargo bench --bench explain [-- --runs N]`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{count_arg, median, root, timed_run};
use coplan::preempt::planning::{self, PlanOptions};
use coplan::session::load::{Workload, load_pair};

const CLUSTER: &str = "examples/clusters/paper-4090-x100.toml";
const WORKLOAD: &str = "examples/workloads/paper-preemption.toml";

fn main() {
    let runs: usize = count_arg("--runs", 7);
    println!(
        "paper preset ({CLUSTER}, {WORKLOAD}), the spec's six planners, {runs} cold runs each"
    );
    // Early, middle and last events: a later event replays more decisions first.
    for event in ["3", "26", "50"] {
        let times: Vec<f64> = (0..runs)
            .map(|_| timed_run(["explain", CLUSTER, WORKLOAD, "--event", event]))
            .collect();
        println!(
            "explain --event {event:<3} median {:.3} s (min {:.3}, max {:.3})",
            median(times.clone()),
            times.iter().copied().fold(f64::INFINITY, f64::min),
            times.iter().copied().fold(0.0, f64::max)
        );
    }
    let (mut plain, mut worst) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        plain.push(timed_run(["plan", CLUSTER, WORKLOAD]));
        worst.push(timed_run(["plan", CLUSTER, WORKLOAD, "--worst", "10"]));
    }
    let (p, w) = (median(plain), median(worst));
    println!(
        "cold processes: plan median {p:.3} s; plan --worst 10 median {w:.3} s; ratio {:.3} ({:+.1} %)",
        w / p,
        100.0 * (w / p - 1.0)
    );
    in_process(3 * runs);
    colocation(runs);
}

/// The co-location side on the default example: one task's explanation, and `plan` against
/// `plan --worst 10` (cold processes, alternating).
fn colocation(runs: usize) {
    const C: &str = "examples/clusters/a100-x16.toml";
    const W: &str = "examples/workloads/colocation-small.toml";
    println!("co-location default example ({W}), the spec's planners, {runs} cold runs each");
    let explain: Vec<f64> = (0..runs)
        .map(|_| timed_run(["explain", C, W, "--task", "3"]))
        .collect();
    println!("explain --task 3 median {:.3} s", median(explain));
    let (mut plain, mut worst) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        plain.push(timed_run(["plan", C, W]));
        worst.push(timed_run(["plan", C, W, "--worst", "10"]));
    }
    let (p, w) = (median(plain), median(worst));
    println!(
        "plan median {p:.3} s; plan --worst 10 median {w:.3} s; ratio {:.3} ({:+.1} %)",
        w / p,
        100.0 * (w / p - 1.0)
    );
}

/// The same comparison inside one process (spec loaded once), alternating: what `--worst`
/// itself costs, without process start-up and file reading.
fn in_process(rounds: usize) {
    let pair = load_pair(&root().join(CLUSTER), &root().join(WORKLOAD)).expect("the example loads");
    let Workload::Preemption(spec) = &pair.workload else {
        panic!("a preemption example")
    };
    let time = |worst: Option<usize>| {
        let options = PlanOptions {
            worst,
            ..PlanOptions::default()
        };
        let t = Instant::now();
        planning::plan(&pair.cluster, spec, &options).expect("plans");
        t.elapsed().as_secs_f64()
    };
    let (mut plain, mut worst) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        plain.push(time(None));
        worst.push(time(Some(10)));
    }
    let (p, w) = (median(plain), median(worst));
    println!(
        "in process, {rounds} rounds: plan median {:.1} ms; --worst 10 median {:.1} ms; ratio {:.3} ({:+.1} %)",
        1e3 * p,
        1e3 * w,
        w / p,
        100.0 * (w / p - 1.0)
    );
}
