//! The SVG printers: each picture of a small fixed input is compared with its insta snapshot
//! in the top-level `snapshots/` folder (one input → one snapshot, `svg__<name>`), checked to
//! be well-formed and to come out byte for byte the same when drawn twice. Empty inputs give a
//! small "no data" picture, and a server name the cluster lacks an error naming its servers.
//!
//! `COPLAN_SVG_OUT=DIR` also writes every picture to DIR, to look at them.

use crate::common;

use std::path::Path;

use coplan::report::svg::capacity::{CapacityChart, CapacityCurve, CapacityPoint, capacity};
use coplan::report::svg::error::SvgError;
use coplan::report::svg::{simulation, sweep, timeline, topology};
use coplan::session::load::{Pair, load_pair};
use coplan::session::simulate::{self as session_simulate, SimulationResult};
use coplan::session::{timeline as session_timeline, topology as session_topology};
use coplan::sim::preemption::SimOptions;
use coplan::sim::sweep::{Row, SweepOutput};

use crate::common::root;

fn pair(cluster: &str, workload: &str) -> Pair {
    match load_pair(&root().join(cluster), &root().join(workload)) {
        Ok(p) => p,
        Err(e) => panic!("{cluster} + {workload} load: {e:?}"),
    }
}

/// Tags open and close in order, and the text is one `<svg>` element.
fn assert_well_formed(name: &str, svg: &str) {
    assert!(
        svg.starts_with("<svg"),
        "{name}: starts with {:?}",
        &svg[..20.min(svg.len())]
    );
    assert!(
        svg.trim_end().ends_with("</svg>"),
        "{name}: does not end with </svg>"
    );
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else {
            panic!("{name}: unterminated tag");
        };
        let tag = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        if let Some(closing) = tag.strip_prefix('/') {
            assert_eq!(
                open.pop(),
                Some(closing.trim()),
                "{name}: mismatched </{closing}>"
            );
        } else if !tag.ends_with('/') {
            open.push(tag.split_whitespace().next().unwrap_or(""));
        }
        if open.is_empty() {
            assert!(
                rest.trim().is_empty(),
                "{name}: text after the root element"
            );
        }
    }
    assert!(open.is_empty(), "{name}: unclosed {open:?}");
}

