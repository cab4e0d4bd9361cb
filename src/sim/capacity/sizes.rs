//! Simulating one size: every seed and planner at once, cached, so that no size runs twice
//! whichever planner's bisection asks for it; the `Oracle` the bisection reads.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::bisection::Oracle;
use super::classify::classify;
use super::error::CapacityError;
use super::pool::{Shrink, shape};
use super::report::{CapacityProbe, Hold, ProbeStatus};
use super::target::Target;
use crate::plan::cancel::Cancel;
use crate::plan::error::PlanningError;
use crate::preempt::scenario::{FillGoal, fill_pod_count, initial_state_with};
use crate::sim::preemption::run_cycles;
use crate::sim::stats::summarize;
use crate::spec::{ClusterSpec, PreemptionSpec};
use crate::topology::Cluster;

/// What a search reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A size starts: `cycles` cycles will follow.
    Size {
        /// Servers in the pool at this size.
        servers: u32,
        /// Cycles to run at this size, over all seeds together.
        cycles: u64,
    },
    /// One cycle of one seed is done.
    Cycle,
}

/// Per seed, per planner: the metric's value (mean over the seed's cycles), and the fill pods
/// the seed's initial state holds.
#[derive(Debug, Clone)]
pub(super) struct SizeResult {
    per_planner: Vec<Vec<Option<f64>>>,
    fill_pods: Vec<usize>,
    /// Below the spec's count: the servers taken out and where their pods went.
    shrink: Shrink,
}

/// The value of a target metric in one seed's metric means.
fn metric_value(metric: &str, means: &BTreeMap<String, f64>) -> Option<f64> {
    match metric {
        "victims_per_preemption" => {
            let preemptions = *means.get("preemptions")?;
            (preemptions > 0.0).then(|| means.get("victims").copied().unwrap_or(0.0) / preemptions)
        }
        m => means.get(m).copied(),
    }
}

/// One seed at one size: the metric per planner, and the fill pods placed.
type SeedOutcome = (Vec<Option<f64>>, usize);

/// Everything one search needs, resolved once.
pub(super) struct Search<'a> {
    pub(super) cluster: &'a ClusterSpec,
    pub(super) workload: &'a PreemptionSpec,
    pub(super) pool: usize,
    pub(super) target: Target,
    pub(super) hold: Hold,
    pub(super) seeds: Vec<u64>,
    pub(super) cycles: u64,
    pub(super) planners: Vec<String>,
    pub(super) held_pods: Vec<usize>,
    pub(super) progress: &'a (dyn Fn(Progress) + Sync),
    /// Checked per probe, seed and cycle.
    pub(super) cancel: Cancel,
    /// Every size simulated so far: each size runs once for all planners.
    pub(super) cache: BTreeMap<u32, SizeResult>,
}

