//! Allocation state: which pod holds which GPUs and cores, and the initial state of a
//! preemption workload's `[[running]]` pods.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use super::budgets::{BudgetLedger, BudgetTable, disruptions_allowed};
use super::{Cluster, CoreSet, GpuSet, PodId, ServerId, place};
use crate::p;
use crate::spec::Finding;
use crate::spec::preemption::{IdsOrCount, PreemptionSpec, RunningPod, WorkloadClass};

/// A running pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Pod {
    /// `<workload>-<index>`.
    pub name: String,
    /// Index of its workload class in the spec.
    pub workload: usize,
    /// Kubernetes PriorityClass value of its workload class; higher is more important.
    pub priority: i64,
    /// Whether a higher-priority preemptor may evict it.
    pub preemptible: bool,
    /// The server it runs on.
    pub server: ServerId,
    /// GPU ids it holds on that server.
    pub gpus: GpuSet,
    /// Core ids it holds on that server.
    pub cores: CoreSet,
    /// Absent = latest (for the start-time tie-break).
    pub start_time_s: Option<f64>,
    /// The PodDisruptionBudgets covering it, ascending (set by the state it joins).
    pub budgets: Vec<u32>,
}

impl Pod {
    /// A pod of workload class `workload` (its priority and preemptibility) holding `gpus`
    /// and `cores` on `server`.
    pub fn of_class(
        name: String,
        workload: (usize, &WorkloadClass),
        server: ServerId,
        (gpus, cores): (GpuSet, CoreSet),
        start_time_s: Option<f64>,
    ) -> Self {
        Pod {
            name,
            workload: workload.0,
            priority: workload.1.priority,
            preemptible: workload.1.preemptible,
            server,
            gpus,
            cores,
            start_time_s,
            budgets: Vec::new(),
        }
    }
}

/// Free resources and resident pods of one server. Changed only by [`ClusterState::add`] and
/// [`ClusterState::evict`], which also clear its scan memo ([`ClusterState::memo`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerAlloc {
    free_gpus: GpuSet,
    free_cores: CoreSet,
    /// Resident pods, ascending id.
    pods: Vec<PodId>,
    /// The same pods with what the planners' per-server scans read of them, kept next to the
    /// server: on large clusters, looking each pod up in the cluster-wide table costs a cache
    /// miss per pod.
    residents: Vec<Resident>,
}

impl ServerAlloc {
    /// GPUs not held by any pod.
    pub fn free_gpus(&self) -> GpuSet {
        self.free_gpus
    }

    /// Cores not held by any pod.
    pub fn free_cores(&self) -> CoreSet {
        self.free_cores
    }

    /// Resident pods, ascending id.
    pub fn pods(&self) -> &[PodId] {
        &self.pods
    }

    /// The resident pods' facts, ascending id.
    pub fn residents(&self) -> &[Resident] {
        &self.residents
    }
}

/// Results of planners' scans of one server, kept with the server until it changes. A
/// sequence of decisions changes a few servers each: on the others a planner reuses what it
/// found before instead of scanning them again. Each result is stored with the inputs it was
/// computed from (its type's own key); a planner takes one only when they are its own. The
/// memo is not part of the state: states compare equal whatever their memos hold, and a
/// clone shares the results computed so far. Reading a kept result takes no lock.
#[derive(Default, Clone)]
pub struct ScanMemo([MemoSlot; ScanMemo::SLOTS]);

type MemoSlot = OnceLock<Arc<dyn Any + Send + Sync>>;

impl ScanMemo {
    /// Results kept per server: a few preemptor classes at once. Once every slot is taken,
    /// further results are computed each time (until the server changes).
    const SLOTS: usize = 4;

