//! Preemption planners on named scenarios: the Kubernetes ranking and victim cases (S1–S8,
//! S14 of the prior-art notes) and topology cases where the default and FlexTopo must differ.

mod scheduling_rules;

use crate::common::{self, header, load_cluster, load_preemption, plan};
use coplan::plan::preemption::EventOutcome as Outcome;
use coplan::topology::Level;

#[test]
fn kubernetes_ranking_and_victim_scenarios() {
    let dir = common::root().join("tests/fixtures/preemption");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("k8s-s"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 16);
    for path in files {
        let rel = format!(
            "tests/fixtures/preemption/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let (workload, text) = load_preemption(&rel);
        let cluster = load_cluster(header(&text, "cluster").expect("cluster header"));
        let report = plan(&cluster, &workload, &["k8s-default", "k8s-nrt"]);
        let event = &report.planners[0].events[0];
        // Without a guaranteed requirement the topology-aware filter is the count test.
        if workload
            .workload
            .iter()
            .all(|w| w.topology_qos != coplan::spec::preemption::TopologyQos::Guaranteed)
        {
            assert_eq!(
                &report.planners[1].events[0].victims, &event.victims,
                "{rel}: k8s-nrt"
            );
            assert_eq!(
                report.planners[1].events[0].node, event.node,
                "{rel}: k8s-nrt"
            );
        }
        let expected_node = header(&text, "expect-node").expect("expect-node");
        let mut expected: Vec<String> = match header(&text, "expect-victims") {
            Some("-") | None => vec![],
            Some(v) => v.split_whitespace().map(String::from).collect(),
        };
        expected.sort();
        let mut victims = event.victims.clone();
        victims.sort();
        assert_eq!(event.node.as_deref(), Some(expected_node), "{rel}: node");
        assert_eq!(victims, expected, "{rel}: victims");
        assert!(event.placed, "{rel}: the preemptor is placed");
    }
}

const TOPOLOGY_PLANNERS: [&str; 5] = [
    "k8s-default",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

#[test]
fn derived_combination_case_needs_both_socket1_pods() {
    // S16's node with both NUMA nodes of socket 1 half-used by low-priority pods: counts fit
    // without eviction, but a socket-aligned placement needs both pods gone.
    let cluster = load_cluster("tests/fixtures/preemption/topo-gpu-2s4n8g-x1.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-derived-combination.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let by = |n: &str| {
        report
            .planners
            .iter()
            .find(|p| p.name == n)
            .expect("planner ran")
    };
    let k8s = &by("k8s-default").events[0];
    assert!(k8s.victims.is_empty(), "the blind default evicts nothing");
    assert_eq!(
        k8s.outcome,
        Outcome::Refused,
        "and fails admission across sockets"
    );
    assert_eq!(k8s.level, Some(Level::CrossSocket));
    for name in ["flextopo-imp", "flextopo-exhaustive", "ilp", "ilp-batch"] {
        let e = &by(name).events[0];
        assert_eq!(sorted(&e.victims), vec!["low-n2-0", "low-n3-0"], "{name}");
        assert_eq!(e.level, Some(Level::Socket), "{name}");
        assert!(e.hit, "{name}");
    }
}

#[test]
fn rtx4090_guaranteed_pod_default_refused_flextopo_aligned() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let k8s = &report.planners[0].events[0];
    assert_eq!(
        k8s.node.as_deref(),
        Some("node-0"),
        "zero-victim server first"
    );
    assert_eq!(k8s.outcome, Outcome::Refused);
    // Evicting the NUMA 1 pod of node-0 frees GPU 1 next to the free GPU 0: one victim aligns
    // the pod in socket 0, cheaper than two on the full node-1.
    for planner in &report.planners[1..] {
        let e = &planner.events[0];
        assert_eq!(e.node.as_deref(), Some("node-0"), "{}", planner.name);
        assert_eq!(e.level, Some(Level::Socket), "{}", planner.name);
        assert_eq!(e.victims.len(), 1, "{}", planner.name);
        assert!(e.hit);
        if planner.name.starts_with("flextopo") {
            // Equal candidates in either socket: the victim names break the tie.
            assert_eq!(e.victims, vec!["batch-0"]);
        }
    }
}

#[test]
fn a100_guaranteed_pod_needs_one_numa_node() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-a100-x2.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-a100-guaranteed.toml");
    let report = plan(&cluster, &workload, &TOPOLOGY_PLANNERS);
    let k8s = &report.planners[0].events[0];
    assert_eq!(k8s.outcome, Outcome::Refused);
    assert_eq!(k8s.level, Some(Level::CrossSocket));
    let imp = &report.planners[1].events[0];
    assert_eq!(imp.level, Some(Level::Numa));
    assert_eq!(imp.required_level, Some(Level::Numa));
    // Evicting one 2-GPU pod on a100-0 completes a NUMA node (a100-1 would need two victims);
    // batch-0-0 and batch-1-0 tie on every key but the victim names.
    assert_eq!(imp.node.as_deref(), Some("a100-0"));
    assert_eq!(imp.victims, vec!["batch-0-0"]);
    assert!(report.planners.iter().skip(1).all(|p| p.events[0].hit));
}

