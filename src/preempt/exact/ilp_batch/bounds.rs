//! Lower bounds of the decomposition's per-server subproblems (one server, exactly these class
//! counts placed or refused on it), cheap enough to compute for every count vector of every
//! server. Each relaxes the subproblem's MILP (`model::build` with `Counts::Exactly`):
//!
//! - placements: the instances of a class are spread over its admitted levels cheapest first,
//!   at most as many per level as the level's domains hold on an empty server (each placement
//!   variable of the model is bounded by that capacity);
//! - victims: only the server-wide capacity is kept, and the GPUs and the cores still missing
//!   are each covered fractionally by the cheapest victims per unit (the LP bound of a covering
//!   problem); the larger of the two covers counts;
//! - refusals: every admissible choice of refused instances (at most one per class, as the
//!   model's binaries allow) is tried, each costing `unplaced`.
//!
//! `None` means the relaxation is infeasible, and so is the subproblem.

use super::classes::Class;
use super::domains::{domain_capacity, domains_of, may_refuse};
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::topology::ServerId;
use crate::topology::state::ClusterState;

/// Above this many classes that may refuse on a server, refusals are relaxed class by class
/// instead of enumerated (2^n combinations).
const MAX_ENUMERATED_REFUSALS: usize = 8;

/// A preemptible pod of the server, as the bound sees it.
struct Evictable {
    priority: i64,
    cost: f64,
    gpus: u32,
    cores: u32,
}

/// One class on this server.
struct ClassHere {
    /// The priority below which its instances may evict ([`Problem::eviction_reach`]).
    priority: i64,
    gpus: u32,
    cores: u32,
    /// (cost of one instance, instances that fit at that level), cheapest first.
    levels: Vec<(f64, u32)>,
    /// Whether the model has this class's refusal binary on this server.
    refusable: bool,
}

/// What the bounds of one server's subproblems need, read once per server.
pub struct ServerBounds {
    free_gpus: u32,
    free_cores: u32,
    pods: Vec<Evictable>,
    /// Indices into `pods`, cheapest per GPU first (pods without GPUs left out).
    by_gpu_cost: Vec<usize>,
    /// Indices into `pods`, cheapest per core first (pods without cores left out).
    by_core_cost: Vec<usize>,
    classes: Vec<ClassHere>,
    unplaced: f64,
}

impl ServerBounds {
    /// Reads what the bounds of `server`'s subproblems need from the `initial` state.
    pub fn new(
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        classes: &[Class],
        server: ServerId,
    ) -> Self {
        let alloc = &initial.servers()[server.index()];
        let pods: Vec<Evictable> = alloc
            .pods()
            .iter()
            .filter_map(|id| initial.pod(*id))
            .filter(|pod| pod.preemptible)
            .map(|pod| Evictable {
                priority: pod.priority,
                cost: problem.cost.victim_cost(pod.priority),
                gpus: pod.gpus.len(),
                cores: pod.cores.len(),
            })
            .collect();
        let lowest_victim = pods.iter().map(|p| p.priority).min();
        let classes = classes
            .iter()
            .map(|class| {
                let p = &preemptors[class.rep];
                ClassHere {
                    priority: problem.eviction_reach(p),
                    gpus: p.request.gpus,
                    cores: p.request.cores,
                    levels: level_capacities(problem, server, p, class.members.len()),
                    refusable: may_refuse(problem, server, p, lowest_victim),
                }
            })
            .collect();
        ServerBounds {
            free_gpus: alloc.free_gpus().len(),
            free_cores: alloc.free_cores().len(),
            by_gpu_cost: cheapest_per_unit(&pods, |p| p.gpus),
            by_core_cost: cheapest_per_unit(&pods, |p| p.cores),
            pods,
            classes,
            unplaced: problem.cost.weights.unplaced,
        }
    }

    /// A lower bound of the subproblem with exactly `counts` instances per class placed or
    /// refused on this server (a non-zero vector, as the decomposition enumerates); `None` when
    /// it is infeasible.
    pub fn lower_bound(&self, counts: &[u32]) -> Option<f64> {
        // The model's victims: preemptible pods below the highest active class.
        let top = self
            .classes
            .iter()
            .zip(counts)
            .filter(|(_, k)| **k > 0)
            .map(|(c, _)| c.priority)
            .max()?;
        let refusable: Vec<usize> = (0..self.classes.len())
            .filter(|&c| counts[c] > 0 && self.classes[c].refusable)
            .collect();
        if refusable.len() > MAX_ENUMERATED_REFUSALS {
            return self.relaxed_refusals_bound(counts, &refusable, top);
        }
        (0u32..1 << refusable.len())
            .filter_map(|mask| {
                let mut placed = counts.to_vec();
                for (bit, &c) in refusable.iter().enumerate() {
                    placed[c] -= (mask >> bit) & 1;
                }
                let refusals = mask.count_ones() as f64 * self.unplaced;
                Some(refusals + self.placement_bound(&placed)? + self.victim_bound(&placed, top)?)
            })
            .min_by(f64::total_cmp)
    }

