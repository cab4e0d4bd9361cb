//! Release study of the co-location lower bound under memory pressure (issue #23, point 4):
//! how far the best schedule lies above the best proven bound, with the bound as it was (the
//! request floors, stage relaxations and interval LP) and with the memory-aware parts beside
//! it.
//!
//! 1. The shipped memory-bound example (`colocation-70b-memory` on `a100-x16`): every bound
//!    part, the best feasible schedule over the bound before and after, and the best run's
//!    objective split into its terms (request time, SLO misses, training time, drops).
//! 2. Random memory-tight instances, 3 nodes × 1 stage, up to 200 tasks, in two families: the
//!    property tests' generator with κ from 0.1 to 0.4 (short outputs; KV of 400 MiB per
//!    token never fits), and long outputs (KV 0.5 to 400 MiB per token, waits of 0 to 2 s).
//!    The median and maximum of (best heuristic objective / bound), before and after.
//!
//! Run: `cargo bench --bench memory_bound` (`-- example` or `-- random` runs one part;
//! `-- verbose` prints every random instance, `-- with-ilp` runs the windowed `ilp` on them too; `COPLAN_STUDY_INSTANCES=N` sets their number,
//! 60 by default).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{example, flag, median};
use coplan::colocate::planning::plan;
use coplan::plan::colocation::{ColocationPlan, ColocationPlannerReport};
use coplan::spec::colocation::{DistKind, MemoryTimeout};
use coplan::spec::{ClusterSpec, ColocationSpec};
use coplan::topology::Cluster;

/// The bound parts that existed before the memory-aware ones.
const BEFORE: [&str; 3] = ["request floors", "stage relaxation", "interval lp"];

const HEURISTICS: [&str; 5] = ["separate", "mix-rr", "mix-luf", "lemix", "lemix-balanced"];

/// The best bound among the parts named in `BEFORE`.
fn bound_before(report: &ColocationPlan) -> f64 {
    report
        .bounds
        .iter()
        .filter(|b| BEFORE.contains(&b.name))
        .filter_map(|b| b.value)
        .fold(0.0, f64::max)
}

