//! Allocation state: which pod holds which GPUs and cores, changed only by adding and
//! evicting pods.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::memo::ScanMemo;
use super::pod::{Pod, Resident};
use crate::spec::preemption::PreemptionSpec;
use crate::topology::bits::{CoreSet, GpuSet};
use crate::topology::budgets::{BudgetLedger, BudgetTable, disruptions_allowed};
use crate::topology::cluster::Cluster;
use crate::topology::ids::{PodId, ServerId};

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
