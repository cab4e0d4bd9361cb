//! Planning a co-location workload: build the task set, run each planner on the one engine,
//! verify every run, measure it, and compute every planner's gap against the proven bound
//! (DESIGN §6, §7).

use std::time::Instant;

use super::bounds::{BoundPart, Bounds, best_bound};
use super::capacity::resolve_load;
use super::explain::furthest_from;
use super::metrics;
use super::planner::{ColocationPlanner, PlannerRun};
use super::registry;
use super::setup::{Setup, setup};
use super::trace::TraceRequest;
use crate::plan::cancel::{Cancel, Progress};
use crate::plan::colocation::{
    BoundReport, ColocationPlan, ColocationPlannerReport, ColocationRun, TaskEvent,
};
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{PlannerWorst, WorstTasks};
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::SolverSettings;
use crate::spec::ColocationSpec;
use crate::topology::Cluster;
use crate::verify::colocation::{MetricBasis, verify_metrics, verify_run};

/// A run that passed the verifier, with its status, bound and time.
struct VerifiedRun {
    run: ColocationRun,
    status: PlanStatus,
    bound: Option<f64>,
    runtime_ms: f64,
}

/// A verified run, or the status and reason of a planner that produced none.
type RunOutcome = Result<VerifiedRun, (PlanStatus, String)>;

/// A planner's name, role and outcome.
type Run = (&'static str, PlannerRole, RunOutcome);

fn last_end(run: &ColocationRun) -> f64 {
    run.ops.iter().map(|o| o.end_s).fold(0.0, f64::max)
}

/// Runs one planner and verifies its run; `None` when it skipped the instance (with why).
fn run_verified(
    planner: &dyn ColocationPlanner,
    s: &Setup,
    horizon_s: f64,
) -> Result<RunOutcome, PlanningError> {
    let t0 = Instant::now();
    let outcome = planner
        .run(s, horizon_s)
        .map_err(|e| e.in_planner(planner.name()))?;
    let runtime_ms = t0.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        PlannerRun::Skipped { reason } => Ok(Err((PlanStatus::Skipped, reason))),
        PlannerRun::NoSolution { reason } => Ok(Err((PlanStatus::NoSolution, reason))),
        PlannerRun::Ran { run, status, bound } => {
            verify_run(&s.config.bounds(), &s.tasks, &run).map_err(|reason| {
                PlanningError::Verification {
                    planner: planner.name().into(),
                    at: "run".into(),
                    reason,
                }
            })?;
            Ok(Ok(VerifiedRun {
                run,
                status,
                bound,
                runtime_ms,
            }))
        }
    }
}

/// The verified run of one candidate planner, for timelines: `None` for a reference planner,
/// which has no run of its own to show.
pub fn candidate_run(name: &str, s: &Setup) -> Result<Option<ColocationRun>, PlanningError> {
    let planner =
        registry::planner(name).ok_or_else(|| PlanningError::UnknownPlanner(name.into()))?;
    if planner.role() != PlannerRole::Candidate {
        return Ok(None);
    }
    Ok(run_verified(planner.as_ref(), s, 0.0)?.ok().map(|v| v.run))
}

/// Plans a co-location workload with each named planner (`None`: `[planners].run`) on the seed
/// given (`None`: `[planners].seed`): every run verified and measured, with its gap against the
/// proven bound. `trace` replaces the generated inference arrivals.
pub fn plan(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    planners: Option<&[String]>,
    seed: Option<u64>,
) -> Result<ColocationPlan, PlanningError> {
    plan_with_worst(cluster, spec, trace, planners, seed, None)
}

/// [`plan`] of a run that `cancel` may stop: `Err(Interrupted)` instead of a plan whose exact
/// search was cut short.
pub fn plan_until(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    planners: Option<&[String]>,
    seed: Option<u64>,
    cancel: Cancel,
) -> Result<ColocationPlan, PlanningError> {
    cancel.check()?;
    let plan = plan_cancellable(cluster, spec, trace, (planners, seed, None), cancel)?;
    cancel.check()?;
    Ok(plan)
}

/// [`plan`], and with `worst = Some(K)` each candidate's K tasks whose response differs most
/// from `ilp`'s schedule (`plan --worst K`).
pub fn plan_with_worst(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    planners: Option<&[String]>,
    seed: Option<u64>,
    worst: Option<usize>,
) -> Result<ColocationPlan, PlanningError> {
    plan_cancellable(
        cluster,
        spec,
        trace,
        (planners, seed, worst),
        Cancel::never(),
    )
}

