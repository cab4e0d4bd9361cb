//! The starting point of a preemption plan: the initial state (`[[running]]` pods, then
//! `[fill]` by seeded churn) and the preemptor list.

use super::fill_index::FillIndex;
use crate::plan::preemption::Preemptor;
use crate::rng::SeededRng;
use crate::spec::Finding;
use crate::spec::preemption::{FillAllocator, FillSpec, PreemptionSpec, WorkloadClass};
use crate::topology::eligibility::Eligibility;
use crate::topology::state::{ClusterState, Pod, running_state};
use crate::topology::{Cluster, CoreSet, GpuSet, PodId, Request, ServerId, ServerType};

/// Each fill pod leaves with this probability in each churn round.
pub const CHURN_DEPARTURE_PROBABILITY: f64 = 0.3;
/// Start time of the pods placed by churn round r: r × this (the initial fill starts at 0).
pub const CHURN_ROUND_S: f64 = 600.0;

/// How far a fill (and every refill after churn) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FillGoal {
    /// Until `[fill] target_gpu_utilization` of the cluster's GPUs are in use.
    #[default]
    Utilization,
    /// Until this many fill pods run: `coplan capacity` holds the load of the spec's cluster
    /// fixed while it resizes a pool, so that added servers add headroom, not load.
    Pods(usize),
}

/// The initial state: running pods placed, then the cluster filled by seeded churn.
/// `seed` overrides `[fill].seed`.
pub fn initial_state(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    seed: Option<u64>,
) -> Result<ClusterState, Vec<Finding>> {
    initial_state_with(cluster, spec, seed, FillGoal::Utilization)
}

/// [`initial_state`] with the fill stopping at `goal`.
pub fn initial_state_with(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    seed: Option<u64>,
    goal: FillGoal,
) -> Result<ClusterState, Vec<Finding>> {
    let mut state = running_state(cluster, spec)?;
    if let Some(fill) = &spec.fill {
        fill_by_churn(
            cluster,
            spec,
            fill,
            seed.unwrap_or(fill.seed),
            goal,
            &mut state,
        );
    }
    state.attach_budgets(spec, spec.planners.respect_pdb);
    Ok(state)
}

/// Fills to the goal, then runs `churn_rounds` rounds of random departures (of fill pods
/// only) and refills.
pub fn fill_by_churn(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    fill: &FillSpec,
    seed: u64,
    goal: FillGoal,
    state: &mut ClusterState,
) {
    let mut rng = SeededRng::new(seed);
    let mut fill = Fill::new(cluster, spec, fill, goal, state);
    fill.refill(&mut rng, state, 0.0);
    for round in 1..=fill.spec.churn_rounds.max(0) {
        fill.churn(&mut rng, state, round as f64 * CHURN_ROUND_S);
        // Evicted pods leave their ids behind; renumbering once they outnumber the running
        // ones keeps the pod table (and each round's pass over it) the size of the cluster
        // however many rounds run.
        if state.retired_ids() > state.pod_count().max(1024) {
            state.renumber_pods();
            fill.pods = fill_pods(spec, fill.spec, state);
        }
    }
}

/// The fill pods of a state: those of a `[fill].mix` class that are not `[[running]]` pods.
fn fill_pods(spec: &PreemptionSpec, fill: &FillSpec, state: &ClusterState) -> Vec<PodId> {
    // `[[running]]` pods are added first, so they hold the lowest ids.
    let pinned = spec.running.len();
    state
        .pods()
        .filter(|(id, p)| {
            id.index() >= pinned && fill.mix.contains_key(&spec.workload[p.workload].name)
        })
        .map(|(id, _)| id)
        .collect()
}

/// How many fill pods a state holds (0 without `[fill]`).
pub fn fill_pod_count(spec: &PreemptionSpec, state: &ClusterState) -> usize {
    spec.fill
        .as_ref()
        .map_or(0, |fill| fill_pods(spec, fill, state).len())
}

/// One round of churn: each fill pod (not a `[[running]]` one) leaves with probability
/// [`CHURN_DEPARTURE_PROBABILITY`], then the cluster is refilled to `goal`; new pods start at
/// `start_s`.
pub fn churn_round(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    fill: &FillSpec,
    goal: FillGoal,
    rng: &mut SeededRng,
    state: &mut ClusterState,
    start_s: f64,
) {
    Fill::new(cluster, spec, fill, goal, state).churn(rng, state, start_s);
}

