//! The batch's solution as the cluster enacts it, kept within the rules the model relaxes
//! (hard PodDisruptionBudgets, device claims): a plan that breaks one gives way to the best
//! sequential plan, measured against the model's bound.

use super::assemble::assemble;
use super::classes::Class;
use super::incumbent::measured_against;
use super::model::BatchSolution;
use super::needed::{Enacted, enact_needed};
use crate::plan::PlanStatus;
use crate::plan::preemption::Preemptor;
use crate::preempt::planner::BatchDecision;
use crate::preempt::problem::Problem;
use crate::solver::Deadline;
use crate::topology::state::ClusterState;

/// The batch's decision from its solution, as the cluster enacts it (`needed`). When that
/// changes nothing, the solution is the plan. Otherwise the solution evicts pods no preemptor
/// needs: its objective is only a bound, and the plan is the cheaper of it as enacted and the
/// best sequential plan (`sequential`, enacted as it is), `optimal` only if that reaches the
/// bound.
pub fn as_enacted(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    solution: &BatchSolution,
    sequential: Option<BatchSolution>,
    deadline: &Deadline,
) -> BatchDecision {
    let decisions = assemble(problem, initial, preemptors, classes, solution);
    let enacted = enact_needed(problem, initial, preemptors, decisions.clone());
    if !enacted.changed {
        return BatchDecision {
            decisions,
            status: solution.status,
            bound: solution.bound,
            objective: Some(solution.objective),
        };
    }
    let best = match sequential {
        Some(w) if w.objective < enacted.objective => Enacted {
            decisions: assemble(problem, initial, preemptors, classes, &w),
            objective: w.objective,
            changed: false,
        },
        _ => enacted,
    };
    let bound = match solution.status {
        PlanStatus::Optimal => Some(solution.objective),
        _ => solution.bound,
    };
    measured_against(best.decisions, best.objective, bound, deadline)
}

/// Whether the batch's decision keeps within hard PodDisruptionBudgets: a plan whose servers,
/// priced apart, together take more of a budget than it allows must give way to the best
/// sequential plan (which respects them); its bound still holds, as the model it came from is
/// a relaxation.
pub fn keeps_hard_budgets(initial: &ClusterState, decision: &BatchDecision) -> bool {
    let victims = decision
        .decisions
        .iter()
        .flat_map(|d| d.victims.iter().copied());
    !initial.budgets().hard() || initial.budgets_allow(victims)
}

/// Whether the batch's decision keeps to device kinds and claim constraints. The model counts
/// devices per kind but ignores `matchAttribute` (a relaxation: every real plan lies inside
/// it, so its bound holds); a plan whose placements assembly could not keep in one group as
/// each claim demands (the devices, and for `numa-with-cores` the cores too) must give way to
/// the best sequential plan.
pub fn keeps_device_rules(
    problem: &Problem<'_>,
    preemptors: &[Preemptor],
    decision: &BatchDecision,
) -> bool {
    decision.decisions.iter().zip(preemptors).all(|(d, p)| {
        let Some(server) = d.server else {
            return true;
        };
        let t = problem.cluster.type_of(server);
        // Without ids the node allocator places it on replay, which only a request the
        // model counts exactly (any device of the server, no claim) is sure to keep.
        let counted_exactly =
            p.request.alignment.is_none() && t.usable(p.request) == t.whole().gpus;
        d.refuse
            || match d.placement {
                // The device rule looks at devices alone; a claim that also binds the cores
                // to its devices' NUMA node is broken by the cores of a socket- or
                // server-level placement, which the model allows it.
                Some((gpus, cores)) => {
                    t.device_rule_holds(p.request, gpus)
                        && t.cores_fit_claim(p.request, gpus, cores)
                }
                None => counted_exactly,
            }
    })
}

/// The best sequential plan in place of a batch decision that breaks a rule the model
/// relaxes, measured against the model's bound (still a bound: the model is a relaxation).
pub fn sequential_instead(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    decision: &BatchDecision,
    sequential: Option<BatchSolution>,
    deadline: &Deadline,
) -> BatchDecision {
    let bound = decision.bound;
    let Some(w) = sequential else {
        return BatchDecision {
            decisions: Vec::new(),
            status: PlanStatus::NoSolution,
            bound,
            objective: None,
        };
    };
    let decisions = assemble(problem, initial, preemptors, classes, &w);
    measured_against(decisions, w.objective, bound, deadline)
}
