//! Sustainable request rates (DESIGN §10.3, "load relative to capacity"): the highest Poisson
//! arrival rate at which a planner's serving backlog stays bounded, found by bisection on the
//! discrete-event engine; and `[inference] load`, a rate given as a fraction of SEPARATE's.
//!
//! Bounded backlog: the backlog is the number of requests that have arrived but are not done
//! (prefill and decode), sampled at each arrival of the steady-state window. A run keeps up when the
//! mean backlog over the window's last third is at most twice the mean over its first third
//! plus one request per node (a queue that grows without bound fails this; one that fluctuates
//! around a level passes).

use std::borrow::Cow;

use super::metrics::steady_window;
use super::planner::{ColocationPlanner, PlannerRun};
use super::registry;
use super::setup::setup;
use super::trace::TraceRequest;
use crate::plan::colocation::ColocationRun;
use crate::plan::error::PlanningError;
use crate::spec::ColocationSpec;
use crate::topology::Cluster;
use crate::verify::colocation::verify_run;

/// Bisection steps after the rate is bracketed.
const BISECTION_STEPS: u32 = 12;
/// Doublings tried before a planner is declared to keep up at any rate the search reaches.
const MAX_DOUBLINGS: u32 = 24;
/// Halvings tried from a rate the planner cannot keep up with before its capacity is 0: 2⁻⁴⁰
/// of the workload's rate (1e-7 rps from 1e5).
const MAX_HALVINGS: u32 = 40;

/// One simulated rate and whether the planner kept up.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Probe {
    /// The simulated Poisson arrival rate, in requests per second.
    pub rate_rps: f64,
    /// Whether the backlog stayed bounded at this rate (last third's mean ≤ twice the first's plus
    /// one request per node).
    pub stable: bool,
    /// Mean backlog (requests) over the first and last thirds of the window.
    pub backlog_first: f64,
    /// See `backlog_first`.
    pub backlog_last: f64,
}

/// A planner's sustainable rate and the probes that found it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Capacity {
    /// Registry name of the planner (e.g. `lemix`).
    pub planner: String,
    /// The highest rate found stable (requests per second).
    pub rate_rps: f64,
    /// The workload's own rate as a fraction of that capacity, when it has one.
    pub load_of_spec_rate: Option<f64>,
    /// Every simulated rate in the order the bracketing and bisection tried them.
    pub probes: Vec<Probe>,
}

/// `coplan capacity` output: every candidate planner's sustainable rate on one workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CapacityReport {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"capacity"`: tells this document apart from the other JSON outputs.
    pub kind: &'static str,
    /// Name of the cluster the rates were found on.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// Seed of every probe run (`--seed`, else `[planners].seed`).
    pub seed: u64,
    /// Requests per probe run (`[inference] count`).
    pub requests: i64,
    /// One entry per candidate planner, in the order they were named (reference planners are
    /// skipped).
    pub planners: Vec<Capacity>,
}

/// The sustainable rate of every named candidate planner (reference planners have no
/// dispatcher of their own and are skipped).
pub fn capacity_report(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    planners: &[String],
    seed: Option<u64>,
) -> Result<CapacityReport, PlanningError> {
    let seed = seed.unwrap_or(spec.planners.seed);
    let arrivals = Arrivals::of(spec, trace)?;
    let mut out = Vec::new();
    for planner in registry::resolve(planners)? {
        if planner.role() != crate::plan::PlannerRole::Candidate {
            continue;
        }
        out.push(sustainable_rate(
            cluster,
            spec,
            &arrivals,
            planner.as_ref(),
            seed,
        )?);
    }
    Ok(CapacityReport {
        schema_version: 1,
        kind: "capacity",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed,
        requests: trace.map_or(spec.inference.count, |t| t.len() as i64),
        planners: out,
    })
}

