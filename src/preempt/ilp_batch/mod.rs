//! `ilp-batch`: the exact optimum of the whole `[[preempt]]` list decided at once — which
//! preemptors land where and which pods are evicted (each at most once) — minimising the summed
//! canonical cost. Its optimum bounds every sequential plan from below (DESIGN §5.4).
//!
//! Model. Identical preemptors (one workload class) are aggregated: an integer variable counts
//! the instances of a class placed in a domain of a server, a binary variable evicts a pod.
//! Capacities are laminar (NUMA ⊂ socket ⊂ server), so counting demand per domain is exact: ids
//! are then assigned bottom-up (NUMA-level placements first), which succeeds whenever the counts
//! fit.
//!
//! Solution. Servers interact only through the class counts, so when the count space is small
//! the problem is solved exactly by decomposition (`decomposed`): a MILP per server and count
//! vector, then a dynamic programme over servers; the MILPs are solved lazily, only where the
//! programme's best combination needs them, with lower bounds (`bounds`) standing in for the
//! rest. Otherwise one monolithic MILP is solved (`monolithic`), warm-started from the best
//! sequential plan (`warm_start`). Both are exact; one deadline applies to both.
//!
//! Replay (`assemble`). Victims are attributed to the preemptor whose ids they free (else the first
//! eligible preemptor on their server), so the plan replays event by event like any other.

pub mod assemble;
pub mod bounds;
pub mod decomposed;
pub mod lagrangian;
pub mod model;
pub mod monolithic;
pub mod needed;
pub mod placement_floor;
pub mod state_classes;
pub mod warm_start;

use self::assemble::assemble;
use self::decomposed::{decomposition_size, solve_decomposed};
use self::lagrangian::lagrangian;
use self::model::Class;
use self::model::{BatchSolution, classes};
use self::monolithic::solve_monolithic;
use self::needed::{Enacted, enact_needed};
use self::placement_floor::{placement_floor, server_floor};
use self::state_classes::{StateClass, state_classes};
use self::warm_start::warm_solution;
use super::planner::{AppliedDecision, BatchDecision, PreemptionPlanner};
use super::problem::{Decision, DecisionPoint, Problem};
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::plan::{PlanStatus, PlannerRole};
use crate::solver::Deadline;
use crate::topology::state::ClusterState;
use rayon::prelude::*;

use self::lagrangian::reaches;

/// A solution proven optimal: its objective is its bound.
fn proven(solution: BatchSolution) -> BatchSolution {
    BatchSolution {
        status: PlanStatus::Optimal,
        bound: Some(solution.objective),
        ..solution
    }
}

/// A solution with the placement floor taken into account: optimal when it reaches the floor,
/// else its bound is the larger of the solver's and the floor.
fn with_floor(solution: BatchSolution, floor: f64) -> BatchSolution {
    if solution.status == PlanStatus::Optimal {
        return solution;
    }
    if reaches(solution.objective, floor) {
        return proven(solution);
    }
    BatchSolution {
        bound: Some(solution.bound.map_or(floor, |b| b.max(floor))),
        ..solution
    }
}

/// Share of the budget left when a large batch starts that its Lagrangian decomposition may
/// use; the monolithic MILP, warm-started from the best plan, gets the rest.
const LAGRANGIAN_SHARE: f64 = 0.5;

/// What the batch knows of its list before any MILP: its servers grouped by identical state,
/// each state's per-instance floors, and the placement floor they sum to.
pub struct ListStructure {
    /// Servers in identical states (`state_classes`).
    pub states: Vec<StateClass>,
    /// Per state, per class: the floor of one instance by GPUs and by cores.
    pub floors: Vec<Vec<[f64; 2]>>,
    /// The placement floor of the whole list (a proven lower bound).
    pub floor: f64,
}

impl ListStructure {
    /// Groups the servers and prices their floors (one pass per state, not per server).
    pub fn new(
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        classes: &[Class],
    ) -> Self {
        let Some(top) = preemptors.iter().map(|p| p.priority).max() else {
            return ListStructure {
                states: Vec::new(),
                floors: Vec::new(),
                floor: 0.0,
            };
        };
        let states = state_classes(problem, initial, preemptors, classes, top);
        let floors: Vec<Vec<[f64; 2]>> = states
            .par_iter()
            .map(|s| {
                let server = s.representative().server;
                server_floor(problem, (initial, preemptors, classes), server, top)
            })
            .collect();
        let floor = placement_floor(problem, classes, &floors);
        ListStructure {
            states,
            floors,
            floor,
        }
    }
}

