use super::{NODE_BUDGET, exact_optimum, exact_optimum_with_stats};
use crate::preempt::exact::ilp::brute_force_optimum;
use crate::preempt::exact::per_event::milp_event_optimum as milp_optimum;
use crate::preempt::problem::Problem;
use crate::preempt::scenario;
use crate::spec::PreemptionSpec;
use crate::spec::{ClusterSpec, PoolSpec};
use crate::topology::Cluster;

fn cluster(count: i64) -> Cluster {
    Cluster::from_spec(&ClusterSpec {
        kind: None,
        name: "c".into(),
        server_type: Vec::new(),
        pool: vec![PoolSpec {
            server_type: "gpu-2s4n8g".into(),
            count,
            name_prefix: "n".into(),
            names: None,
            ..Default::default()
        }],
        ..Default::default()
    })
}

fn spec(text: &str) -> PreemptionSpec {
    toml::from_str(text).expect("valid spec")
}

/// Both solvers and brute force on every preemptor of `spec`, each decided on the state
/// the exact solver's decisions leave.
fn agree(cluster: &Cluster, spec: &PreemptionSpec) {
    let problem = Problem::new(cluster, spec);
    let mut state = scenario::initial_state(cluster, spec, None).expect("state");
    let preemptors = scenario::preemptors(cluster, spec, &mut state);
    for p in &preemptors {
        let exact = exact_optimum(&problem, &state, p).expect("exact");
        let milp = milp_optimum(&problem, &state, p).expect("milp");
        let brute = brute_force_optimum(&problem, &state, p);
        assert!((exact.cost - milp.cost).abs() <= 1e-9, "{p:?}");
        assert!((exact.cost - brute).abs() <= 1e-9, "{p:?}");
        assert!(exact.proven);
        crate::preempt::apply::apply(&problem, &mut state, p, &exact.decision).expect("applies");
    }
}

#[test]
fn agrees_with_the_milp_and_brute_force_on_a_fragmented_server() {
    // Two servers of 2 sockets × 4 NUMA nodes, 8 GPUs and 64 cores, filled with 1-GPU pods
    // of two priorities; guaranteed and best-effort preemptors of 2 and 4 GPUs.
    let spec = spec(
        r#"
kind = "preemption"
[[workload]]
name = "low"
priority = 1
gpus = 1
cores = 5
preemptible = true
[[workload]]
name = "mid"
priority = 5
gpus = 1
cores = 3
preemptible = true
[[workload]]
name = "b"
priority = 10
gpus = 2
cores = 10
topology_qos = "guaranteed"
[[workload]]
name = "c"
priority = 10
gpus = 4
cores = 20
topology_qos = "best-effort"
[fill]
mix = { low = 2.0, mid = 1.0 }
target_gpu_utilization = 1.0
allocator = "random"
churn_rounds = 2
seed = 4
[[preempt]]
workload = "b"
count = 3
[[preempt]]
workload = "c"
count = 2
"#,
    );
    agree(&cluster(2), &spec);
}

#[test]
fn ties_go_to_the_best_chain_key_and_a_tiny_budget_falls_back_to_the_milp() {
    // Every victim costs the same: the chain key (latest start among the victims, then
    // the server name) decides, within a server too.
    let spec = spec(
        r#"
kind = "preemption"
[[workload]]
name = "a"
priority = 1
gpus = 1
cores = 1
preemptible = true
[[workload]]
name = "b"
priority = 9
gpus = 1
cores = 1
[[running]]
workload = "a"
node = "n1"
gpus = [0]
cores = [0]
start_time_s = 10
[[running]]
workload = "a"
node = "n1"
gpus = [1]
cores = [8]
start_time_s = 30
[[running]]
workload = "a"
node = "n0"
gpus = [0]
cores = [0]
start_time_s = 20
[fill]
mix = { a = 1.0 }
target_gpu_utilization = 1.0
allocator = "best-fit"
churn_rounds = 0
seed = 1
[[preempt]]
workload = "b"
count = 1
"#,
    );
    let cluster = cluster(2);
    let problem = Problem::new(&cluster, &spec);
    let mut state = scenario::initial_state(&cluster, &spec, None).expect("state");
    let preemptors = scenario::preemptors(&cluster, &spec, &mut state);
    let (exact, stats) =
        exact_optimum_with_stats(&problem, &state, &preemptors[0], NODE_BUDGET).expect("exact");
    let chosen = &exact.decision.victims;
    assert_eq!(chosen.len(), 1);
    let victim = state.pod(chosen[0]).expect("victim");
    // The fill's pods start at 0, so the latest start is the running pod's 30 s on n1.
    assert_eq!(victim.start_time_s, Some(30.0));
    assert_eq!(stats.milp_fallbacks, 0);
    let milp = milp_optimum(&problem, &state, &preemptors[0]).expect("milp");
    assert!((exact.cost - milp.cost).abs() <= 1e-9);
    // A budget of one node sends every searched server to its MILP: still the optimum.
    let (tiny, stats) =
        exact_optimum_with_stats(&problem, &state, &preemptors[0], 1).expect("fallback");
    assert!(stats.milp_fallbacks > 0);
    assert!((tiny.cost - exact.cost).abs() <= 1e-9);
    assert!(tiny.proven);
}
