//! `coplan capacity`, one question per workload kind, one answer shape:
//! - preemption: the fewest servers in one pool (the other pools fixed) at which a target on a
//!   simulated metric (`hit_rate>=0.99`, `unplaced<=0`) holds, per planner, by bisection over
//!   the size, with the mean and 95 % CI at every size tried;
//! - co-location: each planner's sustainable request rate (`colocate::capacity`), in the same
//!   shape.
//!
//! A size "holds" when the whole 95 % CI of the metric's mean over seeds meets the target and
//! "fails" when the whole CI misses it; in between the CI straddles the target, and the answer is
//! the bracket of sizes the seeds cannot tell apart rather than one number. The bisection
//! assumes more servers never hurt; every pair of sizes tried is checked for the opposite, and
//! a reversal is reported where it was seen.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use super::preemption::{SimOptions, resolve, run_cycles};
use super::stats::{Summary, summarize};
use crate::colocate::capacity::CapacityReport as RateReport;
use crate::plan::error::PlanningError;
use crate::preempt::registry;
use crate::preempt::scenario::{FillGoal, fill_pod_count, initial_state, initial_state_with};
use crate::spec::{ClusterSpec, PreemptionSpec, validate};
use crate::topology::Cluster;

/// Metrics a target may name: the per-cycle metrics `simulate` reports (means over a seed's
/// cycles) and the ratios derived from them here.
pub const TARGET_METRICS: [&str; 14] = [
    "decision_gap",
    "gap",
    "gpu_hours_evicted",
    "hit_rate",
    "hit_rate_best_effort",
    "hit_rate_guaranteed",
    "hits",
    "objective",
    "placed",
    "slowdown_best_effort",
    "slowdown_guaranteed",
    "slowdown_mean",
    "unplaced",
    "victims_per_preemption",
];
/// Per-cycle counts that are also valid targets.
pub const COUNT_METRICS: [&str; 5] = [
    "preemptions",
    "subsets_evaluated",
    "victim_priority_sum",
    "victims",
    "wasted_evictions",
];

/// The largest pool a search builds: ten times the largest shipped cluster, checked before
/// any server is allocated.
pub const MAX_POOL_SERVERS: u32 = 100_000;

/// Why a capacity question cannot be answered (input errors, exit 2, unless `Plan`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapacityError {
    #[error("`--target {0}`: expected METRIC>=X or METRIC<=X (e.g. hit_rate>=0.99)")]
    TargetSyntax(String),
    #[error("`--target`: unknown metric `{metric}`; expected one of {valid}")]
    UnknownMetric { metric: String, valid: String },
    #[error("`--pool {arg}`: {reason}")]
    Pool { arg: String, reason: String },
    #[error("{0}")]
    Range(String),
    #[error("pool `{prefix}` at {size} servers: {reason}")]
    Resize {
        prefix: String,
        size: u32,
        reason: String,
    },
    #[error(transparent)]
    Plan(#[from] PlanningError),
}

/// `>=` or `<=`: which side of the value meets the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TargetOp {
    #[serde(rename = ">=")]
    AtLeast,
    #[serde(rename = "<=")]
    AtMost,
}

/// `METRIC>=X` or `METRIC<=X`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub metric: String,
    pub op: TargetOp,
    pub value: f64,
}

impl Target {
    pub fn op_text(&self) -> &'static str {
        match self.op {
            TargetOp::AtLeast => ">=",
            TargetOp::AtMost => "<=",
        }
    }

    /// Whether a value meets the target (a tolerance of 1e-9 absorbs the rounding of means).
    pub fn met_by(&self, x: f64) -> bool {
        match self.op {
            TargetOp::AtLeast => x + 1e-9 >= self.value,
            TargetOp::AtMost => x - 1e-9 <= self.value,
        }
    }

    /// How much better `a` is than `b` in the target's direction.
    fn improvement(&self, a: f64, b: f64) -> f64 {
        match self.op {
            TargetOp::AtLeast => a - b,
            TargetOp::AtMost => b - a,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}{}", self.metric, self.op_text(), self.value)
    }
}

