//! Planning a preemption workload: build the initial state, run each planner over the
//! preemptor list (applying every decision before the next), measure the plans, compute both
//! gaps and run the independent verifier on every plan.

use std::time::Instant;

use super::apply::{Applied, apply};
use super::exact::optima::{Follower, RunOptima, SharedOptima};
use super::metrics;
use super::planner::{AppliedDecision, BatchDecision, PreemptionPlanner};
use super::problem::{DecisionPoint, Problem};
use super::registry;
use super::reports::{apply_gaps, reported_bound, run_order};
use super::scenario;
use super::terms;
use crate::plan::cancel::{Cancel, Progress};
use crate::plan::error::PlanningError;
use crate::plan::preemption::{
    PreemptionPlan, PreemptionPlannerReport, Preemptor, WorstDecision, enactment_order,
};
use crate::plan::{PlanStatus, PlannerRole};
use crate::spec::PreemptionSpec;
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, ServerId};

/// Options of one plan run.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Planners to run, in report order; `None` = the spec's `[planners].run`.
    pub planners: Option<Vec<String>>,
    /// Overrides `[fill].seed`.
    pub seed: Option<u64>,
    /// Keep each planner's `worst` K decisions: the largest excess over the per-event optimum
    /// on the state it faced (`plan --worst K`).
    pub worst: Option<usize>,
    /// The run's stop request and time budget (`--time-limit`), shared by every solve.
    pub cancel: Cancel,
}

/// A planner's run over the preemptor list, before measurement.
struct SequenceRun {
    status: PlanStatus,
    applied: Vec<Applied>,
    /// The per-event optimum of each state the planner faced (when measured).
    optima: RunOptima,
    runtime_ms: f64,
    bound: Option<f64>,
    /// False when a solver stopped before finding any plan (no events, no objective).
    incumbent: bool,
}

impl SequenceRun {
    fn objective(&self) -> f64 {
        self.applied.iter().fold(0.0, |sum, a| sum + a.event.cost)
    }
}

/// Plans a preemption workload with every requested planner.
pub fn plan(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &PlanOptions,
) -> Result<PreemptionPlan, PlanningError> {
    let names = options
        .planners
        .clone()
        .unwrap_or_else(|| spec.planners_to_run());
    registry::resolve(&names)?;
    let problem = Problem {
        cancel: options.cancel,
        ..Problem::new(cluster, spec)
    };
    let mut initial =
        scenario::initial_state(cluster, spec, options.seed).map_err(PlanningError::Invalid)?;
    let (reports, warnings) = if spec.has_gangs() {
        let gangs = super::gang::gangs(cluster, spec, &mut initial);
        let preemptors: Vec<Preemptor> = gangs.iter().map(|g| g.any_pod()).collect();
        let warnings = unplaceable_warnings(cluster, &preemptors);
        let reports =
            super::gang::planning::plan_gangs(&problem, &initial, &gangs, &names, options.worst)?;
        (reports, warnings)
    } else {
        let preemptors = scenario::preemptors(cluster, spec, &mut initial);
        let warnings = unplaceable_warnings(cluster, &preemptors);
        let reports = plan_with_worst(&problem, &initial, &preemptors, &names, options.worst)?;
        (reports, warnings)
    };
    Ok(PreemptionPlan {
        schema_version: 1,
        kind: "preemption",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed: spec.fill.as_ref().map(|f| options.seed.unwrap_or(f.seed)),
        planners: reports,
        warnings,
    })
}

/// Plans `preemptors` from `initial` with the named planners (in that report order), measures
/// and verifies every plan and computes the gaps. Both gaps need their exact planner in `names`.
pub fn plan_from_state(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    names: &[String],
) -> Result<Vec<PreemptionPlannerReport>, PlanningError> {
    plan_with_worst(problem, initial, preemptors, names, None)
}

