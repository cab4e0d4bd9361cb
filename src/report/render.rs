//! One entry for every command's outcome: `render` turns it into the texts to write and
//! where each goes, by the format asked for. The shell matches no result × format.

use std::borrow::Cow;

use super::{chrome_trace, csv, dot, json, svg, table, terminal, toml};
use crate::session::Outcome;
use crate::session::args::{
    CapacityFormat, DiffFormat, EventsArg, ExplainFormat, ImportFormat, LongFormat, MergeFormat,
    PlanFormat, TimelineFormat, TopologyFormat,
};
use crate::session::emit::Output;
use crate::session::error::SessionError;
use crate::session::explain::Explanation;
use crate::session::import::ImportSummary;
use crate::session::plan::PlanResult;
use crate::session::simulate::SimulationResult;

/// The outputs of a command's outcome, in the order they are written.
pub fn render(outcome: &Outcome) -> Result<Vec<Output>, SessionError> {
    match outcome {
        Outcome::Validate(v) => Ok(validation(v)),
        Outcome::Schema(schema) => Ok(vec![Output::out(json::to_json(schema), None)]),
        Outcome::Topology(t) => {
            let (cluster, state) = (&t.cluster, t.state.as_ref());
            let text = match t.format {
                TopologyFormat::Json => json::topology(cluster, state),
                TopologyFormat::Dot => dot::topology(cluster, state),
                TopologyFormat::Table => on_terminal(table::topology::topology(cluster, state)),
                TopologyFormat::Svg => {
                    svg_text(svg::topology::topology(cluster, state, t.server.as_deref()))?
                }
            };
            Ok(vec![Output::out(text, None)])
        }
        Outcome::Plan(p) => plan(&p.result, p.format, p.events, p.out.as_deref()),
        Outcome::Explain(e) => {
            let text = match (&e.explanation, e.format) {
                (Explanation::Event(x), ExplainFormat::Table) => {
                    on_terminal(table::explain::preemption_event(x))
                }
                (Explanation::Event(x), ExplainFormat::Json) => json::to_json(x),
                (Explanation::Task(x), ExplainFormat::Table) => {
                    on_terminal(table::explain_colocation::colocation_task(x))
                }
                (Explanation::Task(x), ExplainFormat::Json) => json::to_json(x),
            };
            Ok(vec![Output::out(text, e.out.as_deref())])
        }
        Outcome::Simulate(s) => simulation(s),
        Outcome::Sweep(s) => {
            let text = match s.format {
                LongFormat::Csv => csv::sweep(&s.output),
                LongFormat::Jsonl => json::sweep_lines(&s.output),
            };
            let mut outputs = vec![Output::out(text, s.out.as_deref())];
            if let Some(plot) = &s.plot {
                let chart = svg::sweep::sweep(&s.output, Some(&s.subject));
                outputs.push(Output::out(svg_text(chart)?, Some(plot)));
            }
            Ok(outputs)
        }
        Outcome::Merge(m) => {
            let text = match m.format {
                MergeFormat::Table => on_terminal(table::sweep::sweep(&m.output)),
                MergeFormat::Csv => csv::sweep(&m.output),
                MergeFormat::Jsonl => json::sweep_lines(&m.output),
            };
            let mut outputs = vec![Output::out(text, m.out.as_deref())];
            if let Some(plot) = &m.plot {
                let chart = svg::sweep::sweep(&m.output, Some(&m.subject));
                outputs.push(Output::out(svg_text(chart)?, Some(plot)));
            }
            Ok(outputs)
        }
        Outcome::Capacity(c) => {
            let text = match c.format {
                CapacityFormat::Table => on_terminal(table::capacity::capacity(&c.report)),
                CapacityFormat::Json => json::to_json(&c.report),
            };
            let mut outputs = vec![Output::out(text, c.out.as_deref())];
            if let Some(plot) = &c.plot {
                let chart = svg::capacity::pool_search(&c.report).ok_or_else(|| {
                    SessionError::Internal("a pool-size report without its target or pool".into())
                })?;
                outputs.push(Output::out(
                    svg_text(svg::capacity::capacity(&chart))?,
                    Some(plot),
                ));
            }
            Ok(outputs)
        }
        Outcome::Timeline(t) => {
            let run = &t.timeline;
            let text = match t.format {
                TimelineFormat::ChromeTrace => {
                    chrome_trace::colocation_run(&run.run, run.nodes, run.stages)
                }
                TimelineFormat::Svg => svg_text(svg::timeline::colocation_run(
                    &run.run, run.nodes, run.stages, &t.title,
                ))?,
            };
            Ok(vec![Output::out(text, t.out.as_deref())])
        }
        Outcome::ImportSpecs(imported, outputs) => {
            let cluster = toml::cluster(&imported.comments, &imported.cluster);
            let workload = toml::preemption_workload(&imported.comments, &imported.workload);
            let (c, w) = (&outputs.out_cluster, &outputs.out_workload);
            Ok(vec![
                Output::spec(cluster, Some(c), c.display().to_string()),
                Output::spec(workload, Some(w), w.display().to_string()),
                summary(&imported.summary, outputs.format),
            ])
        }
        Outcome::ImportAzure(a) => {
            let name = a.out.as_ref().map_or_else(
                || "the generated workload".into(),
                |p| p.display().to_string(),
            );
            Ok(vec![
                Output::spec(
                    toml::colocation_workload(&a.comments, &a.spec),
                    a.out.as_deref(),
                    name,
                ),
                summary(&a.summary, a.format),
            ])
        }
        Outcome::ImportVidur(v) => Ok(vec![Output::out(
            csv::latency_samples(&v.comments, &v.samples),
            v.out.as_deref(),
        )]),
        Outcome::Diff(d) => {
            let text = match d.format {
                DiffFormat::Table => on_terminal(table::diff::diff(&d.report)),
                DiffFormat::Json => json::to_json(&d.report),
                DiffFormat::Csv => csv::diff(&d.report),
            };
            Ok(vec![Output::out(text, d.out.as_deref())])
        }
        Outcome::ProfileFit(f) => Ok(vec![Output::out(toml::model_fit(&f.fit), f.out.as_deref())]),
    }
}

