//! `pool_capacity`, the preemption search end to end: checks the range before any server is
//! built, orders the sizes (today's, the smallest, then each planner's bisection) and
//! assembles the report.

use std::collections::BTreeMap;

use super::bisection::answer;
use super::classify::reversals;
use super::error::CapacityError;
use super::pool::select_pool;
use super::report::{CapacityProbe, CapacityReport, Hold, PlannerCapacity, PoolRef};
use super::sizes::{Progress, Search};
use super::target::Target;
use crate::plan::error::PlanningError;
use crate::preempt::registry;
use crate::preempt::scenario::{fill_pod_count, initial_state};
use crate::sim::preemption::{SimOptions, nothing_random, one_seed_note, resolve, seeds_to_run};
use crate::spec::{ClusterSpec, PreemptionSpec};
use crate::topology::Cluster;

/// The largest pool a search builds: ten times the largest shipped cluster, checked before
/// any server is allocated.
pub const MAX_POOL_SERVERS: u32 = 100_000;

/// The options of a pool-size search; `None` = the spec's values or the defaults.
#[derive(Debug, Clone)]
pub struct PoolSearch {
    /// The metric, its side and its value a size must meet.
    pub target: Target,
    /// The pool to resize: an index or a `name_prefix` (`None`: the cluster's only pool).
    pub pool: Option<String>,
    /// Smallest size to try (`None`: 1).
    pub min: Option<u32>,
    /// Largest size to try (`None`: four times the spec's count, at least `min`; at most
    /// [`MAX_POOL_SERVERS`]).
    pub max: Option<u32>,
    /// What stays fixed while the pool is resized.
    pub hold: Hold,
    /// Seeds, cycles and planners of each size's simulation.
    pub simulation: SimOptions,
}

/// The fewest servers of one pool at which the target holds, for every planner.
pub fn pool_capacity(
    cluster: &ClusterSpec,
    workload: &PreemptionSpec,
    options: &PoolSearch,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<CapacityReport, CapacityError> {
    let target = options.target.clone();
    let pool = select_pool(cluster, options.pool.as_deref())?;
    let spec_count = cluster.pool[pool].count.max(0) as u32;
    // Below today's count the emptiest servers go and their pods are re-placed
    // (`pool::shrink`), so one server is the only floor.
    let min = options.min.unwrap_or(1);
    let max = options.max.unwrap_or((4 * spec_count).max(min));
    if max > MAX_POOL_SERVERS {
        return Err(CapacityError::Range(format!(
            "`--max {max}`: a capacity search resizes a pool to at most {MAX_POOL_SERVERS} servers"
        )));
    }
    if min == 0 || min > max {
        return Err(CapacityError::Range(format!(
            "`--min {min}` `--max {max}`: expected 1 ≤ min ≤ max"
        )));
    }
    let (seeds_requested, cycles, planners) = resolve(workload, &options.simulation);
    // With nothing random every seed would repeat the first: one runs, and every size's
    // value is exact (no interval, nothing to straddle).
    let seeds = seeds_to_run(workload, &seeds_requested);
    let notes = if nothing_random(workload) {
        vec![one_seed_note(seeds_requested.len())]
    } else {
        Vec::new()
    };
    if seeds.is_empty() || cycles == 0 {
        return Err(CapacityError::Range(format!(
            "{} seeds × {cycles} cycles: a capacity search needs at least one of each",
            seeds.len()
        )));
    }
    registry::resolve(&planners)?;
    let spec_cluster = Cluster::from_spec(cluster);
    let held_pods = seeds
        .iter()
        .map(|&seed| {
            initial_state(&spec_cluster, workload, Some(seed))
                .map(|s| fill_pod_count(workload, &s))
                .map_err(PlanningError::Invalid)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut search = Search {
        cluster,
        workload,
        pool,
        target: target.clone(),
        hold: options.hold,
        seeds: seeds.clone(),
        cycles,
        planners: planners.clone(),
        held_pods: held_pods.clone(),
        progress,
        cancel: options.simulation.cancel,
        cache: BTreeMap::new(),
    };
    // Today's size first: the answer is read against it.
    let first = if (min..=max).contains(&spec_count) {
        spec_count
    } else {
        max
    };
    search.evaluate(first)?;
    search.check_metric_reported(first)?;
    // The smallest size too: with today's and the largest, it lets the monotone check see
    // the whole range, not only where the bisection went.
    search.evaluate(min)?;
    let answers = (0..planners.len())
        .map(|p| answer(&mut search, p, (min, max)))
        .collect::<Result<Vec<_>, _>>()?;
    // A planner's probes are every size simulated, including those another planner asked for.
    let answers = answers
        .into_iter()
        .enumerate()
        .map(|(p, (verdict, answer, bracket))| {
            let probes: Vec<CapacityProbe> = search
                .cache
                .iter()
                .map(|(s, r)| search.probe(p, *s, r))
                .collect();
            PlannerCapacity {
                planner: planners[p].clone(),
                verdict,
                answer,
                bracket,
                load_of_spec_rate: None,
                non_monotone: reversals(&search.target, &probes),
                probes,
            }
        })
        .collect();
    let p = &cluster.pool[pool];
    Ok(CapacityReport {
        schema_version: 2,
        kind: "capacity",
        workload_kind: "preemption",
        cluster: cluster.name.clone(),
        workload: workload.name.clone(),
        searched: "servers",
        target: Some(target),
        pool: Some(PoolRef {
            index: pool,
            name_prefix: p.name_prefix.clone(),
            server_type: p.server_type.clone(),
            spec_count,
        }),
        hold: Some(options.hold),
        held_pods: if options.hold == Hold::Pods {
            held_pods
        } else {
            Vec::new()
        },
        seeds,
        seeds_requested,
        notes,
        cycles: Some(cycles),
        requests: None,
        min: Some(min),
        max: Some(max),
        planners: answers,
    })
}
