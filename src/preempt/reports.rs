//! What every plan run of a preemption workload shares, single pods or gangs: the order its
//! planners run in, the bound each plan reports, and the gaps against the batch reference.

use super::planner::PreemptionPlanner;
use crate::plan::preemption::PreemptionPlannerReport;
use crate::plan::{PlanStatus, PlannerRole};

/// The order planners run in: the sequential ones, the per-event reference first among them
/// (its decisions are the optima of the states the others share with it), then the joint
/// ones, which start from the best sequential plan ([`warm_start`]).
pub type RunOrder<'p> = (
    Vec<&'p dyn PreemptionPlanner>,
    Vec<&'p dyn PreemptionPlanner>,
);

/// The joint and the sequential planners of `chosen`, the sequential in the order they run.
pub fn run_order(chosen: &[Box<dyn PreemptionPlanner>]) -> RunOrder<'_> {
    let (joint, mut sequential): RunOrder<'_> =
        chosen.iter().map(|p| p.as_ref()).partition(|p| p.joint());
    sequential.sort_by_key(|p| p.role() != PlannerRole::PerEventReference);
    (joint, sequential)
}

/// Relative difference below which a proven optimum's solver value and its replayed objective
/// are the same number: the solver's value differs in the last digits (float sums in another
/// order, binaries a hair off 0 or 1).
const SAME_OPTIMUM: f64 = 1e-9;

/// Whether a solver's optimum `bound` and the replayed `objective` are the same optimum.
fn same_optimum(bound: f64, objective: f64) -> bool {
    (objective - bound).abs() <= SAME_OPTIMUM * objective.abs().max(1.0)
}

/// The lower bound a plan reports: its objective when proven optimal; only a solver's proven
/// bound otherwise (an incumbent is not a bound); none for heuristics. A proven optimum whose
/// solver value matches its replayed objective reports the objective itself, so that the
/// reference of every gap is the optimum and no gap reads as an upper bound. The solver's
/// value is kept only when the replay is really dearer (a joint plan the replay in list order
/// cannot reproduce): it is then the proven bound, and the objective is not.
pub fn reported_bound(
    status: PlanStatus,
    bound: Option<f64>,
    objective: Option<f64>,
) -> Option<f64> {
    match status {
        PlanStatus::Optimal => match (bound, objective) {
            (Some(b), Some(o)) if same_optimum(b, o) => Some(o),
            (b, o) => b.or(o),
        },
        PlanStatus::TimeLimit | PlanStatus::GapLimit | PlanStatus::NoSolution => bound,
        PlanStatus::Heuristic | PlanStatus::Windowed | PlanStatus::Skipped => None,
    }
}

/// `gap` of every planner against the batch reference (`ilp-batch`): its objective when
/// optimal, else its proven bound (`gap_is_bound`).
pub fn apply_gaps(reports: &mut [PreemptionPlannerReport]) {
    let reference = reports
        .iter()
        .find(|r| r.role == PlannerRole::BatchReference)
        .and_then(|r| match r.status {
            PlanStatus::Optimal => r
                .bound
                .map(|b| (b, r.objective.is_some_and(|o| !same_optimum(b, o)))),
            // A proven bound below its plan (stopped early, within a MIP gap, or an optimum
            // of the model that over-evicts): every gap is at most this.
            PlanStatus::TimeLimit | PlanStatus::GapLimit => r.bound.map(|b| (b, true)),
            _ => None,
        });
    for r in reports.iter_mut() {
        if r.metrics.preemptions == 0 {
            // No preemptor, nothing to compare: null, not a gap of 0 over nothing.
            continue;
        }
        if let (Some((reference, is_bound)), Some(obj)) = (reference, r.objective) {
            r.gap = Some((obj - reference) / reference.abs().max(1.0));
            r.gap_is_bound = is_bound;
            r.metrics.gap = r.gap;
        }
    }
}
