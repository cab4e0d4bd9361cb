//! The solver backends. Built with `--features highs`, microlp and HiGHS must reach the same
//! optima on the fixture corpus: the preemption MILPs (`ilp` under `event_solver = "milp"`,
//! `ilp-batch`) of every fixture and the co-location LP bound of the co-location fixtures.
//! Without the feature, asking for HiGHS is an input error that names the feature.

use crate::common;

use coplan::spec::SolverBackend;

#[cfg(feature = "highs")]
mod both_backends {
    use super::common::{self, header, load_cluster, load_preemption, plan};
    use coplan::colocate::bounds::{LpBound, interval_lp};
    use coplan::colocate::setup::setup;
    use coplan::plan::PlanStatus;
    use coplan::solver::SolverSettings;
    use coplan::spec::{ClusterSpec, ColocationSpec, SolverBackend};
    use coplan::topology::Cluster;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    /// Every (cluster, workload) pair of the preemption fixtures: the `# cluster:` headers of
    /// the Kubernetes scenarios, the topology cases, and the tiny valid pair.
    fn corpus() -> Vec<(String, String)> {
        let dir = common::root().join("tests/fixtures/preemption");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("fixture folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        let mut pairs = Vec::new();
        for path in files {
            let rel = format!(
                "tests/fixtures/preemption/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            let text = std::fs::read_to_string(&path).expect("fixture");
            if let Some(cluster) = header(&text, "cluster") {
                pairs.push((cluster.to_string(), rel));
            }
        }
        for (cluster, workload) in [
            ("topo-gpu-2s4n8g-x1", "topo-derived-combination"),
            ("topo-4090-x2", "topo-4090-guaranteed"),
            ("topo-a100-x2", "topo-a100-guaranteed"),
            ("topo-4090-x1", "score-basis"),
        ] {
            pairs.push((
                format!("tests/fixtures/preemption/{cluster}.toml"),
                format!("tests/fixtures/preemption/{workload}.toml"),
            ));
        }
        pairs.push((
            "tests/fixtures/valid/tiny-cluster.toml".into(),
            "tests/fixtures/valid/tiny-running.toml".into(),
        ));
        pairs
    }

    #[test]
    fn preemption_optima_agree_on_every_fixture() {
        let pairs = corpus();
        assert!(pairs.len() >= 20, "{} pairs", pairs.len());
        for (cluster_file, rel) in pairs {
            let (mut workload, _) = load_preemption(&rel);
            let cluster = load_cluster(&cluster_file);
            let mut objectives = Vec::new();
            // The per-event MILP, not the exact search (which uses no backend).
            workload.planners.event_solver = coplan::spec::preemption::EventSolver::Milp;
            for backend in [SolverBackend::Microlp, SolverBackend::Highs] {
                workload.planners.solver = backend;
                let report = plan(&cluster, &workload, &["ilp", "ilp-batch"]);
                for p in &report.planners {
                    // `gap_limit`: the batch model's optimum over-evicts (a bound, not a plan).
                    let proven = p.status == PlanStatus::Optimal
                        || (p.name == "ilp-batch" && p.status == PlanStatus::GapLimit);
                    assert!(proven, "{rel}: {} {backend:?} {:?}", p.name, p.status);
                }
                objectives.push(
                    report
                        .planners
                        .iter()
                        .map(|p| (p.name.clone(), p.status, [p.objective, p.bound]))
                        .collect::<Vec<_>>(),
                );
            }
            for ((name, status_a, a), (_, status_b, b)) in objectives[0].iter().zip(&objectives[1])
            {
                assert_eq!(status_a, status_b, "{rel}: {name}");
                for (a, b) in a.iter().zip(b) {
                    match (a, b) {
                        (Some(a), Some(b)) => assert!(close(*a, *b), "{rel}: {name} {a} vs {b}"),
                        (a, b) => assert_eq!(a, b, "{rel}: {name}"),
                    }
                }
            }
        }
    }

    /// The joint optimum of gangs on both backends: the hand-checked gang cases, and the
    /// 256-host H100 study, which only HiGHS proves within its budget (the embedded solver's
    /// plan is then no better than HiGHS's optimum, and its bound no higher).
    #[test]
    fn gang_optima_agree_on_both_backends() {
        for (cluster_file, rel) in [
            (
                "tests/fixtures/clusters/two-racks.toml",
                "tests/fixtures/gangs/split-by-pod-by-pod.toml",
            ),
            (
                "tests/fixtures/clusters/nvl-two-domains.toml",
                "tests/fixtures/gangs/whole-nvlink-domain.toml",
            ),
            (
                "tests/fixtures/clusters/block-rack-steep.toml",
                "tests/fixtures/gangs/preferred-pays.toml",
            ),
            (
                "tests/fixtures/clusters/numa-rack.toml",
                "tests/fixtures/gangs/kueue-admitted-cannot-run.toml",
            ),
            (
                "examples/clusters/gb200-nvl72.toml",
                "examples/workloads/gangs-gb200-study.toml",
            ),
        ] {
            let (mut workload, _) = load_preemption(rel);
            let cluster = load_cluster(cluster_file);
            let mut optima = Vec::new();
            for backend in [SolverBackend::Microlp, SolverBackend::Highs] {
                workload.planners.solver = backend;
                let report = plan(&cluster, &workload, &["ilp", "ilp-batch"]);
                let batch = &report.planners[1];
                assert_eq!(batch.status, PlanStatus::Optimal, "{rel}: {backend:?}");
                optima.push(batch.objective.expect("objective"));
            }
            assert!(close(optima[0], optima[1]), "{rel}: {optima:?}");
        }
        let (mut workload, _) = load_preemption("examples/workloads/gangs-h100-study.toml");
        let cluster = load_cluster("examples/clusters/h100-blocks.toml");
        workload.planners.solver = SolverBackend::Highs;
        let highs = plan(&cluster, &workload, &["ilp-batch"]);
        assert_eq!(highs.planners[0].status, PlanStatus::Optimal);
        let optimum = highs.planners[0].objective.expect("objective");
        workload.planners.solver = SolverBackend::Microlp;
        workload.planners.ilp_time_limit_s = 2.0;
        // With `ilp` beside it, the joint solve starts from its plan.
        let microlp = plan(&cluster, &workload, &["ilp", "ilp-batch"]);
        let p = &microlp.planners[1];
        assert!(p.objective.expect("objective") >= optimum - 1e-6);
        assert!(
            p.bound.is_none_or(|b| b <= optimum + 1e-6),
            "bound {:?} above {optimum}",
            p.bound
        );
    }

    #[test]
    fn colocation_lp_bounds_agree_on_the_examples() {
        let cluster_text =
            std::fs::read_to_string(common::root().join("examples/clusters/a100-x16.toml"))
                .expect("cluster");
        let cluster_spec: ClusterSpec = toml::from_str(&cluster_text).expect("valid");
        let cluster = Cluster::from_spec(&cluster_spec);
        for rel in [
            "examples/workloads/colocation-small.toml",
            "examples/workloads/colocation-70b-memory.toml",
        ] {
            let text = std::fs::read_to_string(common::root().join(rel)).expect("workload");
            let spec: ColocationSpec = toml::from_str(&text).expect("valid");
            let s = setup(&cluster, &spec, None, None);
            let horizon = 600.0;
            let solve = |backend| match interval_lp(
                &s,
                horizon,
                SolverSettings {
                    backend,
                    mip_gap: 0.0,
                },
            ) {
                LpBound::Value(v) => v,
                other => panic!("{rel}: {backend:?} gave {other:?}"),
            };
            let (a, b) = (solve(SolverBackend::Microlp), solve(SolverBackend::Highs));
            assert!(close(a, b), "{rel}: microlp {a} vs highs {b}");
        }
    }
}

#[cfg(not(feature = "highs"))]
#[test]
fn asking_for_highs_without_the_feature_is_an_input_error_naming_it() {
    let pair = [
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/tiny-running.toml",
    ];
    for command in [
        vec!["plan"],
        vec!["simulate", "--seeds", "1", "--cycles", "1"],
        vec!["sweep", "--set", "flextopo.alpha=0,1"],
    ] {
        let mut args: Vec<&str> = vec![command[0]];
        args.extend(pair);
        args.extend(&command[1..]);
        args.extend(["--solver", "highs"]);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_coplan"))
            .args(&args)
            .current_dir(common::root())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--features highs"), "{args:?}: {err}");
    }
    // The same choice made in the workload file is refused the same way.
    let dir = std::env::temp_dir().join(format!("coplan-solver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = std::fs::read_to_string(common::root().join(pair[1])).expect("fixture");
    let workload = dir.join("highs.toml");
    std::fs::write(
        &workload,
        format!("{text}\n[planners]\nsolver = \"highs\"\n"),
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(["plan", pair[0]])
        .arg(&workload)
        .current_dir(common::root())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--features highs"));
}

#[test]
fn microlp_is_always_built() {
    assert!(SolverBackend::Microlp.built());
    assert_eq!(SolverBackend::Highs.built(), cfg!(feature = "highs"));
}

/// The backends this binary has.
fn backends() -> Vec<SolverBackend> {
    [SolverBackend::Microlp, SolverBackend::Highs]
        .into_iter()
        .filter(|b| b.built())
        .collect()
}

/// With a time limit far too short, the batch MILP reports `time_limit` (or `no_solution`
/// without an incumbent), never `optimal`, and a bound only when it is a proven lower bound of
/// every plan.
#[test]
fn time_limited_preemption_solves_report_time_limit_and_an_honest_bound() {
    use coplan::plan::PlanStatus;
    let cluster = common::load_cluster("examples/clusters/paper-4090-x100.toml");
    let (mut workload, _) = common::load_preemption("examples/workloads/paper-preemption.toml");
    workload.planners.ilp_time_limit_s = 1e-4;
    for backend in backends() {
        workload.planners.solver = backend;
        let report = common::plan(&cluster, &workload, &["flextopo-imp", "ilp", "ilp-batch"]);
        let objectives: Vec<f64> = report.planners.iter().filter_map(|p| p.objective).collect();
        for p in report.planners.iter().filter(|p| p.name != "flextopo-imp") {
            // The per-event `ilp` has the budget per event and its small MILPs may all be
            // proven within it; the batch MILP cannot be.
            let allowed: &[PlanStatus] = if p.name == "ilp" {
                &[PlanStatus::Optimal, PlanStatus::TimeLimit]
            } else {
                &[PlanStatus::TimeLimit, PlanStatus::NoSolution]
            };
            assert!(
                allowed.contains(&p.status),
                "{backend:?} {}: {:?}",
                p.name,
                p.status
            );
            // Only the batch reference bounds other plans (the per-event `ilp` is optimal per
            // decision on the state it faced, not over the sequence).
            if let (Some(b), "ilp-batch") = (p.bound, p.name.as_str()) {
                assert!(
                    objectives.iter().all(|o| b <= o + 1e-6),
                    "{backend:?} {}: bound {b} above a plan",
                    p.name
                );
            }
        }
    }
}

/// A batch too large to decompose (ten classes) with a time limit far too short for the
/// embedded solver to find an incumbent of its own: `ilp-batch` keeps its warm start, the best
/// sequential plan, as its incumbent (`time_limit`, no bound), never `no_solution`.
#[test]
fn a_batch_stopped_before_its_own_incumbent_keeps_its_warm_start() {
    use coplan::plan::PlanStatus;
    use coplan::spec::{Expect, SourceFile, Spec};
    let cluster = common::load_cluster("examples/clusters/paper-4090-x100.toml");
    let rel = "examples/workloads/paper-preemption.toml";
    let mut text = std::fs::read_to_string(common::root().join(rel)).expect("workload file");
    for k in 0..8 {
        text.push_str(&format!(
            "\n[[workload]]\nname = \"svc-{k}\"\npriority = 90\ngpus = 1\ncores = {}\ntopology_qos = \"best-effort\"\n\n[[preempt]]\nworkload = \"svc-{k}\"\ncount = 6\n",
            2 + k
        ));
    }
    let Spec::Preemption(workload) =
        coplan::spec::load(SourceFile::new(rel, text), Expect::Workload)
            .expect("valid workload")
            .spec
    else {
        panic!("a preemption workload");
    };
    let mut workload = *workload;
    workload.planners.ilp_time_limit_s = 1e-4;
    workload.planners.solver = SolverBackend::Microlp;
    let report = common::plan(&cluster, &workload, &["flextopo-imp", "ilp-batch"]);
    let sequential = report.planners[0].objective.expect("flextopo-imp plans");
    let batch = &report.planners[1];
    assert_eq!(batch.status, PlanStatus::TimeLimit);
    let objective = batch.objective.expect("the warm start");
    // The incumbent is no bound: what is reported is the placement floor, a proven one below.
    assert!(
        batch.bound.is_none_or(|b| b < objective),
        "{:?}",
        batch.bound
    );
    assert!(
        (objective - sequential).abs() <= 1e-9 * sequential.abs().max(1.0),
        "{objective} against the warm start's {sequential}"
    );
}
