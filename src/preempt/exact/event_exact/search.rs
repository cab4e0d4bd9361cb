//! The search itself: the incumbent and its ranking rule, one event's search over servers
//! and their domains, and the depth-first search over one domain's victims.

use super::bounds::{
    Admitted, Bound, Scratch, Victim, admitted_domains, chain_bound, domain_bound,
};
use crate::plan::cancel::NODES_BETWEEN_CHECKS;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::exact::ilp::{self, COST_EPS, ServerMilp};
use crate::preempt::problem::{ChainKey, Problem, start_key};
use crate::preempt::victims::filter::fewest;
use crate::solver::Deadline;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, PodId, Request, ServerId};

/// What one event's search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Servers whose bound let them be searched.
    pub servers_searched: u64,
    /// Search nodes visited (victim sets considered), over all servers.
    pub nodes: u64,
    /// Servers handed to the MILP because their search reached [`NODE_BUDGET`].
    pub milp_fallbacks: u64,
}

/// The best candidate so far: the pod placed on `server` after evicting `victims`.
pub(super) struct Leader {
    pub(super) key: ChainKey,
    pub(super) server: ServerId,
    pub(super) victims: Vec<PodId>,
}

/// The incumbent: its cost (`unplaced` until a candidate is found) and, once one is, the
/// candidate.
pub(super) struct Best {
    pub(super) cost: f64,
    pub(super) leader: Option<Leader>,
}

impl Best {
    /// Whether a candidate with a cost of at least `cost` and a chain key no better than
    /// `chain` could still replace the incumbent: it is cheaper, or ties it with a better key.
    pub(super) fn may_improve(&self, cost: f64, chain: &ChainKey) -> bool {
        if cost > self.cost + COST_EPS {
            return false;
        }
        match &self.leader {
            // Only a tie is possible: the chain key must be able to win it (numerically
            // equal keys differ in their victims' names, which a bound cannot know).
            Some(leader) if cost >= self.cost - COST_EPS => {
                !chain.compare_numeric(&leader.key).is_gt()
            }
            _ => true,
        }
    }

    /// Offers a candidate; the rule is the MILP's, so both rank candidates alike.
    pub(super) fn offer(
        &mut self,
        state: &ClusterState,
        cost: f64,
        candidate: impl FnOnce() -> Leader,
    ) {
        if cost > self.cost + COST_EPS {
            return;
        }
        let leader = candidate();
        let better = cost < self.cost - COST_EPS
            || self
                .leader
                .as_ref()
                .is_none_or(|l| leader.key.compare(&l.key, state).is_lt());
        if better {
            self.cost = cost;
            self.leader = Some(leader);
        }
    }
}

/// One event's search.
pub(super) struct Search<'a, 'p> {
    pub(super) problem: &'a Problem<'p>,
    pub(super) state: &'a ClusterState,
    pub(super) request: Request,
    pub(super) admitted: Vec<Vec<Admitted>>,
    pub(super) best: Best,
    pub(super) stats: SearchStats,
    pub(super) budget: u64,
    /// The MILP fallback's budget, from its first use.
    pub(super) deadline: Option<Deadline>,
    pub(super) proven: bool,
    /// The potential victims of the server being bounded or searched, priority ascending.
    pub(super) victims: Vec<Victim>,
    pub(super) scratch: Scratch,
}

