//! `coplan explain --event N` of a plan of gangs: the N-th gang's decision by every asked
//! planner, on the state that planner's earlier decisions left (a joint planner's, in its
//! enactment order), beside the per-event optimum on each distinct state. Every column comes
//! from the decisions as the planners returned them, applied with the plan's own
//! [`apply_gang`].

use super::apply::{AppliedGang, apply_gang};
use super::decision::{GangDecision, GangPoint};
use super::request::{Gang, gangs};
use crate::plan::PlannerRole;
use crate::plan::cancel::Cancel;
use crate::plan::error::PlanningError;
use crate::plan::explain::{ColumnKind, DecisionColumn, EventExplanation, SearchRecord};
use crate::plan::gang::gang_enactment_order;
use crate::preempt::event_facts::{event_index, filtered_out, victim_facts};
use crate::preempt::planner::PreemptionPlanner;
use crate::preempt::problem::Problem;
use crate::preempt::registry;
use crate::preempt::reports::run_order;
use crate::preempt::scenario;
use crate::preempt::terms::{difference, terms_of};
use crate::spec::PreemptionSpec;
use crate::spec::preemption::TopologyQos;
use crate::topology::Cluster;
use crate::topology::state::ClusterState;

/// One planner's decision of a gang and the state it was taken on.
struct Faced {
    planner: String,
    role: PlannerRole,
    state: ClusterState,
    decision: GangDecision,
    /// The decision's cost as applied.
    cost: f64,
}

/// Explains one gang (`Some(N)`, 1-based) or every gang of the asked planners.
pub fn explain_gangs(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    names: &[String],
    (seed, event): (Option<u64>, Option<usize>),
    cancel: Cancel,
) -> Result<Vec<EventExplanation>, PlanningError> {
    let planners = registry::resolve(names)?;
    let problem = Problem {
        cancel,
        ..Problem::new(cluster, spec)
    };
    let mut initial =
        scenario::initial_state(cluster, spec, seed).map_err(PlanningError::Invalid)?;
    let list = gangs(cluster, spec, &mut initial);
    let indices: Vec<usize> = match event {
        Some(n) => vec![event_index(n, list.len())?],
        None => (0..list.len()).collect(),
    };
    let (joint, sequential) = run_order(&planners);
    let mut runs: Vec<(&str, Option<Vec<Faced>>)> = Vec::new();
    for planner in &sequential {
        let run = sequential_run(&problem, *planner, &initial, &list)
            .map_err(|e| e.in_planner(planner.name()))?;
        runs.push((planner.name(), Some(run)));
    }
    let warm: Option<Vec<GangDecision>> = runs
        .iter()
        .zip(&sequential)
        .filter(|(_, p)| p.gang_aware())
        .filter_map(|((_, r), _)| r.as_ref())
        .min_by(|a, b| cost_of(a).total_cmp(&cost_of(b)))
        .map(|r| r.iter().map(|f| f.decision.clone()).collect());
    for planner in joint {
        let run = joint_run(&problem, planner, &initial, &list, warm.as_deref())
            .map_err(|e| e.in_planner(planner.name()))?;
        runs.push((planner.name(), run));
    }
    runs.sort_by_key(|(name, _)| names.iter().position(|n| n == name));
    let seed = spec.fill.as_ref().map(|f| seed.unwrap_or(f.seed));
    indices
        .into_iter()
        .map(|i| {
            let faced: Vec<&Faced> = runs
                .iter()
                .filter_map(|(_, r)| r.as_ref().and_then(|d| d.get(i)))
                .collect();
            let notes = runs
                .iter()
                .filter(|(_, r)| r.is_none())
                .map(|(name, _)| {
                    format!("{name}: the solver stopped before it had a plan; no decision to show")
                })
                .collect();
            explain_one(&problem, &list[i], i, &faced, (seed, notes))
        })
        .collect()
}

fn cost_of(run: &[Faced]) -> f64 {
    run.iter().map(|f| f.cost).sum()
}

fn sequential_run(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    list: &[Gang],
) -> Result<Vec<Faced>, PlanningError> {
    let mut state = initial.clone();
    let mut out = Vec::with_capacity(list.len());
    for gang in list {
        let decision = planner.decide_gang(&GangPoint {
            problem,
            state: &state,
            gang,
        })?;
        let before = state.clone();
        let cost = apply_gang(problem, &mut state, gang, &decision)?
            .applied
            .event
            .cost;
        out.push(Faced {
            planner: planner.name().to_string(),
            role: planner.role(),
            state: before,
            decision,
            cost,
        });
    }
    Ok(out)
}

