//! A Lagrangian decomposition of the batch on its class rows: a proven lower bound and a plan,
//! for lists whose class-count space is too large for the exact decomposition.
//!
//! Servers interact only through "each class places (or refuses) at most its size". Pricing
//! each placed or refused instance of class `c` at `λ_c` (0 ≤ λ_c ≤ `unplaced`) instead of
//! counting it splits the batch into one subproblem per server:
//!
//! ```text
//! L(λ) = Σ_c λ_c · n_c + Σ_servers min_x ( cost(x) − Σ_c λ_c · x_c )
//! ```
//!
//! For every such λ, `L(λ)` is at most the batch optimum (an instance left unplaced costs
//! `unplaced − λ_c ≥ 0` more than the relaxed row charges, and every plan is a choice of one
//! solution per server). A server's subproblem is its part of the batch MILP, priced
//! (`Counts::Priced`), solved once per class of identical states (`state_classes`); one whose
//! placement floor already pays for every price is 0 without a solve (its cheapest instance
//! costs at least what the price returns). Only proven values enter `L`: a subproblem stopped by
//! the deadline contributes its solver's bound, and an iteration where one has none gives no
//! bound. The prices maximise a cutting-plane model of `L` within a trust region (`Prices`).
//!
//! Each iteration also assembles a plan from the subproblems' solutions seen so far, each
//! enacted with only the victims its preemptors need (`needed`): the cheapest per placed
//! instance first, one per server, while the class sizes allow, the last instances re-solved
//! exactly on their server. It is a feasible batch solution (each server's part is feasible on
//! its own and the rows hold) and a warm start for the monolithic MILP.

use std::collections::BTreeMap;

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};
use rayon::prelude::*;

use super::assemble::{assemble, solution_of};
use super::classes::{Class, Counts};
use super::model::{BatchSolution, priced_objective, solve_on_server};
use super::needed::enact_needed;
use super::state_classes::{Member, StateClass};
use crate::plan::PlanStatus;
use crate::plan::error::PlanningError;
use crate::plan::preemption::Preemptor;
use crate::preempt::problem::Problem;
use crate::solver::{self, Deadline, SolverSettings};
use crate::spec::kind::SolverBackend;
use crate::topology::state::ClusterState;

/// Relative rounding of a solved subproblem's optimum that a bound concedes.
const LP_ROUNDING: f64 = 1e-9;

/// Relative difference under which an objective reaches a proven bound: above the rounding
/// the Lagrangian bound concedes, so an optimum at the bound is still proven.
const FLOOR_EPS: f64 = 3e-9;

/// Whether `objective` is at (or, by rounding, below) the proven bound `floor` (every
/// bound of the batch: floors, the Lagrangian, the solver's).
pub(super) fn reaches(objective: f64, floor: f64) -> bool {
    objective <= floor + FLOOR_EPS * floor.abs().max(1.0)
}

/// What the decomposition proved and found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The best `L(λ)` over the iterations that priced every state class.
    pub bound: Option<f64>,
    /// The cheapest plan assembled from the subproblems' solutions.
    pub incumbent: Option<BatchSolution>,
    /// Price vectors tried.
    pub iterations: usize,
    /// Subproblem MILPs solved (the rest were 0 by their floors).
    pub subproblems_solved: usize,
}

/// Cut-down columns compared for each of the last instances of a plan.
const COMPLETION_CANDIDATES: usize = 16;
/// Most price vectors tried.
const MAX_ITERATIONS: usize = 80;

/// One state class's subproblem at one price vector.
struct Priced {
    /// A proven lower bound of its value (≤ 0: placing nothing is always a solution).
    lower: Option<f64>,
    /// Instances per class its solution places or refuses (the subgradient's part).
    usage: Option<Vec<u32>>,
    /// Its solution as the cluster would enact it (only the victims needed), when that still
    /// places something: a column of the plans assembled.
    column: Option<BatchSolution>,
    /// Whether its MILP was solved (not settled by its floors).
    solved: bool,
}