/// Parses `METRIC>=X` / `METRIC<=X` and checks the metric name.
pub fn parse_target(text: &str) -> Result<Target, CapacityError> {
    let bad = || CapacityError::TargetSyntax(text.into());
    let (metric, op, value) = if let Some((m, v)) = text.split_once(">=") {
        (m, TargetOp::AtLeast, v)
    } else if let Some((m, v)) = text.split_once("<=") {
        (m, TargetOp::AtMost, v)
    } else {
        return Err(bad());
    };
    let metric = metric.trim();
    let value: f64 = value.trim().parse().map_err(|_| bad())?;
    if metric.is_empty() || !value.is_finite() {
        return Err(bad());
    }
    if !TARGET_METRICS.contains(&metric) && !COUNT_METRICS.contains(&metric) {
        let mut valid: Vec<&str> = TARGET_METRICS
            .iter()
            .chain(&COUNT_METRICS)
            .copied()
            .collect();
        valid.sort_unstable();
        return Err(CapacityError::UnknownMetric {
            metric: metric.into(),
            valid: valid.join(", "),
        });
    }
    Ok(Target {
        metric: metric.into(),
        op,
        value,
    })
}

/// What stays fixed while the pool grows or shrinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// The fill places, per seed, as many pods as it places on the spec's cluster: added
    /// servers add headroom.
    #[default]
    Pods,
    /// The fill reaches `[fill] target_gpu_utilization` of every size: added servers add load.
    Utilization,
}

/// The options of a pool-size search; `None` = the spec's values or the defaults.
#[derive(Debug, Clone)]
pub struct PoolSearch {
    pub target: Target,
    pub pool: Option<String>,
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub hold: Hold,
    pub simulation: SimOptions,
}

/// The pool a search resizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolRef {
    pub index: usize,
    pub name_prefix: String,
    pub server_type: String,
    /// Its size in the spec.
    pub spec_count: u32,
}

/// Where a size stands against the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    /// The whole 95 % CI meets the target (co-location: the backlog stays bounded).
    Holds,
    /// The whole CI misses it (co-location: the backlog grows).
    Fails,
    /// The mean meets it, the CI reaches across.
    StraddlesAbove,
    /// The mean misses it, the CI reaches across.
    StraddlesBelow,
    /// Fewer servers than the held load needs: the fill could not place every pod.
    CannotHoldLoad,
}

impl ProbeStatus {
    /// The mean meets the target (the bisection's test).
    pub fn mean_meets(self) -> bool {
        matches!(self, ProbeStatus::Holds | ProbeStatus::StraddlesAbove)
    }
}

/// One size (or rate) tried for one planner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityProbe {
    /// Servers in the pool, or requests per second.
    pub value: f64,
    pub status: ProbeStatus,
    /// The metric over seeds (preemption); null when no seed has a value.
    pub metric: Option<Summary>,
    /// Fill pods placed after the initial fill, mean over seeds (preemption).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_pods: Option<f64>,
    /// Mean backlog over the first and last thirds of the window (co-location).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog_first: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog_last: Option<f64>,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// One answer: it holds there and fails one step below (or it is `--min`).
    Found,
    /// The CI straddles the target over a range of sizes: the answer lies in `bracket`.
    Bracket,
    /// The target does not hold even at `--max`.
    NotReached,
}

/// More servers, a worse metric: where the bisection's assumption broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reversal {
    pub from: f64,
    pub to: f64,
    pub mean_from: f64,
    pub mean_to: f64,
    /// The target is met at `from` and missed at `to` (otherwise: the CIs do not overlap).
    pub target_lost: bool,
}