#[test]
fn enumeration_budget_truncates_and_says_so() {
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.flextopo.max_subset_evaluations = 1;
    let report = plan(
        &cluster,
        &workload,
        &["flextopo-imp", "flextopo-exhaustive"],
    );
    for p in &report.planners {
        assert!(
            p.truncated,
            "{}: the budget cut the enumeration short",
            p.name
        );
        assert!(p.events[0].truncated, "{}", p.name);
        assert!(
            p.metrics.subsets_evaluated <= 2,
            "{}: one subset per server",
            p.name
        );
    }
}

#[test]
fn calibrated_topology_score_prices_levels_by_measured_penalty() {
    use coplan::spec::preemption::{TopologyScore, TopologyScoreName};
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.flextopo.topology_score = TopologyScore::Named(TopologyScoreName::Calibrated);
    let report = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &report.planners[0].events[0];
    assert_eq!(e.level, Some(Level::Socket));
    // One victim of the lowest priority (per_victim 1) + topology 2 · (1 − 1/1.2).
    let expected = 1.0 + 2.0 * (1.0 - 1.0 / 1.2);
    assert!(
        (e.cost - expected).abs() < 1e-9,
        "cost {} vs {expected}",
        e.cost
    );
    assert!((report.planners[0].metrics.slowdown_mean.unwrap_or(0.0) - 1.2).abs() < 1e-9);
}

#[test]
fn victims_score_basis_prefers_victims_within_one_numa_node() {
    use coplan::spec::preemption::ScoreBasis;
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x1.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/score-basis.toml");
    workload.flextopo.alpha = 0.0;
    let placement = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &placement.planners[0].events[0];
    assert_eq!(
        (e.victims.clone(), e.level),
        (vec!["alpha-0".to_string()], Some(Level::Numa))
    );
    workload.flextopo.score_basis = ScoreBasis::Victims;
    let victims = plan(&cluster, &workload, &["flextopo-imp"]);
    let e = &victims.planners[0].events[0];
    assert_eq!(
        (e.victims.clone(), e.level),
        (vec!["zeta-0".to_string()], Some(Level::Numa))
    );
}

fn by<'r>(
    report: &'r coplan::plan::preemption::PreemptionPlan,
    name: &str,
) -> &'r coplan::plan::preemption::PreemptionEvent {
    &report
        .planners
        .iter()
        .find(|p| p.name == name)
        .expect("planner ran")
        .events[0]
}

/// `k8s-nrt` held against the upstream dry run (scheduler-plugins NodeResourceTopologyMatch
/// with default preemption): the victims follow from "remove all lower-priority pods, reprieve
/// the most important first while the pod still passes the topology-aware filter".
#[test]
fn k8s_nrt_picks_the_victims_the_topology_aware_dry_run_implies() {
    // node-0 (free GPUs 0 and 4, in different sockets): removing all six pods and reprieving
    // batch-5 … batch-1 (larger name = more important at equal priority and start) keeps a
    // socket-0 fit until batch-0 (GPU 1) would take the second GPU of socket 0.
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    let report = plan(&cluster, &workload, &["k8s-default", "k8s-nrt"]);
    let nrt = by(&report, "k8s-nrt");
    assert_eq!(nrt.node.as_deref(), Some("node-0"));
    assert_eq!(nrt.victims, vec!["batch-0"]);
    assert_eq!(nrt.level, Some(Level::Socket));
    assert_eq!(nrt.outcome, Outcome::Placed);
    assert_eq!(by(&report, "k8s-default").outcome, Outcome::Refused);

    // Derived combination case: the topology-aware fit needs all of socket 1, so neither
    // low-priority pod is reprieved (a count-based reprieve would keep both: the counts fit).
    let cluster = load_cluster("tests/fixtures/preemption/topo-gpu-2s4n8g-x1.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/topo-derived-combination.toml");
    let report = plan(&cluster, &workload, &["k8s-default", "k8s-nrt"]);
    let nrt = by(&report, "k8s-nrt");
    assert_eq!(sorted(&nrt.victims), vec!["low-n2-0", "low-n3-0"]);
    assert_eq!(nrt.level, Some(Level::Socket));
    assert!(by(&report, "k8s-default").victims.is_empty());

    // Importance-first reprieve is not a minimal search: the dry run keeps `mid` (priority 45)
    // and evicts both priority-40 pods; IMP evicts `mid` alone.
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x1.toml");
    let (workload, _) = load_preemption("tests/fixtures/preemption/nrt-reprieve-order.toml");
    let report = plan(&cluster, &workload, &["k8s-nrt", "flextopo-imp"]);
    assert_eq!(
        sorted(&by(&report, "k8s-nrt").victims),
        vec!["low-0", "low-1"]
    );
    assert_eq!(by(&report, "k8s-nrt").level, Some(Level::Socket));
    assert_eq!(by(&report, "flextopo-imp").victims, vec!["mid-0"]);
}

