//! Spec files of the repository loaded and planned in-process.

use coplan::plan::preemption::PreemptionPlan as PlanReport;
use coplan::preempt::planning::{self as engine, PlanOptions};
use coplan::spec::{self, ClusterSpec, Expect, PreemptionSpec, SourceFile, Spec};
use coplan::topology::Cluster;

use super::process::root;

/// Every preemption planner, named here so that a test lists what it runs.
pub const EVERY_PREEMPTION_PLANNER: [&str; 6] = [
    "k8s-default",
    "k8s-nrt",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

pub fn load_cluster(rel: &str) -> ClusterSpec {
    let text = std::fs::read_to_string(root().join(rel)).expect("cluster file");
    match spec::load(SourceFile::new(rel, text), Expect::Cluster)
        .expect("valid cluster")
        .spec
    {
        Spec::Cluster(c) => c,
        _ => panic!("{rel} is not a cluster"),
    }
}

pub fn load_preemption(rel: &str) -> (PreemptionSpec, String) {
    let text = std::fs::read_to_string(root().join(rel)).expect("workload file");
    match spec::load(SourceFile::new(rel, text.clone()), Expect::Workload)
        .expect("valid workload")
        .spec
    {
        Spec::Preemption(p) => (*p, text),
        _ => panic!("{rel} is not a preemption workload"),
    }
}

pub fn plan(cluster: &ClusterSpec, workload: &PreemptionSpec, planners: &[&str]) -> PlanReport {
    let c = Cluster::from_spec(cluster);
    let options = PlanOptions {
        worst: None,
        planners: Some(planners.iter().map(|s| s.to_string()).collect()),
        seed: None,
        ..PlanOptions::default()
    };
    engine::plan(&c, workload, &options).expect("plan succeeds and verifies")
}

/// Value of a `# key: value` header line of a fixture.
pub fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
}
