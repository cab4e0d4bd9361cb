//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod decisions;

use std::path::PathBuf;

use coplan::plan::preemption::PreemptionPlan as PlanReport;
use coplan::preempt::planning::{self as engine, PlanOptions};
use coplan::spec::{
    self, ClusterSpec, Expect, Penalty, PoolSpec, PreemptionSpec, ServerTypeSpec, SourceFile, Spec,
};
use coplan::topology::Cluster;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `coplan` binary from the repository root without colour: (exit code, stdout,
/// stderr).
pub fn run_coplan<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("the coplan binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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

/// Cases per property: 128, or `COPLAN_PROPTEST_CASES` to search longer.
pub fn cases() -> u32 {
    std::env::var("COPLAN_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

/// Server type `t{i}`: `sockets` × `numa` NUMA nodes of `cores` cores, `gpus_per_numa` GPUs on
/// each.
pub fn server_type(
    i: usize,
    (sockets, numa, cores, gpus_per_numa): (i64, i64, i64, usize),
    penalty: Penalty,
) -> ServerTypeSpec {
    ServerTypeSpec {
        name: format!("t{i}"),
        gpu_model: None,
        gpu_memory_mib: 0,
        sockets,
        numa_per_socket: numa,
        cores_per_numa: cores,
        core_group_size: None,
        gpu_numa: (0..sockets * numa)
            .flat_map(|n| std::iter::repeat_n(n, gpus_per_numa))
            .collect(),
        penalty,
        topology_policy: None,
        topology_scope: None,
        gpu_resource: None,
        gpu_pcie_root: Vec::new(),
        devices: Vec::new(),
    }
}

/// `na` servers `a…` of type `a` and `nb` servers `b…` of type `b`.
pub fn two_pools(a: ServerTypeSpec, b: ServerTypeSpec, na: i64, nb: i64) -> ClusterSpec {
    let mut pool = vec![PoolSpec {
        server_type: "t0".into(),
        count: na,
        name_prefix: "a".into(),
        names: None,
        ..Default::default()
    }];
    if nb > 0 {
        pool.push(PoolSpec {
            server_type: "t1".into(),
            count: nb,
            name_prefix: "b".into(),
            names: None,
            ..Default::default()
        });
    }
    ClusterSpec {
        kind: None,
        name: "random".into(),
        server_type: vec![a, b],
        pool,
        ..Default::default()
    }
}