/// [`plan_with_worst`] within a run's stop request and time budget (`--time-limit`): every
/// solve, bound and search of the run shares its one deadline.
pub fn plan_cancellable(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    (planners, seed, worst): (Option<&[String]>, Option<u64>, Option<usize>),
    cancel: Cancel,
) -> Result<ColocationPlan, PlanningError> {
    let names: Vec<String> = planners.map_or_else(|| spec.planners.run.clone(), <[String]>::to_vec);
    let chosen = registry::resolve(&names)?;
    let spec = &*resolve_load(cluster, spec, trace)?;
    let s = Setup {
        cancel,
        ..setup(cluster, spec, trace, seed)
    };
    let (runs, horizon) = run_all(&chosen, &s)?;
    let worst = worst
        .map(|k| worst_tasks(cluster, spec, &s, &runs, k))
        .transpose()?;
    let mut reports = Vec::new();
    for name in &names {
        let Some((_, role, outcome)) = runs.iter().find(|(n, _, _)| n == name) else {
            continue;
        };
        reports.push(planner_report(name, *role, outcome, &s)?);
    }
    // Every gap is against the best proven lower bound (DESIGN §10.3), or, when `ilp` proved
    // its schedule optimal over every decision a planner can make, against that optimum: the
    // distance is then exact.
    let settings = SolverSettings {
        backend: spec.planners.solver,
        mip_gap: spec.planners.ilp_mip_gap,
    };
    let bounds = best_bound(&s, horizon, settings);
    let (bound, bound_source, exact) = gap_reference(&reports, &bounds)?;
    for r in &mut reports {
        if let Some(o) = r.objective {
            r.gap = Some((o - bound) / bound.abs().max(1.0));
            r.gap_is_bound = !exact;
        }
    }
    Ok(ColocationPlan {
        schema_version: 1,
        kind: "colocation",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed: s.seed,
        nodes: s.config.nodes,
        stages: s.config.stages,
        slo_s: s.slo_s(),
        slo_factor: spec.inference.slo_factor,
        bound: Some(bound),
        bound_source,
        bounds: bounds.parts.into_iter().map(bound_report).collect(),
        planners: reports,
        worst,
    })
}

