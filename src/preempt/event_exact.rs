//! The exact per-event optimum by branch and bound (`[planners] event_solver = "exact"`, the
//! default): the same problem, objective and tie-breaks as the per-server MILP
//! ([`super::ilp`]), solved combinatorially.
//!
//! The problem: choose a server, a set of its potential victims and (through the node
//! allocator) a placement, minimising the canonical cost; leaving the pod unplaced costs
//! `unplaced`. For a victim set S on a server, the allocator places the pod at the finest level
//! where some domain holds the request in its free plus freed GPUs and cores, so
//! cost(S) = Σ_{v∈S} w(v) + c(finest admitted level such a domain has). Every weight is ≥ 0
//! (validation), so an optimal set can be shrunk to a *minimal cover* of the domain it is
//! placed in (no victim can leave while the domain still holds the request) without raising
//! its cost, and removing a victim always improves its candidate-chain key. The optimum with
//! the best chain key is therefore a minimal cover of some admitted domain, and the search
//! enumerates exactly those, pruned:
//!
//! 1. Every server gets a lower bound: per admitted domain its placement cost plus the
//!    cheapest k of the victims with GPUs or cores inside it, k the counting bound (the fewest
//!    victims whose GPUs, and apart whose cores, inside the domain could cover the shortfall,
//!    as FlexTopo's filter computes it); and an optimistic chain key (the best key any k of its
//!    victims could have). Servers are searched in that order.
//! 2. A server (or one of its domains) is skipped when its bound exceeds the best cost found,
//!    or when it can only tie that cost and its optimistic chain key is worse than the best
//!    candidate's.
//! 3. Within a domain, a depth-first search includes or excludes each victim with GPUs or
//!    cores inside it (cheapest first), stops a branch as soon as the domain holds the request
//!    (a cover), never adds a victim that frees nothing still missing, and cuts a branch by
//!    the same two bounds computed on what is left.
//!
//! Each cover reached is priced as the allocator would place the pod (its finest fitting
//! domain, which may be finer than the one searched) and ranked by cost, ties within
//! [`COST_EPS`] by the candidate chain, exactly as the MILP ranks its per-server answers. The
//! decision is replayed with the node allocator, which must reproduce its cost.
//!
//! A server whose search visits more than [`NODE_BUDGET`] nodes is handed to its MILP
//! instead (within `ilp_time_limit_s`), keeping what the search found so far: on the
//! paper preset no server comes near the budget (`cargo bench --bench preemption` counts the
//! fallbacks); it bounds the work on servers with many small victims.

use super::flextopo_sourcing::fewest;
use super::ilp::{self, COST_EPS, EventOptimum, ServerMilp};
use super::problem::{ChainKey, Decision, Problem, start_key};
use crate::plan::cancel::NODES_BETWEEN_CHECKS;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::solver::Deadline;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, PodId, Request, ServerId};

/// Search nodes one server may use before its MILP decides it instead.
pub const NODE_BUDGET: u64 = 200_000;

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

/// The per-event optimum by branch and bound.
pub fn exact_optimum(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
) -> Result<EventOptimum, PlanningError> {
    exact_optimum_with_stats(problem, state, p, NODE_BUDGET).map(|(o, _)| o)
}

/// [`exact_optimum`] with a per-server node budget, and what the search did.
pub fn exact_optimum_with_stats(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    budget: u64,
) -> Result<(EventOptimum, SearchStats), PlanningError> {
    let mut search = Search::new(problem, state, p, budget, problem.cost.weights.unplaced);
    let mut order = search.bounds(p);
    order.sort_by(|a, b| {
        a.cost
            .total_cmp(&b.cost)
            .then_with(|| a.chain.compare_numeric(&b.chain))
    });
    for bound in &order {
        if !search.best.may_improve(bound.cost, &bound.chain) {
            if bound.cost > search.best.cost + COST_EPS {
                // Sorted by cost: every later server is dearer still.
                break;
            }
            continue;
        }
        search.server(bound.server, p)?;
    }
    let Search {
        best,
        stats,
        proven,
        ..
    } = search;
    let (cost, decision) = match best.leader {
        Some(leader) => {
            let mut victims = leader.victims;
            victims.sort_unstable();
            let replayed = ilp::replay_cost(problem, state, leader.server, p, &victims)
                .ok_or_else(|| {
                    PlanningError::Internal(format!(
                        "the exact search chose victims on {} that do not admit a placement",
                        problem.cluster.server(leader.server).name
                    ))
                })?;
            // A search cost the replay does not reproduce means a wrong model: fail loudly
            // rather than report a false optimum.
            if (replayed - best.cost).abs() > 1e-6 {
                return Err(PlanningError::Internal(format!(
                    "the exact search's cost on {} ({}) disagrees with its replay ({replayed})",
                    problem.cluster.server(leader.server).name,
                    best.cost
                )));
            }
            let decision = Decision {
                server: Some(leader.server),
                victims,
                ..Decision::default()
            };
            (replayed, decision)
        }
        None => (best.cost, Decision::default()),
    };
    Ok((
        EventOptimum {
            cost,
            decision: Decision {
                subsets_evaluated: stats.nodes,
                ..decision
            },
            proven,
        },
        stats,
    ))
}