/// A fill in progress: what it reads of the spec, the fill pods running (ascending id: the
/// order departures are drawn in) and where the next pod may go ([`FillIndex`]), all kept up
/// to date pod by pod instead of recounted from the whole state at each step.
struct Fill<'a> {
    cluster: &'a Cluster,
    spec: &'a FillSpec,
    workload: &'a PreemptionSpec,
    goal: FillGoal,
    /// (workload index, weight) of each fill class with a positive weight.
    mix: Vec<(usize, f64)>,
    pods: Vec<PodId>,
    index: FillIndex,
    /// The cluster's GPUs (a sum over its servers: counted once, not at every step).
    total_gpus: usize,
    /// Which servers the scheduler's filter lets each class onto.
    eligibility: Eligibility,
}

impl<'a> Fill<'a> {
    fn new(
        cluster: &'a Cluster,
        workload: &'a PreemptionSpec,
        spec: &'a FillSpec,
        goal: FillGoal,
        state: &ClusterState,
    ) -> Self {
        Fill {
            cluster,
            spec,
            workload,
            goal,
            mix: fill_mix(workload, spec),
            pods: fill_pods(workload, spec, state),
            index: FillIndex::new(state, spec.allocator),
            total_gpus: cluster.gpu_count(),
            eligibility: Eligibility::new(cluster, workload),
        }
    }

    fn churn(&mut self, rng: &mut SeededRng, state: &mut ClusterState, start_s: f64) {
        let mut staying = Vec::with_capacity(self.pods.len());
        for &id in &self.pods {
            if rng.unit() < CHURN_DEPARTURE_PROBABILITY {
                if let Ok(pod) = state.evict(id) {
                    self.index.refresh(state, pod.server);
                }
            } else {
                staying.push(id);
            }
        }
        self.pods = staying;
        self.refill(rng, state, start_s);
    }

    fn used_gpu_share(&self) -> f64 {
        let total = self.total_gpus;
        if total == 0 {
            return 1.0;
        }
        (total as f64 - self.index.free_gpus() as f64) / total as f64
    }

    fn short_of_goal(&self) -> bool {
        match self.goal {
            FillGoal::Utilization => {
                self.used_gpu_share() + 1e-9 < self.spec.target_gpu_utilization
            }
            FillGoal::Pods(n) => self.pods.len() < n,
        }
    }

    fn refill(&mut self, rng: &mut SeededRng, state: &mut ClusterState, start_time_s: f64) {
        if self.mix.is_empty() {
            return;
        }
        let weights: Vec<f64> = self.mix.iter().map(|&(_, w)| w).collect();
        let mut blocked = vec![false; self.mix.len()];
        let mut budget = fill_step_budget(self.total_gpus, self.cluster.core_count(), self.goal);
        while self.short_of_goal() && budget > 0 {
            budget -= 1;
            let Some(open) = open_weights(&weights, &blocked) else {
                break;
            };
            let k = rng.weighted(&open);
            let wi = self.mix[k].0;
            let class = &self.workload.workload[wi];
            let request = class_request(self.cluster, class);
            let Some((server, gpus, cores)) = self.choose(state, (wi, request), rng) else {
                blocked[k] = true;
                continue;
            };
            let name = state.next_name(wi, &class.name);
            let pod = Pod::of_class(name, (wi, class), server, (gpus, cores), Some(start_time_s));
            if let Ok(id) = state.add(self.cluster, pod) {
                self.pods.push(id);
                self.index.refresh(state, server);
            }
        }
    }

    /// Where the topology-blind default scheduler puts a fill pod: the server from the
    /// index, then its GPUs and cores.
    fn choose(
        &mut self,
        state: &ClusterState,
        (class, req): (usize, Request),
        rng: &mut SeededRng,
    ) -> Option<(ServerId, GpuSet, CoreSet)> {
        // The index counts devices of every kind alike: a pod of another kind, or under a
        // claim constraint, scans for a server whose devices hold it.
        let kinded = req.gpus > 0 && (self.cluster.kinds.len() > 1 || req.alignment.is_some());
        let server = match self.eligibility.flags(class) {
            None if !kinded => self.index.choose_server(req, rng)?,
            None => self.choose_among(state, req, &[], rng)?,
            Some(allowed) => self.choose_among(state, req, &allowed, rng)?,
        };
        let a = &state.servers()[server.index()];
        let free_gpus = if kinded {
            self.cluster
                .type_of(server)
                .free_group(req, a.free_gpus())?
        } else {
            a.free_gpus()
        };
        let (gpus, cores) = match self.spec.allocator {
            FillAllocator::Random => {
                let g: Vec<usize> = free_gpus.iter().collect();
                let c: Vec<usize> = a.free_cores().iter().collect();
                (
                    GpuSet::from_ids(rng.sample(&g, req.gpus as usize)),
                    CoreSet::from_ids(rng.sample(&c, req.cores as usize)),
                )
            }
            FillAllocator::NumaAligned => {
                let g: Vec<usize> = free_gpus.iter().collect();
                let gpus = GpuSet::from_ids(rng.sample(&g, req.gpus as usize));
                let t = self.cluster.type_of(server);
                (gpus, aligned_cores(t, gpus, a.free_cores(), req.cores)?)
            }
            // Lowest ids: the kubelet's default (non-topology) CPU and device assignment.
            FillAllocator::BestFit | FillAllocator::Spread => (
                free_gpus.lowest(req.gpus)?,
                a.free_cores().lowest(req.cores)?,
            ),
        };
        Some((server, gpus, cores))
    }
}