    /// The kept result of type `T` for which `matches` holds, else `compute`'s, kept when a
    /// slot is free (`Err` with the result when none is).
    pub fn get_or_insert<T: Any + Send + Sync>(
        &self,
        matches: impl Fn(&T) -> bool,
        compute: impl FnOnce() -> T,
    ) -> Result<&T, Arc<T>> {
        fn kept<'m, T: Any>(slot: &'m MemoSlot, matches: &impl Fn(&T) -> bool) -> Option<&'m T> {
            slot.get()
                .and_then(|v| v.downcast_ref::<T>())
                .filter(|v| matches(v))
        }
        if let Some(hit) = self.0.iter().find_map(|s| kept(s, &matches)) {
            return Ok(hit);
        }
        let value = Arc::new(compute());
        for slot in &self.0 {
            // A slot another thread filled first is skipped.
            if slot.set(value.clone()).is_ok()
                && let Some(v) = kept(slot, &matches)
            {
                return Ok(v);
            }
        }
        Err(value)
    }

    /// How many results are kept.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|s| s.get().is_some()).count()
    }

    /// Whether no result is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for ScanMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ScanMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScanMemo({} results)", self.len())
    }
}

/// What the planners' per-server scans read of a resident pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resident {
    /// The pod's id in the state's pod table.
    pub id: PodId,
    /// Its PriorityClass value.
    pub priority: i64,
    /// Whether it may be evicted.
    pub preemptible: bool,
    /// GPU ids it holds.
    pub gpus: GpuSet,
    /// Core ids it holds.
    pub cores: CoreSet,
    /// Its start time in seconds; absent = latest (for the start-time tie-break).
    pub start_time_s: Option<f64>,
    /// A PodDisruptionBudget covers it.
    pub guarded: bool,
}

/// The allocation state of a whole cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterState {
    /// Private, so that a server changes only through `add` and `evict` (which empty its memo).
    servers: Vec<ServerAlloc>,
    /// Per server, what planners computed from it as it is now; apart from `servers`, so
    /// that scans reading the servers only do not stride over the memos.
    memos: Vec<ScanMemo>,
    /// Indexed by pod id; `None` once evicted (ids are never reused). Shared between clones:
    /// every cycle of a simulation clones the state several times, and a pod never changes
    /// after it is added.
    pods: Vec<Option<Arc<Pod>>>,
    live: usize,
    /// Next instance index per workload class.
    next_index: BTreeMap<usize, u32>,
    /// PodDisruptionBudgets: what each still allows and which pods it covers.
    budgets: BudgetLedger,
}

/// Why a state change was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A GPU or core is already held by another pod.
    #[error("{what} {id} on {server} is already used by {holder}")]
    Taken {
        /// `"GPU"` or `"core"`.
        what: &'static str,
        /// The GPU or core id.
        id: usize,
        /// Name of the server.
        server: String,
        /// Instance name of the pod holding it (or why none is found).
        holder: String,
    },
    /// No running pod has this id (never added, or already evicted).
    #[error("no pod {0:?}")]
    NoPod(PodId),
}

impl ClusterState {
    /// Every server empty.
    pub fn empty(cluster: &Cluster) -> Self {
        ClusterState {
            servers: cluster
                .servers
                .iter()
                .map(|s| {
                    let t = &cluster.types[s.type_id.index()];
                    ServerAlloc {
                        free_gpus: t.whole().gpus,
                        free_cores: t.whole().cores,
                        pods: Vec::new(),
                        residents: Vec::new(),
                    }
                })
                .collect(),
            memos: vec![ScanMemo::default(); cluster.servers.len()],
            pods: Vec::new(),
            live: 0,
            next_index: BTreeMap::new(),
            budgets: BudgetLedger::default(),
        }
    }

    /// The next instance name of a workload class, `<name>-<index>`.
    pub fn next_name(&mut self, workload: usize, workload_name: &str) -> String {
        let counter = self.next_index.entry(workload).or_insert(0);
        let name = format!("{workload_name}-{counter}");
        *counter += 1;
        name
    }