/// The victim set first in the total order of decisions (cost, then the candidate chain) among
/// those on `server` that cost at most `cost` (within [`COST_EPS`]), with its replayed cost:
/// the MILP reference proves a server's optimum cost and takes its set from here, so both
/// per-event solvers make the same choice on every tie. `None` when no set on the server
/// reaches `cost`. A server too large to enumerate is decided by its MILP, as in the search.
pub fn best_tied_on_server(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    server: ServerId,
    cost: f64,
) -> Result<Option<(f64, Vec<PodId>)>, PlanningError> {
    let mut search = Search::new(problem, state, p, NODE_BUDGET, cost);
    search.server(server, p)?;
    let Some(leader) = search.best.leader else {
        return Ok(None);
    };
    let mut victims = leader.victims;
    victims.sort_unstable();
    Ok(ilp::replay_cost(problem, state, server, p, &victims).map(|c| (c, victims)))
}

/// A domain the pod may be placed in on servers of one type: admitted by the node and large
/// enough for the request.
#[derive(Debug, Clone)]
struct Admitted {
    cost: f64,
    gpus: GpuSet,
    cores: CoreSet,
}

/// Per server type, its admitted domains, finest level first (as the allocator tries them).
/// The node's admission depends on the server only through its type (the scheduler's filter,
/// per server, is asked in [`Search::bounds`]).
fn admitted_domains(problem: &Problem<'_>, p: &Preemptor) -> Vec<Vec<Admitted>> {
    let mut per_type: Vec<Option<Vec<Admitted>>> = vec![None; problem.cluster.types.len()];
    for server in problem.servers() {
        let type_id = problem.cluster.server(server).type_id.index();
        if per_type[type_id].is_some() {
            continue;
        }
        let t = problem.cluster.type_of(server);
        let mut domains = Vec::new();
        for level in Level::ALL {
            if !problem.node_admits(server, p, level) {
                continue;
            }
            for d in t.domains_for(p.request, level) {
                if d.gpus.len() >= p.request.gpus && d.cores.len() >= p.request.cores {
                    domains.push(Admitted {
                        cost: problem.cost.placement_cost(t, level),
                        gpus: d.gpus,
                        cores: d.cores,
                    });
                }
            }
        }
        per_type[type_id] = Some(domains);
    }
    per_type
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

/// A potential victim as the search reads it.
#[derive(Debug, Clone, Copy)]
struct Victim {
    id: PodId,
    priority: i64,
    weight: f64,
    /// [`start_key`] of its start time.
    start: f64,
    gpus: GpuSet,
    cores: CoreSet,
    /// A hard PodDisruptionBudget covers it: a set taking it is checked against the budgets.
    guarded: bool,
}

/// A server's (or a domain's) lower bound: the least cost any of its candidates could have,
/// and the best chain key they could have.
struct Bound {
    cost: f64,
    chain: ChainKey,
    server: ServerId,
}

/// The best candidate so far: the pod placed on `server` after evicting `victims`.
struct Leader {
    key: ChainKey,
    server: ServerId,
    victims: Vec<PodId>,
}

/// The incumbent: its cost (`unplaced` until a candidate is found) and, once one is, the
/// candidate.
struct Best {
    cost: f64,
    leader: Option<Leader>,
}

impl Best {
    /// Whether a candidate with a cost of at least `cost` and a chain key no better than
    /// `chain` could still replace the incumbent: it is cheaper, or ties it with a better key.
    fn may_improve(&self, cost: f64, chain: &ChainKey) -> bool {
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
    fn offer(&mut self, state: &ClusterState, cost: f64, candidate: impl FnOnce() -> Leader) {
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

/// Buffers reused by every server and domain of one event.
#[derive(Default)]
struct Scratch {
    gains: Vec<u32>,
    facts: Vec<(i64, f64)>,
}

/// One event's search.
struct Search<'a, 'p> {
    problem: &'a Problem<'p>,
    state: &'a ClusterState,
    request: Request,
    admitted: Vec<Vec<Admitted>>,
    best: Best,
    stats: SearchStats,
    budget: u64,
    /// The MILP fallback's budget, from its first use.
    deadline: Option<Deadline>,
    proven: bool,
    /// The potential victims of the server being bounded or searched, priority ascending.
    victims: Vec<Victim>,
    scratch: Scratch,
}

impl<'a, 'p> Search<'a, 'p> {
    /// A search for `p` on `state` whose incumbent costs `incumbent` (no candidate yet).
    fn new(
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
    fn bounds(&mut self, p: &Preemptor) -> Vec<Bound> {
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
    fn server(&mut self, server: ServerId, p: &Preemptor) -> Result<(), PlanningError> {
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

/// The lower bound of one admitted domain of a server with these victims (cheapest first)
/// and free GPUs and cores: (cost bound, counting bound k), or `None` when evicting every
/// victim still leaves the domain short.
fn domain_bound(
    victims: &[Victim],
    request: Request,
    free: (GpuSet, CoreSet),
    d: &Admitted,
    scratch: &mut Scratch,
) -> Option<(f64, usize)> {
    let need_g = request.gpus.saturating_sub(free.0.and(d.gpus).len());
    let need_c = request.cores.saturating_sub(free.1.and(d.cores).len());
    let gains = &mut scratch.gains;
    let kg = fewest(
        need_g,
        victims.iter().map(|v| v.gpus.and(d.gpus).len()),
        gains,
    )?;
    let kc = fewest(
        need_c,
        victims.iter().map(|v| v.cores.and(d.cores).len()),
        gains,
    )?;
    let k = kg.max(kc);
    // Any cover holds at least k victims with GPUs or cores inside the domain; the cheapest k
    // of those bound its weight.
    let weight: f64 = victims
        .iter()
        .filter(|v| v.gpus.intersects(&d.gpus) || v.cores.intersects(&d.cores))
        .take(k)
        .map(|v| v.weight)
        .sum();
    Some((d.cost + weight, k))
}

/// The best chain key any candidate with at least `k` of a server's victims could have.
fn chain_bound(
    problem: &Problem<'_>,
    server: ServerId,
    victims: &[Victim],
    k: usize,
    scratch: &mut Scratch,
) -> ChainKey {
    let facts = &mut scratch.facts;
    facts.clear();
    facts.extend(victims.iter().map(|v| (v.priority, v.start)));
    ChainKey::best_possible(problem.cluster, server, k, facts).0
}

/// Priority facts of a partial victim set, for its chain-key bound.
#[derive(Debug, Clone, Copy)]
struct Facts {
    count: usize,
    highest: i64,
    sum: i64,
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
struct Item {
    /// Index into the server's victims.
    victim: usize,
    gpus: u32,
    cores: u32,
}

/// The depth-first search over the victims of one domain.
struct Dfs<'d> {
    server: ServerId,
    free: (GpuSet, CoreSet),
    /// The server type's admitted domains, to price a cover where the allocator places it.
    admitted: &'d [Admitted],
    domain_cost: f64,
    need_g: u32,
    need_c: u32,
    items: Vec<Item>,
    chosen: Vec<usize>,
    nodes: u64,
}

impl<'d> Dfs<'d> {
    fn new(
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
fn finite_start(key: f64) -> Option<f64> {
    key.is_finite().then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preempt::ilp::brute_force_optimum;
    use crate::preempt::per_event::milp_event_optimum as milp_optimum;
    use crate::preempt::scenario;
    use crate::spec::PreemptionSpec;
    use crate::spec::{ClusterSpec, PoolSpec};
    use crate::topology::Cluster;

    fn cluster(count: i64) -> Cluster {
        Cluster::from_spec(&ClusterSpec {
            kind: None,
            name: "c".into(),
            server_type: Vec::new(),
            pool: vec![PoolSpec {
                server_type: "gpu-2s4n8g".into(),
                count,
                name_prefix: "n".into(),
                names: None,
                ..Default::default()
            }],
            ..Default::default()
        })
    }

    fn spec(text: &str) -> PreemptionSpec {
        toml::from_str(text).expect("valid spec")
    }

    /// Both solvers and brute force on every preemptor of `spec`, each decided on the state
    /// the exact solver's decisions leave.
    fn agree(cluster: &Cluster, spec: &PreemptionSpec) {
        let problem = Problem::new(cluster, spec);
        let mut state = scenario::initial_state(cluster, spec, None).expect("state");
        let preemptors = scenario::preemptors(cluster, spec, &mut state);
        for p in &preemptors {
            let exact = exact_optimum(&problem, &state, p).expect("exact");
            let milp = milp_optimum(&problem, &state, p).expect("milp");
            let brute = brute_force_optimum(&problem, &state, p);
            assert!((exact.cost - milp.cost).abs() <= 1e-9, "{p:?}");
            assert!((exact.cost - brute).abs() <= 1e-9, "{p:?}");
            assert!(exact.proven);
            crate::preempt::apply::apply(&problem, &mut state, p, &exact.decision)
                .expect("applies");
        }
    }

    #[test]
    fn agrees_with_the_milp_and_brute_force_on_a_fragmented_server() {
        // Two servers of 2 sockets × 4 NUMA nodes, 8 GPUs and 64 cores, filled with 1-GPU pods
        // of two priorities; guaranteed and best-effort preemptors of 2 and 4 GPUs.
        let spec = spec(
            r#"
kind = "preemption"
[[workload]]
name = "low"
priority = 1
gpus = 1
cores = 5
preemptible = true
[[workload]]
name = "mid"
priority = 5
gpus = 1
cores = 3
preemptible = true
[[workload]]
name = "b"
priority = 10
gpus = 2
cores = 10
topology_qos = "guaranteed"
[[workload]]
name = "c"
priority = 10
gpus = 4
cores = 20
topology_qos = "best-effort"
[fill]
mix = { low = 2.0, mid = 1.0 }
target_gpu_utilization = 1.0
allocator = "random"
churn_rounds = 2
seed = 4
[[preempt]]
workload = "b"
count = 3
[[preempt]]
workload = "c"
count = 2
"#,
        );
        agree(&cluster(2), &spec);
    }

    #[test]
    fn ties_go_to_the_best_chain_key_and_a_tiny_budget_falls_back_to_the_milp() {
        // Every victim costs the same: the chain key (latest start among the victims, then
        // the server name) decides, within a server too.
        let spec = spec(
            r#"
kind = "preemption"
[[workload]]
name = "a"
priority = 1
gpus = 1
cores = 1
preemptible = true
[[workload]]
name = "b"
priority = 9
gpus = 1
cores = 1
[[running]]
workload = "a"
node = "n1"
gpus = [0]
cores = [0]
start_time_s = 10
[[running]]
workload = "a"
node = "n1"
gpus = [1]
cores = [8]
start_time_s = 30
[[running]]
workload = "a"
node = "n0"
gpus = [0]
cores = [0]
start_time_s = 20
[fill]
mix = { a = 1.0 }
target_gpu_utilization = 1.0
allocator = "best-fit"
churn_rounds = 0
seed = 1
[[preempt]]
workload = "b"
count = 1
"#,
        );
        let cluster = cluster(2);
        let problem = Problem::new(&cluster, &spec);
        let mut state = scenario::initial_state(&cluster, &spec, None).expect("state");
        let preemptors = scenario::preemptors(&cluster, &spec, &mut state);
        let (exact, stats) =
            exact_optimum_with_stats(&problem, &state, &preemptors[0], NODE_BUDGET).expect("exact");
        let chosen = &exact.decision.victims;
        assert_eq!(chosen.len(), 1);
        let victim = state.pod(chosen[0]).expect("victim");
        // The fill's pods start at 0, so the latest start is the running pod's 30 s on n1.
        assert_eq!(victim.start_time_s, Some(30.0));
        assert_eq!(stats.milp_fallbacks, 0);
        let milp = milp_optimum(&problem, &state, &preemptors[0]).expect("milp");
        assert!((exact.cost - milp.cost).abs() <= 1e-9);
        // A budget of one node sends every searched server to its MILP: still the optimum.
        let (tiny, stats) =
            exact_optimum_with_stats(&problem, &state, &preemptors[0], 1).expect("fallback");
        assert!(stats.milp_fallbacks > 0);
        assert!((tiny.cost - exact.cost).abs() <= 1e-9);
        assert!(tiny.proven);
    }
}