/// Runs every chosen planner on `s`, candidates first (the references' horizon must cover
/// their schedules), each run verified; with the references' horizon.
fn run_all(
    chosen: &[Box<dyn ColocationPlanner>],
    s: &Setup,
) -> Result<(Vec<Run>, f64), PlanningError> {
    let mut runs: Vec<(&'static str, PlannerRole, RunOutcome)> = Vec::new();
    // Candidates first: the references' horizon must cover their schedules.
    let (references, candidates): (Vec<&dyn ColocationPlanner>, Vec<&dyn ColocationPlanner>) =
        chosen
            .iter()
            .map(|p| p.as_ref())
            .partition(|p| p.role().runs_last());
    let planners = candidates.len() + references.len();
    let report = |k: usize, name: &str| {
        s.cancel.report(&Progress {
            planner: name,
            done: k as u64,
            total: planners as u64,
            best: None,
            bound: None,
        });
    };
    for planner in candidates {
        report(runs.len(), planner.name());
        runs.push((
            planner.name(),
            planner.role(),
            run_verified(planner, s, 0.0)?,
        ));
    }
    // The references' horizon (and the LP bound's): the latest end of the candidates' runs.
    let horizon = match runs
        .iter()
        .filter_map(|(_, _, r)| r.as_ref().ok())
        .map(|r| last_end(&r.run))
        .reduce(f64::max)
    {
        Some(h) => h,
        // No candidate ran: the round-robin schedule stands in for them.
        None => match candidate_run("mix-rr", s)? {
            Some(run) => last_end(&run),
            None => 0.0,
        },
    };
    for planner in references {
        report(runs.len(), planner.name());
        runs.push((
            planner.name(),
            planner.role(),
            run_verified(planner, s, horizon)?,
        ));
    }
    Ok((runs, horizon))
}

/// One planner's report: its measured run, verified again through its metrics, or why it
/// has none.
fn planner_report(
    name: &str,
    role: PlannerRole,
    outcome: &RunOutcome,
    s: &Setup,
) -> Result<ColocationPlannerReport, PlanningError> {
    let (spec, tau) = (&s.spec, s.slo_s());
    let verified = match outcome {
        Ok(v) => v,
        Err((status, reason)) => {
            return Ok(ColocationPlannerReport {
                name: name.to_string(),
                role,
                status: *status,
                objective: None,
                gap: None,
                gap_is_bound: false,
                bound: None,
                runtime_ms: 0.0,
                skipped: Some(reason.clone()),
                metrics: None,
                events: Vec::new(),
            });
        }
    };
    let run = &verified.run;
    let m = metrics::compute(run, s);
    let expected = MetricBasis {
        tau_s: tau,
        stages: s.config.stages,
        warmup_s: spec.inference.warmup_s,
        weights: &spec.objective,
    };
    verify_metrics(run, &m, &expected).map_err(|reason| PlanningError::Verification {
        planner: name.to_string(),
        at: "metrics".into(),
        reason,
    })?;
    let events = run
        .outcomes
        .iter()
        .map(|o| TaskEvent {
            task: o.task.0,
            kind: if o.training { "training" } else { "inference" },
            node: o.node,
            arrival_s: o.arrival_s,
            released_s: o.released_s,
            start_s: o.start_s,
            end_s: o.end_s,
            slo_met: o.slo_met(tau),
            dropped: o.dropped,
            offloaded: o.offloaded,
        })
        .collect();
    Ok(ColocationPlannerReport {
        name: name.to_string(),
        role,
        status: verified.status,
        objective: Some(m.objective),
        gap: None,
        gap_is_bound: false,
        bound: verified.bound,
        runtime_ms: verified.runtime_ms,
        skipped: None,
        metrics: Some(m),
        events,
    })
}

/// What every gap is measured against: the best proven lower bound (DESIGN §10.3), or, when
/// `ilp` proved its schedule optimal over every decision a planner can make, that optimum
/// (the distance is then exact); with its source and whether it is exact.
fn gap_reference(
    reports: &[ColocationPlannerReport],
    bounds: &Bounds,
) -> Result<(f64, &'static str, bool), PlanningError> {
    let optimum = reports
        .iter()
        .find(|r| r.role == PlannerRole::ScheduleOptimum && r.status == PlanStatus::Optimal)
        .and_then(|r| r.objective);
    let tolerance = |x: f64| 1e-9 * x.abs().max(1.0);
    Ok(match optimum {
        Some(o) => {
            // Two proofs meet here: the optimum cannot lie below the bound, nor any planner
            // below the optimum.
            let below = reports
                .iter()
                .filter_map(|r| Some((r.name.as_str(), r.objective?)))
                .find(|(_, x)| *x < o - tolerance(o));
            let reason = match below {
                Some((name, x)) => Some(format!("{name} scores {x} below the proven optimum {o}")),
                None => (bounds.best > o + tolerance(o)).then(|| {
                    format!(
                        "the lower bound {} ({}) lies above the proven optimum {o}",
                        bounds.best, bounds.source
                    )
                }),
            };
            if let Some(reason) = reason {
                return Err(PlanningError::Verification {
                    planner: "ilp".into(),
                    at: "optimum".into(),
                    reason,
                });
            }
            (o, "ilp", true)
        }
        None => (bounds.best, bounds.source, false),
    })
}

/// A bound as the plan reports it.
fn bound_report(part: BoundPart) -> BoundReport {
    BoundReport {
        name: part.name,
        value: part.value.as_ref().ok().copied(),
        reason: part.value.err(),
        runtime_ms: part.runtime_ms,
    }
}

/// `plan --worst K`: per candidate, the K tasks whose response differs most from `ilp`'s
/// schedule, from the verified runs of this plan.
fn worst_tasks(
    cluster: &Cluster,
    spec: &ColocationSpec,
    s: &Setup,
    runs: &[Run],
    k: usize,
) -> Result<WorstTasks, PlanningError> {
    let exact = runs
        .iter()
        .find(|(_, role, _)| *role == PlannerRole::ScheduleOptimum);
    let Some((_, _, outcome)) = exact else {
        return Err(PlanningError::OutOfRange(
            "`--worst` compares every task's response with `ilp`'s schedule: add `ilp` to the planners".into(),
        ));
    };
    let reference = match outcome {
        Ok(v) => v,
        Err((_, reason)) => {
            return Err(PlanningError::OutOfRange(format!(
                "`--worst` needs `ilp`'s schedule, and `ilp` has none here: {reason}"
            )));
        }
    };
    let planners = runs
        .iter()
        .filter(|(_, role, _)| *role == PlannerRole::Candidate)
        .filter_map(|(name, _, outcome)| {
            let v = outcome.as_ref().ok()?;
            Some(PlannerWorst {
                planner: (*name).to_string(),
                tasks: furthest_from(s, &v.run, &reference.run, k),
            })
        })
        .collect();
    Ok(WorstTasks {
        schema_version: 1,
        kind: "colocation-worst",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed: s.seed,
        k,
        ilp_status: reference.status,
        planners,
    })
}
