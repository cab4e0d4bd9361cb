//! Incremental Minimal Preemption (`flextopo-imp`) without enumerating every minimal-size
//! subset. [`decide`] decides IMP's victim set: the candidate of the smallest feasible size
//! with the highest Eq. 1 score, S = α·P + (1 − α)·T ([`eq1`]), ties by the candidate chain
//! ([`pick_best`]).
//!
//! IMP's candidates are the feasible victim subsets of the smallest size `k*` that has any,
//! on any server (`imp_scope = "cluster"`), or on each server those of its own smallest
//! feasible size (`"node"`); the reference ([`super::planner::decide_reference`])
//! enumerates all of them and ranks them by Eq. 1, then by the candidate chain. This search
//! chooses the same candidate:
//!
//! 1. `k*` ([`candidate_sizes`]): servers are tried from the smallest counting bound up; a
//!    size is settled by the first feasible subset found on any server. Under node scope
//!    every server's own size is found the same way, from its counting bound up.
//! 2. Every server that could hold a `k*`-candidate gets an optimistic key ([`bound`]): Eq. 1
//!    of the best level its per-level counting bound allows and the lowest priority sum of
//!    `k*` of its victims, and the best chain key (the same sum, the latest possible earliest
//!    start, its name rank).
//! 3. Servers are evaluated best bound first ([`source_best_first`]: all of their
//!    `k*`-subsets, as the reference does); a server is skipped when its bound cannot reach the
//!    best score found, or, once that score can no longer rise, when its chain bound is worse
//!    than the chain key of a candidate already in the top band.
//!
//! It applies when a candidate's score does not depend on the others ([`search_applies`]):
//! `priority_norm` is `spec` or `inverse-sum`, or every potential victim in reach has one
//! priority and every server in reach one candidate size (then every candidate has the same
//! priority sum and P = 1 under `candidates`). When the per-server budget would cut the
//! reference short, it returns `None` and the reference decides.

use super::score::{
    SCORE_EPS, candidate_key, candidate_score, decision_of, eq1, pick_best,
    preemptible_priority_range, priority_term,
};
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::{ChainKey, Decision, Problem, QosTest, start_key};
use crate::preempt::victims::candidates::Sink;
use crate::preempt::victims::filter::{BestChain, Filtered, Qualifying, VictimFacts};
use crate::preempt::victims::subsets::{for_each_union, subsets_up_to};
use crate::spec::preemption::{ImpScope, PriorityNorm, ScoreBasis};
use crate::topology::Level;
use crate::topology::state::ClusterState;

/// A server's optimistic key at the size of its candidates.
struct Bound {
    qualifying: usize,
    size: usize,
    score: f64,
    chain: ChainKey,
    /// Every potential victim of the server has one priority.
    one_priority: bool,
}

/// IMP's victim set, by the pruned search: the highest Eq. 1 score among the candidates of
/// the smallest feasible size, ties by the candidate chain. `None` when a precondition of the
/// module fails (the reference decides then).
pub fn decide(problem: &Problem<'_>, state: &ClusterState, p: &Preemptor) -> Option<Decision> {
    let qos = problem.qos_test(p);
    let mut filtered = Filtered::new(problem, &qos, state, p);
    let mut evaluated = 0u64;
    let Some(sizes) = candidate_sizes(problem, &qos, state, &filtered, &mut evaluated).ok()? else {
        let none = Sink::default();
        return Some(decision_of(
            problem, &filtered, &none, None, evaluated, false,
        ));
    };
    if !search_applies(problem, &filtered, &sizes) {
        return None;
    }
    let order = BoundOrder::new(problem, &filtered, &sizes);
    let (sink, scores) = source_best_first(
        problem,
        (&qos, state),
        &mut filtered,
        &order,
        &mut evaluated,
    );
    let chosen = pick_best(problem, state, &filtered, &sink, &scores);
    Some(decision_of(
        problem, &filtered, &sink, chosen, evaluated, false,
    ))
}