fn best<'a>(
    report: &'a ColocationPlan,
    names: &[&str],
) -> Option<(&'a ColocationPlannerReport, f64)> {
    report
        .planners
        .iter()
        .filter(|p| names.contains(&p.name.as_str()))
        .filter_map(|p| p.objective.map(|o| (p, o)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A run's objective by term: (request time / τ, SLO misses, training time / τ, drops).
fn terms(report: &ColocationPlan, p: &ColocationPlannerReport) -> (f64, usize, f64, usize) {
    let tau = report.slo_s;
    let (mut req, mut misses, mut train, mut drops) = (0.0, 0, 0.0, 0);
    for e in &p.events {
        if e.dropped {
            drops += 1;
            continue;
        }
        let time = e.end_s.map_or(0.0, |end| (end - e.arrival_s) / tau);
        if e.kind == "training" {
            train += time;
        } else {
            req += time;
            misses += usize::from(e.slo_met == Some(false));
        }
    }
    (req, misses, train, drops)
}

fn example_part(cluster: &Cluster) {
    println!("## colocation-70b-memory on a100-x16 (4 nodes × 4 stages)\n");
    let spec: ColocationSpec = example("examples/workloads/colocation-70b-memory.toml");
    let t0 = Instant::now();
    let report = plan(cluster, &spec, None, None, None).expect("the example plans");
    let seconds = t0.elapsed().as_secs_f64();
    println!("| bound part | value | ms |");
    println!("|---|---:|---:|");
    for b in &report.bounds {
        println!(
            "| {} | {} | {:.1} |",
            b.name,
            b.value.map_or_else(
                || format!("- ({})", b.reason.clone().unwrap_or_default()),
                |v| { format!("{v:.1}") }
            ),
            b.runtime_ms
        );
    }
    let before = bound_before(&report);
    let after = report.bound.unwrap_or(0.0);
    let names: Vec<&str> = report.planners.iter().map(|p| p.name.as_str()).collect();
    let Some((p, objective)) = best(&report, &names) else {
        println!("no planner ran");
        return;
    };
    let (req, misses, train, drops) = terms(&report, p);
    println!(
        "\nbest feasible: {} {objective:.1} (requests {req:.1} + {misses} misses × slo_miss, \
         training {train:.1}, {drops} dropped); τ_R = {:.3} s; plan {seconds:.1} s",
        p.name, report.slo_s
    );
    println!(
        "bound before {before:.1} → best / bound {:.2}; after {after:.1} ({}) → best / bound {:.2}\n",
        objective / before.max(1e-12),
        report.bound_source,
        objective / after.max(1e-12)
    );
    println!("| planner | objective | requests | misses | training | dropped |");
    println!("|---|---:|---:|---:|---:|---:|");
    for p in &report.planners {
        if let Some(o) = p.objective {
            let (req, misses, train, drops) = terms(&report, p);
            println!(
                "| {} | {o:.1} | {req:.1} | {misses} | {train:.1} | {drops} |",
                p.name
            );
        }
    }
    println!();
}

/// SplitMix64: the instances' parameters, the same on every machine.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// The two families of random instances.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    /// The property tests' generator (`tests/colocation.rs`): prompts ≤ 512 tokens, outputs
    /// ≤ 16, KV 0.1, 20 or 400 MiB per token, activations twice that, a memory wait of 0.5 s;
    /// memory-tight: κ from 0.1 to 0.4.
    Tests,
    /// Long outputs (means 50 to 400 tokens, up to 1,024), prompts up to 2,048, KV 0.5 to 400
    /// MiB per token, waits of 0, 0.5 or 2 s.
    LongOutputs,
}

/// Draws whether a request that waits too long for memory is dropped (else offloaded), sets
/// it on `s`, and says which.
fn draw_memory_timeout(r: &mut Mix, s: &mut ColocationSpec) -> bool {
    let drop = r.next().is_multiple_of(2);
    s.lemix.on_memory_timeout = if drop {
        MemoryTimeout::Drop
    } else {
        MemoryTimeout::Offload
    };
    drop
}

/// Random memory-tight instance `i` of the tests' family: 3 nodes × 1 stage, at most 200
/// tasks.
fn tests_instance(base: &ColocationSpec, i: u64) -> (ColocationSpec, String) {
    let mut r = Mix(0x7E57 ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut s = base.clone();
    s.nodes = Some(3);
    s.model.stages = 1;
    let rate = 0.6 * r.unit();
    // Requests such that requests + training tasks ≤ 200.
    let count = ((20.0 + 180.0 * r.unit()) * (1.0 - rate)).floor().max(1.0);
    s.inference.count = count as i64;
    s.training.rate = rate;
    let kv = r.pick(&[0.1, 20.0, 400.0]);
    s.model.kv_mib_per_token = kv;
    s.model.activation_mib_per_token = kv * 2.0;
    s.inference.prompt_tokens.max = 512;
    s.inference.output_tokens.max = 16;
    s.inference.output_tokens.mean = 6.0;
    s.training.tokens.max = 512;
    let threshold = 0.1 + 0.3 * r.unit();
    s.lemix.memory_threshold = threshold;
    let drop = draw_memory_timeout(&mut r, &mut s);
    s.lemix.max_wait_s = 0.5;
    s.lemix.batch_max = 1 + (r.next() % 4) as i64;
    s.lemix.batch_wait_factor = r.unit();
    s.planners.seed = 1 + i;
    let label = format!(
        "{count} req, train {rate:.2}, kv {kv}, κ {threshold:.3}, {}",
        if drop { "drop" } else { "offload" }
    );
    (s, label)
}

/// Random memory-tight instance `i` with long outputs: 3 nodes × 1 stage, at most 200 tasks.
fn long_instance(base: &ColocationSpec, i: u64) -> (ColocationSpec, String) {
    let mut r = Mix(0xC0_1A7E ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut s = base.clone();
    s.nodes = Some(3);
    s.model.stages = 1;
    let rate = r.pick(&[0.0, 0.1, 0.2, 0.3]);
    // Requests such that requests + training tasks ≤ 200.
    let count = 40 + r.next() % 101;
    s.inference.count = count as i64;
    s.training.rate = rate;
    let kv = r.pick(&[0.5, 5.0, 20.0, 100.0, 400.0]);
    s.model.kv_mib_per_token = kv;
    s.model.activation_mib_per_token = kv * r.pick(&[1.0, 2.0, 4.0]);
    // Room beside the weights (7,660 MiB of 81,920): from 0.3 % to 40 % of the GPU.
    let threshold = 0.0935 + 0.003 + 0.4 * r.unit() * r.unit();
    s.lemix.memory_threshold = threshold;
    let drop = draw_memory_timeout(&mut r, &mut s);
    let wait = r.pick(&[0.0, 0.5, 2.0]);
    s.lemix.max_wait_s = wait;
    s.lemix.batch_max = r.pick(&[4, 8, 32]);
    s.inference.prompt_tokens.max = 2048;
    s.inference.output_tokens.dist = DistKind::Lognormal;
    s.inference.output_tokens.mean = r.pick(&[50.0, 200.0, 400.0]);
    s.inference.output_tokens.sd = s.inference.output_tokens.mean * 0.75;
    s.inference.output_tokens.max = 1024;
    s.training.tokens.max = 2048;
    let rps = r.pick(&[4.0, 12.0, 30.0]);
    if let Some(a) = s.inference.arrival.as_mut() {
        a.rate_rps = rps;
    }
    s.planners.seed = 1 + i;
    let label = format!(
        "{count} req, train {rate}, kv {kv} (act ×{}), κ {threshold:.3}, {}, wait {wait}, {rps} rps, out {}, batch {}",
        s.model.activation_mib_per_token / kv,
        if drop { "drop" } else { "offload" },
        s.inference.output_tokens.mean,
        s.lemix.batch_max
    );
    (s, label)
}

fn random_instance(
    base: &ColocationSpec,
    family: Family,
    i: u64,
    with_ilp: bool,
) -> (ColocationSpec, String) {
    let (mut s, label) = match family {
        Family::Tests => tests_instance(base, i),
        Family::LongOutputs => long_instance(base, i),
    };
    s.planners.run = HEURISTICS.iter().map(|p| p.to_string()).collect();
    if with_ilp {
        s.planners.run.push("ilp".into());
    }
    (s, label)
}

fn random_part(cluster: &Cluster, family: Family, verbose: bool, with_ilp: bool) {
    let n: u64 = std::env::var("COPLAN_STUDY_INSTANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let name = match family {
        Family::Tests => "the tests' generator",
        Family::LongOutputs => "long outputs",
    };
    println!("## {n} random memory-tight instances, {name} (3 nodes × 1 stage, ≤ 200 tasks)\n");
    let base: ColocationSpec = example("examples/workloads/colocation-small.toml");
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut sources: std::collections::BTreeMap<&'static str, usize> = Default::default();
    let t0 = Instant::now();
    if verbose {
        println!(
            "| # | instance | tasks | best | objective | ilp | bound before | bound after | source | ratio before | ratio after |"
        );
        println!("|---:|---|---:|---|---:|---:|---:|---:|---|---:|---:|");
    }
    for i in 0..n {
        let (spec, label) = random_instance(&base, family, i, with_ilp);
        let report = plan(cluster, &spec, None, None, None).expect("plans and verifies");
        let Some((p, objective)) = best(&report, &HEURISTICS) else {
            continue;
        };
        let b0 = bound_before(&report);
        let b1 = report.bound.unwrap_or(0.0);
        // A bound of 0 leaves the ratio undefined; 1 objective unit stands in, as the gap does.
        let (r0, r1) = (objective / b0.max(1.0), objective / b1.max(1.0));
        before.push(r0);
        after.push(r1);
        *sources.entry(report.bound_source).or_default() += 1;
        if verbose {
            let ilp = best(&report, &["ilp"]).map_or("-".into(), |(_, o)| format!("{o:.1}"));
            println!(
                "| {i} | {label} | {} | {} | {objective:.1} | {ilp} | {b0:.1} | {b1:.1} | {} | {r0:.2} | {r1:.2} |",
                p.events.len(),
                p.name,
                report.bound_source
            );
        }
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    if verbose {
        println!();
    }
    println!("| best heuristic / bound | median | max |");
    println!("|---|---:|---:|");
    println!(
        "| before (floors, stage, interval lp) | {:.2} | {:.2} |",
        median(before.clone()),
        max(&before)
    );
    println!(
        "| after (with the memory parts) | {:.2} | {:.2} |",
        median(after.clone()),
        max(&after)
    );
    println!(
        "\nbound source after: {sources:?}; {} instances in {:.1} s",
        before.len(),
        t0.elapsed().as_secs_f64()
    );
}

fn main() {
    let cluster_spec: ClusterSpec = example("examples/clusters/a100-x16.toml");
    let cluster = Cluster::from_spec(&cluster_spec);
    let verbose = flag("verbose");
    let (example_only, random_only) = (flag("example"), flag("random"));
    if !random_only {
        example_part(&cluster);
    }
    if !example_only {
        random_part(&cluster, Family::Tests, verbose, flag("with-ilp"));
        random_part(&cluster, Family::LongOutputs, verbose, flag("with-ilp"));
    }
}