/// Runs the decomposition until it proves `upper` (or its own plan) optimal, its prices
/// converge, or `deadline` passes. `floors[k]`: per class, the placement floor of one instance
/// on state class `k`'s servers, by GPUs and by cores (`placement_floor::server_floor`).
pub fn lagrangian(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    (states, floors): (&[StateClass], &[Vec<[f64; 2]>]),
    upper: Option<f64>,
    deadline: &Deadline,
) -> Result<Outcome, PlanningError> {
    let list = (initial, preemptors, classes);
    let sizes: Vec<f64> = classes.iter().map(|c| c.members.len() as f64).collect();
    let mut prices = Prices::new(floors, classes.len(), problem.cost.weights.unplaced);
    let mut out = Outcome::default();
    let mut pool: Vec<Vec<BatchSolution>> = vec![Vec::new(); states.len()];
    while out.iterations < MAX_ITERATIONS && !deadline.expired() {
        out.iterations += 1;
        let priced: Vec<Priced> = states
            .par_iter()
            .zip(floors)
            .map(|(state, floor)| price_state(problem, list, state, floor, &prices.price, deadline))
            .collect::<Result<_, _>>()?;
        out.subproblems_solved += priced.iter().filter(|p| p.solved).count();
        for (columns, p) in pool.iter_mut().zip(&priced) {
            if let Some(sol) = &p.column
                && !columns.iter().any(|c| same_plan(c, sol))
            {
                columns.push(sol.clone());
            }
        }
        let plan = assemble_plan(problem, list, states, &pool, deadline);
        if out
            .incumbent
            .as_ref()
            .is_none_or(|b| plan.objective < b.objective)
        {
            out.incumbent = Some(plan);
        }
        // The subproblems' optima carry the solver's rounding (2e-6 was seen on 4,000): a
        // proven bound gives that much away, and `reaches` allows for it.
        let value = dual_value(&priced, states, &prices.price, &sizes)
            .map(|v| v - LP_ROUNDING * v.abs().max(1.0));
        if let Some(v) = value
            && out.bound.is_none_or(|b| v > b)
        {
            out.bound = Some(v);
        }
        let target = out
            .incumbent
            .as_ref()
            .map(|b| b.objective)
            .into_iter()
            .chain(upper)
            .fold(f64::INFINITY, f64::min);
        let proven = out.bound.is_some_and(|b| reaches(target, b));
        let Some(value) = value else { break };
        if proven || !prices.step(value, &row_slack(&priced, states, &sizes), deadline) {
            break;
        }
    }
    Ok(out)
}

/// `L(λ)` from the states' proven values, `None` when one has none.
fn dual_value(
    priced: &[Priced],
    states: &[StateClass],
    price: &[f64],
    sizes: &[f64],
) -> Option<f64> {
    let servers = priced
        .iter()
        .zip(states)
        .map(|(p, s)| p.lower.map(|l| l * s.members.len() as f64))
        .sum::<Option<f64>>()?;
    Some(servers + price.iter().zip(sizes).map(|(l, n)| l * n).sum::<f64>())
}

/// The subgradient: per class, what its row lacks (+) or exceeds (−) at these prices.
fn row_slack(priced: &[Priced], states: &[StateClass], sizes: &[f64]) -> Vec<f64> {
    let mut slack = sizes.to_vec();
    for (p, s) in priced.iter().zip(states) {
        for (c, n) in p.usage.iter().flatten().enumerate() {
            slack[c] -= f64::from(*n) * s.members.len() as f64;
        }
    }
    slack
}

/// The prices, chosen by a cutting-plane model of `L` kept inside a box around the best prices
/// so far (a trust region): every evaluated price vector `λ_k` gives the plane
/// `L(λ) ≤ L(λ_k) + g_k · (λ − λ_k)` (`g_k` its rows' slack, a supergradient, as `L` is
/// concave), and the next prices maximise the lowest plane in the box. A step that gains at
/// least a tenth of what the model promised moves the box there and doubles it; otherwise
/// the box shrinks. The model's maximum in the box, close to the best value, is convergence.
struct Prices {
    /// The prices to evaluate next.
    price: Vec<f64>,
    /// The best prices so far, their value, and what the model promised at `price`.
    center: Vec<f64>,
    best: Option<f64>,
    promised: Option<f64>,
    radius: f64,
    /// (λ_k, L(λ_k), g_k) of every evaluated price vector.
    cuts: Vec<(Vec<f64>, f64, Vec<f64>)>,
    unplaced: f64,
}

