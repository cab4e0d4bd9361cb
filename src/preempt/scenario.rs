//! The starting point of a preemption plan: the initial state (`[[running]]` pods, then
//! `[fill]` by seeded churn) and the preemptor list.

use super::fill_index::FillIndex;
use crate::plan::preemption::Preemptor;
use crate::rng::SeededRng;
use crate::spec::Finding;
use crate::spec::preemption::{FillAllocator, FillSpec, PreemptionSpec};
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
        let mix = workload
            .workload
            .iter()
            .enumerate()
            .filter_map(|(i, w)| spec.mix.get(&w.name).map(|&weight| (i, weight)))
            .filter(|&(_, w)| w > 0.0)
            .collect();
        Fill {
            cluster,
            spec,
            workload,
            goal,
            mix,
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
        // Guard for mixes without GPUs, which never raise the GPU utilisation.
        let mut budget = self.total_gpus
            + self.cluster.core_count()
            + 16
            + match self.goal {
                FillGoal::Utilization => 0,
                FillGoal::Pods(n) => n,
            };
        while self.short_of_goal() && budget > 0 {
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
            let wi = self.mix[k].0;
            let class = &self.workload.workload[wi];
            let request =
                self.cluster
                    .request_of(class, class.gpus.max(0) as u32, class.cores.max(0) as u32);
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
mod tests {
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
        let cores =
            aligned_cores(t, gpus, t.domains(Level::CrossSocket)[0].cores, 10).expect("room");
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
            let mut running = match goal {
                FillGoal::Utilization => 0,
                FillGoal::Pods(_) => fill_pods(spec, fill, state).len(),
            };
            let mut budget = cluster.gpu_count()
                + cluster.core_count()
                + 16
                + match goal {
                    FillGoal::Utilization => 0,
                    FillGoal::Pods(n) => n,
                };
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
                let req =
                    cluster.request_of(class, class.gpus.max(0) as u32, class.cores.max(0) as u32);
                let Some((server, gpus, cores)) = choose(cluster, state, req, fill.allocator, rng)
                else {
                    blocked[k] = true;
                    continue;
                };
                let name = state.next_name(wi, &class.name);
                let pod =
                    Pod::of_class(name, (wi, class), server, (gpus, cores), Some(start_time_s));
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
}
