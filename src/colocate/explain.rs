//! `coplan explain --task ID` of a co-location workload: one task as every asked planner
//! decided and ran it, beside where `ilp`'s schedule placed it; and `--worst K`, each
//! planner's tasks whose response differs most from `ilp`'s schedule.
//!
//! Every planner runs once, on the same engine and set-up as `plan`, its dispatcher with its
//! offer records on (`Dispatcher::record_offers`): what an offer shows is what the planner
//! compared while deciding, not a second copy of its rules. How the task ran comes from the
//! run's own outcome, its objective term from the canonical objective's own function.

use super::capacity::resolve_load;
use super::metrics::objective_term;
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::registry;
use super::setup::{Setup, setup};
use super::trace::TraceRequest;
use crate::plan::cancel::Cancel;
use crate::plan::colocation::{ColocationRun, TaskKind, TaskOutcome};
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{
    DeferralVerdict, ExplainedOffer, LemixNodeTerms, LemixOffer, OfferAnswer, OfferRecord,
    OfferTerms, PlannerColumn, ResponseDifference, TaskExplanation, TaskFacts, TaskRole, TaskRun,
};
use crate::plan::{PlanStatus, PlannerRole};
use crate::spec::ColocationSpec;
use crate::spec::colocation::{ColocationObjective, Deprioritize};
use crate::topology::Cluster;
use crate::verify::colocation::verify_run;

/// What `explain` and `worst_tasks` are asked about besides the task.
#[derive(Debug, Clone, Copy)]
pub struct ExplainInput<'a> {
    /// The cluster the workload runs on.
    pub cluster: &'a Cluster,
    /// The co-location workload spec.
    pub spec: &'a ColocationSpec,
    /// Imported inference requests that replace the spec's generated arrivals, when a trace is
    /// given.
    pub trace: Option<&'a [TraceRequest]>,
    /// Planners, in column order; `None` = the spec's `[planners].run`.
    pub planners: Option<&'a [String]>,
    /// Overrides `[planners].seed`.
    pub seed: Option<u64>,
    /// The run's stop request and time budget (`--time-limit`), shared by every solve.
    pub cancel: Cancel,
}

/// One planner's verified run with the offers it recorded, or why it has none.
struct RecordedRun {
    name: String,
    status: PlanStatus,
    outcome: Result<(ColocationRun, Vec<OfferRecord>), String>,
}

/// Everything the runs of one explanation share.
struct Runs {
    setup: Setup,
    tau: f64,
    candidates: Vec<RecordedRun>,
    ilp: RecordedRun,
}

/// Explains task `task` (its id, from 0) as every asked planner decided and ran it.
pub fn explain_task(input: &ExplainInput<'_>, task: u32) -> Result<TaskExplanation, PlanningError> {
    let mut all = explain_tasks(input, Some(task))?;
    all.pop()
        .ok_or_else(|| PlanningError::Internal("no task explained".into()))
}

/// Explains one task (`Some(id)`) or every task (`None`, in id order), each planner run once.
/// `ilp`'s column is filled when `ilp` is among the planners asked.
pub fn explain_tasks(
    input: &ExplainInput<'_>,
    task: Option<u32>,
) -> Result<Vec<TaskExplanation>, PlanningError> {
    let names = planner_names(input);
    let with_ilp = names.iter().any(|n| is_reference(n));
    let spec = &*resolve_load(input.cluster, input.spec, input.trace)?;
    let s = Setup {
        cancel: input.cancel,
        ..setup(input.cluster, spec, input.trace, input.seed)
    };
    let ids: Vec<u32> = match task {
        Some(id) => vec![task_index(id, s.tasks.len())?],
        None => (0..s.tasks.len() as u32).collect(),
    };
    let runs = run_all(s, &names, with_ilp)?;
    Ok(ids
        .into_iter()
        .map(|id| explanation(input, &runs, id))
        .collect())
}