/// A batch too large to decompose exactly: the Lagrangian decomposition first (a bound and a
/// plan, on part of the budget), then the monolithic MILP warm-started from the best plan known,
/// unless the bound already proves it.
fn solve_large(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    list: &ListStructure,
    warm: Option<&BatchSolution>,
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let upper = warm.map(|w| w.objective);
    let stage = deadline.first_part(LAGRANGIAN_SHARE);
    let relaxed = lagrangian(
        problem,
        (initial, preemptors, classes),
        (&list.states, &list.floors),
        upper,
        &stage,
    )?;
    let bound = relaxed.bound.map_or(list.floor, |b| b.max(list.floor));
    // The decomposition's plan joins servers priced apart: under hard budgets it may take more
    // of a budget than it allows, and is then no incumbent.
    let within = |s: &BatchSolution| initial.budgets_allow(s.evicted.iter().copied());
    let incumbent = match (relaxed.incumbent.filter(within), warm.cloned()) {
        (Some(a), Some(b)) => Some(if a.objective < b.objective { a } else { b }),
        (a, b) => a.or(b),
    };
    if let Some(best) = &incumbent
        && reaches(best.objective, bound)
    {
        return Ok(Some(proven(best.clone())));
    }
    let solved = solve_monolithic(
        problem,
        initial,
        preemptors,
        classes,
        incumbent.as_ref(),
        deadline,
    )?;
    // The MILP stopped early keeps the better of its plan and the incumbent, and the better of
    // its bound and the decomposition's.
    let solved = match (solved, incumbent) {
        (Some(s), Some(i)) if s.status != PlanStatus::Optimal && i.objective < s.objective => {
            Some(BatchSolution {
                bound: s.bound,
                ..i
            })
        }
        (None, i) => i,
        (s, _) => s,
    };
    Ok(solved.map(|s| match s.status {
        PlanStatus::Optimal => s,
        _ => BatchSolution {
            bound: Some(s.bound.map_or(bound, |b| b.max(bound))),
            ..s
        },
    }))
}

/// The batch's decision from its solution, as the cluster enacts it (`needed`). When that
/// changes nothing, the solution is the plan. Otherwise the solution evicts pods no preemptor
/// needs: its objective is only a bound, and the plan is the cheaper of it as enacted and the
/// best sequential plan (`sequential`, enacted as it is), `optimal` only if that reaches the
/// bound.
fn as_enacted(
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

/// The proven lower bounds of a list that need no MILP of the whole batch: the placement
/// floor, and the best Lagrangian bound found by `deadline` (`None` if no iteration completed).
pub fn list_bounds(
    problem: &Problem<'_>,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    deadline: &Deadline,
) -> Result<(f64, Option<f64>), PlanningError> {
    let classes = classes(preemptors);
    let list = ListStructure::new(problem, initial, preemptors, &classes);
    let relaxed = lagrangian(
        problem,
        (initial, preemptors, &classes),
        (&list.states, &list.floors),
        None,
        deadline,
    )?;
    Ok((list.floor, relaxed.bound))
}

/// The `ilp-batch` planner: one exact optimum of the whole preemptor list (the batch
/// reference every gap is measured against).
pub struct IlpBatch;

impl PreemptionPlanner for IlpBatch {
    fn name(&self) -> &'static str {
        "ilp-batch"
    }

    fn role(&self) -> PlannerRole {
        PlannerRole::BatchReference
    }

    fn joint(&self) -> bool {
        true
    }

    fn describe_search(&self, _decision: &Decision) -> String {
        "the whole list decided at once (batch optimum)".into()
    }

    fn decide(&self, at: &DecisionPoint<'_>) -> Result<Decision, PlanningError> {
        let one = std::slice::from_ref(at.preemptor);
        let batch = self.decide_batch(at.problem, at.state, one, None)?;
        Ok(batch.decisions.into_iter().next().unwrap_or_default())
    }

    fn decide_batch(
        &self,
        problem: &Problem<'_>,
        initial: &ClusterState,
        preemptors: &[Preemptor],
        warm_start: Option<&[AppliedDecision]>,
    ) -> Result<BatchDecision, PlanningError> {
        let classes = classes(preemptors);
        let deadline = super::ilp::deadline(problem);
        let list = ListStructure::new(problem, initial, preemptors, &classes);
        let floor = list.floor;
        let warm = warm_start.map(|a| warm_solution(problem, initial, (&classes, preemptors), a));
        // The best sequential plan already at the floor is optimal; a budget spent before a
        // model could be built leaves it the incumbent.
        let early = match &warm {
            Some(w) if reaches(w.objective, floor) => Some(proven(w.clone())),
            Some(w) if deadline.expired() => Some(w.clone()),
            _ => None,
        };
        let solution = match early {
            Some(s) => Some(s),
            None => match decomposition_size(problem, initial, preemptors, &classes) {
                Some(_) => solve_decomposed(problem, initial, preemptors, &classes, &deadline)?,
                None => solve_large(
                    problem,
                    (initial, preemptors, &classes),
                    &list,
                    warm.as_ref(),
                    &deadline,
                )?,
            },
        };
        // A solve stopped by the budget may hold a worse plan than the warm start (a
        // decomposition whose subproblems ran out of time): the better one is the incumbent.
        let solution = match (solution, &warm) {
            (Some(s), Some(w)) if s.status != PlanStatus::Optimal && w.objective < s.objective => {
                Some(BatchSolution {
                    bound: s.bound,
                    ..w.clone()
                })
            }
            (None, Some(w)) => Some(w.clone()),
            (s, _) => s,
        };
        let Some(solution) = solution.map(|s| with_floor(s, floor)) else {
            return Ok(BatchDecision {
                decisions: Vec::new(),
                status: PlanStatus::TimeLimit,
                bound: None,
                objective: None,
            });
        };
        let list = (initial, preemptors, classes.as_slice());
        let decision = as_enacted(problem, list, &solution, warm.clone(), &deadline);
        let decision = within_device_rules(problem, list, decision, warm.clone(), &deadline);
        Ok(within_hard_budgets(
            problem, list, decision, warm, &deadline,
        ))
    }
}

