//! The per-event optimum of a gang (`ilp`'s gang decision): the cheapest victims and pods per
//! server, by the canonical cost, that place every pod inside one domain of the required
//! level. Exact: servers do not interact within one decision, so each server's menu
//! (`menu`, every victim subset enumerated) combined over each domain (`table`) is the
//! optimum of that domain; the spread penalty of each level is added per candidate domain
//! from the host up, so the narrowest domain that pays off wins.

use rayon::prelude::*;

use super::decision::{GangDecision, GangPoint, PodPlacement};
use super::fit::assign;
use super::menu::{HostMenu, HostOption, host_menu, worst_level};
use super::table::{Fitting, Key, Tables, cheapest};
use crate::preempt::problem::{Problem, freed};
use crate::topology::ServerId;

/// Every server's menu for the gang at `at`, in server order.
pub fn menus(at: &GangPoint<'_>) -> Vec<HostMenu> {
    let one = |s: ServerId| host_menu(at.problem, at.state, at.gang, s, at.gang.pods);
    if at.problem.parallel() {
        let ids: Vec<ServerId> = at.problem.servers().collect();
        ids.par_iter().map(|&s| one(s)).collect()
    } else {
        at.problem.servers().map(one).collect()
    }
}

/// The exact decision and its canonical cost (`pods × unplaced` when it places nothing).
pub fn decide(at: &GangPoint<'_>) -> (GangDecision, f64) {
    let menus = menus(at);
    decide_with(at, &menus)
}

/// [`decide`] on menus already built.
pub fn decide_with(at: &GangPoint<'_>, menus: &[HostMenu]) -> (GangDecision, f64) {
    let problem = at.problem;
    let gang = at.gang;
    let fabric = &problem.cluster.fabric;
    let subsets: u64 = menus.iter().map(|m| m.subsets_evaluated).sum();
    let exhaustive = menus.iter().all(|m| m.exhaustive);
    let tables = Tables::<f64>::build(fabric, gang, menus, &cheapest);
    let priced = |f: &Fitting<f64>| {
        f.value
            + problem
                .cost
                .spread_cost(gang.pods, fabric.penalty_of(f.level))
    };
    // Host level first, so on a tie the narrower domain wins, then the lower index.
    let best = tables
        .fitting()
        .into_iter()
        .fold(None::<(Fitting<f64>, f64)>, |best, f| {
            let cost = priced(&f);
            match best {
                Some((_, c)) if c <= cost => best,
                _ => Some((f, cost)),
            }
        });
    let unplaced = gang.pods as f64 * problem.cost.weights.unplaced;
    let Some((fitting, cost)) = best.filter(|(_, c)| *c <= unplaced) else {
        let mut none = GangDecision::none(
            "no domain of the required level can hold every pod at a cost below leaving it unplaced",
            subsets,
        );
        none.unproven = !exhaustive;
        return (none, unplaced);
    };
    let mut d = realise(problem, at, menus, &tables, &fitting, |m, j| {
        m.cheapest.get(j as usize).cloned().flatten()
    });
    d.subsets_evaluated = subsets;
    d.unproven = !exhaustive;
    d.search = format!(
        "cheapest domain: {} `{}` ({} victims, cost {cost:.3})",
        fabric.level_name(fitting.level),
        fabric.domains_at(fitting.level)[fitting.domain as usize].name,
        d.victims.len()
    );
    (d, cost)
}

/// The victims and pod placements of `fitting`'s best combination: each server's option for
/// its pod count (`option`), and ids for its pods on what is then free.
pub fn realise<K: Key>(
    problem: &Problem<'_>,
    at: &GangPoint<'_>,
    menus: &[HostMenu],
    tables: &Tables<K>,
    fitting: &Fitting<K>,
    option: impl Fn(&HostMenu, u32) -> Option<HostOption>,
) -> GangDecision {
    let gang = at.gang;
    let mut d = GangDecision::default();
    for (server, j) in tables.pods_per_server(&problem.cluster.fabric, fitting) {
        let Some(chosen) = option(&menus[server.index()], j) else {
            continue;
        };
        let (gpus, cores) = freed(at.state, server, &chosen.victims);
        let t = problem.cluster.type_of(server);
        let Some(worst) = worst_level(problem, gang, server) else {
            continue;
        };
        let Some(pods) = assign(t, gang.request, gpus, cores, j, worst) else {
            continue;
        };
        d.victims.extend(chosen.victims);
        d.pods
            .extend(pods.into_iter().map(|(g, c, _)| PodPlacement {
                server,
                gpus: g,
                cores: c,
            }));
    }
    d.victims.sort_unstable();
    d
}