/// Share of the promised gain a step must reach to move the box.
const SERIOUS_STEP: f64 = 0.1;
/// Relative gap between the model's promise and the best value taken as convergence.
const CONVERGED: f64 = 1e-6;

impl Prices {
    /// Each price at the cheapest instance of its class anywhere: below it no server places
    /// the class, so the first bound is the floor's order of magnitude.
    fn new(floors: &[Vec<[f64; 2]>], classes: usize, unplaced: f64) -> Self {
        let price: Vec<f64> = (0..classes)
            .map(|c| {
                floors
                    .iter()
                    .map(|f| f[c][0].max(f[c][1]))
                    .fold(unplaced, f64::min)
            })
            .collect();
        let radius = price.iter().copied().fold(1.0, f64::max);
        Prices {
            center: price.clone(),
            price,
            best: None,
            promised: None,
            radius,
            cuts: Vec::new(),
            unplaced,
        }
    }

    /// Takes the value and slack at the current prices and picks the next ones; `false` once
    /// the model converged (or had no next point).
    fn step(&mut self, value: f64, slack: &[f64], deadline: &Deadline) -> bool {
        self.cuts.push((self.price.clone(), value, slack.to_vec()));
        match (self.best, self.promised) {
            (Some(b), Some(p)) if value < b + SERIOUS_STEP * (p - b) => self.radius *= 0.5,
            (Some(_), _) => {
                self.center = self.price.clone();
                self.best = Some(value);
                self.radius *= 2.0;
            }
            (None, _) => {
                self.center = self.price.clone();
                self.best = Some(value);
            }
        }
        self.radius = self.radius.min(self.unplaced);
        let best = self.best.unwrap_or(value);
        let Some((next, promised)) = self.maximise_model(deadline) else {
            return false;
        };
        if promised - best <= CONVERGED * best.abs().max(1.0) || self.radius < CONVERGED {
            return false;
        }
        self.price = next;
        self.promised = Some(promised);
        true
    }

    /// The maximum of the lowest plane within the box: the next prices and the model's value.
    fn maximise_model(&self, deadline: &Deadline) -> Option<(Vec<f64>, f64)> {
        let mut vars = ProblemVariables::new();
        let lambda: Vec<Variable> = self
            .center
            .iter()
            .map(|&c| {
                vars.add(
                    variable()
                        .min((c - self.radius).max(0.0))
                        .max((c + self.radius).min(self.unplaced)),
                )
            })
            .collect();
        let top = self
            .cuts
            .iter()
            .map(|(_, v, _)| v.abs())
            .fold(1.0, f64::max)
            + self.unplaced * self.cuts.first().map_or(0.0, |(_, _, g)| g.len() as f64) * 1e6;
        let t = vars.add(variable().min(-top).max(top));
        let constraints: Vec<good_lp::Constraint> = self
            .cuts
            .iter()
            .map(|(at, value, slope)| {
                let plane: Expression = lambda
                    .iter()
                    .zip(at)
                    .zip(slope)
                    .map(|((l, a), g)| *g * (*l - *a))
                    .sum::<Expression>()
                    + *value;
                constraint!(t <= plane)
            })
            .collect();
        let mut keep = lambda.clone();
        keep.push(t);
        let solved =
            solver::minimise(vars, -t, constraints, &keep, &small_models(deadline), None).ok()?;
        let (prices, model) = solved.values.split_at(lambda.len());
        Some((prices.to_vec(), *model.first()?))
    }
}

/// Whether two subproblem solutions are the same plan.
fn same_plan(a: &BatchSolution, b: &BatchSolution) -> bool {
    a.placed == b.placed && a.refused == b.refused && a.evicted == b.evicted
}

/// The deadline of the subproblem MILPs: one server each, thousands per iteration, solved by
/// the embedded solver whatever the run's backend (HiGHS costs milliseconds per model to set
/// up: on 20,000 servers its decomposition found no plan in the budget; docs/performance.md).
fn small_models(deadline: &Deadline) -> Deadline {
    deadline.solving_with(SolverSettings {
        backend: SolverBackend::Microlp,
        ..*deadline.settings()
    })
}