impl<'a, 'p> Search<'a, 'p> {
    /// A search for `p` on `state` whose incumbent costs `incumbent` (no candidate yet).
    pub(super) fn new(
        problem: &'a Problem<'p>,
        state: &'a ClusterState,
        p: &Preemptor,
        budget: u64,
        incumbent: f64,
    ) -> Self {
        Search {
            problem,
            state,
            request: p.request,
            admitted: admitted_domains(problem, p),
            best: Best {
                cost: incumbent,
                leader: None,
            },
            stats: SearchStats::default(),
            budget,
            deadline: None,
            proven: true,
            victims: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// Collects the potential victims of `p` on `server` into `self.victims`, cheapest first
    /// (weights rise with priority, so that is priority order; pod id last, for determinism).
    fn collect_victims(&mut self, server: ServerId, p: &Preemptor) {
        let cost = &self.problem.cost;
        self.victims.clear();
        self.victims.extend(
            self.state.servers()[server.index()]
                .residents()
                .iter()
                .filter(|r| self.problem.may_evict(p, r.priority, r.preemptible))
                .map(|r| Victim {
                    id: r.id,
                    priority: r.priority,
                    weight: cost.victim_cost(r.priority),
                    start: start_key(r.start_time_s),
                    gpus: r.gpus,
                    cores: r.cores,
                    guarded: r.guarded && self.state.budgets().hard(),
                }),
        );
        self.victims
            .sort_by(|a, b| a.priority.cmp(&b.priority).then(a.id.cmp(&b.id)));
    }

    /// Every server that could place the pod, with its bound.
    pub(super) fn bounds(&mut self, p: &Preemptor) -> Vec<Bound> {
        let mut out = Vec::new();
        for server in self.problem.servers() {
            let type_id = self.problem.cluster.server(server).type_id.index();
            if self.admitted[type_id].is_empty() || !self.problem.eligible(server, p) {
                continue;
            }
            self.collect_victims(server, p);
            let a = &self.state.servers()[server.index()];
            let free = (a.free_gpus(), a.free_cores());
            let mut best: Option<(f64, usize)> = None;
            for d in &self.admitted[type_id] {
                let bound = domain_bound(&self.victims, self.request, free, d, &mut self.scratch);
                if let Some((cost, k)) = bound {
                    // The least cost and, apart, the fewest victims over the domains: both
                    // bound every candidate of the server.
                    best = Some(best.map_or((cost, k), |(c, kk)| (c.min(cost), kk.min(k))));
                }
            }
            if let Some((cost, k)) = best {
                let chain = chain_bound(self.problem, server, &self.victims, k, &mut self.scratch);
                out.push(Bound {
                    cost,
                    chain,
                    server,
                });
            }
        }
        out
    }

    /// Searches one server: its domains best bound first, each by depth-first search.
    pub(super) fn server(&mut self, server: ServerId, p: &Preemptor) -> Result<(), PlanningError> {
        self.stats.servers_searched += 1;
        self.collect_victims(server, p);
        let type_id = self.problem.cluster.server(server).type_id.index();
        let a = &self.state.servers()[server.index()];
        let free = (a.free_gpus(), a.free_cores());
        let admitted = std::mem::take(&mut self.admitted[type_id]);
        let mut domains: Vec<(f64, usize, usize)> = Vec::new();
        for (di, d) in admitted.iter().enumerate() {
            if let Some((cost, k)) =
                domain_bound(&self.victims, self.request, free, d, &mut self.scratch)
            {
                domains.push((cost, k, di));
            }
        }
        domains.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut nodes = 0u64;
        let mut within_budget = true;
        for &(cost, k, di) in &domains {
            let chain = chain_bound(self.problem, server, &self.victims, k, &mut self.scratch);
            if !self.best.may_improve(cost, &chain) {
                continue;
            }
            let mut dfs = Dfs::new(self, server, free, &admitted, di, nodes);
            within_budget = dfs.visit(self, 0, 0, 0, 0.0, Facts::default());
            nodes = dfs.nodes;
            if !within_budget {
                break;
            }
        }
        self.admitted[type_id] = admitted;
        self.stats.nodes += nodes;
        // A search cut short by a stop request is no fallback case: the run ends here.
        self.problem.cancel.check()?;
        if !within_budget {
            // Too many victim sets to enumerate here: the MILP decides this server, and what
            // the search found so far stays in the running.
            self.stats.milp_fallbacks += 1;
            let deadline = *self
                .deadline
                .get_or_insert_with(|| ilp::deadline(self.problem));
            match ilp::server_milp(self.problem, self.state, server, p, &deadline)? {
                ServerMilp::Found {
                    cost,
                    victims,
                    proven,
                } => {
                    self.proven &= proven;
                    let (cluster, state) = (self.problem.cluster, self.state);
                    self.best.offer(state, cost, || Leader {
                        key: ChainKey::new(cluster, state, server, &victims),
                        server,
                        victims,
                    });
                }
                ServerMilp::Infeasible => {}
                ServerMilp::Unproven => self.proven = false,
            }
        }
        Ok(())
    }
}

/// Priority facts of a partial victim set, for its chain-key bound.
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts {
    pub(super) count: usize,
    pub(super) highest: i64,
    pub(super) sum: i64,
}

impl Default for Facts {
    fn default() -> Self {
        Facts {
            count: 0,
            highest: i64::MIN,
            sum: 0,
        }
    }
}

/// A victim with GPUs or cores inside the domain searched.
#[derive(Debug, Clone, Copy)]
pub(super) struct Item {
    /// Index into the server's victims.
    pub(super) victim: usize,
    pub(super) gpus: u32,
    pub(super) cores: u32,
}

/// The depth-first search over the victims of one domain.
pub(super) struct Dfs<'d> {
    pub(super) server: ServerId,
    pub(super) free: (GpuSet, CoreSet),
    /// The server type's admitted domains, to price a cover where the allocator places it.
    pub(super) admitted: &'d [Admitted],
    pub(super) domain_cost: f64,
    pub(super) need_g: u32,
    pub(super) need_c: u32,
    pub(super) items: Vec<Item>,
    pub(super) chosen: Vec<usize>,
    pub(super) nodes: u64,
}

impl<'d> Dfs<'d> {
    pub(super) fn new(
        search: &Search<'_, '_>,
        server: ServerId,
        free: (GpuSet, CoreSet),
        admitted: &'d [Admitted],
        domain: usize,
        nodes: u64,
    ) -> Self {
        let d = &admitted[domain];
        let items = search
            .victims
            .iter()
            .enumerate()
            .map(|(i, v)| Item {
                victim: i,
                gpus: v.gpus.and(d.gpus).len(),
                cores: v.cores.and(d.cores).len(),
            })
            .filter(|it| it.gpus > 0 || it.cores > 0)
            .collect();
        Dfs {
            server,
            free,
            admitted,
            domain_cost: d.cost,
            need_g: search.request.gpus.saturating_sub(free.0.and(d.gpus).len()),
            need_c: search
                .request
                .cores
                .saturating_sub(free.1.and(d.cores).len()),
            items,
            chosen: Vec::new(),
            nodes,
        }
    }

