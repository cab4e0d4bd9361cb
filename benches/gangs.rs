//! Release benchmark of the gang planners (DESIGN §12.3), measured side by side in one run:
//! 1. One gang decision at 1,000 hosts (8-GPU H100 hosts in 5 blocks × 25 racks × 8, filled to
//!    90 %; a 64-GPU gang of 8 whole-host pods inside one rack): median time of the exact
//!    per-event decision (`ilp`), of FlexTopo over levels (IMP), of Kueue's algorithm, over
//!    several fill seeds.
//! 2. The joint optimum (`ilp-batch`) of the H100 study's list at that size: status and time.
//! 3. The gang study's default run (`scripts/gangs-report.sh`'s commands), cold, one process
//!    each.
//!
//! Run: `cargo bench --bench gangs` (`-- --seeds 5 --repeats 11` to change the sample, `-- --hosts
//! 1000` for another size, `-- --no-study` to skip part 3); `cargo bench --bench gangs --features
//! highs -- --solver highs` solves the joint optimum (parts 2 and 3) with HiGHS.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench may panic: that is its failure

use std::time::Instant;

mod common;

use common::{arg_or, example, flag, median, number_arg, timed_run};
use coplan::preempt::gang::{self, Gang, GangPoint};
use coplan::preempt::planning::{PlanOptions, plan};
use coplan::preempt::problem::Problem;
use coplan::preempt::scenario;
use coplan::spec::{ClusterSpec, PoolSpec, PreemptionSpec, SolverBackend};
use coplan::topology::Cluster;

/// The study's H100 cluster at `hosts` hosts (8 per rack, 25 racks per block).
fn cluster(hosts: usize) -> ClusterSpec {
    let mut spec: ClusterSpec = example("examples/clusters/h100-blocks.toml");
    let template = spec.pool[0].clone();
    spec.pool = (0..hosts.div_ceil(8))
        .map(|r| {
            let (block, rack) = (r / 25, r);
            PoolSpec {
                count: 8.min(hosts - 8 * r) as i64,
                name_prefix: format!("b{block}-r{rack}-h"),
                domain: [
                    ("block".to_string(), format!("b{block}")),
                    ("rack".to_string(), format!("r{rack}")),
                ]
                .into(),
                ..template.clone()
            }
        })
        .collect();
    spec.name = format!("h100-{hosts}");
    spec
}

fn time_ms(repeats: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..repeats)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect(),
    )
}

fn decisions(cluster: &Cluster, spec: &PreemptionSpec, seeds: u64, repeats: usize) {
    println!(
        "## One gang decision at {} hosts (64-GPU gang, rack)\n",
        cluster.servers.len()
    );
    println!(
        "| seed | exact (ilp) ms | FlexTopo over levels ms | kueue-tas ms | exact victims | IMP victims | kueue victims |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let (mut exact_all, mut imp_all, mut kueue_all) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=seeds {
        let problem = Problem::new(cluster, spec);
        let mut state = scenario::initial_state(cluster, spec, Some(seed)).expect("fills");
        let gangs: Vec<Gang> = gang::gangs(cluster, spec, &mut state);
        let g = gangs
            .iter()
            .find(|g| g.name == "train-64g")
            .expect("the 64-GPU gang");
        let at = GangPoint {
            problem: &problem,
            state: &state,
            gang: g,
        };
        let exact = time_ms(repeats, || {
            std::hint::black_box(gang::exact::decide(&at));
        });
        let imp = time_ms(repeats, || {
            std::hint::black_box(gang::levels::decide(&at, false));
        });
        let kueue = time_ms(repeats, || {
            std::hint::black_box(gang::kueue_tas::decide(&at));
        });
        println!(
            "| {seed} | {exact:.2} | {imp:.2} | {kueue:.2} | {} | {} | {} |",
            gang::exact::decide(&at).0.victims.len(),
            gang::levels::decide(&at, false).victims.len(),
            gang::kueue_tas::decide(&at).victims.len()
        );
        exact_all.push(exact);
        imp_all.push(imp);
        kueue_all.push(kueue);
    }
    println!(
        "\nmedian over seeds: exact {:.2} ms, FlexTopo over levels {:.2} ms, kueue-tas {:.2} ms (goals: exact ≤ 50 ms, IMP ≤ 1 ms)\n",
        median(exact_all),
        median(imp_all),
        median(kueue_all)
    );
}

fn batch(cluster: &Cluster, spec: &PreemptionSpec) {
    println!(
        "## The joint optimum of the study's list at {} hosts\n",
        cluster.servers.len()
    );
    let t = Instant::now();
    let options = PlanOptions {
        planners: Some(vec!["ilp".into(), "ilp-batch".into()]),
        ..PlanOptions::default()
    };
    let report = plan(cluster, spec, &options).expect("plans");
    for p in &report.planners {
        println!(
            "- {}: {:?}, objective {:.3}, bound {:?}, {:.0} ms",
            p.name,
            p.status,
            p.objective.unwrap_or(f64::NAN),
            p.bound,
            p.runtime_ms
        );
    }
    println!("- wall time {:.1} s\n", t.elapsed().as_secs_f64());
}

fn study(solver: &str) {
    println!("## The gang study's default run (cold, one process each)\n");
    let runs: [&[&str]; 4] = [
        &[
            "simulate",
            "examples/clusters/h100-blocks.toml",
            "examples/workloads/gangs-h100-study.toml",
            "--seeds",
            "5",
            "--cycles",
            "1",
            "--time-limit",
            "2",
            "--format",
            "json",
        ],
        &[
            "simulate",
            "examples/clusters/gb200-nvl72.toml",
            "examples/workloads/gangs-gb200-study.toml",
            "--seeds",
            "5",
            "--cycles",
            "1",
            "--time-limit",
            "2",
            "--format",
            "json",
        ],
        &[
            "plan",
            "examples/clusters/h100-blocks.toml",
            "examples/workloads/gangs-h100-study.toml",
            "--time-limit",
            "2",
        ],
        &[
            "plan",
            "examples/clusters/gb200-nvl72.toml",
            "examples/workloads/gangs-gb200-study.toml",
            "--time-limit",
            "2",
        ],
    ];
    let mut total = 0.0;
    for args in runs {
        let mut args = args.to_vec();
        args.extend(["--solver", solver]);
        let s = timed_run(&args);
        total += s;
        println!("- `coplan {}`: {s:.1} s", args.join(" "));
    }
    println!("- total {total:.1} s (goal ≤ 60 s; the named cases add well under a second)\n");
}

fn main() {
    let hosts: usize = number_arg("--hosts", 1000);
    let seeds: u64 = number_arg("--seeds", 5);
    let repeats: usize = number_arg("--repeats", 11);
    let cluster = Cluster::from_spec(&cluster(hosts));
    let mut spec: PreemptionSpec = example("examples/workloads/gangs-h100-study.toml");
    let solver = arg_or("--solver", "microlp");
    if solver == "highs" {
        spec.planners.solver = SolverBackend::Highs;
    }
    decisions(&cluster, &spec, seeds, repeats);
    batch(&cluster, &spec);
    if !flag("--no-study") {
        study(&solver);
    }
}