impl Search<'_> {
    /// Simulates a size unless it already was.
    pub(super) fn evaluate(&mut self, size: u32) -> Result<(), CapacityError> {
        if !self.cache.contains_key(&size) {
            self.cancel.check()?;
            let result = self.simulate(size)?;
            self.cache.insert(size, result);
        }
        Ok(())
    }

    fn simulate(&self, size: u32) -> Result<SizeResult, CapacityError> {
        let (spec, shrunk, shrink) = shape(self.cluster, self.workload, self.pool, size)?;
        let workload = shrunk.as_ref().unwrap_or(self.workload);
        let cluster = Cluster::from_spec(&spec);
        (self.progress)(Progress::Size {
            servers: size,
            cycles: self.seeds.len() as u64 * self.cycles,
        });
        let tick = || (self.progress)(Progress::Cycle);
        if self.hold == Hold::Pods && !shrink.displaced.is_empty() {
            // Pods of today's load no longer run: the size fails whatever the planners do.
            (0..self.seeds.len() as u64 * self.cycles).for_each(|_| tick());
            return Ok(SizeResult {
                per_planner: vec![vec![None; self.seeds.len()]; self.planners.len()],
                fill_pods: vec![0; self.seeds.len()],
                shrink,
            });
        }
        let per_seed: Vec<Result<SeedOutcome, PlanningError>> = self
            .seeds
            .par_iter()
            .zip(&self.held_pods)
            .map(|(&seed, &held)| {
                self.cancel.check()?;
                let goal = match self.hold {
                    Hold::Pods => FillGoal::Pods(held),
                    Hold::Utilization => FillGoal::Utilization,
                };
                let start = initial_state_with(&cluster, workload, Some(seed), goal)
                    .map_err(PlanningError::Invalid)?;
                let fill_pods = fill_pod_count(workload, &start);
                if goal == FillGoal::Pods(held) && fill_pods < held {
                    // Too small for the held load: the size fails whatever the planners do.
                    (0..self.cycles).for_each(|_| tick());
                    return Ok((vec![None; self.planners.len()], fill_pods));
                }
                let result = run_cycles(
                    &cluster,
                    workload,
                    start,
                    (seed, goal),
                    (self.cycles, self.cancel),
                    &self.planners,
                    &tick,
                )?;
                let values = self
                    .planners
                    .iter()
                    .map(|name| {
                        result
                            .per_planner
                            .iter()
                            .find(|(n, _, _)| n == name)
                            .and_then(|(_, means, _)| metric_value(&self.target.metric, means))
                    })
                    .collect();
                Ok((values, fill_pods))
            })
            .collect();
        let per_seed: Vec<SeedOutcome> = per_seed.into_iter().collect::<Result<_, _>>()?;
        let per_planner = (0..self.planners.len())
            .map(|p| per_seed.iter().map(|(v, _)| v[p]).collect())
            .collect();
        Ok(SizeResult {
            per_planner,
            fill_pods: per_seed.iter().map(|(_, f)| *f).collect(),
            shrink,
        })
    }

    /// The probe of planner `p` at a simulated size.
    pub(super) fn probe(&self, p: usize, size: u32, r: &SizeResult) -> CapacityProbe {
        let values: Vec<f64> = r.per_planner[p].iter().flatten().copied().collect();
        let metric = summarize(&values);
        let short_of_load = self.hold == Hold::Pods
            && (!r.shrink.displaced.is_empty()
                || r.fill_pods.iter().zip(&self.held_pods).any(|(f, h)| f < h));
        let status = match &metric {
            _ if short_of_load => ProbeStatus::CannotHoldLoad,
            None => ProbeStatus::Fails,
            Some(s) => classify(&self.target, s),
        };
        CapacityProbe {
            value: f64::from(size),
            status,
            metric,
            fill_pods: Some(
                r.fill_pods.iter().sum::<usize>() as f64 / r.fill_pods.len().max(1) as f64,
            ),
            removed_servers: r.shrink.removed.clone(),
            replaced_pods: Some(r.shrink.replaced.len()),
            displaced_pods: Some(r.shrink.displaced.len()),
            displaced: r.shrink.displaced.clone(),
            backlog_first: None,
            backlog_last: None,
        }
    }

    /// Fails unless some planner has a value of the metric at a simulated size.
    pub(super) fn check_metric_reported(&self, size: u32) -> Result<(), CapacityError> {
        let Some(r) = self.cache.get(&size) else {
            return Ok(());
        };
        // A size that cannot hold the load ran no cycle: its silence says nothing of the metric.
        if self.probe(0, size, r).status == ProbeStatus::CannotHoldLoad {
            return Ok(());
        }
        if r.per_planner.iter().flatten().all(Option::is_none) {
            return Err(CapacityError::Range(format!(
                "no planner reports `{}` at {size} servers (e.g. `hit_rate_guaranteed` needs \
                 guaranteed preemptors)",
                self.target.metric
            )));
        }
        Ok(())
    }
}

impl Oracle for Search<'_> {
    fn status(&mut self, p: usize, size: u32) -> Result<ProbeStatus, CapacityError> {
        self.evaluate(size)?;
        let r = self.cache.get(&size).ok_or_else(|| {
            CapacityError::Plan(PlanningError::Internal(
                "a size vanished from the cache".into(),
            ))
        })?;
        Ok(self.probe(p, size, r).status)
    }

    fn known(&self, p: usize) -> Vec<(u32, ProbeStatus)> {
        self.cache
            .iter()
            .map(|(s, r)| (*s, self.probe(p, *s, r).status))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_per_preemption_is_a_ratio_of_the_per_cycle_means() {
        let means: BTreeMap<String, f64> = [
            ("victims".to_string(), 6.0),
            ("preemptions".to_string(), 4.0),
        ]
        .into();
        assert_eq!(metric_value("victims_per_preemption", &means), Some(1.5));
        let none: BTreeMap<String, f64> = [("preemptions".to_string(), 0.0)].into();
        assert_eq!(metric_value("victims_per_preemption", &none), None);
    }
}
