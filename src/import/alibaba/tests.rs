//! The Alibaba importer's tests.

use super::options::{AlibabaOptions, At, GpuShares};
use super::pods::peak_moment;
use super::table::read_pods;
use crate::import::alibaba::import;
use crate::import::error::ImportError;

const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,P100\nn1,8000,32768,1,T4\nn2,32000,65536,0,\n";
const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
    p0,4000,1024,1,1000,,BE,Running,0,100,0\n\
    p1,2500,1024,1,500,,LS,Running,10,,10\n\
    p2,1000,1024,0,0,,BE,Running,20,30,20\n\
    p3,4000,1024,1,1000,T4,LS,Pending,60,,\n\
    p4,4000,1024,2,1000,,LS,Running,70,,70\n";

#[test]
fn pods_alive_at_the_moment_run_and_later_ones_preempt() {
    let opts = AlibabaOptions {
        at: Some(At::Time(50.0)),
        next: 5,
        ..Default::default()
    };
    let out = import(("nodes.csv", NODES), ("pods.csv", PODS), &opts).unwrap();
    // p0 and p1 are alive at 50 (p2 left at 30).
    assert_eq!(out.workload.running.len(), 2);
    assert_eq!(out.summary.rounded["gpu_shares_to_one_whole_gpu"], 1);
    assert_eq!(out.summary.rounded["pod_cpu_to_whole_cores"], 1);
    let preempt: Vec<(String, i64)> = out
        .workload
        .preempt
        .iter()
        .map(|p| (p.workload.clone(), p.count))
        .collect();
    assert_eq!(preempt, vec![("ls-1g4c".into(), 1), ("ls-2g4c".into(), 1)]);
    assert_eq!(out.summary.dropped["preemptor_gpu_spec_constraints"], 1);
    let be = out
        .workload
        .workload
        .iter()
        .find(|w| w.name == "be-1g4c")
        .unwrap();
    assert!(be.preemptible);
    assert_eq!(out.cluster.pool.len(), 3);
    assert_eq!(out.summary.defaulted["nodes_with_the_default_layout"], 3);
}

#[test]
fn the_peak_is_the_earliest_moment_with_the_most_gpus() {
    let (rows, _) = read_pods(1, "pods.csv", PODS).unwrap();
    // p0 (1) + p1 (1) from 10; p4 (2) from 70 after p0 left at 100? No: p0 leaves at 100,
    // so 70..100 holds 4.
    assert_eq!(peak_moment(&rows, GpuShares::Whole), 70.0);
    assert_eq!(peak_moment(&rows, GpuShares::Drop), 70.0);
}

#[test]
fn sampled_lists_fill_then_the_next_pods_preempt() {
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1,1,1000\nb,1000,1,1,1000\nc,1000,1,1,1000\nd,1000,1,2,1000\n";
    let opts = AlibabaOptions {
        fill: 0.6,
        next: 1,
        at: Some(At::Time(3.0)),
        ..Default::default()
    };
    let out = import(("nodes.csv", NODES), ("s.csv", pods), &opts).unwrap();
    // 3 GPUs in all: two pods reach 2/3 ≥ 0.6.
    assert_eq!(out.workload.running.len(), 2);
    assert_eq!(out.workload.preempt[0].workload, "ls-1g1c");
    assert!(
        out.summary
            .warnings
            .iter()
            .any(|w| w.contains("--at is ignored"))
    );
}

#[test]
fn a_timed_list_as_a_sequence_keeps_each_pods_qos() {
    let opts = AlibabaOptions {
        as_sequence: true,
        fill: 0.5,
        next: 3,
        ..Default::default()
    };
    let out = import(("nodes.csv", NODES), ("pods.csv", PODS), &opts).unwrap();
    // p0 (BE) and p1 (LS) fill 2 of 3 GPUs; p2 (BE, CPU only) would have followed.
    let running: Vec<&str> = out
        .workload
        .running
        .iter()
        .map(|r| r.workload.as_str())
        .collect();
    assert_eq!(running, vec!["be-1g4c", "ls-1g3c"]);
    let preempt: Vec<&str> = out
        .workload
        .preempt
        .iter()
        .map(|p| p.workload.as_str())
        .collect();
    assert_eq!(preempt, vec!["be-0g1c", "ls-1g4c", "ls-2g4c"]);
    assert_eq!(out.summary.dropped["preemptor_gpu_spec_constraints"], 1);
}

#[test]
fn malformed_rows_name_their_line_and_column() {
    let bad = "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,1,2,P100\n";
    match import(
        ("nodes.csv", bad),
        ("pods.csv", PODS),
        &AlibabaOptions::default(),
    ) {
        Err(ImportError::At {
            file,
            line,
            message,
            ..
        }) => {
            assert_eq!((file, line), (0, 2));
            assert!(message.contains("cpu_milli"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let bad = "name,cpu_milli\n";
    assert!(matches!(
        import(
            ("nodes.csv", NODES),
            ("pods.csv", bad),
            &AlibabaOptions::default()
        ),
        Err(ImportError::At {
            file: 1,
            line: 1,
            ..
        })
    ));
}

#[test]
fn the_peak_of_huge_gpu_counts_does_not_overflow() {
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
        p0,1000,1024,18446744073709551615,1000,,BE,Running,0,100,0\n\
        p1,1000,1024,18446744073709551615,1000,,BE,Running,10,,10\n\
        p2,1000,1024,1,1000,,LS,Pending,60,,\n";
    let opts = AlibabaOptions {
        at: Some(At::Peak),
        next: 1,
        ..Default::default()
    };
    // Pods that fit no node are counted, not placed; the peak is where both are held.
    let out = import(("nodes.csv", NODES), ("pods.csv", pods), &opts);
    assert!(out.is_ok(), "{:?}", out.err());
}