/// Mean backlog over the first and last thirds of the window's arrivals.
fn backlog_thirds(run: &ColocationRun, nodes: usize, warmup_s: f64) -> (f64, f64, bool) {
    let window = steady_window(run, warmup_s);
    let mut arrivals: Vec<f64> = Vec::new();
    let mut done: Vec<f64> = Vec::new();
    for o in run.outcomes.iter().filter(|o| !o.training) {
        arrivals.push(o.arrival_s);
        // A dropped request leaves the backlog when it is dropped; its end is unknown, so it
        // counts as served at its arrival (a drop is no queue).
        done.push(if o.dropped {
            o.arrival_s
        } else {
            o.end_s.unwrap_or(f64::INFINITY)
        });
    }
    arrivals.sort_by(f64::total_cmp);
    done.sort_by(f64::total_cmp);
    // Sampled at the arrivals of the steady-state window.
    let backlog: Vec<f64> = arrivals
        .iter()
        .enumerate()
        .filter(|(_, t)| **t >= window.0 - 1e-12)
        .map(|(i, &t)| (i + 1) as f64 - done.partition_point(|&d| d <= t) as f64)
        .collect();
    let third = (backlog.len() / 3).max(1);
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let first = mean(&backlog[..third.min(backlog.len())]);
    let last = mean(&backlog[backlog.len().saturating_sub(third)..]);
    (first, last, last <= 2.0 * first + nodes as f64)
}

/// What a probe varies: the rate of the spec's synthetic arrivals, or the time scale of a
/// trace's (or of the spec's explicit `requests`), whose requests keep their order, sizes and
/// relative gaps.
pub enum Arrivals<'t> {
    /// `[inference] arrival`: the Poisson (or uniform) rate is set.
    Synthetic,
    /// `[inference] trace` or `requests`: every arrival is scaled so that the mean rate is the
    /// probe's.
    Trace {
        /// The requests a run reads (the first `count` of a trace), arrivals from 0.
        requests: Cow<'t, [TraceRequest]>,
        /// Their own mean rate: requests after the first over the span of their arrivals.
        rate_rps: f64,
    },
}

impl<'t> Arrivals<'t> {
    /// The arrivals a capacity search varies; an input error when they have no rate.
    pub fn of(
        spec: &ColocationSpec,
        trace: Option<&'t [TraceRequest]>,
    ) -> Result<Self, PlanningError> {
        let count = spec.inference.count.max(0) as usize;
        let requests: Cow<'t, [TraceRequest]> = match (&spec.inference.requests, trace) {
            (Some(listed), _) => Cow::Owned(
                listed
                    .iter()
                    .map(|r| TraceRequest {
                        arrival_s: r.arrival_s.max(0.0),
                        prompt_tokens: r.prompt_tokens.max(1) as u32,
                        output_tokens: r.output_tokens.max(0) as u32,
                    })
                    .collect(),
            ),
            (None, Some(rows)) => Cow::Borrowed(&rows[..count.min(rows.len())]),
            (None, None) => return Ok(Arrivals::Synthetic),
        };
        let (first, last) = requests
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| {
                (a.min(r.arrival_s), b.max(r.arrival_s))
            });
        let span = last - first;
        if requests.len() < 2 || span.is_nan() || span <= 0.0 {
            return Err(PlanningError::OutOfRange(format!(
                "capacity scales the arrivals of the workload's requests, and its {} request(s) arrive at one instant: there is no rate to scale",
                requests.len()
            )));
        }
        let rate_rps = (requests.len() - 1) as f64 / span;
        Ok(Arrivals::Trace { requests, rate_rps })
    }

    /// The workload's own rate: the spec's, or the trace's as recorded.
    fn own_rate(&self, spec: &ColocationSpec) -> Option<f64> {
        match self {
            Arrivals::Synthetic => spec.inference.arrival.as_ref().map(|a| a.rate_rps),
            Arrivals::Trace { rate_rps, .. } => Some(*rate_rps),
        }
    }

    /// The trace at a mean rate of `rate_rps` (`None` for synthetic arrivals).
    fn scaled(&self, rate_rps: f64) -> Option<Vec<TraceRequest>> {
        match self {
            Arrivals::Synthetic => None,
            Arrivals::Trace {
                requests,
                rate_rps: own,
            } => {
                let stretch = own / rate_rps;
                Some(
                    requests
                        .iter()
                        .map(|r| TraceRequest {
                            arrival_s: r.arrival_s * stretch,
                            ..*r
                        })
                        .collect(),
                )
            }
        }
    }
}

/// The spec at one Poisson rate; explicit requests are read from the scaled trace instead.
fn at_rate(spec: &ColocationSpec, rate_rps: f64) -> ColocationSpec {
    let mut s = spec.clone();
    s.inference.load = None;
    s.inference.requests = None;
    if let Some(a) = s.inference.arrival.as_mut() {
        a.rate_rps = rate_rps;
    }
    s
}