/// One planner's answer and every probe behind it, by size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerCapacity {
    pub planner: String,
    pub verdict: Verdict,
    /// The fewest servers (preemption) or the highest sustainable rate (co-location).
    pub answer: Option<f64>,
    /// With `bracket`: the lowest and highest size the answer may be.
    pub bracket: Option<[f64; 2]>,
    /// Co-location: the workload's own rate as a fraction of `answer`.
    pub load_of_spec_rate: Option<f64>,
    /// Empty when the metric was monotone over the sizes tried.
    pub non_monotone: Vec<Reversal>,
    pub probes: Vec<CapacityProbe>,
}

/// `coplan capacity` output, either workload kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityReport {
    pub schema_version: u32,
    pub kind: &'static str,
    pub workload_kind: &'static str,
    pub cluster: String,
    pub workload: Option<String>,
    /// `servers` (a pool's size) or `rate_rps` (the Poisson arrival rate).
    pub searched: &'static str,
    pub target: Option<Target>,
    pub pool: Option<PoolRef>,
    pub hold: Option<Hold>,
    /// Preemption: fill pods the spec's cluster holds per seed (the held load); empty otherwise.
    pub held_pods: Vec<usize>,
    pub seeds: Vec<u64>,
    pub cycles: Option<u64>,
    /// Co-location: requests per probe run.
    pub requests: Option<i64>,
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub planners: Vec<PlannerCapacity>,
}

/// What a search reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A size starts: `cycles` cycles will follow.
    Size { servers: u32, cycles: u64 },
    /// One cycle of one seed is done.
    Cycle,
}

/// The pool a `--pool` argument names: an index, or a pool's `name_prefix`.
pub fn select_pool(spec: &ClusterSpec, arg: Option<&str>) -> Result<usize, CapacityError> {
    let listing = || {
        spec.pool
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i} (`{}`, {} × {})", p.name_prefix, p.count, p.server_type))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(arg) = arg else {
        return match spec.pool.len() {
            1 => Ok(0),
            _ => Err(CapacityError::Pool {
                arg: String::new(),
                reason: format!(
                    "the cluster has {} pools; name one: {}",
                    spec.pool.len(),
                    listing()
                ),
            }),
        };
    };
    if let Ok(i) = arg.trim().parse::<usize>() {
        return if i < spec.pool.len() {
            Ok(i)
        } else {
            Err(CapacityError::Pool {
                arg: arg.into(),
                reason: format!("no pool {i}; the pools are {}", listing()),
            })
        };
    }
    let matching: Vec<usize> = (0..spec.pool.len())
        .filter(|&i| spec.pool[i].name_prefix == arg)
        .collect();
    match matching.as_slice() {
        [i] => Ok(*i),
        [] => Err(CapacityError::Pool {
            arg: arg.into(),
            reason: format!("no pool has this name_prefix; the pools are {}", listing()),
        }),
        _ => Err(CapacityError::Pool {
            arg: arg.into(),
            reason: format!(
                "several pools share this name_prefix; give an index: {}",
                listing()
            ),
        }),
    }
}

