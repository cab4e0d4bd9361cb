//! Unit tests of levels, required levels and the node allocator, including Gödel's NUMA
//! filter cases S16–S20 re-expressed with GPUs and cores on the `gpu-2s4n8g` node.

use super::graph::{TopoEdge, TopoNode, server_graph};
use super::*;
use crate::spec::cluster::builtin_server_types;

fn builtin(name: &str) -> ServerType {
    let spec = builtin_server_types()
        .into_iter()
        .find(|t| t.name == name)
        .expect("built-in type");
    ServerType::new(&spec)
}

fn req(gpus: u32, cores: u32) -> Request {
    Request::plain(gpus, cores)
}

/// Free resources of `t` after taking away the listed GPUs and cores.
fn free_after(t: &ServerType, used_gpus: &[usize], used_cores: &[usize]) -> (GpuSet, CoreSet) {
    (
        t.whole()
            .gpus
            .minus(GpuSet::from_ids(used_gpus.iter().copied())),
        t.whole()
            .cores
            .minus(CoreSet::from_ids(used_cores.iter().copied())),
    )
}

/// The cores of NUMA node `numa` on `t`, first `n` of them.
fn numa_cores(t: &ServerType, numa: usize, n: usize) -> Vec<usize> {
    t.numa_domain(numa).cores.iter().take(n).collect()
}

#[test]
fn rtx4090_layout_and_required_levels() {
    let t = builtin("rtx4090-8g");
    assert_eq!((t.numa_count(), t.gpu_count(), t.core_count()), (8, 8, 64));
    assert_eq!(
        t.numa_domain(3).cores.to_vec(),
        (24..32).collect::<Vec<u32>>()
    );
    assert_eq!(t.numa_domain(3).gpus.to_vec(), vec![3]);
    assert_eq!(t.socket_domain(1).gpus.to_vec(), vec![4, 5, 6, 7]);
    // DESIGN §4's examples.
    assert_eq!(t.required_level(req(1, 7)), Some(Level::Numa));
    assert_eq!(t.required_level(req(2, 14)), Some(Level::Socket));
    assert_eq!(t.required_level(req(4, 28)), Some(Level::Socket));
    assert_eq!(t.required_level(req(8, 56)), Some(Level::CrossSocket));
    assert_eq!(t.required_level(req(0, 8)), Some(Level::Numa));
    assert_eq!(t.required_level(req(0, 9)), Some(Level::Socket));
    assert_eq!(t.required_level(req(9, 0)), None);
    assert_eq!(t.required_level(req(1, 65)), None);
}

#[test]
fn a100_layout_and_required_levels() {
    let t = builtin("a100-8g");
    assert_eq!((t.numa_count(), t.gpu_count(), t.core_count()), (2, 8, 64));
    assert_eq!(t.numa_domain(1).gpus.to_vec(), vec![4, 5, 6, 7]);
    assert_eq!(t.required_level(req(1, 7)), Some(Level::Numa));
    assert_eq!(t.required_level(req(4, 28)), Some(Level::Numa));
    // One NUMA node per socket: beyond a NUMA node only cross-socket remains.
    assert_eq!(t.required_level(req(5, 10)), Some(Level::CrossSocket));
    assert_eq!(t.required_level(req(2, 40)), Some(Level::CrossSocket));
}

#[test]
fn level_of_a_placement_is_the_smallest_domain_holding_it() {
    let t = builtin("rtx4090-8g");
    let lvl = |g: &[usize], c: &[usize]| {
        t.level_of(
            GpuSet::from_ids(g.iter().copied()),
            CoreSet::from_ids(c.iter().copied()),
        )
    };
    assert_eq!(lvl(&[3], &[24, 25]), Level::Numa);
    assert_eq!(lvl(&[3], &[0]), Level::Socket);
    assert_eq!(lvl(&[4, 5], &[32, 40]), Level::Socket);
    assert_eq!(lvl(&[3, 4], &[]), Level::CrossSocket);
    assert_eq!(lvl(&[], &[]), Level::Numa);
}

#[test]
fn allocator_prefers_the_tightest_numa_node_then_the_lowest_index() {
    let t = builtin("rtx4090-8g");
    // NUMA 2 has 1 GPU and exactly 7 free cores; NUMA 0, 1 have 8 free cores: NUMA 2 leaves less.
    let (g, c) = free_after(&t, &[], &[16]);
    let p = place(&t, g, c, req(1, 7)).expect("fits");
    assert_eq!(p.level, Level::Numa);
    assert_eq!(p.gpus.to_vec(), vec![2]);
    assert_eq!(p.cores.to_vec(), (17..24).collect::<Vec<u32>>());
    // On an empty server: ties go to the lowest index.
    let p = place(&t, t.whole().gpus, t.whole().cores, req(1, 7)).expect("fits");
    assert_eq!(
        (p.gpus.to_vec(), p.cores.to_vec()),
        (vec![0], (0..7).collect())
    );
}

