//! The placement floor: a proven lower bound of the whole batch that costs one allocator call
//! per class and server, whatever the cluster's size.
//!
//! Every preemptor costs at least the cheapest placement it could get anywhere: on each server,
//! with every pod gone that any preemptor of the list could evict there (preemptible, below the
//! list's highest priority: in the batch's enactment order a pod evicted for a higher-priority
//! preemptor may make room for a lower one), the node allocator's finest level, if the node
//! admits it; `unplaced` where no server has one. To that each placement adds the cheapest
//! fractional cover of its shortfall in the domain (GPUs, or apart cores: the units it needs
//! beyond the domain's free ones, from evictable pods at their cost per unit); each evicted unit
//! serves one preemptor at most, so the covers summed over the list never exceed the victims'
//! costs. So the sum over the list, per resource, bounds every plan, the batch optimum included.
//!
//! It is tight where the cluster is not the constraint (every preemptor lands at its best
//! level, as at the Alibaba trace's peak) and where the unplaced preemptors are those that fit
//! nowhere even with every evictable pod gone: a batch whose incumbent reaches it is proven
//! optimal without a MILP.

use super::classes::Class;
use super::domains::reachable;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::topology::state::ClusterState;
use crate::topology::{CoreSet, GpuSet, Level, ServerId, place};

/// A pod any preemptor of the list could evict, as the floor prices it.
struct Evictable {
    gpus: GpuSet,
    cores: CoreSet,
    /// Its victim cost per GPU and per core it holds (infinite for none).
    per_gpu: f64,
    per_core: f64,
}

/// The placement floor of the list (see the module header), from the per-server floors of
/// [`server_floor`] (one per class of identical server states: the minimum over the cluster
/// is the same).
pub fn placement_floor(problem: &Problem<'_>, classes: &[Class], floors: &[Vec<[f64; 2]>]) -> f64 {
    let unplaced = problem.cost.weights.unplaced;
    // Each resource's sum bounds every plan on its own; the larger is the floor.
    (0..2)
        .map(|r| {
            classes
                .iter()
                .enumerate()
                .map(|(c, class)| {
                    let cheapest = floors.iter().map(|f| f[c][r]).fold(unplaced, f64::min);
                    cheapest * class.members.len() as f64
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// Per class, the cheapest instance on `server` by GPUs and by cores: its placement cost plus
/// the fractional cover of its shortfall in the domain (at most `unplaced`; `unplaced` where
/// it has no placement here). `top`: the list's highest priority. Per instance and summed over
/// a server's instances this bounds the server's part of any plan, one resource at a time.
pub fn server_floor(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    server: ServerId,
    top: i64,
) -> Vec<[f64; 2]> {
    let unplaced = problem.cost.weights.unplaced;
    // A class shares request, priority and QoS, so one pass per class serves every member.
    let mut cheapest: Vec<[f64; 2]> = vec![[unplaced; 2]; classes.len()];
    let t = problem.cluster.type_of(server);
    let alloc = &initial.servers()[server.index()];
    let evictable: Vec<Evictable> = alloc
        .residents()
        .iter()
        .filter(|r| r.preemptible && r.priority < top)
        .map(|r| {
            let cost = problem.cost.victim_cost(r.priority);
            let per = |units: u32| {
                if units == 0 {
                    f64::INFINITY
                } else {
                    cost / f64::from(units)
                }
            };
            Evictable {
                gpus: r.gpus,
                cores: r.cores,
                per_gpu: per(r.gpus.len()),
                per_core: per(r.cores.len()),
            }
        })
        .collect();
    let (free_g, free_c) = (alloc.free_gpus(), alloc.free_cores());
    let (all_g, all_c) = reachable(initial, server, top);
    for (ci, class) in classes.iter().enumerate() {
        let p = &preemptors[class.rep];
        // The finest level any placement here reaches, evictable pods gone; coarser levels may
        // need fewer evictions, so each admitted level from there is priced.
        let Some(finest) = place(t, all_g, all_c, p.request).map(|pl| pl.level) else {
            continue;
        };
        for level in Level::ALL.into_iter().filter(|&l| l >= finest) {
            if !problem.admits(server, p, level) {
                continue;
            }
            let placement = problem.cost.placement_cost(t, level);
            for d in t.domains(level) {
                let (Some(by_gpu), Some(by_core)) = (
                    cover(p.request.gpus, free_g.and(d.gpus).len(), &evictable, |e| {
                        (e.gpus.and(d.gpus).len(), e.per_gpu)
                    }),
                    cover(
                        p.request.cores,
                        free_c.and(d.cores).len(),
                        &evictable,
                        |e| (e.cores.and(d.cores).len(), e.per_core),
                    ),
                ) else {
                    continue;
                };
                let best = &mut cheapest[ci];
                best[0] = best[0].min((placement + by_gpu).min(unplaced));
                best[1] = best[1].min((placement + by_core).min(unplaced));
            }
        }
    }
    cheapest
}

/// The least cost of the evicted units a placement needing `need` units in a domain that has
/// `free` of them must use: the shortfall, covered by the cheapest units per unit first (a
/// fractional cover; `units` gives a pod's units in the domain and its cost per unit). Each
/// evicted unit serves one preemptor at most and is charged its pod's cost per unit, so these
/// charges summed over the list never exceed the victims' costs. `None` when the domain cannot
/// hold the request even with every evictable pod gone.
fn cover(
    need: u32,
    free: u32,
    evictable: &[Evictable],
    units: impl Fn(&Evictable) -> (u32, f64),
) -> Option<f64> {
    let mut missing = need.saturating_sub(free);
    if missing == 0 {
        return Some(0.0);
    }
    let mut offers: Vec<(u32, f64)> = evictable
        .iter()
        .map(&units)
        .filter(|(n, _)| *n > 0)
        .collect();
    offers.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut cost = 0.0;
    for (n, per) in offers {
        let take = n.min(missing);
        cost += f64::from(take) * per;
        missing -= take;
        if missing == 0 {
            return Some(cost);
        }
    }
    None
}
