use super::*;
use crate::spec::preemption::Admission;
use crate::spec::{ClusterSpec, PoolSpec};
use crate::topology::Level;

fn cluster(servers: i64) -> Cluster {
    Cluster::from_spec(&ClusterSpec {
        kind: None,
        name: "x".into(),
        server_type: Vec::new(),
        pool: vec![PoolSpec {
            server_type: "rtx4090-8g".into(),
            count: servers,
            name_prefix: "n".into(),
            names: None,
            ..Default::default()
        }],
        ..Default::default()
    })
}

fn spec(allocator: &str) -> PreemptionSpec {
    toml::from_str(&format!(
        "kind = \"preemption\"\n[[workload]]\nname = \"a\"\npriority = 1\ngpus = 1\ncores = 7\npreemptible = true\n[fill]\nmix = {{ a = 1.0 }}\nallocator = \"{allocator}\"\nchurn_rounds = 2\n"
    ))
    .expect("valid spec")
}

/// Share of fill pods whose cores all lie on the NUMA node of their GPU.
fn aligned_share(allocator: &str) -> f64 {
    let cluster = cluster(10);
    let spec = spec(allocator);
    let state = initial_state(&cluster, &spec, Some(7)).expect("fills");
    let pods: Vec<&Pod> = state.pods().map(|(_, p)| p).collect();
    assert_eq!(pods.len(), 80, "every GPU is filled");
    let aligned = pods
        .iter()
        .filter(|p| {
            let t = cluster.type_of(p.server);
            let numa = p.gpus.iter().next().map(|g| t.gpu_numa[g]);
            numa.is_some_and(|n| p.cores.is_subset(&t.domains(Level::Numa)[n].cores))
        })
        .count();
    aligned as f64 / pods.len() as f64
}

#[test]
fn numa_aligned_fill_puts_each_pods_cores_on_its_gpus_numa_node() {
    assert_eq!(aligned_share("numa-aligned"), 1.0);
    // The topology-blind random fill scatters the cores: almost never aligned.
    assert!(aligned_share("random") < 0.1);
}

#[test]
fn aligned_cores_overflow_to_the_lowest_free_cores() {
    let cluster = cluster(1);
    let t = cluster.type_of(ServerId(0));
    let gpus = GpuSet::from_ids([2]);
    // NUMA 2 holds cores 16–23; 10 cores take all 8 there, then the lowest free (0, 1).
    let cores = aligned_cores(t, gpus, t.domains(Level::CrossSocket)[0].cores, 10).expect("room");
    assert_eq!(cores.to_vec(), vec![0, 1, 16, 17, 18, 19, 20, 21, 22, 23]);
    assert_eq!(
        aligned_cores(
            t,
            GpuSet::empty(),
            t.domains(Level::CrossSocket)[0].cores,
            3
        )
        .map(|c| c.to_vec()),
        Some(vec![0, 1, 2])
    );
}

#[test]
fn admission_refuses_or_binds_a_misaligned_guaranteed_pod() {
    use crate::plan::preemption::EventOutcome;
    use crate::preempt::apply::apply;
    use crate::preempt::problem::{Decision, Problem};
    let cluster = cluster(1);
    for (admission, outcome, placed) in [
        (Admission::Kubelet, EventOutcome::Refused, false),
        (Admission::Bind, EventOutcome::PlacedMiss, true),
    ] {
        let mut spec: PreemptionSpec = toml::from_str(
            "kind = \"preemption\"\n[[workload]]\nname = \"g\"\npriority = 9\ngpus = 2\ncores = 14\ntopology_qos = \"guaranteed\"\n[[running]]\nworkload = \"g\"\nnode = \"n0\"\ngpus = [1, 2]\ncores = 14\n[[running]]\nworkload = \"g\"\nnode = \"n0\"\ngpus = [3, 5]\ncores = 14\n[[running]]\nworkload = \"g\"\nnode = \"n0\"\ngpus = [6, 7]\ncores = 14\n[[preempt]]\nworkload = \"g\"\n",
        )
        .expect("valid spec");
        spec.simulation.admission = admission;
        let problem = Problem::new(&cluster, &spec);
        let mut state = initial_state(&cluster, &spec, None).expect("state");
        let p = preemptors(&cluster, &spec, &mut state).remove(0);
        // GPUs 0 and 4 are free, one per socket: only a cross-socket placement exists.
        let d = Decision {
            server: Some(ServerId(0)),
            ..Decision::default()
        };
        let applied = apply(&problem, &mut state, &p, &d).expect("applies");
        assert_eq!(applied.event.outcome, outcome, "{admission:?}");
        assert_eq!(applied.event.placed, placed);
        assert!(!applied.event.hit);
        let expected_cost = if placed { 2.0 * (1.0 - 0.467) } else { 1000.0 };
        assert!(
            (applied.event.cost - expected_cost).abs() < 1e-9,
            "{}",
            applied.event.cost
        );
    }
}