#[test]
fn under_bind_admission_the_default_places_misaligned_and_k8s_nrt_aligns() {
    use coplan::spec::preemption::Admission;
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.simulation.admission = Admission::Bind;
    let report = plan(
        &cluster,
        &workload,
        &["k8s-default", "k8s-nrt", "ilp", "ilp-batch"],
    );
    let k8s = by(&report, "k8s-default");
    assert_eq!(k8s.outcome, Outcome::PlacedMiss, "nothing refuses it");
    assert!(k8s.placed && !k8s.hit);
    assert!(k8s.victims.is_empty());
    assert_eq!(k8s.level, Some(Level::CrossSocket));
    let nrt = by(&report, "k8s-nrt");
    assert_eq!((nrt.outcome, nrt.hit), (Outcome::Placed, true));
    assert_eq!(nrt.victims, vec!["batch-0"]);
    // Under bind the optimum may take the misaligned zero-victim placement, and with the
    // default weights it does: topology 2 × (1 − 0.467) = 1.066 against one victim (1.0) plus
    // the socket level (2 × (1 − 0.8) = 0.4).
    let ilp = by(&report, "ilp");
    assert!(ilp.victims.is_empty());
    assert_eq!(ilp.outcome, Outcome::PlacedMiss);
}

#[test]
fn the_verifier_checks_placed_miss_outcomes() {
    use coplan::preempt::problem::Problem;
    use coplan::preempt::scenario;
    use coplan::spec::preemption::Admission;
    use coplan::topology::Cluster;
    use coplan::verify::preemption::verify_plan;
    let cluster_spec = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (mut workload, _) = load_preemption("tests/fixtures/preemption/topo-4090-guaranteed.toml");
    workload.simulation.admission = Admission::Bind;
    let report = plan(&cluster_spec, &workload, &["k8s-default"]);
    let cluster = Cluster::from_spec(&cluster_spec);
    let _ = Problem::new(&cluster, &workload);
    let mut initial = scenario::initial_state(&cluster, &workload, None).expect("state");
    let preemptors = scenario::preemptors(&cluster, &workload, &mut initial);
    let planner = &report.planners[0];
    assert_eq!(planner.events[0].outcome, Outcome::PlacedMiss);
    verify_plan(&cluster, &workload, &initial, &preemptors, planner).expect("accepted");

    // The same plan under kubelet admission: the pod would have been refused.
    let mut kubelet = workload.clone();
    kubelet.simulation.admission = Admission::Kubelet;
    let err =
        verify_plan(&cluster, &kubelet, &initial, &preemptors, planner).expect_err("rejected");
    assert!(
        err.reason.contains("below its required level"),
        "{}",
        err.reason
    );

    // A miss reported as a plain placement, and a hit reported as a miss.
    let mut wrong = planner.clone();
    wrong.events[0].outcome = Outcome::Placed;
    let err =
        verify_plan(&cluster, &workload, &initial, &preemptors, &wrong).expect_err("rejected");
    assert!(err.reason.contains("placed-miss"), "{}", err.reason);
    // Per-class metrics recompute too.
    let mut wrong = planner.clone();
    wrong.metrics.slowdown_guaranteed = Some(1.0);
    let err =
        verify_plan(&cluster, &workload, &initial, &preemptors, &wrong).expect_err("rejected");
    assert!(err.reason.contains("slowdown_guaranteed"), "{}", err.reason);
    let nrt = plan(&cluster_spec, &workload, &["k8s-nrt"]);
    let mut wrong = nrt.planners[0].clone();
    wrong.events[0].outcome = Outcome::PlacedMiss;
    let err =
        verify_plan(&cluster, &workload, &initial, &preemptors, &wrong).expect_err("rejected");
    assert!(err.reason.contains("must be placed"), "{}", err.reason);
}