#[test]
fn allocator_falls_back_to_socket_then_cross_socket() {
    let t = builtin("rtx4090-8g");
    let p = place(&t, t.whole().gpus, t.whole().cores, req(2, 14)).expect("fits");
    assert_eq!(p.level, Level::Socket);
    assert_eq!(p.gpus.to_vec(), vec![0, 1]);
    // Cores come from the GPUs' NUMA nodes first.
    assert!(p.cores.iter().all(|c| c < 16));
    // Only one free GPU per socket: a 2-GPU pod must cross sockets.
    let (g, c) = free_after(&t, &[0, 1, 2, 4, 5, 6], &[]);
    let p = place(&t, g, c, req(2, 2)).expect("fits");
    assert_eq!(p.level, Level::CrossSocket);
    assert_eq!(p.gpus.to_vec(), vec![3, 7]);
    assert_eq!(place(&t, g, c, req(3, 0)), None);
}

// --- Gödel NUMA filter cases, re-expressed on gpu-2s4n8g (2 sockets × 2 NUMA × 24 cores,
// 2 GPUs per NUMA; socket 0 = NUMA 0, 1; socket 1 = NUMA 2, 3). coplan has no NUMA
// exclusivity or shared pool, so "exclusive" occupants become pods holding whole NUMA nodes'
// cores and GPUs; each case keeps its verdict (feasible / at which level).

#[test]
fn s16_aligned_pass_lands_on_the_free_socket() {
    let t = builtin("gpu-2s4n8g");
    // p6 holds 1 GPU + all cores of NUMA 0, p7 1 GPU + all cores of NUMA 1.
    let mut cores = numa_cores(&t, 0, 24);
    cores.extend(numa_cores(&t, 1, 24));
    let (g, c) = free_after(&t, &[0, 2], &cores);
    let pod = req(4, 20);
    assert_eq!(t.required_level(pod), Some(Level::Socket));
    let p = place(&t, g, c, pod).expect("feasible on NUMA 2 + 3");
    assert_eq!(p.level, Level::Socket);
    assert_eq!(p.gpus.to_vec(), vec![4, 5, 6, 7]);
    assert!(
        p.cores
            .iter()
            .all(|c| t.socket_of_numa(t.numa_of_core(c)) == 1)
    );
}

#[test]
fn s17_aligned_fail_when_the_free_socket_lost_a_gpu() {
    let t = builtin("gpu-2s4n8g");
    // As S16, plus p9 holding 1 GPU (and 1 core) on NUMA 2: socket 1 has only 3 free GPUs.
    let mut cores = numa_cores(&t, 0, 24);
    cores.extend(numa_cores(&t, 1, 24));
    cores.push(48);
    let (g, c) = free_after(&t, &[0, 2, 4], &cores);
    let pod = req(4, 20);
    let p = place(&t, g, c, pod).expect("placeable only across sockets");
    assert_eq!(p.level, Level::CrossSocket);
    // A guaranteed pod (required: socket) is refused at this level.
    assert!(p.level > t.required_level(pod).expect("fits an empty server"));
}

#[test]
fn s18_cores_need_not_share_the_gpus_numa_node_within_a_socket() {
    let t = builtin("gpu-2s4n8g");
    // All GPUs of socket 0 are taken; NUMA 2 has only 1 free core, NUMA 3 has 24.
    let mut cores = numa_cores(&t, 2, 23);
    cores.extend(numa_cores(&t, 0, 1));
    let (g, c) = free_after(&t, &[0, 1, 2, 3], &cores);
    let p = place(&t, g, c, req(4, 20)).expect("feasible in socket 1");
    assert_eq!(p.level, Level::Socket);
    assert_eq!(p.gpus.to_vec(), vec![4, 5, 6, 7]);
    // Adding a CPU user on NUMA 3 (5 cores) leaves socket 1 with 20 free cores: still fits; a
    // sixth core pushes the cores over to socket 0, across sockets.
    let mut more = cores.clone();
    more.extend(numa_cores(&t, 3, 5));
    let (g2, c2) = free_after(&t, &[0, 1, 2, 3], &more);
    assert_eq!(
        place(&t, g2, c2, req(4, 20)).map(|p| p.level),
        Some(Level::Socket)
    );
    more.push(t.numa_domain(3).cores.iter().nth(5).expect("core"));
    let (g3, c3) = free_after(&t, &[0, 1, 2, 3], &more);
    assert_eq!(
        place(&t, g3, c3, req(4, 20)).map(|p| p.level),
        Some(Level::CrossSocket)
    );
}

