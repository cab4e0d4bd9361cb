//! The capacity goal (docs/performance.md): `coplan capacity --pool` on the paper preset
//! (`paper-4090-x100`, `paper-preemption`: 10 seeds × 100 cycles, `flextopo-imp`,
//! `hit_rate>=0.99`, the default sizes) as a user's plain run does it: the `coplan` binary, a
//! cold process per run. Prints each run's time, the sizes it simulated and the answer, then
//! the median, against the goal of 30 s on 2 cores.
//!
//! `cargo bench --bench capacity [-- --runs N]`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

mod common;

use common::{count_arg, median, timed_output};

const GOAL_S: f64 = 30.0;

fn main() {
    let runs: usize = count_arg("--runs", 3);
    let root = env!("CARGO_MANIFEST_DIR");
    let args = [
        "capacity".to_string(),
        format!("{root}/examples/clusters/paper-4090-x100.toml"),
        format!("{root}/examples/workloads/paper-preemption.toml"),
        "--target".into(),
        "hit_rate>=0.99".into(),
        "--pool".into(),
        "0".into(),
        "--planners".into(),
        "flextopo-imp".into(),
        "--format".into(),
        "json".into(),
    ];
    println!(
        "capacity --pool on the paper preset (10 seeds × 100 cycles, flextopo-imp, hit_rate>=0.99), {runs} runs"
    );
    println!(
        "{:<6} {:>10} {:>7} {:>14}",
        "run", "time (s)", "sizes", "answer"
    );
    let mut times = Vec::new();
    for run in 1..=runs {
        let (elapsed, out) = timed_output(&args);
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("capacity prints JSON");
        let planner = &v["planners"][0];
        let sizes = planner["probes"].as_array().map_or(0, Vec::len);
        let answer = match (planner["answer"].as_f64(), planner["bracket"].as_array()) {
            (Some(a), _) => format!("{a:.0}"),
            (None, Some(b)) if b.len() == 2 => format!(
                "{:.0}–{:.0}",
                b[0].as_f64().unwrap_or(0.0),
                b[1].as_f64().unwrap_or(0.0)
            ),
            _ => "not reached".into(),
        };
        println!("{run:<6} {elapsed:>10.2} {sizes:>7} {answer:>14}");
        times.push(elapsed);
    }
    let m = median(times);
    println!(
        "median {m:.2} s against the goal of {GOAL_S:.0} s: {}",
        if m <= GOAL_S { "met" } else { "missed" }
    );
}
