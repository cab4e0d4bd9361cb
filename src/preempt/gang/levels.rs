//! FlexTopo over levels: IMP's incremental victim search lifted from the server to the
//! domains of a gang. Each server's victim subsets are taken smallest first (the fewest
//! victims that make room for each number of pods, then the least important); the domains
//! from the host up to the required level combine them; the search stops at the smallest
//! victim count any domain needs (`imp_scope = "cluster"`), and Eq. 1 ranks the domains that
//! need it: P over their victims' priorities, T = 1 / penalty of the domain's level (the
//! gang's level is the narrowest domain holding all its pods). A domain inside the preferred
//! level wins over one that is not before Eq. 1 is asked.

use super::decision::{GangDecision, GangPoint};
use super::exact::{menus, realise};
use super::menu::HostMenu;
use super::table::{Fitting, ImpKey, Tables, smallest};
use crate::preempt::flextopo::score::{eq1, preemptible_priority_range, priority_term};

/// Binomial coefficient, saturating: the subsets of `k` of `n` victims.
fn choose(n: u64, k: u64) -> u64 {
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// The victim subsets an incremental search evaluates on one server: every subset up to the
/// size its largest option needs (`exhaustive`: all of them).
fn evaluated(menu: &HostMenu, exhaustive: bool) -> u64 {
    let n = (menu.subsets_evaluated.max(1)).trailing_zeros() as u64;
    if exhaustive {
        return menu.subsets_evaluated;
    }
    let needed = menu
        .smallest
        .iter()
        .flatten()
        .map(|o| o.victims.len() as u64)
        .max()
        .unwrap_or(0);
    (0..=needed.min(n)).map(|k| choose(n, k)).sum()
}

/// FlexTopo's gang decision (`exhaustive`: every subset of every server is evaluated, as
/// `flextopo-exhaustive` does; the choice is the same).
pub fn decide(at: &GangPoint<'_>, exhaustive: bool) -> GangDecision {
    let problem = at.problem;
    let gang = at.gang;
    let fabric = &problem.cluster.fabric;
    let menus = menus(at);
    let subsets: u64 = menus.iter().map(|m| evaluated(m, exhaustive)).sum();
    let tables = Tables::<ImpKey>::build(fabric, gang, &menus, &smallest);
    let fitting = tables.fitting();
    let Some(fewest) = fitting.iter().map(|f| f.value.0).min() else {
        return GangDecision::none(
            "no domain of the required level can hold every pod",
            subsets,
        );
    };
    let candidates: Vec<&Fitting<ImpKey>> =
        fitting.iter().filter(|f| f.value.0 == fewest).collect();
    let sums = candidates.iter().fold((i64::MAX, i64::MIN), |(lo, hi), f| {
        (lo.min(f.value.1), hi.max(f.value.1))
    });
    let settings = &problem.spec.flextopo;
    let score = |f: &Fitting<ImpKey>| {
        let p = priority_term(
            settings.priority_norm,
            f.value.0,
            f.value.1,
            sums,
            preemptible_priority_range(problem),
        );
        eq1(settings.alpha, p, 1.0 / fabric.penalty_of(f.level))
    };
    let preferred = |f: &Fitting<ImpKey>| gang.preferred.is_some_and(|p| f.level >= p);
    // Candidates come host level first, so a tie keeps the narrower domain, then the lower
    // index.
    let mut best: Option<(&Fitting<ImpKey>, bool, f64)> = None;
    for f in candidates {
        let (pref, s) = (preferred(f), score(f));
        let better = match best {
            None => true,
            Some((_, bp, bs)) => (pref, s) > (bp, bs),
        };
        if better {
            best = Some((f, pref, s));
        }
    }
    let Some((chosen, _, s)) = best else {
        return GangDecision::none("no candidate domain", subsets);
    };
    let mut d = realise(problem, at, &menus, &tables, chosen, |m, j| {
        m.smallest.get(j as usize).cloned().flatten()
    });
    d.subsets_evaluated = subsets;
    d.search = format!(
        "fewest victims any domain needs: {fewest}; best Eq. 1 score among them: {} `{}` (S = {s:.3})",
        fabric.level_name(chosen.level),
        fabric.domains_at(chosen.level)[chosen.domain as usize].name,
    );
    d
}