/// Per qualifying server, the size of its candidates (`None`: it holds none): k* on every
/// server under cluster scope, the server's own smallest feasible size under node scope.
/// `Ok(None)`: no server has a feasible subset (cluster scope).
fn candidate_sizes(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    filtered: &Filtered,
    evaluated: &mut u64,
) -> Result<Option<Vec<Option<usize>>>, OverBudget> {
    Ok(Some(match problem.spec.flextopo.imp_scope {
        ImpScope::Cluster => {
            let Some(k) = smallest_feasible_size(problem, qos, state, filtered, evaluated)? else {
                return Ok(None);
            };
            let in_reach = |q: &Qualifying| q.min_victims <= k && k <= q.victims;
            filtered
                .servers
                .iter()
                .map(|q| in_reach(q).then_some(k))
                .collect()
        }
        ImpScope::Node => filtered
            .servers
            .iter()
            .map(|q| smallest_feasible_on(problem, qos, state, q, evaluated))
            .collect::<Result<_, OverBudget>>()?,
    }))
}

/// Whether this search chooses what the reference chooses: the reference's enumeration of
/// every server in reach stays within its budget, and under `priority_norm = "candidates"`
/// every candidate has the same priority sum (then P = 1 for all).
fn search_applies(problem: &Problem<'_>, filtered: &Filtered, sizes: &[Option<usize>]) -> bool {
    let settings = &problem.spec.flextopo;
    let budget = settings.max_subset_evaluations;
    let in_reach = || {
        filtered
            .servers
            .iter()
            .zip(sizes)
            .filter(|(_, k)| k.is_some())
    };
    if in_reach()
        .any(|(q, k)| k.is_some_and(|k| subsets_up_to(q.victims, q.min_victims, k) > budget))
    {
        return false;
    }
    if settings.priority_norm == PriorityNorm::Candidates {
        // One priority among the potential victims in reach, and one size (node scope may
        // mix sizes).
        let mut spans = in_reach().filter_map(|(q, _)| q.priorities);
        if let Some((lo, hi)) = spans.next()
            && (lo != hi || spans.any(|s| s != (lo, hi)))
        {
            return false;
        }
        let mut in_reach_sizes = in_reach().filter_map(|(_, k)| *k);
        if let Some(first) = in_reach_sizes.next()
            && in_reach_sizes.any(|k| k != first)
        {
            return false;
        }
    }
    true
}

/// The servers' optimistic keys, best first as far as the search needs them sorted.
struct BoundOrder {
    bounds: Vec<Bound>,
    /// How many of `bounds` are sorted, best first; the rest are in no order.
    head: usize,
    /// The best score among the unsorted rest.
    rest_max: f64,
}

impl BoundOrder {
    fn new(problem: &Problem<'_>, filtered: &Filtered, sizes: &[Option<usize>]) -> Self {
        let range = preemptible_priority_range(problem);
        let bound_of = |scratch: &mut Vec<(i64, f64)>, qi: usize| {
            sizes[qi].and_then(|k| bound(problem, filtered, qi, k, range, scratch))
        };
        // One pass in server order. With the filter's results kept in the servers' memos this
        // pass and the filter are bound by memory, not work: on two cores, rayon made them
        // slower.
        let mut scratch = Vec::new();
        let mut bounds = Vec::with_capacity(filtered.servers.len());
        bounds.extend((0..filtered.servers.len()).filter_map(|qi| bound_of(&mut scratch, qi)));
        // Best bounds first, but only the head is sorted: on large clusters most servers are
        // skipped whatever their order. Server ranks differ, so no two bounds compare equal
        // and the unstable selection is deterministic.
        let best_first = |a: &Bound, b: &Bound| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.chain.compare_numeric(&b.chain))
        };
        let head = (bounds.len() / 8).clamp(1, 64).min(bounds.len());
        if head < bounds.len() {
            bounds.select_nth_unstable_by(head - 1, best_first);
        }
        bounds[..head].sort_unstable_by(best_first);
        let rest_max = bounds[head..]
            .iter()
            .map(|b| b.score)
            .fold(f64::NEG_INFINITY, f64::max);
        BoundOrder {
            bounds,
            head,
            rest_max,
        }
    }
}