/// [`plan_from_state`], keeping each planner's `worst` K decisions when asked.
fn plan_with_worst(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    names: &[String],
    worst: Option<usize>,
) -> Result<Vec<PreemptionPlannerReport>, PlanningError> {
    let chosen = registry::resolve(names)?;
    let with_decision_gap = chosen
        .iter()
        .any(|p| p.role() == PlannerRole::PerEventReference);
    let per_event = PerEvent {
        decision_gap: with_decision_gap,
        worst,
    };
    let mut runs: Vec<(&dyn PreemptionPlanner, SequenceRun)> = Vec::new();
    // Sequential planners first, so the joint planner can start from the best of them; the
    // per-event reference first among them, so that its decisions serve as the optima of the
    // states the others share with it.
    let (joint, sequential) = run_order(&chosen);
    let mut shared = SharedOptima::default();
    let measured = per_event.wanted().then_some(worst.is_some());
    for planner in sequential {
        problem.cancel.check()?;
        let run = run_sequential(problem, planner, initial, preemptors, measured, &shared)?;
        shared.record(
            run.applied.iter().map(|a| a.ids.clone()).collect(),
            &run.optima,
        );
        runs.push((planner, run));
    }
    let sequential_ids: Vec<(f64, Vec<AppliedDecision>)> = runs
        .iter()
        .map(|(_, r)| {
            (
                r.objective(),
                r.applied.iter().map(|a| a.ids.clone()).collect(),
            )
        })
        .collect();
    for planner in joint {
        let best = warm_start(sequential_ids.iter().map(|(o, ids)| (*o, ids.as_slice())));
        let run = run_joint(
            problem,
            planner,
            initial,
            preemptors,
            best.as_deref(),
            measured,
            &shared,
        )?;
        runs.push((planner, run));
    }
    runs.sort_by_key(|(p, _)| names.iter().position(|n| n == p.name()));
    let mut reports = Vec::new();
    for (planner, run) in &runs {
        let report = measure(problem, *planner, run, per_event, initial.budgets().left())?;
        crate::verify::preemption::verify_plan(
            problem.cluster,
            problem.spec,
            initial,
            preemptors,
            &report,
        )
        .map_err(|e| PlanningError::Verification {
            planner: planner.name().to_string(),
            at: e.event,
            reason: e.reason,
        })?;
        reports.push(report);
    }
    apply_gaps(&mut reports);
    Ok(reports)
}

fn unplaceable_warnings(cluster: &Cluster, preemptors: &[Preemptor]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for p in preemptors {
        if cluster
            .types
            .iter()
            .all(|t| t.required_level(p.request).is_none())
            && seen.insert(p.workload)
        {
            out.push(format!(
                "no server type can hold {} ({} GPUs, {} cores): planned as unplaced",
                p.name, p.request.gpus, p.request.cores
            ));
        }
    }
    out
}

/// A joint planner's warm start: the cheapest of the sequential plans (`(objective,
/// decisions)` in the order they ran; the first on a tie).
pub(super) fn warm_start<'r>(
    plans: impl Iterator<Item = (f64, &'r [AppliedDecision])>,
) -> Option<Vec<AppliedDecision>> {
    plans
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, ids)| ids.to_vec())
}

/// Runs a sequential planner over the list. `measured`: find the per-event optimum of every
/// state it faces (`Some(keep)`; `keep`: also apply the optimum's decision where the planner
/// loses, for `--worst`).
fn run_sequential(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    measured: Option<bool>,
    shared: &SharedOptima,
) -> Result<SequenceRun, PlanningError> {
    let fail = |error: PlanningError| error.in_planner(planner.name());
    let mut state = initial.clone();
    let mut applied = Vec::with_capacity(preemptors.len());
    let mut follower = measured.map(|keep| shared.follow(keep));
    let mut runtime = 0.0;
    let mut unproven = false;
    for (i, p) in preemptors.iter().enumerate() {
        problem.cancel.report(&Progress {
            planner: planner.name(),
            done: i as u64,
            total: preemptors.len() as u64,
            best: None,
            bound: None,
        });
        let t0 = Instant::now();
        let at = DecisionPoint {
            problem,
            state: &state,
            preemptor: p,
        };
        let decision = planner.decide(&at).map_err(fail)?;
        runtime += t0.elapsed().as_secs_f64() * 1000.0;
        unproven |= decision.unproven;
        let measuring = match &follower {
            Some(f) => Some(f.measure(problem, &state, p, i, &decision)?),
            None => None,
        };
        let a = apply(problem, &mut state, p, &decision).map_err(fail)?;
        if let (Some(f), Some((optimum, before))) = (follower.as_mut(), measuring) {
            f.push(problem, p, i, optimum, &a, before)?;
        }
        applied.push(a);
    }
    Ok(SequenceRun {
        // `optimal` only when every solve behind the plan was proven.
        status: match planner.status() {
            // Unproven: a solve stopped at the time limit or (when the spec allows one) within
            // the MIP gap.
            PlanStatus::Optimal if unproven && problem.spec.planners.ilp_mip_gap > 0.0 => {
                PlanStatus::GapLimit
            }
            PlanStatus::Optimal if unproven => PlanStatus::TimeLimit,
            status => status,
        },
        applied,
        optima: follower.map(Follower::finish).unwrap_or_default(),
        runtime_ms: runtime,
        bound: None,
        incumbent: true,
    })
}

