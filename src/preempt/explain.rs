//! `coplan explain --event N`: the N-th preemptor's decision by every asked planner, on the
//! state that planner's own earlier decisions left, beside the per-event optimum on that same
//! state. Everything shown comes from the decisions as the planners returned them (their
//! victims, their search counts, FlexTopo's Eq. 1 terms) and from applying them with the
//! plan's own [`apply`]: nothing is re-derived by a second copy of a planner's rules.

use super::apply::{Applied, apply};
use super::event_facts::{event_index, filtered_out, victim_facts};
use super::exact::per_event::{self, IlpPerEvent};
use super::planner::{AppliedDecision, PreemptionPlanner};
use super::planning::warm_start;
use super::problem::{Decision, DecisionPoint, Problem};
use super::registry;
use super::reports::run_order;
use super::scenario;
use super::terms::{difference, terms_of};
use crate::plan::PlannerRole;
use crate::plan::cancel::Cancel;
use crate::plan::error::PlanningError;
use crate::plan::explain::{
    ColumnKind, DecisionColumn, EventExplanation, ScoreRecord, SearchRecord,
};
use crate::plan::preemption::{Preemptor, enactment_order};
use crate::spec::PreemptionSpec;
use crate::spec::preemption::TopologyQos;
use crate::topology::Cluster;
use crate::topology::state::ClusterState;

/// What to explain.
#[derive(Debug, Clone, Default)]
pub struct ExplainOptions {
    /// Planners, in column order; `None` = the spec's `[planners].run`.
    pub planners: Option<Vec<String>>,
    /// Overrides `[fill].seed`.
    pub seed: Option<u64>,
    /// 1-based position of the preemptor in the `[[preempt]]` list.
    pub event: usize,
    /// The run's stop request and time budget (`--time-limit`), shared by every solve.
    pub cancel: Cancel,
}

/// One planner's N-th decision and the state it was taken on.
struct Faced {
    planner: String,
    role: PlannerRole,
    state: ClusterState,
    decision: Decision,
    unproven: bool,
    /// Where the planner's search stopped, in its own words.
    search_stop: String,
    /// The decision as applied, by ids, and its cost (a joint planner's warm start).
    ids: AppliedDecision,
    cost: f64,
}

/// Explains the `options.event`-th decision of every asked planner.
pub fn explain_event(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    options: &ExplainOptions,
) -> Result<EventExplanation, PlanningError> {
    let mut all = explain_events_within(
        cluster,
        spec,
        (options.planners.clone(), options.seed, Some(options.event)),
        options.cancel,
    )?;
    all.pop()
        .ok_or_else(|| PlanningError::Internal("no event explained".into()))
}

/// Explains one event (`Some(N)`, 1-based) or every event (`None`) of the asked planners
/// (`None`: the spec's `[planners].run`), each planner run once over the list.
pub fn explain_events(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    planners: Option<Vec<String>>,
    seed: Option<u64>,
    event: Option<usize>,
) -> Result<Vec<EventExplanation>, PlanningError> {
    explain_events_within(cluster, spec, (planners, seed, event), Cancel::never())
}