    /// Every server's allocation, indexed by server id.
    pub fn servers(&self) -> &[ServerAlloc] {
        &self.servers
    }

    /// The running pod with this id; `None` once evicted.
    pub fn pod(&self, id: PodId) -> Option<&Pod> {
        self.pods.get(id.index()).and_then(|p| p.as_deref())
    }

    /// Running pods in ascending id order.
    pub fn pods(&self) -> impl Iterator<Item = (PodId, &Pod)> {
        self.pods
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_deref().map(|p| (PodId(i as u32), p)))
    }

    /// Number of running pods.
    pub fn pod_count(&self) -> usize {
        self.live
    }

    /// Ids that evicted pods left behind (ids are not reused, so each eviction retires one
    /// until [`renumber_pods`](Self::renumber_pods)).
    pub fn retired_ids(&self) -> usize {
        self.pods.len() - self.live
    }

    /// Gives the running pods the ids 0, 1, 2, … in their present id order, so that the
    /// ids evicted pods left behind cost nothing more. Every order by id, and so every
    /// tie-break, stays as it was; ids taken from the state before are void, and the scan
    /// memos (which may hold some) are dropped.
    pub fn renumber_pods(&mut self) {
        let mut renamed = vec![PodId(u32::MAX); self.pods.len()];
        let mut running = Vec::with_capacity(self.live);
        for (old, pod) in std::mem::take(&mut self.pods).into_iter().enumerate() {
            if pod.is_some() {
                renamed[old] = PodId(running.len() as u32);
                running.push(pod);
            }
        }
        self.pods = running;
        self.budgets.renumber(&renamed);
        for alloc in &mut self.servers {
            for id in &mut alloc.pods {
                *id = renamed[id.index()];
            }
            for resident in &mut alloc.residents {
                resident.id = renamed[resident.id.index()];
            }
        }
        self.forget_memos();
    }

    /// Drops every server's scan memo: the next decision scans every server afresh (what a
    /// first decision on a new state does).
    pub fn forget_memos(&mut self) {
        self.memos.fill(ScanMemo::default());
    }

    /// Drops one server's scan memo (a benchmark repeating a decision puts back the memos as
    /// they were before it).
    pub fn forget_memo(&mut self, server: ServerId) {
        self.memos[server.index()] = ScanMemo::default();
    }

    /// What planners computed from `server` as it is now (see [`ScanMemo`]).
    pub fn memo(&self, server: ServerId) -> &ScanMemo {
        &self.memos[server.index()]
    }

    /// The pod holding a GPU or core, for used-by marks and messages.
    pub fn holder(
        &self,
        server: ServerId,
        gpu: Option<usize>,
        core: Option<usize>,
    ) -> Option<&Pod> {
        self.servers[server.index()]
            .pods()
            .iter()
            .filter_map(|id| self.pod(*id))
            .find(|p| {
                gpu.is_some_and(|g| p.gpus.contains(g)) || core.is_some_and(|c| p.cores.contains(c))
            })
    }

    /// Adds a pod on resources that must be free; it joins the budgets that cover it.
    pub fn add(&mut self, cluster: &Cluster, mut pod: Pod) -> Result<PodId, StateError> {
        let alloc = &self.servers[pod.server.index()];
        if let Some(g) = pod.gpus.minus(alloc.free_gpus).iter().next() {
            return Err(self.taken("GPU", g, cluster, pod.server, Some(g), None));
        }
        if let Some(c) = pod.cores.minus(alloc.free_cores).iter().next() {
            return Err(self.taken("core", c, cluster, pod.server, None, Some(c)));
        }
        let id = PodId(self.pods.len() as u32);
        if !self.budgets.is_empty() {
            pod.budgets = self.budgets.of(pod.workload, &pod.name);
            self.budgets.join(id, &pod.budgets);
            // A pod joining a spent hard budget may not be evicted either.
            if !self.budgets.may_spend(&pod.budgets) {
                pod.preemptible = false;
            }
        }
        self.forget_memo(pod.server);
        let alloc = &mut self.servers[pod.server.index()];
        alloc.free_gpus = alloc.free_gpus.minus(pod.gpus);
        alloc.free_cores = alloc.free_cores.minus(pod.cores);
        alloc.pods.push(id);
        alloc.residents.push(Resident {
            id,
            priority: pod.priority,
            preemptible: pod.preemptible,
            gpus: pod.gpus,
            cores: pod.cores,
            start_time_s: pod.start_time_s,
            guarded: !pod.budgets.is_empty(),
        });
        self.pods.push(Some(Arc::new(pod)));
        self.live += 1;
        Ok(id)
    }

    fn taken(
        &self,
        what: &'static str,
        id: usize,
        cluster: &Cluster,
        server: ServerId,
        gpu: Option<usize>,
        core: Option<usize>,
    ) -> StateError {
        StateError::Taken {
            what,
            id,
            server: cluster.server(server).name.clone(),
            holder: self
                .holder(server, gpu, core)
                .map_or_else(|| "nothing (out of range)".into(), |p| p.name.clone()),
        }
    }

    /// Removes a pod and frees its resources.
    pub fn evict(&mut self, id: PodId) -> Result<Pod, StateError> {
        let pod = self
            .pods
            .get_mut(id.index())
            .and_then(Option::take)
            .map(Arc::unwrap_or_clone)
            .ok_or(StateError::NoPod(id))?;
        self.live -= 1;
        self.forget_memo(pod.server);
        let alloc = &mut self.servers[pod.server.index()];
        alloc.free_gpus = alloc.free_gpus.or(pod.gpus);
        alloc.free_cores = alloc.free_cores.or(pod.cores);
        alloc.pods.retain(|&p| p != id);
        alloc.residents.retain(|r| r.id != id);
        if !pod.budgets.is_empty() {
            for b in self.budgets.spend(id, &pod.budgets) {
                self.protect_members(b);
            }
        }
        Ok(pod)
    }

    /// Attaches a workload's PodDisruptionBudgets to the pods running now (the start of a
    /// plan): each covers the pods its `pods` and `workloads` name, and allows the evictions
    /// its spec gives for that many pods. Hard budgets (`respect_pdb`) make the pods of a
    /// spent budget not preemptible.
    pub fn attach_budgets(&mut self, spec: &PreemptionSpec, hard: bool) {
        if spec.disruption_budget.is_empty() {
            return;
        }
        let table = Arc::new(BudgetTable::new(spec));
        self.budgets = BudgetLedger::new(table, hard);
        let mut covered = vec![0i64; spec.disruption_budget.len()];
        for slot in self.pods.iter_mut().flatten() {
            let budgets = self.budgets.of(slot.workload, &slot.name);
            for &b in &budgets {
                covered[b as usize] += 1;
            }
            if budgets.is_empty() && slot.budgets.is_empty() {
                continue;
            }
            let pod = Arc::make_mut(slot);
            // A pod a spent hard budget protected before is preemptible as its class says
            // until the budgets, recounted, say otherwise.
            if let Some(class) = spec.workload.get(pod.workload) {
                pod.preemptible = class.preemptible;
            }
            pod.budgets = budgets;
        }
        let live: Vec<(PodId, ServerId, Vec<u32>)> = self
            .pods()
            .filter(|(_, p)| !p.budgets.is_empty())
            .map(|(id, p)| (id, p.server, p.budgets.clone()))
            .collect();
        for (id, server, budgets) in live {
            self.budgets.join(id, &budgets);
            let preemptible = self.pod(id).is_some_and(|p| p.preemptible);
            for r in &mut self.servers[server.index()].residents {
                if r.id == id {
                    r.guarded = true;
                    r.preemptible = preemptible;
                }
            }
        }
        self.budgets.set_left(
            spec.disruption_budget
                .iter()
                .zip(&covered)
                .map(|(b, &n)| disruptions_allowed(b, n))
                .collect(),
        );
        self.forget_memos();
        for b in 0..covered.len() as u32 {
            if !self.budgets.may_spend(&[b]) {
                self.protect_members(b);
            }
        }
    }

    /// The state's PodDisruptionBudgets.
    pub fn budgets(&self) -> &BudgetLedger {
        &self.budgets
    }

    /// Whether evicting all of `victims` leaves every budget within what it allows (what a
    /// hard ledger requires of one decision).
    pub fn budgets_allow(&self, victims: impl IntoIterator<Item = PodId>) -> bool {
        if self.budgets.is_empty() {
            return true;
        }
        let of: Vec<&[u32]> = victims
            .into_iter()
            .filter_map(|id| self.pod(id))
            .map(|p| p.budgets.as_slice())
            .filter(|b| !b.is_empty())
            .collect();
        self.budgets.violated_by(of) == 0
    }

    /// The pods of a spent hard budget may not be evicted.
    fn protect_members(&mut self, b: u32) {
        let members = self.budgets.members(b).to_vec();
        for id in members {
            let Some(slot) = self.pods.get_mut(id.index()).and_then(Option::as_mut) else {
                continue;
            };
            if !slot.preemptible {
                continue;
            }
            Arc::make_mut(slot).preemptible = false;
            let server = slot.server;
            for r in &mut self.servers[server.index()].residents {
                if r.id == id {
                    r.preemptible = false;
                }
            }
            self.forget_memo(server);
        }
    }
}