    /// Many refusable classes: each class takes its cheaper option on its own, and the victims
    /// are bounded for the fewest placements (every refusable class refusing one instance);
    /// both parts only grow with the placements, so their sum still bounds every choice.
    fn relaxed_refusals_bound(&self, counts: &[u32], refusable: &[usize], top: i64) -> Option<f64> {
        let mut fewest = counts.to_vec();
        let mut placements = 0.0;
        for (c, class) in self.classes.iter().enumerate() {
            let placing_all = class_placement_bound(class, counts[c]);
            if !refusable.contains(&c) {
                placements += placing_all?;
                continue;
            }
            fewest[c] -= 1;
            let refusing_one =
                class_placement_bound(class, counts[c] - 1).map(|p| p + self.unplaced);
            placements += match (placing_all, refusing_one) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b)?,
            };
        }
        Some(placements + self.victim_bound(&fewest, top)?)
    }

    /// The cheapest levels for `placed` instances per class; `None` when they do not fit.
    fn placement_bound(&self, placed: &[u32]) -> Option<f64> {
        self.classes
            .iter()
            .zip(placed)
            .map(|(class, &n)| class_placement_bound(class, n))
            .sum()
    }

    /// The cheapest fractional covers of the GPUs and of the cores that `placed` needs beyond
    /// what is free, from pods below `top`; `None` when those pods cannot free enough.
    fn victim_bound(&self, placed: &[u32], top: i64) -> Option<f64> {
        let (gpus, cores) =
            self.classes
                .iter()
                .zip(placed)
                .fold((0u64, 0u64), |(g, c), (class, &n)| {
                    (
                        g + u64::from(n) * u64::from(class.gpus),
                        c + u64::from(n) * u64::from(class.cores),
                    )
                });
        let gpu_cover = self.cover(
            gpus.saturating_sub(u64::from(self.free_gpus)),
            &self.by_gpu_cost,
            top,
            |p| p.gpus,
        )?;
        let core_cover = self.cover(
            cores.saturating_sub(u64::from(self.free_cores)),
            &self.by_core_cost,
            top,
            |p| p.cores,
        )?;
        Some(gpu_cover.max(core_cover))
    }

    /// The LP bound of covering `need` units by pods below `top`, taken in `order`. Taking the
    /// cheapest per unit first is the LP optimum because victim costs are non-negative (the
    /// objective's weights are validated so).
    fn cover(
        &self,
        need: u64,
        order: &[usize],
        top: i64,
        units: impl Fn(&Evictable) -> u32,
    ) -> Option<f64> {
        let mut missing = need as f64;
        let mut cost = 0.0;
        for pod in order.iter().map(|&i| &self.pods[i]) {
            if missing <= 0.0 {
                break;
            }
            if pod.priority >= top {
                continue;
            }
            let have = f64::from(units(pod));
            let take = have.min(missing);
            cost += pod.cost * take / have;
            missing -= take;
        }
        (missing <= 0.0).then_some(cost)
    }
}

/// `n` instances of one class on the cheapest levels that hold them.
fn class_placement_bound(class: &ClassHere, n: u32) -> Option<f64> {
    let mut left = n;
    let mut cost = 0.0;
    for &(per_instance, fits) in &class.levels {
        let here = left.min(fits);
        cost += f64::from(here) * per_instance;
        left -= here;
    }
    (left == 0).then_some(cost)
}

/// Per admitted level: the cost of one instance there and how many fit the level's domains
/// of an empty server, cheapest level first.
fn level_capacities(
    problem: &Problem<'_>,
    server: ServerId,
    p: &Preemptor,
    class_size: usize,
) -> Vec<(f64, u32)> {
    let t = problem.cluster.type_of(server);
    let mut levels: Vec<(f64, u32)> = Vec::new();
    for level in crate::topology::Level::ALL {
        if !problem.admits(server, p, level) {
            continue;
        }
        let fits = domains_of(t)
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, d)| domain_capacity(d, p, class_size))
            .fold(0u32, u32::saturating_add);
        if fits > 0 {
            levels.push((problem.cost.placement_cost(t, level), fits));
        }
    }
    // Stable: equal costs keep the level order.
    levels.sort_by(|a, b| a.0.total_cmp(&b.0));
    levels
}

/// Pods with some of a resource, cheapest per unit of it first (ties by position).
fn cheapest_per_unit(pods: &[Evictable], units: impl Fn(&Evictable) -> u32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pods.len()).filter(|&i| units(&pods[i]) > 0).collect();
    order.sort_by(|&a, &b| {
        let per_unit = |i: usize| pods[i].cost / f64::from(units(&pods[i]));
        per_unit(a).total_cmp(&per_unit(b))
    });
    order
}