/// [`explain_events`] within a run's stop request and time budget.
fn explain_events_within(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    (planners, seed, event): (Option<Vec<String>>, Option<u64>, Option<usize>),
    cancel: Cancel,
) -> Result<Vec<EventExplanation>, PlanningError> {
    let names = planners.unwrap_or_else(|| spec.planners_to_run());
    if spec.has_gangs() {
        return super::gang::explain::explain_gangs(cluster, spec, &names, (seed, event), cancel);
    }
    let planners = registry::resolve(&names)?;
    let problem = Problem {
        cancel,
        ..Problem::new(cluster, spec)
    };
    let mut initial =
        scenario::initial_state(cluster, spec, seed).map_err(PlanningError::Invalid)?;
    let preemptors = scenario::preemptors(cluster, spec, &mut initial);
    let indices: Vec<usize> = match event {
        Some(n) => vec![event_index(n, preemptors.len())?],
        None => (0..preemptors.len()).collect(),
    };
    let last = indices.last().copied().unwrap_or(0);
    // Per planner, its decisions up to the last event explained (`None`: no plan), run as
    // `plan` runs them: a joint planner starts from the best sequential plan, so the
    // sequential ones then run the whole list.
    let (joint, sequential) = run_order(&planners);
    let sequential_last = if joint.is_empty() {
        last
    } else {
        preemptors.len().saturating_sub(1)
    };
    let run_through = |planner: &dyn PreemptionPlanner, through, warm| {
        faced_decisions(&problem, planner, &initial, &preemptors, through, warm)
            .map_err(|e| e.in_planner(planner.name()))
    };
    let mut runs: Vec<(&str, Option<Vec<Faced>>)> = Vec::with_capacity(planners.len());
    for planner in sequential {
        runs.push((planner.name(), run_through(planner, sequential_last, None)?));
    }
    let plans: Vec<(f64, Vec<AppliedDecision>)> = runs
        .iter()
        .filter_map(|(_, run)| run.as_ref())
        .map(|run| {
            let objective = run.iter().map(|f| f.cost).sum();
            (objective, run.iter().map(|f| f.ids.clone()).collect())
        })
        .collect();
    let best = warm_start(plans.iter().map(|(o, ids)| (*o, ids.as_slice())));
    for planner in joint {
        runs.push((planner.name(), run_through(planner, last, best.as_deref())?));
    }
    // Back to the order asked.
    runs.sort_by_key(|(name, _)| names.iter().position(|n| n == name));
    let context = Context {
        problem: &problem,
        spec,
        cluster,
        seed: spec.fill.as_ref().map(|f| seed.unwrap_or(f.seed)),
    };
    indices
        .into_iter()
        .map(|index| {
            let faced: Vec<&Faced> = runs
                .iter()
                .filter_map(|(_, r)| r.as_ref().and_then(|decisions| decisions.get(index)))
                .collect();
            let notes = runs
                .iter()
                .filter(|(_, r)| r.is_none())
                .map(|(name, _)| {
                    format!("{name}: the solver stopped before it had a plan; no decision to show")
                })
                .collect();
            explain_one(&context, &preemptors[index], index, &faced, notes)
        })
        .collect()
}

/// What every explained event shares.
struct Context<'a> {
    problem: &'a Problem<'a>,
    spec: &'a PreemptionSpec,
    cluster: &'a Cluster,
    seed: Option<u64>,
}

/// One event: a column per planner, then one optimum per distinct state they faced.
fn explain_one(
    cx: &Context<'_>,
    p: &Preemptor,
    index: usize,
    faced: &[&Faced],
    notes: Vec<String>,
) -> Result<EventExplanation, PlanningError> {
    let problem = cx.problem;
    let mut columns = Vec::new();
    for f in faced {
        let applied =
            apply_on(problem, &f.state, p, &f.decision).map_err(|e| e.in_planner(&f.planner))?;
        let kind = if f.role == PlannerRole::PerEventReference {
            ColumnKind::Optimum
        } else {
            ColumnKind::Planner
        };
        let proven = (kind == ColumnKind::Optimum).then_some(!f.unproven);
        columns.push(column(
            problem,
            p,
            f,
            &applied,
            kind,
            vec![f.planner.clone()],
            proven,
        ));
    }
    // The optimum column of each planner: `ilp`'s own where it faced the same state, else one
    // per distinct state, shared by the planners that faced it.
    let mut optimum_of: Vec<Option<usize>> = faced
        .iter()
        .enumerate()
        .map(|(i, f)| (f.role == PlannerRole::PerEventReference).then_some(i))
        .collect();
    for (i, f) in faced.iter().enumerate() {
        if optimum_of[i].is_some() {
            continue;
        }
        let same = (0..faced.len())
            .filter(|&j| j != i && faced[j].state == f.state)
            .find_map(|j| optimum_of[j]);
        if let Some(c) = same {
            columns[c].state_of.push(f.planner.clone());
            optimum_of[i] = Some(c);
            continue;
        }
        let opt =
            per_event::event_optimum(problem, &f.state, p).map_err(|e| e.in_planner("ilp"))?;
        let decision = Decision {
            unproven: !opt.proven,
            ..opt.decision
        };
        let applied = apply_on(problem, &f.state, p, &decision).map_err(|e| e.in_planner("ilp"))?;
        let optimum = Faced {
            planner: "ilp".into(),
            role: PlannerRole::PerEventReference,
            state: f.state.clone(),
            search_stop: IlpPerEvent.describe_search(&decision),
            unproven: decision.unproven,
            ids: applied.ids.clone(),
            cost: applied.event.cost,
            decision,
        };
        columns.push(column(
            problem,
            p,
            &optimum,
            &applied,
            ColumnKind::Optimum,
            vec![f.planner.clone()],
            Some(opt.proven),
        ));
        optimum_of[i] = Some(columns.len() - 1);
    }
    let differences = faced
        .iter()
        .enumerate()
        .filter(|(_, f)| f.role != PlannerRole::PerEventReference)
        .filter_map(|(i, f)| {
            optimum_of[i].map(|c| difference(&f.planner, &columns[i].terms, &columns[c].terms))
        })
        .collect();
    let class = &cx.spec.workload[p.workload];
    Ok(EventExplanation {
        schema_version: 1,
        kind: "preemption-explain",
        cluster: cx.cluster.name.clone(),
        workload: cx.spec.name.clone(),
        seed: cx.seed,
        event: index + 1,
        preemptor: p.name.clone(),
        class: class.name.clone(),
        priority: p.priority,
        gpus: p.request.gpus,
        cores: p.request.cores,
        topology_qos: p.qos,
        required_level: cx
            .cluster
            .types
            .iter()
            .filter_map(|t| t.required_level(p.request))
            .min(),
        preemption_policy: class.preemption_policy,
        filtered_out: filtered_out(cx.cluster, cx.spec, p),
        columns,
        differences,
        notes,
    })
}