fn probe(
    cluster: &Cluster,
    spec: &ColocationSpec,
    arrivals: &Arrivals<'_>,
    planner: &dyn ColocationPlanner,
    rate_rps: f64,
    seed: u64,
) -> Result<Probe, PlanningError> {
    let scaled = arrivals.scaled(rate_rps);
    let s = setup(
        cluster,
        &at_rate(spec, rate_rps),
        scaled.as_deref(),
        Some(seed),
    );
    let run = match planner.run(&s, 0.0)? {
        PlannerRun::Ran { run, .. } => run,
        PlannerRun::Skipped { reason } | PlannerRun::NoSolution { reason } => {
            return Err(PlanningError::Internal(format!(
                "{} skipped a capacity probe: {reason}",
                planner.name()
            )));
        }
    };
    verify_run(&s.config.bounds(), &s.tasks, &run).map_err(|reason| {
        PlanningError::Verification {
            planner: planner.name().into(),
            at: format!("capacity probe at {rate_rps} rps"),
            reason,
        }
    })?;
    let (backlog_first, backlog_last, stable) =
        backlog_thirds(&run, s.config.nodes, s.spec.inference.warmup_s);
    Ok(Probe {
        rate_rps,
        stable,
        backlog_first,
        backlog_last,
    })
}

/// The highest rate at which `planner` keeps up with the workload's requests. The search starts
/// at the workload's own rate and brackets from there: doubling while the planner keeps up,
/// halving while it does not, so the answer does not depend on where the spec's rate lies.
/// A planner that keeps up at no rate the halvings reach has a capacity of 0.
pub fn sustainable_rate(
    cluster: &Cluster,
    spec: &ColocationSpec,
    arrivals: &Arrivals<'_>,
    planner: &dyn ColocationPlanner,
    seed: u64,
) -> Result<Capacity, PlanningError> {
    let own_rate = arrivals.own_rate(spec);
    let start = own_rate.filter(|r| *r > 0.0).unwrap_or(1.0);
    let mut probes = Vec::new();
    let try_rate = |rate: f64, probes: &mut Vec<Probe>| -> Result<bool, PlanningError> {
        let p = probe(cluster, spec, arrivals, planner, rate, seed)?;
        probes.push(p);
        Ok(p.stable)
    };
    // `lo` kept up (0: none yet), `hi` did not (`None`: none yet).
    let (mut lo, mut hi): (f64, Option<f64>) = (0.0, None);
    if try_rate(start, &mut probes)? {
        lo = start;
        let mut rate = start;
        for _ in 0..MAX_DOUBLINGS {
            rate *= 2.0;
            if try_rate(rate, &mut probes)? {
                lo = rate;
            } else {
                hi = Some(rate);
                break;
            }
        }
    } else {
        hi = Some(start);
        let mut rate = start;
        for _ in 0..MAX_HALVINGS {
            rate *= 0.5;
            if try_rate(rate, &mut probes)? {
                lo = rate;
                break;
            }
            hi = Some(rate);
        }
    }
    if let Some(mut hi) = hi.filter(|_| lo > 0.0) {
        for _ in 0..BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if try_rate(mid, &mut probes)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    Ok(Capacity {
        planner: planner.name().to_string(),
        rate_rps: lo,
        load_of_spec_rate: own_rate
            .filter(|_| spec.inference.load.is_none() && lo > 0.0)
            .map(|r| r / lo),
        probes,
    })
}

/// The spec with `[inference] load` turned into a rate: load × SEPARATE's sustainable rate
/// (probed with the spec's own seed, so every seed of a simulation gets the same rate).
pub fn resolve_load<'a>(
    cluster: &Cluster,
    spec: &'a ColocationSpec,
    trace: Option<&[TraceRequest]>,
) -> Result<Cow<'a, ColocationSpec>, PlanningError> {
    let Some(load) = spec.inference.load else {
        return Ok(Cow::Borrowed(spec));
    };
    if trace.is_some() || spec.inference.arrival.is_none() {
        return Err(PlanningError::Internal(
            "`load` needs synthetic arrivals".into(),
        ));
    }
    let separate = registry::planner("separate")
        .ok_or_else(|| PlanningError::UnknownPlanner("separate".into()))?;
    let capacity = sustainable_rate(
        cluster,
        spec,
        &Arrivals::Synthetic,
        separate.as_ref(),
        spec.planners.seed,
    )?;
    Ok(Cow::Owned(at_rate(spec, load * capacity.rate_rps)))
}