/// A group's subproblem, solved on its representative server by the embedded solver.
fn solve_representative(
    problem: &Problem<'_>,
    list: (&ClusterState, &[Preemptor], &[Class]),
    state: &StateClass,
    counts: Counts<'_>,
    deadline: &Deadline,
) -> Result<Option<BatchSolution>, PlanningError> {
    let server = state.representative().server;
    solve_on_server(problem, list, server, counts, &small_models(deadline))
}

/// Instances placed or refused per class in a solution.
fn instances(solution: &BatchSolution, classes: usize) -> Vec<u32> {
    let mut n = vec![0u32; classes];
    for pl in &solution.placed {
        n[pl.class] += pl.count;
    }
    for (c, _) in &solution.refused {
        n[*c] += 1;
    }
    n
}

/// Prices one state class's subproblem on its representative server.
fn price_state(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    state: &StateClass,
    floor: &[[f64; 2]],
    price: &[f64],
    deadline: &Deadline,
) -> Result<Priced, PlanningError> {
    // Each instance costs at least its floor by GPUs and at least its floor by cores, so at
    // least any mix of the two: where some mix pays for every price, nothing placed is optimal.
    let paid = [0.0, 0.5, 1.0].iter().any(|&by_gpu| {
        floor
            .iter()
            .zip(price)
            .all(|(f, l)| *l <= by_gpu * f[0] + (1.0 - by_gpu) * f[1])
    });
    if paid {
        return Ok(Priced {
            lower: Some(0.0),
            usage: None,
            column: None,
            solved: false,
        });
    }
    if deadline.expired() {
        return Ok(Priced {
            lower: None,
            usage: None,
            column: None,
            solved: false,
        });
    }
    let list = (initial, preemptors, classes);
    let solved = solve_representative(problem, list, state, Counts::Priced(price), deadline)?;
    let lower = solved.as_ref().and_then(|s| match s.status {
        PlanStatus::Optimal => Some(s.objective.min(0.0)),
        _ => s.bound.map(|b| b.min(0.0)),
    });
    let solution = solved.filter(|s| !s.placed.is_empty() || !s.refused.is_empty());
    let column = solution
        .as_ref()
        .and_then(|s| needed_column(problem, (initial, preemptors, classes), s));
    Ok(Priced {
        lower,
        usage: solution.map(|s| instances(&s, classes.len())),
        column,
        solved: true,
    })
}

/// A subproblem's solution with only the victims its preemptors need (`needed`), if it still
/// places something.
fn needed_column(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    solution: &BatchSolution,
) -> Option<BatchSolution> {
    let decisions = assemble(problem, initial, preemptors, classes, solution);
    let enacted = enact_needed(problem, initial, preemptors, decisions);
    if !enacted.changed {
        return Some(solution.clone());
    }
    let column = solution_of(
        problem,
        classes,
        &enacted.decisions,
        (0.0, PlanStatus::TimeLimit),
    );
    (!column.placed.is_empty()).then_some(column)
}