/// The planner's decisions for preemptors 0 ..= `last`, each with the state its decisions
/// before it left (`None`: a joint planner's solver had no plan).
fn faced_decisions(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    preemptors: &[Preemptor],
    last: usize,
    warm_start: Option<&[AppliedDecision]>,
) -> Result<Option<Vec<Faced>>, PlanningError> {
    let faced = |state: ClusterState, decision: Decision, applied: &Applied| Faced {
        planner: planner.name().to_string(),
        role: planner.role(),
        unproven: decision.unproven,
        search_stop: planner.describe_search(&decision),
        ids: applied.ids.clone(),
        cost: applied.event.cost,
        state,
        decision,
    };
    if planner.joint() {
        let batch = planner.decide_batch(problem, initial, preemptors, warm_start)?;
        if batch.decisions.len() != preemptors.len() {
            return Ok(None);
        }
        // Enacted highest priority first: each event faced the state its predecessors in that
        // order left; reported in list order.
        let mut state = initial.clone();
        let mut by_position: Vec<Option<Faced>> = (0..preemptors.len()).map(|_| None).collect();
        for i in enactment_order(preemptors, true) {
            let decision = batch.decisions[i].clone();
            let before = state.clone();
            let applied = apply(problem, &mut state, &preemptors[i], &decision)?;
            by_position[i] = Some(faced(before, decision, &applied));
        }
        return Ok(Some(
            by_position.into_iter().flatten().take(last + 1).collect(),
        ));
    }
    let mut state = initial.clone();
    let mut out = Vec::with_capacity(last + 1);
    for p in preemptors.iter().take(last + 1) {
        let decision = planner.decide(&DecisionPoint {
            problem,
            state: &state,
            preemptor: p,
        })?;
        let before = state.clone();
        let applied = apply(problem, &mut state, p, &decision)?;
        out.push(faced(before, decision, &applied));
    }
    Ok(Some(out))
}

/// Applies `d` to a copy of `state`.
fn apply_on(
    problem: &Problem<'_>,
    state: &ClusterState,
    p: &Preemptor,
    d: &Decision,
) -> Result<Applied, PlanningError> {
    let mut after = state.clone();
    apply(problem, &mut after, p, d)
}

fn column(
    problem: &Problem<'_>,
    p: &Preemptor,
    f: &Faced,
    applied: &Applied,
    kind: ColumnKind,
    state_of: Vec<String>,
    proven: Option<bool>,
) -> DecisionColumn {
    let e = &applied.event;
    let terms = terms_of(problem, applied);
    let server_required_level = applied
        .ids
        .server
        .and_then(|s| problem.required_level(s, p));
    DecisionColumn {
        name: f.planner.clone(),
        column: kind,
        state_of,
        server: e.node.clone(),
        victims: victim_facts(problem.spec, &applied.victims),
        level: e.level,
        server_required_level,
        placed: e.placed,
        outcome: e.outcome,
        hit: e.hit,
        qos_met: e.placed && (p.qos != TopologyQos::Guaranteed || e.hit),
        terms,
        flextopo_score: f.decision.score.map(|s| ScoreRecord {
            alpha: s.alpha,
            priority_term: s.priority_term,
            topology_term: s.topology_term,
            scored_level: s.scored_level,
            score: s.score,
        }),
        search: SearchRecord {
            subsets_evaluated: f.decision.subsets_evaluated,
            stopped: f.search_stop.clone(),
            truncated: f.decision.truncated,
        },
        proven,
        gang: None,
    }
}