/// A server's scan memo keeps one result per key until the server changes; clones share
/// what was kept; states compare equal whatever their memos hold.
#[test]
fn scan_memos_last_until_their_server_changes() {
    let cluster = cluster(2);
    let mut state = initial_state(&cluster, &spec("random"), Some(3)).expect("fills");
    let server = ServerId(0);
    let computed = std::cell::Cell::new(0);
    let memo_of = |state: &ClusterState, key: u32| {
        *state
            .memo(server)
            .get_or_insert(
                |v: &(u32, u32)| v.0 == key,
                || {
                    computed.set(computed.get() + 1);
                    (key, computed.get())
                },
            )
            .expect("a free slot")
    };
    assert_eq!(memo_of(&state, 1), (1, 1));
    assert_eq!(memo_of(&state, 1), (1, 1), "kept");
    assert_eq!(memo_of(&state, 2), (2, 2), "another key, another result");
    let copy = state.clone();
    assert_eq!(memo_of(&copy, 2), (2, 2), "a clone shares what was kept");
    assert_eq!(copy, state);
    // Once every slot is taken, results are computed and handed back without being kept.
    for key in 3..=4 {
        memo_of(&state, key);
    }
    let full = state
        .memo(server)
        .get_or_insert(|v: &(u32, u32)| v.0 == 9, || (9, 0));
    assert!(full.is_err());
    // Any change of the server empties its memo; the other server's stays.
    let victim = state.servers()[0].pods()[0];
    let pod = state.evict(victim).expect("evicts");
    assert!(state.memo(server).is_empty());
    let other = ServerId(1);
    let _ = state.memo(other).get_or_insert(|_: &u8| true, || 0u8);
    state.add(&cluster, pod).expect("adds back");
    assert!(state.memo(server).is_empty());
    assert_eq!(state.memo(other).len(), 1);
    assert_eq!(memo_of(&state, 1), (1, 5), "computed again");
    state.forget_memos();
    assert!(state.memo(other).is_empty());
}

/// The fill as first written, kept as the reference the indexed fill must reproduce
/// draw for draw: every step passes over every server (room, utilisation) and every
/// churn round over every pod id ever given.
mod reference {
    use super::*;

    pub fn fill(
        cluster: &Cluster,
        spec: &PreemptionSpec,
        seed: u64,
        goal: FillGoal,
    ) -> ClusterState {
        let mut state = running_state(cluster, spec).expect("valid running pods");
        let fill = spec.fill.as_ref().expect("a fill");
        let mut rng = SeededRng::new(seed);
        refill(cluster, spec, fill, goal, &mut rng, &mut state, 0.0);
        for round in 1..=fill.churn_rounds.max(0) {
            for id in fill_pods(spec, fill, &state) {
                if rng.unit() < CHURN_DEPARTURE_PROBABILITY {
                    let _ = state.evict(id);
                }
            }
            let start = round as f64 * CHURN_ROUND_S;
            refill(cluster, spec, fill, goal, &mut rng, &mut state, start);
        }
        state
    }

    fn used_gpu_share(cluster: &Cluster, state: &ClusterState) -> f64 {
        let total = cluster.gpu_count();
        if total == 0 {
            return 1.0;
        }
        let free: u32 = state.servers().iter().map(|s| s.free_gpus().len()).sum();
        (total as f64 - free as f64) / total as f64
    }

    fn refill(
        cluster: &Cluster,
        spec: &PreemptionSpec,
        fill: &FillSpec,
        goal: FillGoal,
        rng: &mut SeededRng,
        state: &mut ClusterState,
        start_time_s: f64,
    ) {
        let mix = fill_mix(spec, fill);
        if mix.is_empty() {
            return;
        }
        let weights: Vec<f64> = mix.iter().map(|&(_, w)| w).collect();
        let mut blocked = vec![false; mix.len()];
        let mut running = match goal {
            FillGoal::Utilization => 0,
            FillGoal::Pods(_) => fill_pods(spec, fill, state).len(),
        };
        let mut budget = fill_step_budget(cluster.gpu_count(), cluster.core_count(), goal);
        loop {
            let short = match goal {
                FillGoal::Utilization => {
                    used_gpu_share(cluster, state) + 1e-9 < fill.target_gpu_utilization
                }
                FillGoal::Pods(n) => running < n,
            };
            if !short || budget == 0 {
                break;
            }
            budget -= 1;
            let Some(open) = open_weights(&weights, &blocked) else {
                break;
            };
            let k = rng.weighted(&open);
            let wi = mix[k].0;
            let class = &spec.workload[wi];
            let req = class_request(cluster, class);
            let Some((server, gpus, cores)) = choose(cluster, state, req, fill.allocator, rng)
            else {
                blocked[k] = true;
                continue;
            };
            let name = state.next_name(wi, &class.name);
            let pod = Pod::of_class(name, (wi, class), server, (gpus, cores), Some(start_time_s));
            if state.add(cluster, pod).is_ok() {
                running += 1;
            }
        }
    }

