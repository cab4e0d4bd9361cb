//! Planning a list of gangs: each planner over the list (a sequential one applying every
//! decision before the next; a joint one enacted highest priority first), each gang's
//! per-event optimum on the state the planner faced (when `ilp` runs), the metrics, the gaps
//! and the verifier on every plan.

use std::time::Instant;

use super::apply::{AppliedGang, apply_gang};
use super::decision::{GangDecision, GangPoint};
use super::metrics::gang_metrics;
use super::request::Gang;
use crate::plan::cancel::Progress;
use crate::plan::error::PlanningError;
use crate::plan::gang::gang_enactment_order;
use crate::plan::preemption::{PreemptionPlannerReport, WorstDecision};
use crate::plan::{PlanStatus, PlannerRole};
use crate::preempt::metrics;
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::Problem;
use crate::preempt::registry;
use crate::preempt::reports::{apply_gaps, reported_bound, run_order};
use crate::topology::ServerId;
use crate::topology::state::ClusterState;

/// One planner's run over the gangs, before measurement.
struct GangRun {
    status: PlanStatus,
    applied: Vec<AppliedGang>,
    decisions: Vec<GangDecision>,
    /// Per gang, the per-event optimum on the state the planner faced: (cost, victims' cost).
    optima: Vec<(f64, f64)>,
    runtime_ms: f64,
    bound: Option<f64>,
    incumbent: bool,
    state: ClusterState,
}

impl GangRun {
    fn objective(&self) -> f64 {
        self.applied
            .iter()
            .fold(0.0, |s, a| s + a.applied.event.cost)
    }
}