/// Runs a joint planner and replays its decisions in list order (measured as
/// [`run_sequential`] measures).
fn run_joint(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    warm_start: Option<&[AppliedDecision]>,
    measured: Option<bool>,
    shared: &SharedOptima,
) -> Result<SequenceRun, PlanningError> {
    let fail = |error: PlanningError| error.in_planner(planner.name());
    problem.cancel.report(&Progress {
        planner: planner.name(),
        done: 0,
        total: preemptors.len() as u64,
        best: None,
        bound: None,
    });
    let t0 = Instant::now();
    let batch: BatchDecision = planner
        .decide_batch(problem, initial, preemptors, warm_start)
        .map_err(fail)?;
    let runtime = t0.elapsed().as_secs_f64() * 1000.0;
    let incumbent = batch.decisions.len() == preemptors.len();
    problem.cancel.report(&Progress {
        planner: planner.name(),
        done: preemptors.len() as u64,
        total: preemptors.len() as u64,
        best: batch.objective,
        bound: batch.bound,
    });
    // Enacted highest priority first; the sequential runs' optima are shared only along the
    // same states, which a different order does not visit.
    let order = if incumbent {
        enactment_order(preemptors, true)
    } else {
        Vec::new()
    };
    let in_list_order = order.iter().enumerate().all(|(k, &i)| k == i);
    let unshared = SharedOptima::default();
    let mut follower = measured.map(|keep| {
        if in_list_order {
            shared.follow(keep)
        } else {
            unshared.follow(keep)
        }
    });
    let mut state = initial.clone();
    let mut enacted = Vec::with_capacity(order.len());
    for (k, &i) in order.iter().enumerate() {
        let (p, d) = (&preemptors[i], &batch.decisions[i]);
        let measuring = match &follower {
            Some(f) => Some(f.measure(problem, &state, p, k, d)?),
            None => None,
        };
        let a = apply(problem, &mut state, p, d).map_err(fail)?;
        if let (Some(f), Some((optimum, before))) = (follower.as_mut(), measuring) {
            f.push(problem, p, k, optimum, &a, before)?;
        }
        enacted.push(a);
    }
    let optima = follower.map(Follower::finish).unwrap_or_default();
    Ok(SequenceRun {
        status: if incumbent {
            batch.status
        } else {
            PlanStatus::NoSolution
        },
        applied: in_list_order_of(&order, enacted),
        optima: RunOptima {
            optima: in_list_order_of(&order, optima.optima),
            optimum_applied: in_list_order_of(&order, optima.optimum_applied),
        },
        runtime_ms: runtime,
        bound: batch.bound,
        incumbent,
    })
}

/// Items produced in `order` (positions into the list), put back in list order.
fn in_list_order_of<T>(order: &[usize], items: Vec<T>) -> Vec<T> {
    if items.len() != order.len() {
        // Not measured: nothing to reorder.
        return items;
    }
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(order.len()).collect();
    for (&i, item) in order.iter().zip(items) {
        slots[i] = Some(item);
    }
    slots.into_iter().flatten().collect()
}