fn joint_run(
    problem: &Problem<'_>,
    planner: &dyn PreemptionPlanner,
    initial: &ClusterState,
    list: &[Gang],
    warm: Option<&[GangDecision]>,
) -> Result<Option<Vec<Faced>>, PlanningError> {
    let batch = planner.decide_gang_batch(problem, initial, list, warm)?;
    if batch.decisions.len() != list.len() {
        return Ok(None);
    }
    let mut state = initial.clone();
    let mut slots: Vec<Option<Faced>> = (0..list.len()).map(|_| None).collect();
    for i in gang_enactment_order(list, true) {
        let before = state.clone();
        let cost = apply_gang(problem, &mut state, &list[i], &batch.decisions[i])?
            .applied
            .event
            .cost;
        slots[i] = Some(Faced {
            planner: planner.name().to_string(),
            role: planner.role(),
            state: before,
            decision: batch.decisions[i].clone(),
            cost,
        });
    }
    Ok(Some(slots.into_iter().flatten().collect()))
}

fn explain_one(
    problem: &Problem<'_>,
    gang: &Gang,
    index: usize,
    faced: &[&Faced],
    (seed, notes): (Option<u64>, Vec<String>),
) -> Result<EventExplanation, PlanningError> {
    let mut columns = Vec::new();
    for f in faced {
        let applied =
            apply_on(problem, &f.state, gang, &f.decision).map_err(|e| e.in_planner(&f.planner))?;
        let kind = if f.role == PlannerRole::PerEventReference {
            ColumnKind::Optimum
        } else {
            ColumnKind::Planner
        };
        let proven = (kind == ColumnKind::Optimum).then_some(!f.decision.unproven);
        columns.push(column(problem, gang, f, &applied, kind, proven));
    }
    let mut optimum_of: Vec<Option<usize>> = faced
        .iter()
        .enumerate()
        .map(|(i, f)| (f.role == PlannerRole::PerEventReference).then_some(i))
        .collect();
    for (i, f) in faced.iter().enumerate() {
        if optimum_of[i].is_some() {
            continue;
        }
        if let Some(c) = (0..faced.len())
            .filter(|&j| j != i && faced[j].state == f.state)
            .find_map(|j| optimum_of[j])
        {
            columns[c].state_of.push(f.planner.clone());
            optimum_of[i] = Some(c);
            continue;
        }
        let (decision, _) = super::exact::decide(&GangPoint {
            problem,
            state: &f.state,
            gang,
        });
        let optimum = Faced {
            planner: "ilp".into(),
            role: PlannerRole::PerEventReference,
            state: f.state.clone(),
            decision,
            cost: 0.0,
        };
        let applied = apply_on(problem, &f.state, gang, &optimum.decision)
            .map_err(|e| e.in_planner("ilp"))?;
        let proven = Some(!optimum.decision.unproven);
        let mut col = column(
            problem,
            gang,
            &optimum,
            &applied,
            ColumnKind::Optimum,
            proven,
        );
        col.state_of = vec![f.planner.clone()];
        columns.push(col);
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
    let cluster = problem.cluster;
    let spec = problem.spec;
    let class = &spec.workload[gang.workload];
    let pod = gang.any_pod();
    Ok(EventExplanation {
        schema_version: 1,
        kind: "preemption-explain",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seed,
        event: index + 1,
        preemptor: gang.name.clone(),
        class: class.name.clone(),
        priority: gang.priority,
        gpus: gang.request.gpus,
        cores: gang.request.cores,
        topology_qos: gang.qos,
        required_level: cluster
            .types
            .iter()
            .filter_map(|t| t.required_level(gang.request))
            .min(),
        preemption_policy: class.preemption_policy,
        filtered_out: filtered_out(cluster, spec, &pod),
        columns,
        differences,
        notes,
    })
}

fn apply_on(
    problem: &Problem<'_>,
    state: &ClusterState,
    gang: &Gang,
    d: &GangDecision,
) -> Result<AppliedGang, PlanningError> {
    let mut after = state.clone();
    apply_gang(problem, &mut after, gang, d)
}

fn column(
    problem: &Problem<'_>,
    gang: &Gang,
    f: &Faced,
    applied: &AppliedGang,
    kind: ColumnKind,
    proven: Option<bool>,
) -> DecisionColumn {
    let a = &applied.applied;
    let e = &a.event;
    DecisionColumn {
        name: f.planner.clone(),
        column: kind,
        state_of: vec![f.planner.clone()],
        server: e.node.clone(),
        victims: victim_facts(problem.spec, &a.victims),
        level: e.level,
        server_required_level: e.required_level,
        placed: e.placed,
        outcome: e.outcome,
        hit: e.hit,
        qos_met: e.placed && (gang.qos != TopologyQos::Guaranteed || e.hit),
        terms: terms_of(problem, a),
        flextopo_score: None,
        search: SearchRecord {
            subsets_evaluated: f.decision.subsets_evaluated,
            stopped: f.decision.search.clone(),
            truncated: false,
        },
        proven,
        gang: e.gang.clone(),
    }
}