    /// Visits the sets that extend `chosen` with items from `i` on; `false` once the node
    /// budget is spent.
    fn visit(
        &mut self,
        search: &mut Search<'_, '_>,
        i: usize,
        got_g: u32,
        got_c: u32,
        weight: f64,
        facts: Facts,
    ) -> bool {
        self.nodes += 1;
        if self.nodes > search.budget
            || (self.nodes.is_multiple_of(NODES_BETWEEN_CHECKS)
                && search.problem.cancel.requested())
        {
            return false;
        }
        let (rem_g, rem_c) = (
            self.need_g.saturating_sub(got_g),
            self.need_c.saturating_sub(got_c),
        );
        if rem_g == 0 && rem_c == 0 {
            self.cover(search, weight);
            return true;
        }
        let rest = &self.items[i..];
        let gains = &mut search.scratch.gains;
        let Some(kg) = fewest(rem_g, rest.iter().map(|it| it.gpus), gains) else {
            return true;
        };
        let Some(kc) = fewest(rem_c, rest.iter().map(|it| it.cores), gains) else {
            return true;
        };
        let k = kg.max(kc);
        // The cheapest k of the items left (they are cheapest first) and, for the chain key,
        // their priorities, the lowest k left.
        let victims = &search.victims;
        let more = || rest[..k].iter().map(|it| &victims[it.victim]);
        let bound = weight + more().map(|v| v.weight).sum::<f64>() + self.domain_cost;
        let chain = ChainKey::numeric_bound(
            search.problem.cluster,
            self.server,
            facts.count + k,
            more().map(|v| v.priority).fold(facts.highest, i64::max),
            facts.sum + more().map(|v| v.priority).sum::<i64>(),
            f64::INFINITY,
        );
        if !search.best.may_improve(bound, &chain) {
            return true;
        }
        let item = self.items[i];
        // A victim that frees nothing still missing only makes the set larger: no minimal
        // cover takes it here; nor one that hard budgets do not let go with the others.
        let useful = (rem_g > 0 && item.gpus > 0) || (rem_c > 0 && item.cores > 0);
        if useful && self.within_budgets(search, item.victim) {
            let v = search.victims[item.victim];
            self.chosen.push(item.victim);
            let with = Facts {
                count: facts.count + 1,
                highest: facts.highest.max(v.priority),
                sum: facts.sum + v.priority,
            };
            let ok = self.visit(
                search,
                i + 1,
                got_g + item.gpus,
                got_c + item.cores,
                weight + v.weight,
                with,
            );
            self.chosen.pop();
            if !ok {
                return false;
            }
        }
        self.visit(search, i + 1, got_g, got_c, weight, facts)
    }

    /// Whether the chosen victims and `victim` keep within hard budgets.
    fn within_budgets(&self, search: &Search<'_, '_>, victim: usize) -> bool {
        let victims = &search.victims;
        !victims[victim].guarded
            || search
                .state
                .budgets_allow(self.chosen.iter().chain([&victim]).map(|&i| victims[i].id))
    }

    /// Prices the cover `chosen` where the allocator would place the pod, and offers it.
    fn cover(&self, search: &mut Search<'_, '_>, weight: f64) {
        let victims = &search.victims;
        let (g, c) = self
            .chosen
            .iter()
            .map(|&i| &victims[i])
            .fold(self.free, |(g, c), v| (g.or(v.gpus), c.or(v.cores)));
        let req = search.request;
        // The allocator's level: the finest domain that holds the request. The domain searched
        // holds it, so one is found; admitted levels are the finest ones, so it is admitted.
        let Some(placed) = self
            .admitted
            .iter()
            .find(|d| g.and(d.gpus).len() >= req.gpus && c.and(d.cores).len() >= req.cores)
        else {
            return;
        };
        let cost = placed.cost + weight;
        let (cluster, server, chosen) = (search.problem.cluster, self.server, &self.chosen);
        search.best.offer(search.state, cost, || {
            let ids = chosen.iter().map(|&i| victims[i].id).collect();
            let facts = chosen
                .iter()
                .map(|&i| (victims[i].priority, finite_start(victims[i].start)));
            Leader {
                key: ChainKey::from_facts(cluster, server, ids, facts),
                server,
                victims: chosen.iter().map(|&i| victims[i].id).collect(),
            }
        });
    }
}

/// A [`start_key`] back as a start time (`INFINITY` = absent).
pub(super) fn finite_start(key: f64) -> Option<f64> {
    key.is_finite().then_some(key)
}