/// The batch's decision kept within hard PodDisruptionBudgets: a plan whose servers, priced
/// apart, together take more of a budget than it allows gives way to the best sequential plan
/// (which respects them); its bound still holds, as the model it came from is a relaxation.
fn within_hard_budgets(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    decision: BatchDecision,
    sequential: Option<BatchSolution>,
    deadline: &Deadline,
) -> BatchDecision {
    let victims = decision
        .decisions
        .iter()
        .flat_map(|d| d.victims.iter().copied());
    if !initial.budgets().hard() || initial.budgets_allow(victims) {
        return decision;
    }
    sequential_instead(
        problem,
        (initial, preemptors, classes),
        &decision,
        sequential,
        deadline,
    )
}

/// The best sequential plan in place of a batch decision that breaks a rule the model
/// relaxes, measured against the model's bound (still a bound: the model is a relaxation).
fn sequential_instead(
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

/// The batch's decision kept to device kinds and claim constraints. The model counts devices
/// per kind but ignores `matchAttribute` (a relaxation: every real plan lies inside it, so its
/// bound holds); a plan whose placements assembly could not keep in one group as each claim
/// demands gives way to the best sequential plan.
fn within_device_rules(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    decision: BatchDecision,
    sequential: Option<BatchSolution>,
    deadline: &Deadline,
) -> BatchDecision {
    let kept = decision.decisions.iter().zip(preemptors).all(|(d, p)| {
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
                Some((gpus, _)) => t.device_rule_holds(p.request, gpus),
                None => counted_exactly,
            }
    });
    if kept {
        return decision;
    }
    sequential_instead(
        problem,
        (initial, preemptors, classes),
        &decision,
        sequential,
        deadline,
    )
}

/// A plan that is not the model's optimum, against the model's bound: `optimal` when it
/// reaches the bound (which is then its objective), else `time_limit` or `gap_limit`.
fn measured_against(
    decisions: Vec<Decision>,
    objective: f64,
    bound: Option<f64>,
    deadline: &Deadline,
) -> BatchDecision {
    let status = if bound.is_some_and(|b| reaches(objective, b)) {
        PlanStatus::Optimal
    } else if deadline.expired() {
        PlanStatus::TimeLimit
    } else {
        PlanStatus::GapLimit
    };
    BatchDecision {
        decisions,
        status,
        bound: if status == PlanStatus::Optimal {
            Some(objective)
        } else {
            bound
        },
        objective: Some(objective),
    }
}
