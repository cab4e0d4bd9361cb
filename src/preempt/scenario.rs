//! The starting point of a preemption plan: the initial state (`[[running]]` pods, then
//! `[fill]` by seeded churn) and the preemptor list.

use crate::plan::preemption::Preemptor;
use crate::rng::SeededRng;
use crate::spec::Finding;
use crate::spec::preemption::{FillAllocator, FillSpec, PreemptionSpec};
use crate::topology::state::{ClusterState, Pod, running_state};
use crate::topology::{Cluster, CoreSet, GpuSet, Request, ServerId, ServerType};

/// Each fill pod leaves with this probability in each churn round.
pub const CHURN_DEPARTURE_PROBABILITY: f64 = 0.3;
/// Start time of the pods placed by churn round r: r × this (the initial fill starts at 0).
pub const CHURN_ROUND_S: f64 = 600.0;

/// The initial state: running pods placed, then the cluster filled by seeded churn.
/// `seed` overrides `[fill].seed`.
pub fn initial_state(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    seed: Option<u64>,
) -> Result<ClusterState, Vec<Finding>> {
    let mut state = running_state(cluster, spec)?;
    if let Some(fill) = &spec.fill {
        fill_by_churn(cluster, spec, fill, seed.unwrap_or(fill.seed), &mut state);
    }
    Ok(state)
}

/// Fills to the target GPU utilisation, then runs `churn_rounds` rounds of random departures
/// (of fill pods only) and refills.
pub fn fill_by_churn(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    fill: &FillSpec,
    seed: u64,
    state: &mut ClusterState,
) {
    let mut rng = SeededRng::new(seed);
    refill(cluster, spec, fill, &mut rng, state, 0.0);
    for round in 1..=fill.churn_rounds.max(0) {
        churn_round(
            cluster,
            spec,
            fill,
            &mut rng,
            state,
            round as f64 * CHURN_ROUND_S,
        );
    }
}

/// One round of churn: each fill pod (not a `[[running]]` one) leaves with probability
/// [`CHURN_DEPARTURE_PROBABILITY`], then the cluster is refilled; new pods start at `start_s`.
pub fn churn_round(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    fill: &FillSpec,
    rng: &mut SeededRng,
    state: &mut ClusterState,
    start_s: f64,
) {
    // `[[running]]` pods are added first, so they hold the lowest ids.
    let pinned = spec.running.len();
    let fill_pods: Vec<crate::topology::PodId> = state
        .pods()
        .filter(|(id, p)| {
            id.index() >= pinned && fill.mix.contains_key(&spec.workload[p.workload].name)
        })
        .map(|(id, _)| id)
        .collect();
    for id in fill_pods {
        if rng.unit() < CHURN_DEPARTURE_PROBABILITY {
            let _ = state.evict(id);
        }
    }
    refill(cluster, spec, fill, rng, state, start_s);
}

fn used_gpu_share(cluster: &Cluster, state: &ClusterState) -> f64 {
    let total = cluster.gpu_count();
    if total == 0 {
        return 1.0;
    }
    let free: u32 = state.servers.iter().map(|s| s.free_gpus.len()).sum();
    (total as f64 - free as f64) / total as f64
}

fn refill(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    fill: &FillSpec,
    rng: &mut SeededRng,
    state: &mut ClusterState,
    start_time_s: f64,
) {
    let mix: Vec<(usize, f64)> = spec
        .workload
        .iter()
        .enumerate()
        .filter_map(|(i, w)| fill.mix.get(&w.name).map(|&weight| (i, weight)))
        .filter(|&(_, w)| w > 0.0)
        .collect();
    if mix.is_empty() {
        return;
    }
    let weights: Vec<f64> = mix.iter().map(|&(_, w)| w).collect();
    let mut blocked = vec![false; mix.len()];
    // Guard for mixes without GPUs, which never raise the GPU utilisation.
    let mut budget = cluster.gpu_count() + cluster.core_count() + 16;
    while used_gpu_share(cluster, state) + 1e-9 < fill.target_gpu_utilization && budget > 0 {
        budget -= 1;
        let open: Vec<f64> = weights
            .iter()
            .zip(&blocked)
            .map(|(&w, &b)| if b { 0.0 } else { w })
            .collect();
        if open.iter().all(|&w| w <= 0.0) {
            break;
        }
        let k = rng.weighted(&open);
        let wi = mix[k].0;
        let class = &spec.workload[wi];
        let request = Request {
            gpus: class.gpus.max(0) as u32,
            cores: class.cores.max(0) as u32,
        };
        let Some((server, gpus, cores)) = choose(cluster, state, request, fill.allocator, rng)
        else {
            blocked[k] = true;
            continue;
        };
        let name = state.next_name(wi, &class.name);
        let pod = Pod::of_class(name, (wi, class), server, (gpus, cores), Some(start_time_s));
        let _ = state.add(cluster, pod);
    }
}