/// Sources the candidates of the servers in `order`, skipping those whose bound cannot win;
/// returns them with each one's Eq. 1 score, in sink order (a score does not depend on the
/// other candidates here).
fn source_best_first(
    problem: &Problem<'_>,
    (qos, state): (&QosTest, &ClusterState),
    filtered: &mut Filtered,
    order: &BoundOrder,
    evaluated: &mut u64,
) -> (Sink, Vec<f64>) {
    let head = order.head;
    let mut sink = Sink::default();
    let mut scores: Vec<f64> = Vec::new();
    let mut top = f64::NEG_INFINITY;
    // The best numeric chain key among the candidates scoring within SCORE_EPS of `top`.
    let mut leader: Option<ChainKey> = None;
    for (i, b) in order.bounds.iter().enumerate() {
        if b.score < top - SCORE_EPS {
            // In the sorted head every later bound, and the whole rest, is no higher.
            if i < head {
                break;
            }
            continue;
        }
        // Once no remaining bound can exceed `top`, `top` is final and a server or subset
        // whose chain key is worse than the leader's cannot win.
        let remaining_max = if i < head { b.score } else { order.rest_max };
        let beat = leader.as_ref().filter(|_| remaining_max <= top);
        if beat.is_some_and(|l| b.chain.compare_numeric(l).is_gt()) {
            continue;
        }
        let first_new = scores.len();
        let k = b.size;
        *evaluated += if b.one_priority && k > 0 {
            source_latest_first(
                problem,
                qos,
                state,
                filtered,
                b.qualifying,
                k,
                beat,
                &mut sink,
            )
        } else {
            filtered
                .source(problem, qos, state, b.qualifying, k, u64::MAX, &mut sink)
                .0
        };
        let old_top = top;
        for c in &sink.candidates[first_new..] {
            let sum = c.priority_sum;
            let score = candidate_score(problem, filtered, &sink, c, (sum, sum));
            top = top.max(score);
            scores.push(score);
        }
        let fresh = if top == old_top { first_new } else { 0 };
        leader = band_leader(
            problem,
            filtered,
            &sink,
            &scores,
            top,
            fresh,
            leader.filter(|_| fresh > 0),
        );
    }
    (sink, scores)
}

/// The size search reached a size whose subsets, with those of the smaller sizes, exceed a
/// server's enumeration budget: the reference would stop short there, so it must decide
/// (and the search must not enumerate them: their number grows as n choose k).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OverBudget;

/// Whether the reference's enumeration of `q` up to size `k` stays within its budget.
fn within_budget(problem: &Problem<'_>, q: &Qualifying, k: usize) -> Result<(), OverBudget> {
    if subsets_up_to(q.victims, q.min_victims, k) > problem.spec.flextopo.max_subset_evaluations {
        Err(OverBudget)
    } else {
        Ok(())
    }
}

/// The smallest subset size with a feasible subset on some server (`None`: none has one).
/// Sizes below a server's counting bound are not tried there; a size is settled by its first
/// feasible subset.
fn smallest_feasible_size(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    filtered: &Filtered,
    evaluated: &mut u64,
) -> Result<Option<usize>, OverBudget> {
    let servers = &filtered.servers;
    let (Some(lowest), Some(highest)) = (
        servers.iter().map(|q| q.min_victims).min(),
        servers.iter().map(|q| q.victims).max(),
    ) else {
        return Ok(None);
    };
    for k in lowest..=highest {
        for q in servers
            .iter()
            .filter(|q| q.min_victims <= k && k <= q.victims)
        {
            within_budget(problem, q, k)?;
            let (found, n) = has_feasible_subset(problem, qos, state, q, k);
            *evaluated += n;
            if found {
                return Ok(Some(k));
            }
        }
    }
    Ok(None)
}