/// Places the `[[running]]` pods of a preemption workload on an empty cluster. Cross-file
/// problems (unknown node, ids outside the server or already taken, no room) are findings that
/// point into the workload file.
pub fn running_state(
    cluster: &Cluster,
    spec: &PreemptionSpec,
) -> Result<ClusterState, Vec<Finding>> {
    let mut state = ClusterState::empty(cluster);
    let mut findings = unknown_device_kinds(cluster, spec);
    for (i, running) in spec.running.iter().enumerate() {
        match place_running(cluster, spec, &state, i, running) {
            Ok(mut pod) => {
                // The index is taken either way, so unnamed pods keep the names they have
                // without the named ones.
                let generated = state.next_name(pod.workload, &spec.workload[pod.workload].name);
                pod.name = running.name.clone().unwrap_or(generated);
                if let Err(e) = state.add(cluster, pod) {
                    findings.push(Finding::new(
                        "spec::resource-taken",
                        p!["running", i],
                        e.to_string(),
                        "conflicts with an earlier pod",
                    ));
                }
            }
            Err(f) => findings.extend(f),
        }
    }
    if findings.is_empty() {
        Ok(state)
    } else {
        Err(findings)
    }
}

fn place_running(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    state: &ClusterState,
    i: usize,
    running: &RunningPod,
) -> Result<Pod, Vec<Finding>> {
    let Some(wi) = spec
        .workload
        .iter()
        .position(|w| w.name == running.workload)
    else {
        // Reported by single-file validation.
        return Err(Vec::new());
    };
    let class = &spec.workload[wi];
    let Some(server) = cluster.server_id(&running.node) else {
        let names = &cluster.servers;
        let range = match (names.first(), names.last()) {
            (Some(a), Some(b)) => format!("{} … {}", a.name, b.name),
            _ => "none".into(),
        };
        return Err(vec![
            Finding::new(
                "spec::undefined-reference",
                p!["running", i, "node"],
                format!("no server `{}` in cluster `{}`", running.node, cluster.name),
                "no such server",
            )
            .help(format!("servers of this cluster: {range}")),
        ]);
    };
    let t = cluster.type_of(server);
    let alloc = &state.servers()[server.index()];
    let mut findings = Vec::new();
    // One finding per key and kind of problem, pointing at the first offending id.
    let mut explicit = |key: &str,
                        ids: &[i64],
                        capacity: usize,
                        is_free: &dyn Fn(usize) -> bool,
                        holder: &dyn Fn(usize) -> String| {
        let noun = if key == "gpus" { "GPU" } else { "core" };
        let mut outside: Vec<(usize, usize)> = Vec::new();
        let mut taken: Vec<(usize, usize)> = Vec::new();
        let mut ok = Vec::new();
        for (j, &id) in ids.iter().enumerate() {
            let id = id.max(0) as usize;
            if id >= capacity {
                outside.push((j, id));
            } else if !is_free(id) {
                taken.push((j, id));
            } else {
                ok.push(id);
            }
        }
        let list = |v: &[(usize, usize)]| {
            v.iter()
                .map(|(_, id)| id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(&(j, _)) = outside.first() {
            findings.push(
                Finding::new(
                    "spec::id-out-of-range",
                    p!["running", i, key, j],
                    format!(
                        "{noun} {} not exist on {}",
                        if outside.len() == 1 {
                            format!("{} does", list(&outside))
                        } else {
                            format!("ids {} do", list(&outside))
                        },
                        running.node
                    ),
                    "outside the server",
                )
                .help(format!(
                    "server type `{}` has {noun}s 0…{}",
                    t.name,
                    capacity as i64 - 1
                )),
            );
        }
        if let Some(&(j, id)) = taken.first() {
            findings.push(
                Finding::new(
                    "spec::resource-taken",
                    p!["running", i, key, j],
                    format!(
                        "{noun} {} on {} already in use (first: {id} by {})",
                        if taken.len() == 1 {
                            format!("{} is", list(&taken))
                        } else {
                            format!("ids {} are", list(&taken))
                        },
                        running.node,
                        holder(id)
                    ),
                    "already taken",
                )
                .help("each GPU and core is held by at most one pod"),
            );
        }
        ok
    };
    let holder_gpu = |g: usize| {
        state
            .holder(server, Some(g), None)
            .map_or("?".into(), |p| p.name.clone())
    };
    let holder_core = |c: usize| {
        state
            .holder(server, None, Some(c))
            .map_or("?".into(), |p| p.name.clone())
    };
    let fixed_gpus = match &running.gpus {
        Some(IdsOrCount::Ids(ids)) => Some(GpuSet::from_ids(explicit(
            "gpus",
            ids,
            t.gpu_count(),
            &|g| alloc.free_gpus.contains(g),
            &holder_gpu,
        ))),
        _ => None,
    };
    let fixed_cores = match &running.cores {
        Some(IdsOrCount::Ids(ids)) => Some(CoreSet::from_ids(explicit(
            "cores",
            ids,
            t.core_count(),
            &|c| alloc.free_cores.contains(c),
            &holder_core,
        ))),
        _ => None,
    };
    if !findings.is_empty() {
        return Err(findings);
    }
    let count = |v: &Option<IdsOrCount>, default: i64| match v {
        Some(IdsOrCount::Count(n)) => (*n).max(0) as u32,
        _ => default.max(0) as u32,
    };
    let want = cluster.request_of(
        class,
        count(&running.gpus, class.gpus),
        count(&running.cores, class.cores),
    );
    let no_room = |key: &str, what: &str, free: u32, need: u32| {
        vec![
            Finding::new(
                "spec::no-room",
                p!["running", i, key],
                format!(
                    "{} has {free} free {what}, the pod needs {need}",
                    running.node
                ),
                "does not fit",
            )
            .help("the [[running]] pods are placed in file order; move or shrink one"),
        ]
    };
    if let Some(g) = fixed_gpus
        && !t.device_rule_holds(want, g)
    {
        let kind = class.gpu_kind();
        return Err(vec![
            Finding::new(
                "spec::wrong-device",
                p!["running", i, "gpus"],
                format!(
                    "the devices of `{}` on {} are not {} devices of kind `{kind}`{}",
                    running.workload,
                    running.node,
                    if class.device_alignment.is_some() {
                        "aligned"
                    } else {
                        "all"
                    },
                    class
                        .device_alignment
                        .map_or(String::new(), |a| format!(" on one {}", a.as_str()))
                ),
                "not devices the class asks for",
            )
            .help(format!(
                "server type `{}` holds devices of kinds: {}",
                t.name,
                device_kinds_of(cluster, t)
            )),
        ]);
    }
    let usable = t.usable(want);
    let (gpus, cores) = match (fixed_gpus, fixed_cores) {
        (Some(g), Some(c)) => (g, c),
        (None, None) => match place(t, alloc.free_gpus, alloc.free_cores, want) {
            Some(pl) => (pl.gpus, pl.cores),
            None if !t.devices_fit(want, alloc.free_gpus) => {
                let free = alloc.free_gpus.and(usable).len();
                return Err(no_room("gpus", "GPUs", free, want.gpus));
            }
            None => {
                return Err(no_room(
                    "cores",
                    "cores",
                    alloc.free_cores.len(),
                    want.cores,
                ));
            }
        },
        (Some(g), None) => {
            let near = g
                .iter()
                .map(|x| t.numa_domain(t.gpu_numa[x]).cores)
                .fold(CoreSet::empty(), CoreSet::or);
            let free = alloc.free_cores;
            let first = free
                .and(near)
                .lowest(want.cores.min(free.and(near).len()))
                .unwrap_or_default();
            match free.minus(first).lowest(want.cores - first.len()) {
                Some(rest) => (g, first.or(rest)),
                None => return Err(no_room("cores", "cores", free.len(), want.cores)),
            }
        }
        (None, Some(c)) => {
            let near = c
                .iter()
                .map(|x| t.numa_domain(t.numa_of_core(x)).gpus)
                .fold(GpuSet::empty(), GpuSet::or);
            let free = alloc.free_gpus.and(usable);
            let first = free
                .and(near)
                .lowest(want.gpus.min(free.and(near).len()))
                .unwrap_or_default();
            match free.minus(first).lowest(want.gpus - first.len()) {
                Some(rest) => (first.or(rest), c),
                None => return Err(no_room("gpus", "GPUs", free.len(), want.gpus)),
            }
        }
    };
    Ok(Pod::of_class(
        String::new(),
        (wi, class),
        server,
        (gpus, cores),
        running.start_time_s,
    ))
}

/// A class asking for devices of a kind no server of the cluster has (a typo, or a workload
/// imported from another cluster) fits nowhere: an error, not a plan of unplaced pods.
fn unknown_device_kinds(cluster: &Cluster, spec: &PreemptionSpec) -> Vec<Finding> {
    spec.workload
        .iter()
        .enumerate()
        .filter(|(_, c)| c.gpus > 0 && c.gpu_resource.is_some())
        .filter(|(_, c)| {
            let kind = cluster.kind_id(c.gpu_kind());
            cluster.types.iter().all(|t| t.devices_of(kind).is_empty())
        })
        .map(|(i, c)| {
            Finding::new(
                "spec::unknown-device-kind",
                p!["workload", i, "gpu_resource"],
                format!(
                    "no server of cluster `{}` has devices of kind `{}`",
                    cluster.name,
                    c.gpu_kind()
                ),
                "no such device kind",
            )
            .help(format!(
                "the cluster's device kinds: {}",
                cluster.kinds.join(", ")
            ))
        })
        .collect()
}

/// The device kinds a server type holds, for a message.
fn device_kinds_of(cluster: &Cluster, t: &super::ServerType) -> String {
    let mut kinds: Vec<&str> = t
        .device_kind
        .iter()
        .map(|&k| cluster.kind_name(k))
        .collect();
    kinds.dedup();
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join(", ")
    }
}