/// Where the topology-blind default scheduler puts a fill pod.
fn choose(
    cluster: &Cluster,
    state: &ClusterState,
    req: Request,
    allocator: FillAllocator,
    rng: &mut SeededRng,
) -> Option<(ServerId, GpuSet, CoreSet)> {
    let fits: Vec<ServerId> = (0..cluster.servers.len())
        .map(|i| ServerId(i as u32))
        .filter(|&s| {
            let a = &state.servers[s.index()];
            a.free_gpus.len() >= req.gpus && a.free_cores.len() >= req.cores
        })
        .collect();
    if fits.is_empty() {
        return None;
    }
    let server = match allocator {
        FillAllocator::Random | FillAllocator::NumaAligned => fits[rng.below(fits.len())],
        FillAllocator::BestFit => *fits.iter().min_by_key(|&&s| {
            let a = &state.servers[s.index()];
            (a.free_gpus.len(), a.free_cores.len(), s)
        })?,
        FillAllocator::Spread => *fits.iter().min_by_key(|&&s| {
            let a = &state.servers[s.index()];
            (
                std::cmp::Reverse(a.free_gpus.len()),
                std::cmp::Reverse(a.free_cores.len()),
                s,
            )
        })?,
    };
    let a = &state.servers[server.index()];
    let (gpus, cores) = match allocator {
        FillAllocator::Random => {
            let g: Vec<usize> = a.free_gpus.iter().collect();
            let c: Vec<usize> = a.free_cores.iter().collect();
            (
                GpuSet::from_ids(rng.sample(&g, req.gpus as usize)),
                CoreSet::from_ids(rng.sample(&c, req.cores as usize)),
            )
        }
        FillAllocator::NumaAligned => {
            let g: Vec<usize> = a.free_gpus.iter().collect();
            let gpus = GpuSet::from_ids(rng.sample(&g, req.gpus as usize));
            let t = cluster.type_of(server);
            (gpus, aligned_cores(t, gpus, a.free_cores, req.cores)?)
        }
        // Lowest ids: the kubelet's default (non-topology) CPU and device assignment.
        FillAllocator::BestFit | FillAllocator::Spread => (
            a.free_gpus.lowest(req.gpus)?,
            a.free_cores.lowest(req.cores)?,
        ),
    };
    Some((server, gpus, cores))
}

/// Cores for a fill pod on the NUMA node of its first (lowest-id) GPU, then the lowest free
/// cores elsewhere; a pod without GPUs takes the lowest free cores.
pub fn aligned_cores(t: &ServerType, gpus: GpuSet, free: CoreSet, n: u32) -> Option<CoreSet> {
    match gpus.iter().next() {
        Some(first) => {
            let first = GpuSet::from_ids([first]);
            crate::topology::pick_cores(t, first, free, n)
        }
        None => free.lowest(n),
    }
}

/// The preemptors of `[[preempt]]`, named after the initial state's pods.
pub fn preemptors(spec: &PreemptionSpec, state: &mut ClusterState) -> Vec<Preemptor> {
    let mut out = Vec::new();
    for entry in &spec.preempt {
        let Some(wi) = spec.workload.iter().position(|w| w.name == entry.workload) else {
            continue;
        };
        let class = &spec.workload[wi];
        for _ in 0..entry.count.max(0) {
            out.push(Preemptor {
                name: state.next_name(wi, &class.name),
                workload: wi,
                priority: class.priority,
                request: Request {
                    gpus: class.gpus.max(0) as u32,
                    cores: class.cores.max(0) as u32,
                },
                qos: class.topology_qos,
            });
        }
    }
    out
}
