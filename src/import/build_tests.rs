//! The builder's tests.

use super::*;

#[test]
fn default_layout_splits_big_nodes_into_two_sockets() {
    let (t, dropped) = default_layout(96, 8, Some("G2"));
    assert_eq!((t.sockets, t.numa_per_socket, t.cores_per_numa), (2, 1, 48));
    assert_eq!(t.gpu_numa, vec![0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(dropped, 0);
    let (t, dropped) = default_layout(63, 2, None);
    assert_eq!((t.sockets, t.cores_per_numa), (2, 31));
    assert_eq!(t.gpu_numa, vec![0, 1]);
    assert_eq!(dropped, 1);
    // Small nodes and odd GPU counts stay on one NUMA node.
    let (t, _) = default_layout(8, 1, None);
    assert_eq!(
        (t.sockets, t.cores_per_numa, t.gpu_numa.clone()),
        (1, 8, vec![0])
    );
    let (t, _) = default_layout(128, 1, None);
    assert_eq!(t.sockets, 1);
    // CPU-only nodes.
    let (t, _) = default_layout(32, 0, None);
    assert_eq!((t.sockets, t.gpu_numa.len()), (2, 0));
}

#[test]
fn identical_layouts_share_a_type_and_names_stay_unique() {
    let mut b = ClusterBuilder::default();
    let (a, _) = default_layout(96, 8, Some("G2"));
    let (c, _) = default_layout(96, 4, Some("T4"));
    assert_eq!(b.add_node("n1", &a, "G2"), "g2-8g-2s2n-96c");
    assert_eq!(b.add_node("n2", &c, "T4"), "t4-4g-2s2n-96c");
    assert_eq!(b.add_node("n3", &a, "G2"), "g2-8g-2s2n-96c");
    let spec = b.build("c", &[]);
    assert_eq!(spec.server_type.len(), 2);
    assert_eq!(spec.pool[0].names, Some(vec!["n1".into(), "n3".into()]));
    assert_eq!(slug("Tesla V100-SXM2-32GB"), "tesla-v100-sxm2-32gb");
    assert_eq!(slug("--"), "x");
}

#[test]
fn qos_overrides_parse_and_reject_with_the_usage() {
    let (class, m) = parse_qos_override("BE=100:none:preemptible").unwrap();
    assert_eq!(class, "BE");
    assert_eq!(
        m,
        QosMapping {
            priority: 100,
            topology_qos: TopologyQos::None,
            preemptible: true
        }
    );
    for bad in ["BE", "BE=x:none", "BE=1:loose", "BE=1:none:yes", "=1:none"] {
        assert!(
            parse_qos_override(bad)
                .unwrap_err()
                .contains("expected CLASS=")
        );
    }
}

#[test]
fn consecutive_preemptors_of_one_class_merge() {
    let v: Vec<(String, Option<String>)> = ["a", "a", "b", "a"]
        .iter()
        .map(|s| (s.to_string(), None))
        .collect();
    let e = preempt_entries(&v);
    assert_eq!(
        e.iter()
            .map(|e| (e.workload.as_str(), e.count))
            .collect::<Vec<_>>(),
        vec![("a", 2), ("b", 1), ("a", 1)]
    );
}