#[test]
fn imp_scope_and_priority_norm_change_the_choice_as_documented() {
    use coplan::spec::preemption::{ImpScope, PriorityNorm};
    let cluster = load_cluster("tests/fixtures/preemption/topo-4090-x2.toml");
    let (base, _) = load_preemption("tests/fixtures/preemption/imp-scope.toml");
    let chosen = |scope: ImpScope, norm: PriorityNorm, alpha: f64| {
        let mut w = base.clone();
        w.flextopo.imp_scope = scope;
        w.flextopo.priority_norm = norm;
        w.flextopo.alpha = alpha;
        let report = plan(&cluster, &w, &["flextopo-imp"]);
        let e = by(&report, "flextopo-imp");
        (e.node.clone().unwrap_or_default(), e.victims.len(), e.level)
    };
    use ImpScope::*;
    use PriorityNorm::*;
    let one = ("node-0".to_string(), 1, Some(Level::CrossSocket));
    let two = ("node-1".to_string(), 2, Some(Level::Socket));
    // Cluster scope: only one-victim candidates exist, whatever the score.
    for norm in [Candidates, Spec, InverseSum] {
        assert_eq!(chosen(Cluster, norm, 0.0), one);
        assert_eq!(chosen(Cluster, norm, 0.5), one);
    }
    // Node scope, pure topology (α = 0, the released code): the socket-level candidate.
    assert_eq!(chosen(Node, Candidates, 0.0), two);
    // α = 0.5. candidates: P = 1 vs 0, S = 0.5 + 0.5·0.467 = 0.734 > 0.5·0.8 = 0.4.
    assert_eq!(chosen(Node, Candidates, 0.5), one);
    // spec (range 10–10, u = 1 per victim): P = 1/2 vs 1/3, S = 0.484 < 0.567.
    assert_eq!(chosen(Node, Spec, 0.5), two);
    // inverse-sum: P = 1/10 vs 1/20, S = 0.284 < 0.425.
    assert_eq!(chosen(Node, InverseSum, 0.5), two);
}

#[test]
fn both_event_solvers_give_the_same_decision_gaps_on_the_paper_example() {
    // The other planners face the same states whatever solves the per-event optimum, so
    // their decision gaps must agree; `ilp` itself may break a tie differently (the MILP
    // returns one optimal victim set per server, the exact search the chain's best of all).
    use coplan::spec::preemption::EventSolver;
    let cluster = load_cluster("examples/clusters/paper-4090-x100.toml");
    let (mut workload, _) = load_preemption("examples/workloads/paper-preemption.toml");
    let planners = ["k8s-default", "flextopo-imp", "ilp"];
    let mut gaps = Vec::new();
    for solver in [EventSolver::Exact, EventSolver::Milp] {
        workload.planners.event_solver = solver;
        let report = plan(&cluster, &workload, &planners);
        let ilp = &report.planners[2];
        assert_eq!(ilp.status, coplan::plan::PlanStatus::Optimal, "{solver:?}");
        assert_eq!(ilp.decision_gap, Some(0.0));
        gaps.push(
            report.planners[..2]
                .iter()
                .map(|p| p.decision_gap.expect("ilp ran"))
                .collect::<Vec<f64>>(),
        );
    }
    for (exact, milp) in gaps[0].iter().zip(&gaps[1]) {
        assert!(
            (exact - milp).abs() <= 1e-9,
            "exact {exact} against MILP {milp}"
        );
    }
}