/// Checks a picture drawn twice and compares it with its snapshot.
fn check(name: &str, draw: impl Fn() -> Result<String, SvgError>) -> String {
    let svg = draw().unwrap_or_else(|e| panic!("{name}: {e}"));
    let again = draw().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(svg == again, "{name}: two renders differ");
    assert_well_formed(name, &svg);
    if let Ok(dir) = std::env::var("COPLAN_SVG_OUT") {
        let path = Path::new(&dir).join(format!("{name}.svg"));
        std::fs::write(&path, &svg).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    svg
}

fn snapshot(name: &str, draw: impl Fn() -> Result<String, SvgError>) {
    let svg = check(name, draw);
    common::snapshot::assert_snapshot(&format!("svg__{name}"), &svg, &[]);
}

fn options(seeds: &[u64], cycles: u64, planners: Option<&[&str]>) -> SimOptions {
    SimOptions {
        seeds: Some(seeds.to_vec()),
        cycles: Some(cycles),
        planners: planners.map(|p| p.iter().map(|s| s.to_string()).collect()),
        solver: None,
        cancel: Default::default(),
    }
}

#[test]
fn simulation_of_a_preemption_workload() {
    let p = pair(
        "examples/clusters/gpu-2s4n8g-x4.toml",
        "tests/fixtures/valid/sim-small.toml",
    );
    let result = session_simulate::simulate(&p, &options(&[1, 2], 2, None), &|| {});
    let Ok(SimulationResult::Preemption(sim)) = result else {
        panic!("a preemption simulation");
    };
    snapshot("simulation-preemption", || simulation::preemption(&sim));
}

#[test]
fn simulation_of_a_colocation_workload() {
    let p = pair(
        "examples/clusters/a100-x16.toml",
        "tests/fixtures/valid/coloc-trace.toml",
    );
    let planners = ["separate", "mix-rr", "mix-luf", "lemix"];
    let result = session_simulate::simulate(&p, &options(&[1, 2, 3], 1, Some(&planners)), &|| {});
    let Ok(SimulationResult::Colocation(sim)) = result else {
        panic!("a co-location simulation");
    };
    snapshot("simulation-colocation", || simulation::colocation(&sim));
}

/// Rows of a hand-made sweep: per scenario (its parameters), planner and seed, the metrics
/// with values from a fixed formula.
fn sweep_rows(scenarios: &[Vec<(&str, &str)>], planners: &[&str], metrics: &[&str]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (scenario, params) in scenarios.iter().enumerate() {
        for (p, planner) in planners.iter().enumerate() {
            for seed in 1..=3u64 {
                for (m, metric) in metrics.iter().enumerate() {
                    let base = 0.3 + 0.1 * scenario as f64 + 0.15 * p as f64;
                    let noise = 0.02 * ((seed * 7 + m as u64 * 3 + scenario as u64) % 5) as f64;
                    let share = ["hit", "utilization", "slo"];
                    let value = if share.iter().any(|s| metric.contains(s)) {
                        (base + noise).min(1.0)
                    } else {
                        10.0 * (base + noise) + m as f64
                    };
                    rows.push(Row {
                        scenario,
                        params: params
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                        planner: (*planner).into(),
                        seed,
                        metric: (*metric).into(),
                        value,
                    });
                }
            }
        }
    }
    rows
}

#[test]
fn sweep_over_a_number_with_a_second_key_in_rows() {
    let mut scenarios = Vec::new();
    for utilisation in ["0.75", "1.0"] {
        for alpha in ["0", "0.5", "1"] {
            scenarios.push(vec![
                ("flextopo.alpha", alpha),
                ("fill.target_gpu_utilization", utilisation),
            ]);
        }
    }
    let out = SweepOutput {
        keys: vec![
            "flextopo.alpha".into(),
            "fill.target_gpu_utilization".into(),
        ],
        scenario_count: scenarios.len(),
        shard: (0, 1),
        inputs: None,
        rows: sweep_rows(
            &scenarios,
            &["k8s-default", "flextopo-imp"],
            &[
                "hit_rate",
                "hit_rate_guaranteed",
                "hit_rate_best_effort",
                "victims",
                "wasted_evictions",
                "objective",
            ],
        ),
    };
    snapshot("sweep-two-keys", || {
        sweep::sweep(&out, Some("sim-small on gpu-2s4n8g-x4"))
    });
}

#[test]
fn sweep_over_names_is_categorical() {
    let scenarios: Vec<Vec<(&str, &str)>> = ["rtx4090-8g", "a100-8g", "gpu-2s4n8g"]
        .iter()
        .map(|t| vec![("pool.0.server_type", *t)])
        .collect();
    let out = SweepOutput {
        keys: vec!["pool.0.server_type".into()],
        scenario_count: scenarios.len(),
        shard: (0, 1),
        inputs: None,
        rows: sweep_rows(
            &scenarios,
            &["separate", "mix-rr", "lemix"],
            &[
                "gpu_utilization",
                "throughput_tasks_per_s",
                "slo_attainment_5x",
                "goodput_rps",
                "objective",
            ],
        ),
    };
    snapshot("sweep-categorical", || sweep::sweep(&out, None));
}

fn capacity_chart() -> CapacityChart {
    let curve = |planner: &str, shift: f64, answer: Option<u32>, bracket: Option<(u32, u32)>| {
        CapacityCurve {
            planner: planner.into(),
            points: (2..=8u32)
                .map(|size| CapacityPoint {
                    size,
                    mean: (0.5 + shift + 0.07 * f64::from(size)).min(1.0),
                    ci95: (size != 5).then_some(0.02 + 0.005 * f64::from(size)),
                })
                .collect(),
            answer,
            bracket,
        }
    };
    CapacityChart {
        title: "capacity of colocation-small on a100-x16".into(),
        metric: "slo_attainment_5x".into(),
        target_value: 0.9,
        target_op: ">=".into(),
        size_label: "servers in pool a100-".into(),
        curves: vec![
            curve("separate", -0.05, Some(7), Some((6, 7))),
            curve("lemix", 0.05, Some(5), None),
            curve("mix-rr", -0.3, None, None),
        ],
    }
}

#[test]
fn capacity_marks_the_target_and_the_answers() {
    let chart = capacity_chart();
    snapshot("capacity", || capacity(&chart));
}

#[test]
fn topology_of_a_cluster_and_of_one_server() {
    let (cluster, state) = session_topology::topology(
        &root().join("tests/fixtures/valid/tiny-cluster.toml"),
        Some(&root().join("tests/fixtures/valid/tiny-running.toml")),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    snapshot("topology-cluster", || {
        topology::topology(&cluster, state.as_ref(), None)
    });
    snapshot("topology-server", || {
        topology::topology(&cluster, state.as_ref(), Some("tiny-0"))
    });
    match topology::topology(&cluster, state.as_ref(), Some("tiny-7")) {
        Err(e @ SvgError::UnknownServer { .. }) => assert_eq!(
            e.to_string(),
            "no server `tiny-7` in cluster `tiny`; it has 2 servers: tiny-0, tiny-1"
        ),
        other => panic!("expected an unknown-server error, got {other:?}"),
    }
}

#[test]
fn a_large_cluster_is_cut_to_its_first_servers() {
    let (cluster, _) =
        session_topology::topology(&root().join("examples/clusters/paper-4090-x100.toml"), None)
            .unwrap_or_else(|e| panic!("{e:?}"));
    let svg = check("topology-large", || {
        topology::topology(&cluster, None, None)
    });
    assert!(svg.contains("first 64 of 100 servers"));
    let svg = check("topology-large-server", || {
        topology::topology(&cluster, None, Some("node-07"))
    });
    assert!(svg.contains("GPU 7"));
    let err = topology::topology(&cluster, None, Some("nope"));
    let Err(e) = err else {
        panic!("an unknown server is an error");
    };
    assert!(e.to_string().contains("it has 100 servers"), "{e}");
    assert!(e.to_string().ends_with(", …"), "{e}");
}

#[test]
fn a_cluster_with_levels_is_a_rack_map_unless_a_workload_is_given() {
    let racks = root().join("examples/clusters/h100-racks.toml");
    let (cluster, _) = session_topology::topology(&racks, None).unwrap_or_else(|e| panic!("{e:?}"));
    // Its snapshot is the CLI's (`topology__h100-racks__svg`).
    let svg = check("topology-racks", || {
        topology::topology(&cluster, None, None)
    });
    assert!(
        svg.contains("block b2: 8 hosts, 64 GPUs"),
        "outermost boxes labelled"
    );
    assert!(svg.contains("rack b2-r2"), "inner boxes labelled");
    let gangs = root().join("examples/workloads/gangs-racks.toml");
    let (cluster, state) =
        session_topology::topology(&racks, Some(&gangs)).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(state.is_some(), "a preemption workload gives a state");
    let svg = check("topology-racks-workload", || {
        topology::topology(&cluster, state.as_ref(), None)
    });
    assert!(
        svg.contains("coloured by the pod holding them"),
        "the server map"
    );
    assert!(!svg.contains("rack b2-r2"), "no rack map with a workload");
}

#[test]
fn timeline_of_a_colocation_run() {
    let p = pair(
        "examples/clusters/a100-x16.toml",
        "tests/fixtures/valid/coloc-trace.toml",
    );
    let t = session_timeline::timeline(&p, "mix-rr", Some(1)).unwrap_or_else(|e| panic!("{e:?}"));
    snapshot("timeline", || {
        timeline::colocation_run(&t.run, t.nodes, t.stages, "mix-rr on coloc-trace, a100-x16")
    });
}

#[test]
fn empty_inputs_give_a_no_data_picture() {
    let empty_sweep = SweepOutput {
        keys: vec!["flextopo.alpha".into()],
        scenario_count: 0,
        shard: (0, 1),
        inputs: None,
        rows: Vec::new(),
    };
    snapshot("no-data", || sweep::sweep(&empty_sweep, None));
    let no_curves = CapacityChart {
        curves: Vec::new(),
        ..capacity_chart()
    };
    let svg = check("capacity-empty", || capacity(&no_curves));
    assert!(svg.contains("no data"));
    let p = pair(
        "examples/clusters/gpu-2s4n8g-x4.toml",
        "tests/fixtures/valid/sim-small.toml",
    );
    let Ok(SimulationResult::Preemption(mut sim)) =
        session_simulate::simulate(&p, &options(&[1], 1, Some(&["k8s-default"])), &|| {})
    else {
        panic!("a preemption simulation");
    };
    sim.planners.clear();
    let svg = check("simulation-empty", || simulation::preemption(&sim));
    assert!(svg.contains("no data"));
    let t = session_timeline::timeline(
        &pair(
            "examples/clusters/a100-x16.toml",
            "tests/fixtures/valid/coloc-trace.toml",
        ),
        "lemix",
        Some(1),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let svg = check("timeline-empty", || {
        timeline::colocation_run(&t.run, 0, t.stages, "nothing")
    });
    assert!(svg.contains("no data"));
}

/// Every flag that draws writes one well-formed SVG, the same as the printer's, and the
/// requests a picture cannot answer are input errors.
#[test]
fn every_plot_flag_of_the_command_line_writes_an_svg() {
    let dir = std::env::temp_dir().join(format!("coplan-plots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = |name: &str| dir.join(name).display().to_string();
    let run =
        |args: &[&str]| common::run_coplan(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    let (cluster, sim) = (
        "examples/clusters/gpu-2s4n8g-x4.toml",
        "tests/fixtures/valid/sim-small.toml",
    );
    let (tiny, running) = (
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/tiny-running.toml",
    );
    let (a100, coloc) = (
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
    );
    let sweep_csv = out("sweep.csv");
    let drawn: Vec<(&str, Vec<String>, String)> = vec![
        (
            "simulate",
            vec![
                "simulate",
                cluster,
                sim,
                "--seeds",
                "2",
                "--cycles",
                "1",
                "--plot",
                &out("sim.svg"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            out("sim.svg"),
        ),
        (
            "sweep",
            [
                "sweep",
                cluster,
                sim,
                "--set",
                "flextopo.alpha=0,1",
                "--seeds",
                "2",
                "--cycles",
                "1",
                "--out",
                &sweep_csv,
                "--plot",
                &out("sweep.svg"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            out("sweep.svg"),
        ),
        (
            "merge",
            ["merge", &sweep_csv, "--plot", &out("merge.svg")]
                .into_iter()
                .map(String::from)
                .collect(),
            out("merge.svg"),
        ),
        (
            "capacity",
            [
                "capacity",
                tiny,
                "tests/fixtures/valid/capacity-tiny.toml",
                "--target",
                "unplaced<=0",
                "--plot",
                &out("capacity.svg"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            out("capacity.svg"),
        ),
        (
            "topology",
            [
                "topology", tiny, running, "--format", "svg", "--server", "tiny-0",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            String::new(),
        ),
        (
            "timeline",
            [
                "timeline",
                a100,
                coloc,
                "--planner",
                "mix-rr",
                "--format",
                "svg",
                "--out",
                &out("timeline.svg"),
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            out("timeline.svg"),
        ),
    ];
    for (name, args, file) in drawn {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, err) = run(&args);
        assert_eq!(code, 0, "{name}: {err}");
        let svg = if file.is_empty() {
            stdout
        } else {
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {file}: {e}"))
        };
        assert_well_formed(name, &svg);
    }
    for (args, expected) in [
        (
            vec![
                "topology", tiny, running, "--format", "svg", "--server", "tiny-9",
            ],
            "no server `tiny-9`",
        ),
        (
            vec!["topology", tiny, "--server", "tiny-0"],
            "needs `--format svg`",
        ),
        (
            vec!["capacity", a100, coloc, "--plot", "unused.svg"],
            "a co-location capacity searches a rate",
        ),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