/// A plan in its format, after its warnings.
fn plan(
    result: &PlanResult,
    format: PlanFormat,
    events: Option<EventsArg>,
    out: Option<&std::path::Path>,
) -> Result<Vec<Output>, SessionError> {
    let mut outputs = Vec::new();
    if let PlanResult::Preemption(r) = result
        && !r.warnings.is_empty()
    {
        let warnings: String = r
            .warnings
            .iter()
            .map(|w| format!("warning: {w}\n"))
            .collect();
        outputs.push(Output::stderr(warnings));
    }
    let text = match (result, format) {
        (PlanResult::Preemption(r), PlanFormat::Table) => {
            on_terminal(table::plan::preemption(r, event_lines(events)))
        }
        (PlanResult::Preemption(r), PlanFormat::Json) => json::to_json(r),
        (PlanResult::Preemption(r), PlanFormat::Csv) => csv::preemption_plan(r),
        (PlanResult::Preemption(r), PlanFormat::Evictions) => json::preemption_evictions(r),
        (PlanResult::Colocation(r), PlanFormat::Table) => on_terminal(table::plan::colocation(r)),
        (PlanResult::Colocation(r), PlanFormat::Json) => json::to_json(r),
        (PlanResult::Colocation(r), PlanFormat::Csv) => csv::colocation_plan(r),
        (PlanResult::Colocation(_), PlanFormat::Evictions) => {
            return Err(SessionError::input(
                "`--format evictions` lists the pods a preemption plan evicts; a co-location plan evicts none",
                Some("use `--format table`, `json` or `csv`".into()),
            ));
        }
    };
    outputs.push(Output::out(text, out));
    Ok(outputs)
}