    fn choose(
        cluster: &Cluster,
        state: &ClusterState,
        req: Request,
        allocator: FillAllocator,
        rng: &mut SeededRng,
    ) -> Option<(ServerId, GpuSet, CoreSet)> {
        let room = |s: ServerId| {
            let a = &state.servers()[s.index()];
            (a.free_gpus().len(), a.free_cores().len())
        };
        let fits: Vec<ServerId> = (0..cluster.servers.len())
            .map(|i| ServerId(i as u32))
            .filter(|&s| room(s).0 >= req.gpus && room(s).1 >= req.cores)
            .collect();
        if fits.is_empty() {
            return None;
        }
        let server = match allocator {
            FillAllocator::Random | FillAllocator::NumaAligned => fits[rng.below(fits.len())],
            FillAllocator::BestFit => *fits.iter().min_by_key(|&&s| (room(s), s))?,
            FillAllocator::Spread => *fits
                .iter()
                .min_by_key(|&&s| (std::cmp::Reverse(room(s)), s))?,
        };
        let a = &state.servers()[server.index()];
        let g: Vec<usize> = a.free_gpus().iter().collect();
        let c: Vec<usize> = a.free_cores().iter().collect();
        let (gpus, cores) = match allocator {
            FillAllocator::Random => (
                GpuSet::from_ids(rng.sample(&g, req.gpus as usize)),
                CoreSet::from_ids(rng.sample(&c, req.cores as usize)),
            ),
            FillAllocator::NumaAligned => {
                let gpus = GpuSet::from_ids(rng.sample(&g, req.gpus as usize));
                let t = cluster.type_of(server);
                (gpus, aligned_cores(t, gpus, a.free_cores(), req.cores)?)
            }
            FillAllocator::BestFit | FillAllocator::Spread => (
                a.free_gpus().lowest(req.gpus)?,
                a.free_cores().lowest(req.cores)?,
            ),
        };
        Some((server, gpus, cores))
    }
}

/// What a fill leaves running, whatever ids the pods hold.
fn running_pods(state: &ClusterState) -> Vec<Pod> {
    state.pods().map(|(_, p)| p.clone()).collect()
}

fn mixed_cluster(per_type: i64) -> Cluster {
    let pool = |server_type: &str, name_prefix: &str| PoolSpec {
        server_type: server_type.into(),
        count: per_type,
        name_prefix: name_prefix.into(),
        names: None,
        ..Default::default()
    };
    Cluster::from_spec(&ClusterSpec {
        kind: None,
        name: "mixed".into(),
        server_type: Vec::new(),
        pool: vec![
            pool("rtx4090-8g", "r"),
            pool("a100-8g", "a"),
            pool("gpu-2s4n8g", "g"),
        ],
        ..Default::default()
    })
}

/// The indexed fill places every pod where the reference does, on every allocator,
/// with a mix of requests (one without GPUs), part and full utilisation, a pod-count
/// goal, and enough churn rounds that the pod ids are renumbered on the way.
#[test]
fn the_indexed_fill_reproduces_the_reference_fill_pod_for_pod() {
    let cluster = mixed_cluster(7);
    for allocator in ["random", "best-fit", "spread", "numa-aligned"] {
        for (target, rounds, seed) in [(1.0, 3, 1), (0.6, 0, 2), (0.9, 120, 3)] {
            let spec: PreemptionSpec = toml::from_str(&format!(
                "kind = \"preemption\"\n\
                 [[workload]]\nname = \"one\"\npriority = 1\ngpus = 1\ncores = 7\npreemptible = true\n\
                 [[workload]]\nname = \"two\"\npriority = 2\ngpus = 2\ncores = 20\npreemptible = true\n\
                 [[workload]]\nname = \"cpu\"\npriority = 3\ngpus = 0\ncores = 5\npreemptible = true\n\
                 [[running]]\nworkload = \"two\"\nnode = \"r0\"\ngpus = 2\ncores = 14\n\
                 [fill]\nmix = {{ one = 3.0, two = 1.0, cpu = 0.5 }}\n\
                 target_gpu_utilization = {target}\nallocator = \"{allocator}\"\n\
                 churn_rounds = {rounds}\nseed = {seed}\n"
            ))
            .expect("valid spec");
            let case = format!("{allocator}, target {target}, {rounds} rounds");
            for goal in [FillGoal::Utilization, FillGoal::Pods(60)] {
                let indexed = initial_state_with(&cluster, &spec, None, goal).expect("fills");
                let reference = reference::fill(&cluster, &spec, seed, goal);
                assert!(indexed.pod_count() > 10, "{case}: the fill ran");
                assert_eq!(running_pods(&indexed), running_pods(&reference), "{case}");
                assert_eq!(indexed.servers().len(), reference.servers().len());
                for (a, b) in indexed.servers().iter().zip(reference.servers()) {
                    assert_eq!(
                        (a.free_gpus(), a.free_cores(), a.pods().len()),
                        (b.free_gpus(), b.free_cores(), b.pods().len()),
                        "{case}"
                    );
                }
                if rounds > 100 {
                    assert!(
                        indexed.retired_ids() < reference.retired_ids(),
                        "{case}: the ids were renumbered"
                    );
                }
            }
        }
    }
}