/// One plan from the subproblems' solutions found so far (every state's columns): copied onto
/// the servers of their state, the cheapest per placed instance first, one column per server,
/// while every class has instances left.
fn assemble_plan(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    states: &[StateClass],
    pool: &[Vec<BatchSolution>],
    deadline: &Deadline,
) -> BatchSolution {
    let unplaced = problem.cost.weights.unplaced;
    let mut offers: Vec<(f64, usize, &BatchSolution)> = pool
        .iter()
        .enumerate()
        .flat_map(|(k, columns)| columns.iter().map(move |sol| (k, sol)))
        .filter_map(|(k, sol)| {
            let placed: u32 = sol.placed.iter().map(|pl| pl.count).sum();
            let alone = priced_objective(problem, initial, placed as usize, sol);
            (placed > 0 && alone < f64::from(placed) * unplaced)
                .then(|| (alone / f64::from(placed), k, sol))
        })
        .collect();
    offers.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut left: Vec<u32> = classes.iter().map(|c| c.members.len() as u32).collect();
    let mut next_member = vec![0usize; states.len()];
    let mut plan = BatchSolution {
        placed: Vec::new(),
        refused: Vec::new(),
        evicted: Vec::new(),
        objective: 0.0,
        status: PlanStatus::TimeLimit,
        bound: None,
    };
    for &(_, k, sol) in &offers {
        let state = &states[k];
        let need = instances(sol, classes.len());
        while let Some(member) = state.members.get(next_member[k]) {
            if need.iter().zip(&left).any(|(n, l)| n > l) {
                break;
            }
            for (l, n) in left.iter_mut().zip(&need) {
                *l -= n;
            }
            next_member[k] += 1;
            copy_onto(&mut plan, sol, state, member);
        }
    }
    // The last instances of a class rarely fill a whole column (four on a server, one left):
    // columns cut down to what is left are re-solved exactly on their server (and enacted with
    // only the victims needed); of the first few with a free server, the cheapest per placed
    // instance is taken, until every class is placed or none places anything.
    let mut cut_solutions: BTreeMap<(usize, Vec<u32>), Option<PricedColumn>> = BTreeMap::new();
    while left.iter().any(|&l| l > 0) && !deadline.expired() {
        let mut best: Option<(f64, usize, BatchSolution)> = None;
        let mut tried = 0;
        for &(_, k, sol) in &offers {
            if tried >= COMPLETION_CANDIDATES {
                break;
            }
            if next_member[k] >= states[k].members.len() {
                continue;
            }
            let cut: Vec<u32> = instances(sol, classes.len())
                .iter()
                .zip(&left)
                .map(|(n, l)| *n.min(l))
                .collect();
            if cut.iter().all(|&n| n == 0) {
                continue;
            }
            tried += 1;
            let solved = cut_solutions
                .entry((k, cut))
                .or_insert_with_key(|(k, cut)| {
                    solve_cut(
                        problem,
                        (initial, preemptors, classes),
                        &states[*k],
                        cut,
                        deadline,
                    )
                });
            if let Some((per, column)) = solved
                && best.as_ref().is_none_or(|(b, _, _)| *per < *b)
            {
                best = Some((*per, k, column.clone()));
            }
        }
        let Some((_, k, column)) = best else {
            break;
        };
        for (l, n) in left.iter_mut().zip(instances(&column, classes.len())) {
            *l = l.saturating_sub(n);
        }
        if let Some(member) = states[k].members.get(next_member[k]) {
            copy_onto(&mut plan, &column, &states[k], member);
        }
        next_member[k] += 1;
    }
    plan.objective = priced_objective(problem, initial, preemptors.len(), &plan);
    plan
}

/// A column and its cost per placed instance.
type PricedColumn = (f64, BatchSolution);

/// Exactly the instances `cut` on a state's representative server, enacted with only the
/// victims needed: its cost per placed instance and the solution, if it places any and saves
/// against leaving them unplaced.
fn solve_cut(
    problem: &Problem<'_>,
    (initial, preemptors, classes): (&ClusterState, &[Preemptor], &[Class]),
    state: &StateClass,
    cut: &[u32],
    deadline: &Deadline,
) -> Option<PricedColumn> {
    let list = (initial, preemptors, classes);
    let solved =
        solve_representative(problem, list, state, Counts::Exactly(cut), deadline).ok()??;
    let column = needed_column(problem, (initial, preemptors, classes), &solved)?;
    let placed: u32 = column.placed.iter().map(|pl| pl.count).sum();
    let cost = priced_objective(problem, initial, placed as usize, &column);
    (placed > 0 && cost < f64::from(placed) * problem.cost.weights.unplaced)
        .then(|| (cost / f64::from(placed), column))
}

/// Adds the representative's solution `sol`, copied onto `member` of the same state class.
fn copy_onto(plan: &mut BatchSolution, sol: &BatchSolution, state: &StateClass, member: &Member) {
    let copy = state.moved(sol, state.representative().server, member);
    plan.placed.extend(copy.placed);
    plan.refused.extend(copy.refused);
    plan.evicted.extend(copy.evicted);
}