#[test]
fn event_solver_flag_picks_the_per_event_solver_and_is_refused_for_colocation() {
    let pair = [
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/tiny-running.toml",
    ];
    let objective = |solver: &str| {
        let (code, out, err) = common::run_coplan(&[
            "plan",
            pair[0],
            pair[1],
            "--planners",
            "k8s-default,ilp",
            "--format",
            "json",
            "--event-solver",
            solver,
        ]);
        assert_eq!(code, 0, "{solver}: {err}");
        let plan: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let ilp = &plan["planners"][1];
        assert_eq!(ilp["status"], "optimal", "{solver}");
        (
            ilp["objective"].as_f64().expect("objective"),
            plan["planners"][0]["decision_gap"]
                .as_f64()
                .expect("decision gap"),
        )
    };
    let (exact, milp) = (objective("exact"), objective("milp"));
    assert!((exact.0 - milp.0).abs() <= 1e-9 && (exact.1 - milp.1).abs() <= 1e-9);
    let (code, _, err) =
        common::process::small_sweep(pair[0], pair[1], "ilp", &["--event-solver", "milp"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = common::run_coplan(&[
        "plan",
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
        "--event-solver",
        "exact",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("applies to preemption workloads"), "{err}");
}

/// The batch model lets `online` evict two pods so that `batch-next`, of the victims' own
/// priority, takes the second one's core. Enacted as a scheduler would (only the victims each
/// preemptor needs), that plan leaves `batch-next` unplaced: `ilp-batch` reports the model's
/// optimum as a bound (`gap_limit`), never as a plan, and no planner is above it.
#[test]
fn a_batch_optimum_that_over_evicts_is_a_bound_not_a_plan() {
    let rel = "tests/fixtures/preemption/over-eviction.toml";
    let (workload, text) = load_preemption(rel);
    let cluster = load_cluster(header(&text, "cluster").expect("cluster header"));
    let report = plan(
        &cluster,
        &workload,
        &["k8s-default", "flextopo-imp", "ilp-batch"],
    );
    let batch = &report.planners[2];
    assert_eq!(batch.status, coplan::plan::PlanStatus::GapLimit);
    let bound = batch.bound.expect("a proven bound");
    assert!((bound - 2.0).abs() < 1e-9, "the model's optimum: {bound}");
    for p in &report.planners {
        let objective = p.objective.expect("an objective");
        assert!((objective - 1001.0).abs() < 1e-9, "{}: {objective}", p.name);
        assert!(p.gap_is_bound, "{}: its gap is against a bound", p.name);
    }
    let online = &batch.events[0];
    assert!(online.placed);
    assert_eq!(online.victims.len(), 1, "only the victim it needs");
    assert!(
        !batch.events[1].placed,
        "batch-next cannot evict its own priority"
    );
}

/// Servers in identical states form one group, whatever their pods' ids; a solution of one
/// server's subproblem moves onto another of its group with the matching pods.
#[test]
fn identical_servers_form_one_group_and_share_solutions() {
    use coplan::preempt::exact::ilp_batch::model::{self as batch_model, Counts};
    use coplan::preempt::exact::ilp_batch::state_classes::state_classes;
    use coplan::preempt::problem::Problem;
    use coplan::preempt::scenario;
    use coplan::solver::Deadline;
    use coplan::topology::Cluster;

    let rel = "tests/fixtures/preemption/identical-states.toml";
    let (workload, text) = load_preemption(rel);
    let cluster = Cluster::from_spec(&load_cluster(header(&text, "cluster").expect("cluster")));
    let problem = Problem::new(&cluster, &workload);
    let mut initial = scenario::initial_state(&cluster, &workload, None).expect("a state");
    let preemptors = scenario::preemptors(&cluster, &workload, &mut initial);
    let classes = batch_model::classes(&preemptors);
    let states = state_classes(&problem, &initial, &preemptors, &classes, 100);
    let groups: Vec<Vec<u32>> = states
        .iter()
        .map(|s| s.members.iter().map(|m| m.server.0).collect())
        .collect();
    assert_eq!(groups, vec![vec![0, 1], vec![2, 3]]);
    // Four instances on a busy server need its batch pod gone: the solution on gpu-2 moved
    // onto gpu-3 evicts gpu-3's own pod.
    let busy = &states[1];
    let list = (&initial, preemptors.as_slice(), classes.as_slice());
    let solved = batch_model::solve_on_server(
        &problem,
        list,
        busy.members[0].server,
        Counts::Exactly(&[4]),
        &Deadline::after(10.0),
    )
    .expect("solves")
    .expect("feasible");
    assert_eq!(solved.evicted, busy.members[0].pods);
    let moved = busy.moved(&solved, busy.members[0].server, &busy.members[1]);
    assert_eq!(moved.evicted, busy.members[1].pods);
    assert!(
        moved
            .placed
            .iter()
            .all(|p| p.server == busy.members[1].server)
    );
    assert_eq!(moved.objective, solved.objective);
}