#[test]
fn s19_single_numa_fits_only_the_empty_numa_node() {
    let t = builtin("gpu-2s4n8g");
    // p1: NUMA 0 whole (2 GPUs, 24 cores); p2: 1 GPU + 10 cores on NUMA 1; p3: 1 GPU + 12 cores
    // on NUMA 2; NUMA 3 empty.
    let mut cores = numa_cores(&t, 0, 24);
    cores.extend(numa_cores(&t, 1, 10));
    cores.extend(numa_cores(&t, 2, 12));
    let (g, c) = free_after(&t, &[0, 1, 2, 4], &cores);
    for pod in [req(2, 24), req(1, 24)] {
        let p = place(&t, g, c, pod).expect("fits NUMA 3");
        assert_eq!(p.level, Level::Numa);
        assert!(p.gpus.iter().all(|x| t.gpu_numa[x] == 3));
        assert!(p.cores.iter().all(|x| t.numa_of_core(x) == 3));
    }
    // One more core used on NUMA 3 (shared pod p5): no NUMA node fits 24 cores any more.
    let mut more = cores.clone();
    more.extend(numa_cores(&t, 3, 1));
    let (g2, c2) = free_after(&t, &[0, 1, 2, 4], &more);
    let p = place(&t, g2, c2, req(2, 24)).expect("socket 1 still holds it");
    assert_eq!(p.level, Level::Socket);
    assert!(p.level > t.required_level(req(2, 24)).expect("fits"));
}

#[test]
fn s20_cross_socket_refusal_for_a_socket_sized_cpu_request() {
    let t = builtin("gpu-2s4n8g");
    // 10 cores used on NUMA 0 and on NUMA 3: each socket has 38 free cores, together 76.
    let mut cores = numa_cores(&t, 0, 10);
    cores.extend(numa_cores(&t, 3, 10));
    let (g, c) = free_after(&t, &[], &cores);
    let pod = req(0, 40);
    assert_eq!(t.required_level(pod), Some(Level::Socket));
    let p = place(&t, g, c, pod).expect("fits across sockets");
    assert_eq!(p.level, Level::CrossSocket);
}

#[test]
fn graph_matches_the_layout_masks() {
    for spec in builtin_server_types() {
        let cluster = Cluster::from_spec(&crate::spec::ClusterSpec {
            kind: None,
            name: "c".into(),
            server_type: vec![],
            pool: vec![crate::spec::PoolSpec {
                server_type: spec.name.clone(),
                count: 1,
                name_prefix: "n".into(),
                names: None,
                ..Default::default()
            }],
            ..Default::default()
        });
        let t = &cluster.types[0];
        let g = server_graph(&cluster, ServerId(0), None);
        let groups_per_numa = t.cores_per_numa.div_ceil(t.core_group_size);
        assert_eq!(
            g.node_count(),
            1 + t.sockets
                + t.numa_count() * (1 + groups_per_numa + t.cores_per_numa)
                + t.gpu_count(),
            "{}",
            t.name
        );
        let nearby = g.edge_weights().filter(|e| **e == TopoEdge::Nearby).count();
        assert_eq!(
            nearby,
            t.sockets * t.numa_per_socket * (t.numa_per_socket - 1) / 2
        );
        for e in g.edge_indices() {
            let (a, b) = g.edge_endpoints(e).expect("edge");
            match (&g[a], g[e], &g[b]) {
                (TopoNode::Gpu { id, .. }, TopoEdge::Localized, TopoNode::Numa { id: numa }) => {
                    assert_eq!(t.gpu_numa[*id], *numa);
                    assert!(t.numa_domain(*numa).gpus.contains(*id));
                }
                (
                    TopoNode::CoreGroup { numa, .. },
                    TopoEdge::Contains,
                    TopoNode::Core { id, .. },
                ) => {
                    assert!(t.numa_domain(*numa).cores.contains(*id));
                }
                (TopoNode::Socket { id: s }, TopoEdge::Contains, TopoNode::Numa { id: numa }) => {
                    assert_eq!(t.socket_of_numa(*numa), *s);
                }
                (TopoNode::Numa { id: x }, TopoEdge::Nearby, TopoNode::Numa { id: y }) => {
                    assert_eq!(t.socket_of_numa(*x), t.socket_of_numa(*y));
                }
                _ => {}
            }
        }
    }
}