fn planner_names(input: &ExplainInput<'_>) -> Vec<String> {
    input
        .planners
        .map_or_else(|| input.spec.planners.run.clone(), <[String]>::to_vec)
}

/// Whether a planner name is a reference (`ilp`), which has a column of its own.
fn is_reference(name: &str) -> bool {
    registry::planner(name).is_some_and(|p| p.role().runs_last())
}

/// A task id checked against the task set, or an input error naming the valid range.
fn task_index(id: u32, tasks: usize) -> Result<u32, PlanningError> {
    if (id as usize) < tasks {
        return Ok(id);
    }
    Err(PlanningError::OutOfRange(match tasks {
        0 => format!("--task {id}: the workload has no tasks"),
        n => format!(
            "--task {id} is out of range: the workload has {n} tasks (ids 0–{})",
            n - 1
        ),
    }))
}

/// Runs the asked candidates (recording their offers), then `ilp` when `with_ilp`.
fn run_all(s: Setup, names: &[String], with_ilp: bool) -> Result<Runs, PlanningError> {
    let planners = registry::resolve(names)?;
    let mut candidates = Vec::new();
    for planner in planners
        .iter()
        .filter(|p| p.role() == PlannerRole::Candidate)
    {
        candidates.push(recorded_run(planner.as_ref(), &s, 0.0)?);
    }
    // `ilp` takes no horizon (see `planning::plan`); the candidates' latest end is passed as
    // `plan` passes it.
    let horizon = candidates
        .iter()
        .filter_map(|c| c.outcome.as_ref().ok())
        .flat_map(|(run, _)| run.ops.iter().map(|o| o.end_s))
        .fold(0.0, f64::max);
    let ilp = match registry::planner("ilp").filter(|_| with_ilp) {
        Some(ilp) => recorded_run(ilp.as_ref(), &s, horizon)?,
        None => RecordedRun {
            name: "ilp".into(),
            status: PlanStatus::Skipped,
            outcome: Err("`ilp` is not among the planners asked".into()),
        },
    };
    let tau = s.slo_s();
    Ok(Runs {
        setup: s,
        tau,
        candidates,
        ilp,
    })
}

/// One planner's run as `plan` runs it — a candidate's dispatcher with its offer records
/// on — verified as `plan` verifies it.
fn recorded_run(
    planner: &dyn ColocationPlanner,
    s: &Setup,
    horizon_s: f64,
) -> Result<RecordedRun, PlanningError> {
    let name = planner.name();
    let (outcome, records) = match planner.dispatcher(s) {
        Some(mut dispatcher) => {
            dispatcher.record_offers();
            let outcome = run_dispatcher(s, dispatcher.as_mut());
            (outcome, dispatcher.take_offer_records())
        }
        None => (
            planner.run(s, horizon_s).map_err(|e| e.in_planner(name))?,
            Vec::new(),
        ),
    };
    let (status, outcome) = match outcome {
        PlannerRun::Skipped { reason } => (PlanStatus::Skipped, Err(reason)),
        PlannerRun::NoSolution { reason } => (PlanStatus::NoSolution, Err(reason)),
        PlannerRun::Ran { run, status, .. } => {
            verify_run(&s.config.bounds(), &s.tasks, &run).map_err(|reason| {
                PlanningError::Verification {
                    planner: name.into(),
                    at: "run".into(),
                    reason,
                }
            })?;
            (status, Ok((run, records)))
        }
    };
    Ok(RecordedRun {
        name: name.into(),
        status,
        outcome,
    })
}

fn explanation(input: &ExplainInput<'_>, runs: &Runs, id: u32) -> TaskExplanation {
    let s = &runs.setup;
    let weights = &s.spec.objective;
    TaskExplanation {
        schema_version: 1,
        kind: "colocation-explain",
        cluster: input.cluster.name.clone(),
        workload: input.spec.name.clone(),
        seed: s.seed,
        nodes: s.config.nodes,
        stages: s.config.stages,
        slo_s: runs.tau,
        task: task_facts(s, id),
        planners: runs
            .candidates
            .iter()
            .map(|c| column(c, id, runs.tau, weights))
            .collect(),
        ilp: column(&runs.ilp, id, runs.tau, weights),
    }
}

