//! The answer shape both workload kinds share, and the serialised form of `coplan capacity`:
//! the types the search fills and the co-location adapter translates into.

use serde::Serialize;

use super::target::Target;
use crate::sim::stats::Summary;

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

/// The pool a search resizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolRef {
    /// Position of the pool in the cluster's `[[pool]]` list, from 0.
    pub index: usize,
    /// The pool's `name_prefix`.
    pub name_prefix: String,
    /// Name of the pool's server type.
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
    /// Fewer servers than the held load needs: the fill could not place every pod, or
    /// (shrinking) a `[[running]]` pod of a removed server fits on no remaining one.
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
    /// Where this size stands against the target.
    pub status: ProbeStatus,
    /// The metric over seeds (preemption); null when no seed has a value.
    pub metric: Option<Summary>,
    /// Fill pods placed after the initial fill, mean over seeds (preemption).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_pods: Option<f64>,
    /// Preemption: the pool's servers taken out at this size (below the spec's count), the
    /// emptiest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_servers: Vec<String>,
    /// Preemption: `[[running]]` pods of the removed servers re-placed on remaining servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_pods: Option<usize>,
    /// Preemption: `[[running]]` pods of the removed servers that fit on no remaining server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub displaced_pods: Option<usize>,
    /// Preemption: the names of the displaced pods.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub displaced: Vec<String>,
    /// Mean backlog over the first and last thirds of the window (co-location).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog_first: Option<f64>,
    /// See `backlog_first`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog_last: Option<f64>,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// One answer: it holds there and fails one step below.
    Found,
    /// It holds at the answer, and no size below it was seen to fail down to the smallest
    /// size searched (`--min`, else 1), which is a bound the search does not go below: the
    /// fewest servers is at most the answer (`bracket`: the smallest size searched and the
    /// answer, when they differ).
    AtMost,
    /// The CI straddles the target over a range of sizes: the answer lies in `bracket`.
    Bracket,
    /// The target does not hold even at `--max`.
    NotReached,
}

/// More servers, a worse metric: where the bisection's assumption broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reversal {
    /// The smaller size (or rate) of the pair.
    pub from: f64,
    /// The larger size (or rate), where the metric is worse.
    pub to: f64,
    /// Mean of the metric at `from`.
    pub mean_from: f64,
    /// Mean of the metric at `to`.
    pub mean_to: f64,
    /// The target is met at `from` and missed at `to` (otherwise: the CIs do not overlap).
    pub target_lost: bool,
}

/// One planner's answer and every probe behind it, by size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerCapacity {
    /// The planner's registry name.
    pub planner: String,
    /// Found, bracketed, or not reached within the range.
    pub verdict: Verdict,
    /// The fewest servers (preemption) or the highest sustainable rate (co-location).
    pub answer: Option<f64>,
    /// With `bracket`: the lowest and highest size the answer may be.
    pub bracket: Option<[f64; 2]>,
    /// Co-location: the workload's own rate as a fraction of `answer`.
    pub load_of_spec_rate: Option<f64>,
    /// Empty when the metric was monotone over the sizes tried.
    pub non_monotone: Vec<Reversal>,
    /// Every size (or rate) tried, in ascending order.
    pub probes: Vec<CapacityProbe>,
}

/// `coplan capacity` output, either workload kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityReport {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"capacity"`.
    pub kind: &'static str,
    /// `preemption` or `colocation`.
    pub workload_kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// `servers` (a pool's size) or `rate_rps` (the Poisson arrival rate).
    pub searched: &'static str,
    /// The target a size must meet (preemption); `null` for a rate search.
    pub target: Option<Target>,
    /// The resized pool (preemption); `null` for a rate search.
    pub pool: Option<PoolRef>,
    /// What stays fixed while the pool is resized (preemption); `null` for a rate search.
    pub hold: Option<Hold>,
    /// Preemption: fill pods the spec's cluster holds per seed (the held load); empty otherwise.
    pub held_pods: Vec<usize>,
    /// Seeds of every probe's simulation (preemption: one initial fill each); the first
    /// of `seeds_requested` alone when nothing in the workload is random.
    pub seeds: Vec<u64>,
    /// Preemption: the seeds asked for (`--seeds`, else `[simulation].seeds`); empty for a
    /// rate search.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds_requested: Vec<u64>,
    /// What the reader should know about the search, one sentence each (e.g. why one seed
    /// ran).
    pub notes: Vec<String>,
    /// Cycles per seed at every size (preemption); `null` for a rate search.
    pub cycles: Option<u64>,
    /// Co-location: requests per probe run.
    pub requests: Option<i64>,
    /// Smallest size searched (`--min`, else 1); `null` for a rate search.
    pub min: Option<u32>,
    /// Largest size searched (`--max`, else four times the spec's count); `null` for a rate search.
    pub max: Option<u32>,
    /// One answer per planner, in the order asked.
    pub planners: Vec<PlannerCapacity>,
}