impl Fill<'_> {
    /// [`FillIndex::choose_server`]'s rule among the servers the filter lets a class onto
    /// (`allowed`; empty: all), counting only devices of the pod's kind that its claim could
    /// take: a scan, as restricted classes are few and their clusters hand-written or imported.
    fn choose_among(
        &self,
        state: &ClusterState,
        req: Request,
        allowed: &[bool],
        rng: &mut SeededRng,
    ) -> Option<ServerId> {
        let room: Vec<(u32, u32, ServerId)> = state
            .servers()
            .iter()
            .enumerate()
            .filter(|(i, _)| allowed.get(*i).copied().unwrap_or(true))
            .filter(|&(i, a)| {
                let t = self.cluster.type_of(ServerId(i as u32));
                t.devices_fit(req, a.free_gpus())
                    && a.free_cores().len() >= req.cores
                    && t.cores_fit_claim(req, a.free_gpus(), a.free_cores())
            })
            .map(|(i, a)| {
                let t = self.cluster.type_of(ServerId(i as u32));
                (
                    a.free_gpus().and(t.usable(req)).len(),
                    a.free_cores().len(),
                    ServerId(i as u32),
                )
            })
            .collect();
        match self.spec.allocator {
            FillAllocator::Random | FillAllocator::NumaAligned => {
                if room.is_empty() {
                    return None;
                }
                Some(room[rng.below(room.len())].2)
            }
            FillAllocator::BestFit => room.iter().min().map(|r| r.2),
            FillAllocator::Spread => room
                .iter()
                .max_by_key(|r| (r.0, r.1, std::cmp::Reverse(r.2)))
                .map(|r| r.2),
        }
    }
}

/// The fill's mix: each workload class drawn (index into the spec's list) and its weight, in
/// the spec's order, classes of weight 0 left out.
fn fill_mix(spec: &PreemptionSpec, fill: &FillSpec) -> Vec<(usize, f64)> {
    spec.workload
        .iter()
        .enumerate()
        .filter_map(|(i, w)| fill.mix.get(&w.name).map(|&weight| (i, weight)))
        .filter(|&(_, w)| w > 0.0)
        .collect()
}

/// The most pods one refill draws: a guard for mixes without GPUs, which never raise the GPU
/// utilisation.
fn fill_step_budget(gpus: usize, cores: usize, goal: FillGoal) -> usize {
    gpus + cores
        + 16
        + match goal {
            FillGoal::Utilization => 0,
            FillGoal::Pods(n) => n,
        }
}

/// The mix's weights with the blocked classes (no server takes them) at zero; `None` when
/// every class is blocked.
fn open_weights(weights: &[f64], blocked: &[bool]) -> Option<Vec<f64>> {
    let open: Vec<f64> = weights
        .iter()
        .zip(blocked)
        .map(|(&w, &b)| if b { 0.0 } else { w })
        .collect();
    (!open.iter().all(|&w| w <= 0.0)).then_some(open)
}

/// The request of one pod of a workload class.
fn class_request(cluster: &Cluster, class: &WorkloadClass) -> Request {
    cluster.request_of(class, class.gpus.max(0) as u32, class.cores.max(0) as u32)
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
pub fn preemptors(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    state: &mut ClusterState,
) -> Vec<Preemptor> {
    let mut out = Vec::new();
    for entry in &spec.preempt {
        let Some(wi) = spec.workload.iter().position(|w| w.name == entry.workload) else {
            continue;
        };
        let class = &spec.workload[wi];
        for _ in 0..entry.count.max(0) {
            let generated = state.next_name(wi, &class.name);
            out.push(Preemptor {
                name: entry.name.clone().unwrap_or(generated),
                workload: wi,
                priority: class.priority,
                request: cluster.request_of(
                    class,
                    class.gpus.max(0) as u32,
                    class.cores.max(0) as u32,
                ),
                qos: class.topology_qos,
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