fn task_facts(s: &Setup, id: u32) -> TaskFacts {
    let t = &s.tasks[id as usize];
    let mut facts = TaskFacts {
        id,
        kind: kind_name(t.is_training()),
        arrival_s: t.arrival_s,
        prompt_tokens: None,
        output_tokens: None,
        training_tokens: None,
        batch: None,
    };
    match t.kind {
        TaskKind::Inference {
            prompt_tokens,
            output_tokens,
        } => {
            facts.prompt_tokens = Some(prompt_tokens);
            facts.output_tokens = Some(output_tokens);
        }
        TaskKind::Training { tokens, batch } => {
            facts.training_tokens = Some(tokens);
            facts.batch = Some(batch);
        }
    }
    facts
}

fn kind_name(training: bool) -> &'static str {
    if training { "training" } else { "inference" }
}

fn column(r: &RecordedRun, id: u32, tau: f64, weights: &ColocationObjective) -> PlannerColumn {
    match &r.outcome {
        Ok((run, records)) => PlannerColumn {
            name: r.name.clone(),
            status: r.status,
            offers: records
                .iter()
                .filter(|o| o.task == id)
                .map(explained_offer)
                .collect(),
            run: run
                .outcomes
                .get(id as usize)
                .map(|o| task_run(o, tau, weights)),
            reason: None,
        },
        Err(reason) => PlannerColumn {
            name: r.name.clone(),
            status: r.status,
            offers: Vec::new(),
            run: None,
            reason: Some(reason.clone()),
        },
    }
}

/// How a task ran, read off its outcome.
pub fn task_run(o: &TaskOutcome, tau: f64, weights: &ColocationObjective) -> TaskRun {
    let ttft_s = (!o.training && !o.dropped)
        .then_some(o.prefill_end_s)
        .flatten()
        .map(|e| e - o.arrival_s);
    let gaps = token_gaps(o);
    TaskRun {
        node: o.node,
        released_s: o.released_s,
        start_s: o.start_s,
        response_s: response_s(o),
        ttft_s,
        tbt_mean_s: (!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64),
        tbt_max_s: gaps.iter().copied().reduce(f64::max),
        tokens_decoded: o.token_times.len(),
        completion_s: o.end_s,
        // As the plan's events count it.
        slo_met: o.slo_met(tau),
        dropped: o.dropped,
        offloaded: o.offloaded,
        deferrals: o.deferrals,
        objective_term: objective_term(o, tau, weights),
    }
}

/// R: a request's prefill end − arrival, a training task's completion − submission; none for
/// a dropped or unfinished task.
fn response_s(o: &TaskOutcome) -> Option<f64> {
    if o.dropped {
        return None;
    }
    let end = if o.training { o.end_s } else { o.prefill_end_s };
    end.map(|e| e - o.arrival_s)
}

/// A request's time between tokens, token by token: each token's gap from the previous one
/// (the first from the prefill's end), as the metrics count them.
fn token_gaps(o: &TaskOutcome) -> Vec<f64> {
    match (o.training || o.dropped, o.prefill_end_s) {
        (false, Some(start)) => std::iter::once(start)
            .chain(o.token_times.iter().copied())
            .zip(o.token_times.iter().copied())
            .map(|(a, b)| b - a)
            .collect(),
        _ => Vec::new(),
    }
}

fn explained_offer(r: &OfferRecord) -> ExplainedOffer {
    ExplainedOffer {
        time_s: r.time_s,
        answer: r.answer,
        terms: r.terms.clone(),
        why: why(r),
    }
}

