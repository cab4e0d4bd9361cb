//! What the property tests share: how many cases, where their failures are kept, random
//! clusters of two server types and the QoS classes, fill allocators and preemptors their
//! workloads draw from.

use coplan::spec::preemption::{FillAllocator, PreemptEntry, TopologyQos};
use coplan::spec::{ClusterSpec, Penalty, PoolSpec, ServerTypeSpec};
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

/// Cases per property: 128, or `COPLAN_PROPTEST_CASES` to search longer.
pub fn cases() -> u32 {
    std::env::var("COPLAN_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

/// A property's configuration: `cases` cases, its recorded failures replayed from
/// `<source file stem>.proptest-regressions` beside the test's file. (Proptest's default would
/// keep them in `tests/proptest-regressions/`, beside the folder of the binary's `main.rs`.)
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// The `i`-th topology QoS (of three): guaranteed, best effort, none.
pub fn topology_qos(i: usize) -> TopologyQos {
    [
        TopologyQos::Guaranteed,
        TopologyQos::BestEffort,
        TopologyQos::None,
    ][i]
}

/// The preemptors: for each `(w, count)`, `count` pods of class `w{w}`.
pub fn preempt_entries(preempt: impl IntoIterator<Item = (usize, i64)>) -> Vec<PreemptEntry> {
    preempt
        .into_iter()
        .map(|(w, count)| PreemptEntry::pods_of(&format!("w{w}"), count))
        .collect()
}

/// The `i`-th fill allocator (of four): random, NUMA-aligned, best fit, spread.
pub fn fill_allocator(i: usize) -> FillAllocator {
    [
        FillAllocator::Random,
        FillAllocator::NumaAligned,
        FillAllocator::BestFit,
        FillAllocator::Spread,
    ][i]
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