/// A simulation in its format, after its notes where the format has no place for them, and
/// its chart.
fn simulation(s: &crate::session::simulate::SimulateOutcome) -> Result<Vec<Output>, SessionError> {
    let mut outputs = Vec::new();
    // The table prints its notes; JSON carries them, CSV has no place for them.
    if let (SimulationResult::Preemption(r), PlanFormat::Json | PlanFormat::Csv) =
        (&s.result, s.format)
        && !r.notes.is_empty()
    {
        let notes: String = r.notes.iter().map(|n| format!("note: {n}\n")).collect();
        outputs.push(Output::stderr(notes));
    }
    let text = match (&s.result, s.format) {
        (SimulationResult::Preemption(r), PlanFormat::Table) => {
            on_terminal(table::simulation::preemption(r))
        }
        (SimulationResult::Preemption(r), PlanFormat::Json) => json::to_json(r),
        (SimulationResult::Preemption(r), PlanFormat::Csv) => csv::preemption_simulation(r),
        (SimulationResult::Colocation(r), PlanFormat::Table) => {
            on_terminal(table::simulation::colocation(r))
        }
        (SimulationResult::Colocation(r), PlanFormat::Json) => json::to_json(r),
        (SimulationResult::Colocation(r), PlanFormat::Csv) => csv::colocation_simulation(r),
        (_, PlanFormat::Evictions) => {
            return Err(SessionError::input(
                "`--format evictions` lists one plan's evictions; a simulation has many",
                Some("use `coplan plan … --format evictions`".into()),
            ));
        }
    };
    outputs.push(Output::out(text, s.out.as_deref()));
    if let Some(plot) = &s.plot {
        let picture = match &s.result {
            SimulationResult::Preemption(r) => svg::simulation::preemption(r),
            SimulationResult::Colocation(r) => svg::simulation::colocation(r),
        };
        outputs.push(Output::out(svg_text(picture)?, Some(plot)));
    }
    Ok(outputs)
}

/// `validate`: a line per valid file on stdout; the unreadable ones' diagnostics on stderr
/// (the invalid ones are the shell's to render, as the command's failure).
fn validation(v: &crate::session::validate::Validation) -> Vec<Output> {
    let mut outputs = Vec::new();
    if v.clusters > 1 {
        outputs.push(Output::stderr(format!(
            "note: {} clusters given; cross-file checks (running pods' nodes, stages) need exactly one\n",
            v.clusters
        )));
    }
    let lines: String = v
        .valid
        .iter()
        .zip(&v.estimates)
        .map(|(l, estimate)| {
            let mut line = format!(
                "{}: {}\n",
                l.source.name,
                on_terminal(table::summary::summary(&l.spec))
            );
            if let Some(e) = estimate {
                line.push_str(&on_terminal(table::summary::estimate(e)));
            }
            line
        })
        .collect();
    outputs.push(Output::out(lines, None));
    if !v.unreadable.is_empty() {
        let text: String = v
            .unreadable
            .iter()
            .map(|(message, help)| {
                let d = super::diagnostic::PlainDiagnostic {
                    message: message.clone(),
                    help: help.clone(),
                    code: "coplan::input",
                };
                super::diagnostic::render(&d, super::diagnostic::Style::Plain)
            })
            .collect();
        outputs.push(Output::stderr(text));
    }
    outputs
}

/// An import's summary: text on stderr, or JSON on stdout.
fn summary(summary: &ImportSummary, format: ImportFormat) -> Output {
    match format {
        ImportFormat::Json => Output::out(json::to_json(summary), None),
        ImportFormat::Text => Output::stderr(on_terminal(table::import::summary(summary))),
    }
}

/// A table or summary as the terminal shows it: control characters in the user's names
/// written out (`\u{1b}`), not sent to the terminal.
fn on_terminal(text: String) -> String {
    match terminal::escape_controls(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(escaped) => escaped,
    }
}

/// An SVG printer's text; a server the cluster lacks is an input error, a drawing failure a bug.
fn svg_text(picture: Result<String, svg::error::SvgError>) -> Result<String, SessionError> {
    picture.map_err(|e| match e {
        svg::error::SvgError::UnknownServer { .. } => SessionError::input(e.to_string(), None),
        svg::error::SvgError::Draw(m) => SessionError::Internal(m),
    })
}

/// `--events` as the table printer takes it.
fn event_lines(events: Option<EventsArg>) -> table::plan::EventLines {
    match events {
        None => table::plan::EventLines::Auto,
        Some(EventsArg::None) => table::plan::EventLines::None,
        Some(EventsArg::Worst) => table::plan::EventLines::Worst,
        Some(EventsArg::All) => table::plan::EventLines::All,
    }
}