/// The answer in words, from the recorded terms alone.
fn why(r: &OfferRecord) -> String {
    match &r.terms {
        OfferTerms::Lemix(l) => lemix_why(l, r.answer),
        OfferTerms::LeastUtilized { nodes } => {
            let chosen = match r.answer {
                OfferAnswer::Node(n) => nodes.iter().find(|u| u.node == n),
                OfferAnswer::Defer => None,
            };
            match chosen {
                Some(u) => format!(
                    "node {}: the lowest memory utilisation, {:.4} (ties: the lowest index)",
                    u.node, u.memory_utilization
                ),
                None => "no node to choose".into(),
            }
        }
        OfferTerms::RoundRobin { position, nodes } => format!(
            "position {position} of the round robin over {nodes} nodes: node {}",
            answer_text(r.answer)
        ),
        OfferTerms::RoleSplit {
            role,
            training_nodes,
            serving_nodes,
            position,
        } => {
            let set = match role {
                TaskRole::Training => training_nodes,
                TaskRole::Serving => serving_nodes,
            };
            format!(
                "a {} task: position {position} of the round robin over the {} nodes {set:?}: node {}",
                role.as_str(),
                role.as_str(),
                answer_text(r.answer)
            )
        }
    }
}

fn answer_text(a: OfferAnswer) -> String {
    match a {
        OfferAnswer::Node(n) => n.to_string(),
        OfferAnswer::Defer => "deferred".into(),
    }
}

fn lemix_why(l: &LemixOffer, answer: OfferAnswer) -> String {
    let best = l.nodes.iter().find(|n| n.node == l.best);
    // The runner-up: the best score among the other nodes.
    let second = l.nodes.iter().filter(|n| n.node != l.best).fold(
        None,
        |acc: Option<&LemixNodeTerms>, n| match acc {
            Some(a) if a.score >= n.score => Some(a),
            _ => Some(n),
        },
    );
    let mut text = match (best, second) {
        (Some(b), Some(s)) => format!(
            "node {} scores highest, {:.4} (next: node {} at {:.4})",
            b.node, b.score, s.node, s.score
        ),
        (Some(b), None) => format!("node {} is the only node, score {:.4}", b.node, b.score),
        _ => "no node to score".into(),
    };
    text.push_str("; ");
    text.push_str(&deferral_text(&l.deferral));
    if answer == OfferAnswer::Defer {
        text.push_str(": deferred to the next inference arrival");
    }
    text
}

fn deferral_text(d: &DeferralVerdict) -> String {
    let rule = match d.rule {
        Deprioritize::Off => "off",
        Deprioritize::Threshold => "threshold",
        Deprioritize::Lookahead => "lookahead",
    };
    if !d.consulted {
        return "deferral not consulted (a request, or no inference arrival ahead)".into();
    }
    match d.compared_response_s {
        None => format!("deferral {rule}"),
        Some(r) => {
            let what = match d.rule {
                Deprioritize::Lookahead => "the next request's best predicted response",
                _ => "the task's predicted response",
            };
            let relation = if d.defer { ">" } else { "≤" };
            format!(
                "deferral {rule}: {what} {r:.4} s {relation} SLO {:.4} s",
                d.slo_s
            )
        }
    }
}

/// The `k` tasks of `run` whose response differs most from `ilp_run`'s.
pub(crate) fn furthest_from(
    s: &Setup,
    run: &ColocationRun,
    ilp_run: &ColocationRun,
    k: usize,
) -> Vec<ResponseDifference> {
    let mut diffs: Vec<ResponseDifference> = run
        .outcomes
        .iter()
        .zip(&ilp_run.outcomes)
        .filter_map(|(o, i)| {
            let (r, ri) = (response_s(o)?, response_s(i)?);
            Some(ResponseDifference {
                task: o.task.0,
                kind: kind_name(s.tasks[o.task.index()].is_training()),
                node: o.node,
                ilp_node: i.node,
                response_s: r,
                ilp_response_s: ri,
                difference_s: (r - ri).abs(),
            })
        })
        .collect();
    diffs.sort_by(|a, b| {
        b.difference_s
            .total_cmp(&a.difference_s)
            .then(a.task.cmp(&b.task))
    });
    diffs.truncate(k);
    diffs
}