/// The smallest size with a feasible subset on one server, from its counting bound up
/// (`None`: none up to all its victims, which a qualifying server always has).
fn smallest_feasible_on(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    q: &Qualifying,
    evaluated: &mut u64,
) -> Result<Option<usize>, OverBudget> {
    for k in q.min_victims..=q.victims {
        within_budget(problem, q, k)?;
        let (found, n) = has_feasible_subset(problem, qos, state, q, k);
        *evaluated += n;
        if found {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

/// Whether some `k`-subset of `q`'s victims admits a placement meeting the QoS, and the
/// subsets tried to find out.
fn has_feasible_subset(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    q: &Qualifying,
    k: usize,
) -> (bool, u64) {
    let base = &state.servers()[q.server.index()];
    let (mut found, mut tried) = (false, 0u64);
    for_each_union(
        q.facts(),
        k,
        (base.free_gpus(), base.free_cores()),
        &mut |_, g, c| {
            tried += 1;
            found = qos.placed_level(problem.cluster, q.server, g, c).is_some();
            !found
        },
    );
    (found, tried)
}

/// The optimistic key of server `q` at size `k`, its best possible Eq. 1 score the first
/// (`None`: no level is reachable with `k`).
fn bound(
    problem: &Problem<'_>,
    filtered: &Filtered,
    qi: usize,
    k: usize,
    range: (i64, i64),
    scratch: &mut Vec<(i64, f64)>,
) -> Option<Bound> {
    let settings = &problem.spec.flextopo;
    let q = &filtered.servers[qi];
    let t = problem.cluster.type_of(q.server);
    let best_level = Level::ALL
        .into_iter()
        .zip(q.level_bounds)
        .find(|(_, needed)| needed.is_some_and(|n| n <= k))?
        .0;
    // A set reaching `best_level` may land on any worse level too, and under the victims
    // basis the level is the victims' own span, no finer than the tightest `k` victims can
    // have: take the best score of what remains.
    let levels_possible = Level::ALL
        .into_iter()
        .filter(|&l| match settings.score_basis {
            ScoreBasis::Placement => l >= best_level,
            ScoreBasis::Victims => l >= q.tightest_span(problem.cluster, k),
        });
    let topology = levels_possible
        .map(|l| problem.cost.topology_score(t, l))
        .fold(f64::NEG_INFINITY, f64::max);
    let BestChain {
        chain,
        lowest_sum,
        one_priority,
    } = q.best_chain(problem.cluster, k, scratch);
    let pterm = priority_term(
        settings.priority_norm,
        k,
        lowest_sum,
        (lowest_sum, lowest_sum),
        range,
    );
    Some(Bound {
        one_priority,
        qualifying: qi,
        size: k,
        score: eq1(settings.alpha, pterm, topology),
        chain,
    })
}

/// The best numeric chain key among `sink`'s candidates scoring within SCORE_EPS of `top`:
/// `leader` (the best of the candidates before `from`) folded with those from `from` on.
fn band_leader(
    problem: &Problem<'_>,
    filtered: &Filtered,
    sink: &Sink,
    scores: &[f64],
    top: f64,
    from: usize,
    leader: Option<ChainKey>,
) -> Option<ChainKey> {
    sink.candidates[from..]
        .iter()
        .zip(&scores[from..])
        .filter(|(_, s)| **s >= top - SCORE_EPS)
        .map(|(c, _)| candidate_key(problem, filtered, sink, c, false))
        .chain(leader)
        .min_by(|a, b| a.compare_numeric(b))
}

/// Sources the `k`-subsets (k ≥ 1) of a server whose victims share one priority, in
/// descending order of their earliest start, and stops once that start makes the chain key
/// worse than `beat`'s: every later subset would lose to it. Returns the subsets tried.
#[allow(clippy::too_many_arguments)]
fn source_latest_first(
    problem: &Problem<'_>,
    qos: &QosTest,
    state: &ClusterState,
    filtered: &Filtered,
    qi: usize,
    k: usize,
    beat: Option<&ChainKey>,
    sink: &mut Sink,
) -> u64 {
    let q = &filtered.servers[qi];
    let facts = q.facts();
    let base = &state.servers()[q.server.index()];
    let mut order: Vec<usize> = (0..facts.len()).collect();
    order.sort_by(|&a, &b| {
        start_key(facts[b].start_time_s).total_cmp(&start_key(facts[a].start_time_s))
    });
    let sorted: Vec<VictimFacts> = order.iter().map(|&i| facts[i]).collect();
    let priority = facts[0].priority;
    let mut members = Vec::with_capacity(k);
    let mut tried = 0u64;
    // Subsets whose latest-sorted member is `last` all have its start as their earliest.
    for last in k - 1..sorted.len() {
        let earliest = start_key(sorted[last].start_time_s);
        if let Some(l) = beat {
            let key = ChainKey::numeric_bound(
                problem.cluster,
                q.server,
                k,
                priority,
                priority * k as i64,
                earliest,
            );
            if key.compare_numeric(l).is_gt() {
                break;
            }
        }
        let with_last = (
            base.free_gpus().or(sorted[last].gpus),
            base.free_cores().or(sorted[last].cores),
        );
        for_each_union(&sorted[..last], k - 1, with_last, &mut |idx, g, c| {
            tried += 1;
            if let Some(level) = qos.placed_level(problem.cluster, q.server, g, c) {
                members.clear();
                members.extend(idx.iter().map(|&i| order[i]));
                members.push(order[last]);
                members.sort_unstable();
                sink.push(qi, &members, level, facts);
            }
            true
        });
    }
    tried
}

#[cfg(test)]
mod tests {
    use crate::preempt::planning::{PlanOptions, plan};
    use crate::spec::{Expect, SourceFile, Spec, load};
    use crate::topology::Cluster;

    /// Two servers filled with 1-core pods (about 250 victims), then a pod that needs 8 cores
    /// and 2 GPUs in one NUMA node: the size search meets sizes with billions of subsets. It
    /// must leave them to the budgeted reference rather than enumerate them.
    #[test]
    fn the_size_search_stops_at_the_budget() {
        let cluster = "kind = \"cluster\"\nname = \"two\"\n[[pool]]\nserver_type = \"gpu-2s4n8g\"\ncount = 2\nname_prefix = \"p0-\"\n";
        let workload = "kind = \"preemption\"\n\
            [[workload]]\nname = \"w0\"\npriority = 10\ngpus = 0\ncores = 1\ntopology_qos = \"best-effort\"\npreemptible = true\n\
            [[workload]]\nname = \"w1\"\npriority = 100\ngpus = 2\ncores = 8\ntopology_qos = \"guaranteed\"\npreemptible = true\n\
            [fill]\ntarget_gpu_utilization = 0.9\nchurn_rounds = 1\nseed = 17\nmix = { w0 = 1 }\n\
            [[preempt]]\nworkload = \"w0\"\ncount = 3\n\
            [[preempt]]\nworkload = \"w1\"\ncount = 1\n\
            [flextopo]\nalpha = 0\n";
        let Spec::Cluster(c) = load(SourceFile::new("c.toml", cluster), Expect::Cluster)
            .expect("valid cluster")
            .spec
        else {
            panic!("not a cluster");
        };
        let Spec::Preemption(w) = load(SourceFile::new("w.toml", workload), Expect::Workload)
            .expect("valid workload")
            .spec
        else {
            panic!("not a preemption workload");
        };
        let options = PlanOptions {
            planners: Some(vec!["flextopo-imp".into()]),
            ..PlanOptions::default()
        };
        let started = std::time::Instant::now();
        let report = plan(&Cluster::from_spec(&c), &w, &options).expect("plans");
        assert_eq!(report.planners[0].events.len(), 4);
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    }
}