/// Plans `gangs` from `initial` with the named planners, in that report order.
pub fn plan_gangs(
    problem: &Problem<'_>,
    initial: &ClusterState,
    gangs: &[Gang],
    names: &[String],
    worst: Option<usize>,
) -> Result<Vec<PreemptionPlannerReport>, PlanningError> {
    let chosen = registry::resolve(names)?;
    let measured = worst.is_some()
        || chosen
            .iter()
            .any(|p| p.role() == PlannerRole::PerEventReference);
    let (joint, sequential) = run_order(&chosen);
    let mut runs: Vec<(&dyn PreemptionPlanner, GangRun)> = Vec::new();
    for planner in sequential {
        problem.cancel.check()?;
        let run = run_sequential(problem, planner, initial, gangs, measured)
            .map_err(|e| e.in_planner(planner.name()))?;
        runs.push((planner, run));
    }
    let warm: Option<Vec<GangDecision>> = runs
        .iter()
        .filter(|(p, _)| p.gang_aware())
        .min_by(|a, b| a.1.objective().total_cmp(&b.1.objective()))
        .map(|(_, r)| r.decisions.clone());
    for planner in joint {
        problem.cancel.check()?;
        let run = run_joint(problem, planner, initial, gangs, warm.as_deref(), measured)
            .map_err(|e| e.in_planner(planner.name()))?;
        runs.push((planner, run));
    }
    runs.sort_by_key(|(p, _)| names.iter().position(|n| n == p.name()));
    let mut reports = Vec::new();
    for (planner, run) in &runs {
        let mut report = measure(problem, *planner, run, measured);
        report.worst = worst.map(|k| worst_decisions(run, k));
        crate::verify::preemption::verify_gang_plan(
            problem.cluster,
            problem.spec,
            initial,
            gangs,
            &report,
            planner.gang_aware(),
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

/// The per-event optimum of `gang` on `state`: its cost and its victims' cost.
fn optimum_on(problem: &Problem<'_>, state: &ClusterState, gang: &Gang) -> (f64, f64) {
    let at = GangPoint {
        problem,
        state,
        gang,
    };
    let (d, cost) = super::exact::decide(&at);
    let victims: f64 = d
        .victims
        .iter()
        .filter_map(|id| state.pod(*id))
        .map(|p| problem.cost.victim_cost(p.priority))
        .sum();
    (cost, victims)
}

fn run_sequential(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    gangs: &[Gang],
    measured: bool,
) -> Result<GangRun, PlanningError> {
    let mut state = initial.clone();
    let mut run = GangRun {
        status: planner.status(),
        applied: Vec::new(),
        decisions: Vec::new(),
        optima: Vec::new(),
        runtime_ms: 0.0,
        bound: None,
        incumbent: true,
        state: ClusterState::empty(problem.cluster),
    };
    let mut unproven = false;
    for (i, gang) in gangs.iter().enumerate() {
        problem.cancel.report(&Progress {
            planner: planner.name(),
            done: i as u64,
            total: gangs.len() as u64,
            best: None,
            bound: None,
        });
        let t0 = Instant::now();
        let at = GangPoint {
            problem,
            state: &state,
            gang,
        };
        let d = planner.decide_gang(&at)?;
        run.runtime_ms += t0.elapsed().as_secs_f64() * 1000.0;
        unproven |= d.unproven;
        let reference = planner.role() == PlannerRole::PerEventReference;
        let optimum = (measured && !reference).then(|| optimum_on(problem, &state, gang));
        let a = apply_gang(problem, &mut state, gang, &d)?;
        run.optima
            .push(optimum.unwrap_or((a.applied.event.cost, a.victim_cost)));
        run.applied.push(a);
        run.decisions.push(d);
    }
    if unproven && run.status == PlanStatus::Optimal {
        run.status = PlanStatus::TimeLimit;
    }
    run.state = state;
    Ok(run)
}

fn run_joint(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    gangs: &[Gang],
    warm_start: Option<&[GangDecision]>,
    measured: bool,
) -> Result<GangRun, PlanningError> {
    let t0 = Instant::now();
    let batch = planner.decide_gang_batch(problem, initial, gangs, warm_start)?;
    let runtime_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let incumbent = batch.decisions.len() == gangs.len();
    let order = if incumbent {
        gang_enactment_order(gangs, true)
    } else {
        Vec::new()
    };
    let mut state = initial.clone();
    let mut slots: Vec<Option<(AppliedGang, (f64, f64))>> = vec![None; gangs.len()];
    for &i in &order {
        let optimum = measured.then(|| optimum_on(problem, &state, &gangs[i]));
        let a = apply_gang(problem, &mut state, &gangs[i], &batch.decisions[i])?;
        let optimum = optimum.unwrap_or((a.applied.event.cost, a.victim_cost));
        slots[i] = Some((a, optimum));
    }
    let (applied, optima) = slots.into_iter().flatten().unzip();
    Ok(GangRun {
        status: if incumbent {
            batch.status
        } else {
            PlanStatus::NoSolution
        },
        applied,
        decisions: batch.decisions,
        optima,
        runtime_ms,
        bound: batch.bound,
        incumbent,
        state,
    })
}

/// The `k` gangs whose cost exceeds the per-event optimum on the same state the most, largest
/// first (`plan --worst K`).
fn worst_decisions(run: &GangRun, k: usize) -> Vec<WorstDecision> {
    let mut out: Vec<WorstDecision> = run
        .applied
        .iter()
        .zip(&run.optima)
        .enumerate()
        .map(|(i, (a, (optimum, _)))| WorstDecision {
            event: i + 1,
            preemptor: a.applied.event.preemptor.clone(),
            server: a.applied.event.node.clone(),
            optimum_server: None,
            excess: a.applied.event.cost - optimum,
            deciding_term: None,
        })
        .filter(|w| w.excess > 1e-9)
        .collect();
    out.sort_by(|a, b| b.excess.total_cmp(&a.excess).then(a.event.cmp(&b.event)));
    out.truncate(k);
    out
}

fn measure(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    run: &GangRun,
    measured: bool,
) -> PreemptionPlannerReport {
    let cluster = problem.cluster;
    let fraction = |s: ServerId, g: usize| {
        cluster
            .type_of(s)
            .device_fraction
            .get(g)
            .copied()
            .unwrap_or(1.0)
    };
    let applied: Vec<_> = run.applied.iter().map(|a| a.applied.clone()).collect();
    let mut m = metrics::compute(&fraction, &applied, problem.spec.now_s);
    let objective = run.objective();
    m.objective = run.incumbent.then_some(objective);
    m.runtime_ms = run.runtime_ms;
    let decision_gap = (measured && run.incumbent && !run.applied.is_empty()).then(|| {
        if planner.role() == PlannerRole::PerEventReference {
            return 0.0;
        }
        let optimum: f64 = run.optima.iter().map(|o| o.0).sum();
        (objective - optimum) / optimum.abs().max(1.0)
    });
    m.decision_gap = decision_gap;
    m.gangs = Some(gang_metrics(
        cluster,
        &run.applied,
        measured.then_some(&run.optima[..]),
        &run.state,
    ));
    PreemptionPlannerReport {
        name: planner.name().to_string(),
        role: planner.role(),
        status: run.status,
        objective: m.objective,
        gap: None,
        gap_is_bound: false,
        bound: reported_bound(run.status, run.bound, m.objective),
        decision_gap,
        worst: None,
        runtime_ms: run.runtime_ms,
        truncated: false,
        metrics: m,
        events: run
            .applied
            .iter()
            .map(|a| a.applied.event.clone())
            .collect(),
    }
}