/// What is measured against the per-event optimum on every state a planner faced.
#[derive(Debug, Clone, Copy)]
struct PerEvent {
    /// `decision_gap` (the per-event reference `ilp` is among the planners).
    decision_gap: bool,
    /// The K decisions with the largest excess (`plan --worst K`).
    worst: Option<usize>,
}

impl PerEvent {
    fn wanted(self) -> bool {
        self.decision_gap || self.worst.is_some()
    }
}

fn measure(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    run: &SequenceRun,
    per_event: PerEvent,
    budgets_allowed: &[i64],
) -> Result<PreemptionPlannerReport, PlanningError> {
    let cluster = problem.cluster;
    let fraction = |s: ServerId, g: usize| {
        let t = cluster.type_of(s);
        t.device_fraction.get(g).copied().unwrap_or(1.0)
    };
    let mut m = metrics::compute(&fraction, &run.applied, problem.spec.now_s);
    m.pdb_violations = metrics::pdb_violations(&run.applied, budgets_allowed);
    // From +0.0: an empty float sum is -0.0, which would print as such.
    let objective: f64 = run.applied.iter().fold(0.0, |sum, a| sum + a.event.cost);
    m.objective = run.incumbent.then_some(objective);
    m.runtime_ms = run.runtime_ms;
    let excesses = if per_event.wanted() && run.incumbent {
        Some(event_excesses(problem, planner, run, per_event.worst))
    } else {
        None
    };
    // No event, no gap: a plan of an empty list has nothing to compare.
    let decision_gap = excesses
        .as_ref()
        .filter(|_| per_event.decision_gap && !run.applied.is_empty())
        .map(|e| e.gap);
    // Asked for: every planner with a plan lists its worst decisions, none for one that
    // loses none.
    let worst = per_event.worst.and(excesses.map(|e| e.worst));
    m.decision_gap = decision_gap;
    Ok(PreemptionPlannerReport {
        name: planner.name().to_string(),
        role: planner.role(),
        status: run.status,
        objective: m.objective,
        gap: None,
        gap_is_bound: false,
        bound: reported_bound(run.status, run.bound, m.objective),
        decision_gap,
        worst,
        runtime_ms: run.runtime_ms,
        truncated: run.applied.iter().any(|a| a.event.truncated),
        metrics: m,
        events: run.applied.iter().map(|a| a.event.clone()).collect(),
    })
}

/// A plan's decisions against the per-event optimum on the states it faced.
struct Excesses {
    /// Σ (event cost − per-event optimum) / max(1, Σ optimum): the `decision_gap`.
    gap: f64,
    /// The largest excesses, largest first (`plan --worst K`).
    worst: Vec<WorstDecision>,
}

/// Every decision's excess over the per-event optimum on the state the planner faced; the
/// `worst` largest kept with the term that decides each.
fn event_excesses(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    run: &SequenceRun,
    worst: Option<usize>,
) -> Excesses {
    if planner.role() == PlannerRole::PerEventReference {
        return Excesses {
            gap: 0.0,
            worst: Vec::new(),
        };
    }
    let mut excess = 0.0;
    let mut optimum_sum = 0.0;
    let mut decisions = Vec::new();
    let optima = &run.optima;
    for (i, (a, opt)) in run.applied.iter().zip(&optima.optima).enumerate() {
        excess += a.event.cost - opt.cost;
        optimum_sum += opt.cost;
        if let Some(Some(optimum)) = optima.optimum_applied.get(i) {
            let difference = terms::difference(
                planner.name(),
                &terms::terms_of(problem, a),
                &terms::terms_of(problem, optimum),
            );
            decisions.push(WorstDecision {
                event: i + 1,
                preemptor: a.event.preemptor.clone(),
                server: a.event.node.clone(),
                optimum_server: optimum.event.node.clone(),
                excess: difference.excess,
                deciding_term: difference.deciding_term,
            });
        }
    }
    // Largest first; the earlier event on a tie.
    decisions.sort_by(|a, b| b.excess.total_cmp(&a.excess).then(a.event.cmp(&b.event)));
    decisions.truncate(worst.unwrap_or(0));
    Excesses {
        gap: excess / optimum_sum.abs().max(1.0),
        worst: decisions,
    }
}

#[cfg(test)]
#[path = "planning_tests.rs"]
mod tests;