/// The cluster with pool `index` at `size` servers. The servers keep the spec's names (an
/// index's zero-padding depends on the count) and added ones continue the numbering, so
/// `[[running]]` pods find their nodes at every size.
pub fn resize(spec: &ClusterSpec, index: usize, size: u32) -> Result<ClusterSpec, CapacityError> {
    let mut out = spec.clone();
    let pool = &mut out.pool[index];
    let mut names = ClusterSpec::pool_server_names(pool);
    let mut next = names.len();
    while names.len() < size as usize {
        let name = format!("{}{next}", pool.name_prefix);
        next += 1;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.truncate(size as usize);
    pool.count = i64::from(size);
    pool.names = Some(names);
    if let Some(finding) = validate::cluster(&out).first() {
        return Err(CapacityError::Resize {
            prefix: spec.pool[index].name_prefix.clone(),
            size,
            reason: format!("{} ({})", finding.message, finding.path),
        });
    }
    Ok(out)
}

/// The fewest servers pool `index` needs to keep every `[[running]]` pod's node.
fn running_minimum(spec: &ClusterSpec, index: usize, workload: &PreemptionSpec) -> u32 {
    let names = ClusterSpec::pool_server_names(&spec.pool[index]);
    workload
        .running
        .iter()
        .filter_map(|r| names.iter().position(|n| *n == r.node))
        .map(|i| i as u32 + 1)
        .max()
        .unwrap_or(1)
        .max(1)
}

/// Per seed, per planner: the metric's value (mean over the seed's cycles), and the fill pods
/// the seed's initial state holds.
#[derive(Debug, Clone)]
struct SizeResult {
    per_planner: Vec<Vec<Option<f64>>>,
    fill_pods: Vec<usize>,
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
struct Search<'a> {
    cluster: &'a ClusterSpec,
    workload: &'a PreemptionSpec,
    pool: usize,
    target: Target,
    hold: Hold,
    seeds: Vec<u64>,
    cycles: u64,
    planners: Vec<String>,
    held_pods: Vec<usize>,
    progress: &'a (dyn Fn(Progress) + Sync),
    /// Every size simulated so far: each size runs once for all planners.
    cache: BTreeMap<u32, SizeResult>,
}

impl Search<'_> {
    /// Simulates a size unless it already was.
    fn evaluate(&mut self, size: u32) -> Result<(), CapacityError> {
        if !self.cache.contains_key(&size) {
            let result = self.simulate(size)?;
            self.cache.insert(size, result);
        }
        Ok(())
    }

    fn simulate(&self, size: u32) -> Result<SizeResult, CapacityError> {
        let spec = resize(self.cluster, self.pool, size)?;
        let cluster = Cluster::from_spec(&spec);
        (self.progress)(Progress::Size {
            servers: size,
            cycles: self.seeds.len() as u64 * self.cycles,
        });
        let tick = || (self.progress)(Progress::Cycle);
        let per_seed: Vec<Result<SeedOutcome, PlanningError>> = self
            .seeds
            .par_iter()
            .zip(&self.held_pods)
            .map(|(&seed, &held)| {
                let goal = match self.hold {
                    Hold::Pods => FillGoal::Pods(held),
                    Hold::Utilization => FillGoal::Utilization,
                };
                let start = initial_state_with(&cluster, self.workload, Some(seed), goal)
                    .map_err(PlanningError::Invalid)?;
                let fill_pods = fill_pod_count(self.workload, &start);
                if goal == FillGoal::Pods(held) && fill_pods < held {
                    // Too small for the held load: the size fails whatever the planners do.
                    (0..self.cycles).for_each(|_| tick());
                    return Ok((vec![None; self.planners.len()], fill_pods));
                }
                let result = run_cycles(
                    &cluster,
                    self.workload,
                    start,
                    (seed, goal),
                    self.cycles,
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
        })
    }

    /// The probe of planner `p` at a simulated size.
    fn probe(&self, p: usize, size: u32, r: &SizeResult) -> CapacityProbe {
        let values: Vec<f64> = r.per_planner[p].iter().flatten().copied().collect();
        let metric = summarize(&values);
        let short_of_load =
            self.hold == Hold::Pods && r.fill_pods.iter().zip(&self.held_pods).any(|(f, h)| f < h);
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
            backlog_first: None,
            backlog_last: None,
        }
    }

    /// Fails unless some planner has a value of the metric at a simulated size.
    fn check_metric_reported(&self, size: u32) -> Result<(), CapacityError> {
        let Some(r) = self.cache.get(&size) else {
            return Ok(());
        };
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

/// What the bisection asks of the sizes: where planner `p` stands at a size (simulating it
/// when needed), and the sizes already known for free.
trait Oracle {
    fn status(&mut self, p: usize, size: u32) -> Result<ProbeStatus, CapacityError>;
    fn known(&self, p: usize) -> Vec<(u32, ProbeStatus)>;
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

/// The smallest size in `lo..=hi` at which `test` holds, assuming it holds from some size on;
/// `None` when it does not hold at `hi`.
fn smallest(
    oracle: &mut impl Oracle,
    p: usize,
    (lo, hi): (u32, u32),
    test: fn(ProbeStatus) -> bool,
) -> Result<Option<u32>, CapacityError> {
    if lo > hi || !test(oracle.status(p, hi)?) {
        return Ok(None);
    }
    // Sizes already simulated narrow the range for free.
    let known: Vec<(u32, ProbeStatus)> = oracle
        .known(p)
        .into_iter()
        .filter(|(s, _)| (lo..=hi).contains(s))
        .collect();
    let mut at = known
        .iter()
        .filter(|(_, status)| test(*status))
        .map(|(s, _)| *s)
        .min()
        .unwrap_or(hi);
    let mut below = known
        .iter()
        .filter(|(s, status)| !test(*status) && *s < at)
        .map(|(s, _)| *s)
        .max();
    loop {
        let floor = below.map_or(lo, |b| b + 1);
        if floor >= at {
            return Ok(Some(at));
        }
        let mid = floor + (at - floor) / 2;
        if test(oracle.status(p, mid)?) {
            at = mid;
        } else {
            below = Some(mid);
        }
    }
}

/// A planner's verdict, answer and bracket.
type Answer = (Verdict, Option<f64>, Option<[f64; 2]>);

/// The verdict, answer and bracket of planner `p` over `min..=max`.
fn answer(
    oracle: &mut impl Oracle,
    p: usize,
    (min, max): (u32, u32),
) -> Result<Answer, CapacityError> {
    // Where the largest size misses the target but a smaller one tried meets it, the metric
    // is not monotone (reported as such): the search continues below the smallest size that
    // met it rather than answer "not reached".
    let max = if ProbeStatus::mean_meets(oracle.status(p, max)?) {
        max
    } else {
        match oracle
            .known(p)
            .into_iter()
            .filter(|(s, st)| (min..=max).contains(s) && st.mean_meets())
            .map(|(s, _)| s)
            .min()
        {
            Some(met) => met,
            None => return Ok((Verdict::NotReached, None, None)),
        }
    };
    let Some(n) = smallest(oracle, p, (min, max), ProbeStatus::mean_meets)? else {
        return Ok((Verdict::NotReached, None, None));
    };
    // Where the seeds cannot tell: the first size whose whole CI holds, and the first size at
    // or above which nothing clearly fails (`None`: everything below `n` does).
    let clear_hold = smallest(oracle, p, (n, max), |s| s == ProbeStatus::Holds)?;
    let not_failing = match n.checked_sub(1).filter(|&below| below >= min) {
        None => None,
        Some(below) => smallest(oracle, p, (min, below), |s| {
            !matches!(s, ProbeStatus::Fails | ProbeStatus::CannotHoldLoad)
        })?,
    };
    let low = not_failing.unwrap_or(n);
    Ok(match clear_hold {
        Some(h) if h == n && low == n => (Verdict::Found, Some(f64::from(n)), None),
        high => (
            Verdict::Bracket,
            None,
            Some([f64::from(low), f64::from(high.unwrap_or(max))]),
        ),
    })
}

/// Where a summary stands against the target.
pub fn classify(target: &Target, s: &Summary) -> ProbeStatus {
    let half = s.ci95.unwrap_or(0.0);
    let (worst, best) = match target.op {
        TargetOp::AtLeast => (s.mean - half, s.mean + half),
        TargetOp::AtMost => (s.mean + half, s.mean - half),
    };
    match (
        target.met_by(worst),
        target.met_by(s.mean),
        target.met_by(best),
    ) {
        (true, _, _) => ProbeStatus::Holds,
        (false, true, _) => ProbeStatus::StraddlesAbove,
        (false, false, true) => ProbeStatus::StraddlesBelow,
        (false, false, false) => ProbeStatus::Fails,
    }
}

/// Pairs of sizes (ascending) where more servers gave a worse metric: the target lost, or
/// the two CIs apart in the wrong order.
pub fn reversals(target: &Target, probes: &[CapacityProbe]) -> Vec<Reversal> {
    let mut out = Vec::new();
    for (i, a) in probes.iter().enumerate() {
        for b in &probes[i + 1..] {
            let (Some(ma), Some(mb)) = (&a.metric, &b.metric) else {
                continue;
            };
            let target_lost = a.status.mean_meets() && !b.status.mean_meets();
            let apart = target.improvement(ma.mean, mb.mean)
                > ma.ci95.unwrap_or(0.0) + mb.ci95.unwrap_or(0.0) + 1e-9;
            if target_lost || apart {
                out.push(Reversal {
                    from: a.value,
                    to: b.value,
                    mean_from: ma.mean,
                    mean_to: mb.mean,
                    target_lost,
                });
            }
        }
    }
    out
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
    let needed = running_minimum(cluster, pool, workload);
    let min = options.min.unwrap_or(needed);
    let max = options.max.unwrap_or((4 * spec_count).max(min));
    if min < needed {
        return Err(CapacityError::Range(format!(
            "`--min {min}`: the workload's [[running]] pods need {needed} servers in pool `{}`",
            cluster.pool[pool].name_prefix
        )));
    }
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
    let (seeds, cycles, planners) = resolve(workload, &options.simulation);
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
        cycles: Some(cycles),
        requests: None,
        min: Some(min),
        max: Some(max),
        planners: answers,
    })
}

/// The co-location rates in the one capacity shape.
pub fn from_rates(r: RateReport) -> CapacityReport {
    CapacityReport {
        schema_version: 2,
        kind: "capacity",
        workload_kind: "colocation",
        cluster: r.cluster,
        workload: r.workload,
        searched: "rate_rps",
        target: None,
        pool: None,
        hold: None,
        held_pods: Vec::new(),
        seeds: vec![r.seed],
        cycles: None,
        requests: Some(r.requests),
        min: None,
        max: None,
        planners: r
            .planners
            .into_iter()
            .map(|c| {
                let mut probes: Vec<CapacityProbe> = c
                    .probes
                    .iter()
                    .map(|p| CapacityProbe {
                        value: p.rate_rps,
                        status: if p.stable {
                            ProbeStatus::Holds
                        } else {
                            ProbeStatus::Fails
                        },
                        metric: None,
                        fill_pods: None,
                        backlog_first: Some(p.backlog_first),
                        backlog_last: Some(p.backlog_last),
                    })
                    .collect();
                probes.sort_by(|a, b| a.value.total_cmp(&b.value));
                PlannerCapacity {
                    planner: c.planner,
                    verdict: Verdict::Found,
                    answer: Some(c.rate_rps),
                    bracket: None,
                    load_of_spec_rate: c.load_of_spec_rate,
                    non_monotone: Vec::new(),
                    probes,
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(mean: f64, ci95: f64) -> Summary {
        Summary {
            mean,
            ci95: Some(ci95),
            min: mean,
            max: mean,
            n: 5,
        }
    }

    #[test]
    fn targets_parse_and_name_valid_metrics() {
        let t = parse_target("hit_rate>=0.99").expect("valid");
        assert_eq!(
            (t.metric.as_str(), t.op, t.value),
            ("hit_rate", TargetOp::AtLeast, 0.99)
        );
        let t = parse_target(" unplaced <= 0 ").expect("valid");
        assert_eq!((t.metric.as_str(), t.op), ("unplaced", TargetOp::AtMost));
        assert!(matches!(
            parse_target("hit_rate>0.9"),
            Err(CapacityError::TargetSyntax(_))
        ));
        assert!(matches!(
            parse_target("hit_rate>=x"),
            Err(CapacityError::TargetSyntax(_))
        ));
        match parse_target("hitrate>=0.9") {
            Err(CapacityError::UnknownMetric { valid, .. }) => assert!(valid.contains("hit_rate")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_size_holds_fails_or_straddles_by_its_whole_interval() {
        let t = parse_target("hit_rate>=0.9").expect("valid");
        assert_eq!(classify(&t, &summary(0.95, 0.01)), ProbeStatus::Holds);
        assert_eq!(
            classify(&t, &summary(0.92, 0.05)),
            ProbeStatus::StraddlesAbove
        );
        assert_eq!(
            classify(&t, &summary(0.88, 0.05)),
            ProbeStatus::StraddlesBelow
        );
        assert_eq!(classify(&t, &summary(0.80, 0.05)), ProbeStatus::Fails);
        let t = parse_target("victims_per_preemption<=2").expect("valid");
        assert_eq!(classify(&t, &summary(1.5, 0.2)), ProbeStatus::Holds);
        assert_eq!(
            classify(&t, &summary(2.1, 0.2)),
            ProbeStatus::StraddlesBelow
        );
        // A mean exactly at the target with no spread holds.
        assert_eq!(classify(&t, &summary(2.0, 0.0)), ProbeStatus::Holds);
    }

    #[test]
    fn reversals_name_where_more_servers_did_worse() {
        let t = parse_target("hit_rate>=0.9").expect("valid");
        let probe = |value: f64, mean: f64| CapacityProbe {
            value,
            status: classify(&t, &summary(mean, 0.01)),
            metric: Some(summary(mean, 0.01)),
            fill_pods: None,
            backlog_first: None,
            backlog_last: None,
        };
        let monotone = [probe(4.0, 0.5), probe(6.0, 0.8), probe(8.0, 0.95)];
        assert!(reversals(&t, &monotone).is_empty());
        let dip = [probe(4.0, 0.5), probe(6.0, 0.95), probe(8.0, 0.7)];
        let r = reversals(&t, &dip);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].from, r[0].to, r[0].target_lost), (6.0, 8.0, true));
    }

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

    /// A metric curve over sizes, as the seeds would give it.
    struct Curve {
        target: Target,
        points: BTreeMap<u32, Summary>,
        asked: Vec<u32>,
    }

    impl Oracle for Curve {
        fn status(&mut self, _: usize, size: u32) -> Result<ProbeStatus, CapacityError> {
            if !self.asked.contains(&size) {
                self.asked.push(size);
            }
            let s = self
                .points
                .get(&size)
                .ok_or_else(|| CapacityError::Range(format!("size {size} is not on the curve")))?;
            Ok(classify(&self.target, s))
        }

        fn known(&self, _: usize) -> Vec<(u32, ProbeStatus)> {
            self.asked
                .iter()
                .filter_map(|s| Some((*s, classify(&self.target, self.points.get(s)?))))
                .collect()
        }
    }

    fn curve(target: &str, points: &[(u32, f64, f64)]) -> Curve {
        Curve {
            target: parse_target(target).expect("valid"),
            points: points
                .iter()
                .map(|&(size, mean, ci)| (size, summary(mean, ci)))
                .collect(),
            asked: Vec::new(),
        }
    }

    #[test]
    fn bisection_finds_the_fewest_servers_on_a_monotone_curve() {
        // 1..=16 servers; the metric reaches 0.99 (whole CI) at 11, and 10 clearly misses it.
        let points: Vec<(u32, f64, f64)> = (1..=16)
            .map(|n| {
                (
                    n,
                    if n >= 11 {
                        0.995
                    } else {
                        0.5 + 0.04 * f64::from(n)
                    },
                    0.002,
                )
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        let a = answer(&mut c, 0, (1, 16)).expect("answer");
        assert_eq!(a, (Verdict::Found, Some(11.0), None));
        // Bisection, not a scan: at most ⌈log2 16⌉ + 2 sizes.
        assert!(c.asked.len() <= 6, "{:?}", c.asked);
        // Never reached: the verdict says so.
        let low: Vec<(u32, f64, f64)> = (1..=8).map(|n| (n, 0.5, 0.01)).collect();
        let mut c = curve("hit_rate>=0.99", &low);
        assert_eq!(
            answer(&mut c, 0, (1, 8)).expect("answer").0,
            Verdict::NotReached
        );
        // Holds at the smallest size tried.
        let high: Vec<(u32, f64, f64)> = (3..=8).map(|n| (n, 1.0, 0.0)).collect();
        let mut c = curve("hit_rate>=0.99", &high);
        assert_eq!(
            answer(&mut c, 0, (3, 8)).expect("answer"),
            (Verdict::Found, Some(3.0), None)
        );
    }

    #[test]
    fn a_straddling_ci_gives_the_bracket_not_one_size() {
        // unplaced<=0.5: 5 clearly fails, 6 and 7 straddle (means 0.55 and 0.45, CI 0.2),
        // 8 clearly holds: the seeds cannot tell 6, 7 and 8 apart.
        let points = [
            (4, 3.0, 0.1),
            (5, 1.0, 0.1),
            (6, 0.55, 0.2),
            (7, 0.45, 0.2),
            (8, 0.1, 0.05),
            (9, 0.0, 0.0),
            (10, 0.0, 0.0),
        ];
        let mut c = curve("unplaced<=0.5", &points);
        assert_eq!(
            answer(&mut c, 0, (4, 10)).expect("answer"),
            (Verdict::Bracket, None, Some([6.0, 8.0]))
        );
    }

    #[test]
    fn a_target_met_below_a_largest_size_that_misses_it_is_still_answered() {
        // Met from 5 to 8, missed at 9 and 10 (more servers, worse): today's size (7) met it.
        let points: Vec<(u32, f64, f64)> = (1..=10)
            .map(|n| match n {
                5..=8 => (n, 1.0, 0.0),
                _ => (n, 0.8, 0.01),
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        c.status(0, 7).expect("on the curve");
        assert_eq!(
            answer(&mut c, 0, (1, 10)).expect("answer"),
            (Verdict::Found, Some(5.0), None)
        );
    }

    #[test]
    fn a_non_monotone_curve_is_reported_where_it_turns() {
        // The target holds at 4 and 5, is lost from 6 to 8 and holds again from 9. The search
        // tries today's size (7) and the smallest (4) first: 4 is the fewest that holds, and
        // the reversal between 4 and 7 is named.
        let points: Vec<(u32, f64, f64)> = (4..=12)
            .map(|n| match n {
                4 | 5 => (n, 0.995, 0.001),
                6..=8 => (n, 0.90, 0.01),
                _ => (n, 0.999, 0.001),
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        c.status(0, 7).expect("on the curve");
        c.status(0, 4).expect("on the curve");
        let a = answer(&mut c, 0, (4, 12)).expect("answer");
        assert_eq!(a, (Verdict::Found, Some(4.0), None));
        let probes: Vec<CapacityProbe> = {
            let mut sizes = c.asked.clone();
            sizes.sort_unstable();
            sizes
                .iter()
                .map(|s| {
                    let m = c.points[s].clone();
                    CapacityProbe {
                        value: f64::from(*s),
                        status: classify(&c.target, &m),
                        metric: Some(m),
                        fill_pods: None,
                        backlog_first: None,
                        backlog_last: None,
                    }
                })
                .collect()
        };
        let r = reversals(&c.target, &probes);
        assert!(
            r.iter()
                .any(|r| r.target_lost && r.from <= 6.0 && r.to >= 7.0),
            "asked {:?}: {r:?}",
            c.asked
        );
    }
}
