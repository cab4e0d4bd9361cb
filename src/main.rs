//! The `coplan` binary: parse arguments, call the library's session layer, render the result
//! with a printer from `report`, map failures to exit codes.

mod cli;
mod progress;

/// The planners and the fill allocate many small objects (pods, names, candidate lists); the
/// system allocator spent a fifth of a 20,000-server `plan` in malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use cli::{
    CapacityFormat, Cli, Command, EventSolverArg, ExplainFormat, GpuSharesArg, ImportCommand,
    ImportFormat, LongFormat, MergeFormat, PlanFormat, ProfileCommand, SchemaKind, SolverArg,
    SpecOutputs, TimelineFormat, TopologyFormat,
};
use coplan::plan::cancel::Cancel;
use coplan::report::diagnostic::{self, PlainDiagnostic, Style};
use coplan::report::{chrome_trace, csv, dot, json, svg, table, toml};
use coplan::session::commands::{self, Explanation, PlanResult, SimulationResult, VidurOptions};
use coplan::session::error::SessionError;
use coplan::session::import::{self, ImportSummary, Imported};
use coplan::session::load::{Pair, load_pair};
use coplan::sim::capacity::Progress as CapacityProgress;
use coplan::sim::preemption::SimOptions;
use coplan::spec::{self, InvalidSpec, SpecKind};
use progress::{clear_run_progress, progress_bar, run_progress};

/// Why a command failed, mapped to an exit code.
enum Failure {
    /// Invalid input (exit 2): located spec issues, or a plain message.
    Invalid(Vec<InvalidSpec>),
    Input(PlainDiagnostic),
    /// A bug or an unexpected failure of the library (exit 1).
    Internal(String),
    /// The output was written, but a requirement the user enforced does not hold (exit 3).
    Infeasible(String),
    /// Ctrl-C (or SIGTERM) stopped the run before it wrote anything (exit 130, as a shell
    /// reports a process that SIGINT ended).
    Interrupted(String),
}

/// Raised by the Ctrl-C handler; the library's long loops read it through a `Cancel`.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
/// Whether the running command reads [`STOP_REQUESTED`]; one that does not is ended at once.
static STOPS_ITSELF: AtomicBool = AtomicBool::new(false);
const EXIT_INTERRUPTED: u8 = 130;

/// On Ctrl-C or SIGTERM: a command that reads the flag stops at its next check and reports
/// what finished; any other command (and a second Ctrl-C) ends the process now. A command
/// whose next check does not come within [`STOP_GRACE`] (a solve in progress cannot be
/// interrupted) is ended then. None leaves a partial `--out`: outputs are written whole,
/// after the run.
fn install_stop_handler() {
    let _ = ctrlc::set_handler(|| {
        if !STOPS_ITSELF.load(Ordering::Relaxed) || STOP_REQUESTED.swap(true, Ordering::Relaxed) {
            interrupted_now();
        }
        std::thread::spawn(|| {
            std::thread::sleep(STOP_GRACE);
            interrupted_now();
        });
    });
}

/// How long a command that stops itself has to do so after Ctrl-C.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(900);

/// Ends the process as interrupted.
fn interrupted_now() -> ! {
    let _ = std::io::stderr().write_all(b"interrupted\n");
    std::process::exit(i32::from(EXIT_INTERRUPTED));
}

/// The stop request of a command that checks for it.
fn cooperative_stop() -> Cancel {
    STOPS_ITSELF.store(true, Ordering::Relaxed);
    Cancel::watching(&STOP_REQUESTED)
}

fn input(message: String, help: Option<String>) -> Failure {
    Failure::Input(PlainDiagnostic {
        message,
        help,
        code: "coplan::input",
    })
}

impl From<SessionError> for Failure {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Invalid(list) => Failure::Invalid(list),
            SessionError::Input { message, help } => input(message, help),
            SessionError::Internal(m) => Failure::Internal(m),
            SessionError::Interrupted(m) => Failure::Interrupted(m),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    install_stop_handler();
    let style = if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        Style::Color
    } else {
        Style::Plain
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (text, code) = match failure {
                Failure::Invalid(list) => (
                    list.iter()
                        .map(|i| diagnostic::render_invalid(i, style))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    2,
                ),
                Failure::Input(d) => (diagnostic::render(&d, style), 2),
                Failure::Internal(m) => (format!("internal error: {m}\n"), 1),
                Failure::Infeasible(m) => (format!("infeasible: {m}\n"), 3),
                Failure::Interrupted(m) => (format!("{m}\n"), EXIT_INTERRUPTED),
            };
            let _ = std::io::stderr().write_all(text.as_bytes());
            ExitCode::from(code)
        }
    }
}

/// A cluster and workload pair with the command line's `--solver` and `--event-solver`.
fn load_solving(
    cluster: &Path,
    workload: &Path,
    solver: Option<SolverArg>,
    event_solver: Option<EventSolverArg>,
) -> Result<Pair, SessionError> {
    load_pair(cluster, workload)?
        .with_solver(solver.map(Into::into))?
        .with_event_solver(event_solver.map(Into::into))
}

fn sim_options(
    seeds: Option<u64>,
    cycles: Option<u64>,
    planners: Option<Vec<String>>,
    solver: Option<coplan::spec::SolverBackend>,
    time_limit: f64,
) -> SimOptions {
    SimOptions {
        seeds: seeds.map(|n| (1..=n).collect()),
        cycles,
        planners,
        solver,
        cancel: cooperative_stop().with_budget(time_limit),
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Validate { files } => validate(&files),
        Command::Schema { kind } => {
            let kind = match kind {
                SchemaKind::Cluster => SpecKind::Cluster,
                SchemaKind::Preemption => SpecKind::Preemption,
                SchemaKind::Colocation => SpecKind::Colocation,
            };
            print(&json::to_json(&spec::json_schema(kind)))
        }
        Command::Topology {
            cluster,
            workload,
            format,
            server,
        } => {
            if server.is_some() && format != TopologyFormat::Svg {
                return Err(input(
                    "`--server` draws one server; it needs `--format svg`".into(),
                    None,
                ));
            }
            let (cluster, state) = commands::topology(&cluster, workload.as_deref())?;
            print(&match format {
                TopologyFormat::Json => json::topology(&cluster, state.as_ref()),
                TopologyFormat::Dot => dot::topology(&cluster, state.as_ref()),
                TopologyFormat::Table => {
                    terminal_text(table::topology::topology(&cluster, state.as_ref()))
                }
                TopologyFormat::Svg => svg_text(svg::topology::topology(
                    &cluster,
                    state.as_ref(),
                    server.as_deref(),
                ))?,
            })
        }
        Command::Plan {
            cluster,
            workload,
            format,
            planners,
            seed,
            out,
            require_all_placed,
            worst,
            solver,
            event_solver,
            events,
            time_limit,
        } => {
            // The budget counts from here: reading and filling a large cluster is part of it.
            let budget = Cancel::never()
                .with_budget(time_limit)
                .reporting_to(run_progress());
            let pair = load_solving(&cluster, &workload, solver, event_solver)?;
            if worst.is_some() && format == PlanFormat::Csv {
                return Err(input(
                    "`--worst` prints after the table or inside the JSON".into(),
                    Some("use `--format table` or `--format json` with `--worst`".into()),
                ));
            }
            let result = commands::plan(&pair, planners, seed, worst, budget);
            clear_run_progress();
            let result = result?;
            if let PlanResult::Preemption(r) = &result {
                for w in &r.warnings {
                    let _ = writeln!(std::io::stderr(), "warning: {w}");
                }
            }
            let text = match (&result, format) {
                (PlanResult::Preemption(r), PlanFormat::Table) => {
                    terminal_text(table::plan::preemption(r, event_lines(events)))
                }
                (PlanResult::Preemption(r), PlanFormat::Json) => json::to_json(r),
                (PlanResult::Preemption(r), PlanFormat::Csv) => csv::preemption_plan(r),
                (PlanResult::Colocation(r), PlanFormat::Table) => {
                    terminal_text(table::plan::colocation(r))
                }
                (PlanResult::Colocation(r), PlanFormat::Json) => json::to_json(r),
                (PlanResult::Colocation(r), PlanFormat::Csv) => csv::colocation_plan(r),
                (PlanResult::Preemption(r), PlanFormat::Evictions) => json::preemption_evictions(r),
                (PlanResult::Colocation(_), PlanFormat::Evictions) => {
                    return Err(input(
                        "`--format evictions` lists the pods a preemption plan evicts; a co-location plan evicts none".into(),
                        Some("use `--format table`, `json` or `csv`".into()),
                    ));
                }
            };
            emit(&text, out.as_deref())?;
            if require_all_placed && !result.some_planner_placed_all() {
                return Err(Failure::Infeasible(
                    match result {
                        PlanResult::Preemption(_) => {
                            "no planner placed every preemptor (--require-all-placed)"
                        }
                        PlanResult::Colocation(_) => {
                            "every planner dropped a task (--require-all-placed)"
                        }
                    }
                    .into(),
                ));
            }
            Ok(())
        }
        Command::Explain {
            cluster,
            workload,
            event,
            task,
            planners,
            seed,
            format,
            out,
            solver,
            event_solver,
            time_limit,
        } => {
            let budget = Cancel::never()
                .with_budget(time_limit)
                .reporting_to(run_progress());
            let pair = load_solving(&cluster, &workload, solver, event_solver)?;
            let explanation = commands::explain(&pair, planners, seed, event, task, budget);
            clear_run_progress();
            let explanation = explanation?;
            let text = match (&explanation, format) {
                (Explanation::Event(e), ExplainFormat::Table) => {
                    terminal_text(table::explain::preemption_event(e))
                }
                (Explanation::Event(e), ExplainFormat::Json) => json::to_json(e),
                (Explanation::Task(t), ExplainFormat::Table) => {
                    terminal_text(table::explain_colocation::colocation_task(t))
                }
                (Explanation::Task(t), ExplainFormat::Json) => json::to_json(t),
            };
            emit(&text, out.as_deref())
        }
        Command::Simulate {
            cluster,
            workload,
            seeds,
            cycles,
            planners,
            format,
            out,
            plot,
            solver,
            event_solver,
            time_limit,
        } => {
            let pair = load_solving(&cluster, &workload, solver, event_solver)?;
            let options = sim_options(seeds, cycles, planners, None, time_limit);
            let bar = progress_bar(commands::simulation_units(&pair, &options));
            let result = commands::simulate(&pair, &options, &|| bar.inc(1))?;
            bar.finish_and_clear();
            // The table prints its notes; JSON carries them, CSV has no place for them.
            if let (SimulationResult::Preemption(r), PlanFormat::Json | PlanFormat::Csv) =
                (&result, format)
            {
                for note in &r.notes {
                    let _ = writeln!(std::io::stderr(), "note: {note}");
                }
            }
            let text = match (&result, format) {
                (SimulationResult::Preemption(r), PlanFormat::Table) => {
                    terminal_text(table::simulation::preemption(r))
                }
                (SimulationResult::Preemption(r), PlanFormat::Json) => json::to_json(r),
                (SimulationResult::Preemption(r), PlanFormat::Csv) => csv::preemption_simulation(r),
                (SimulationResult::Colocation(r), PlanFormat::Table) => {
                    terminal_text(table::simulation::colocation(r))
                }
                (SimulationResult::Colocation(r), PlanFormat::Json) => json::to_json(r),
                (SimulationResult::Colocation(r), PlanFormat::Csv) => csv::colocation_simulation(r),
                (_, PlanFormat::Evictions) => {
                    return Err(input(
                        "`--format evictions` lists one plan's evictions; a simulation has many"
                            .into(),
                        Some("use `coplan plan … --format evictions`".into()),
                    ));
                }
            };
            emit(&text, out.as_deref())?;
            if let Some(plot) = plot {
                let picture = match &result {
                    SimulationResult::Preemption(r) => svg::simulation::preemption(r),
                    SimulationResult::Colocation(r) => svg::simulation::colocation(r),
                };
                emit(&svg_text(picture)?, Some(&plot))?;
            }
            Ok(())
        }
        Command::Sweep {
            cluster,
            workload,
            sets,
            seeds,
            cycles,
            planners,
            shard,
            shards,
            format,
            out,
            plot,
            solver,
            event_solver,
            time_limit,
        } => {
            let subject = format!("{} on {}", file_stem(&workload), file_stem(&cluster));
            let prepared = commands::prepare_sweep(
                &cluster,
                &workload,
                &sets,
                sim_options(seeds, cycles, planners, solver.map(Into::into), time_limit),
                shard.as_deref(),
                shards,
                &|k| std::env::var(k).ok(),
            )?
            .with_event_solver(event_solver.map(Into::into))?;
            let bar = progress_bar(prepared.units);
            let output = commands::run_sweep(&prepared, &|| bar.inc(1))?;
            bar.finish_and_clear();
            let text = match format {
                LongFormat::Csv => csv::sweep(&output),
                LongFormat::Jsonl => json::sweep_lines(&output),
            };
            emit(&text, out.as_deref())?;
            if let Some(plot) = plot {
                emit(
                    &svg_text(svg::sweep::sweep(&output, Some(&subject)))?,
                    Some(&plot),
                )?;
            }
            Ok(())
        }
        Command::Merge {
            files,
            format,
            out,
            plot,
        } => {
            let merged = commands::merge_files(&files)?;
            let text = match format {
                MergeFormat::Table => terminal_text(table::sweep::sweep(&merged)),
                MergeFormat::Csv => csv::sweep(&merged),
                MergeFormat::Jsonl => json::sweep_lines(&merged),
            };
            emit(&text, out.as_deref())?;
            if let Some(plot) = plot {
                let subject = format!("{} shards merged", files.len());
                emit(
                    &svg_text(svg::sweep::sweep(&merged, Some(&subject)))?,
                    Some(&plot),
                )?;
            }
            Ok(())
        }
        Command::Capacity {
            cluster,
            workload,
            planners,
            seed,
            target,
            pool,
            min,
            max,
            seeds,
            cycles,
            hold,
            format,
            out,
            plot,
            solver,
            event_solver,
            time_limit,
        } => {
            let pair = load_solving(&cluster, &workload, solver, event_solver)?;
            if plot.is_some() && pair.kind() == SpecKind::Colocation {
                return Err(input(
                    "`--plot` draws a pool-size search; a co-location capacity searches a rate"
                        .into(),
                    Some("drop --plot: the JSON output lists every rate probed".into()),
                ));
            }
            let args = commands::CapacityArgs {
                planners,
                seed,
                target,
                pool,
                min,
                max,
                seeds,
                cycles,
                hold: hold.into(),
                cancel: if pair.kind() == SpecKind::Preemption {
                    cooperative_stop()
                } else {
                    Cancel::never()
                }
                .with_budget(time_limit),
            };
            let bar = progress_bar(0);
            let report = commands::capacity(&cluster, &pair, &args, &|p| match p {
                CapacityProgress::Size { servers, cycles } => {
                    bar.inc_length(cycles);
                    bar.set_message(format!("{servers} servers"));
                }
                CapacityProgress::Cycle => bar.inc(1),
            })?;
            bar.finish_and_clear();
            let text = match format {
                CapacityFormat::Table => terminal_text(table::capacity::capacity(&report)),
                CapacityFormat::Json => json::to_json(&report),
            };
            emit(&text, out.as_deref())?;
            if let Some(plot) = plot {
                let chart = svg::capacity::pool_search(&report).ok_or_else(|| {
                    Failure::Internal("a pool-size report without its target or pool".into())
                })?;
                emit(&svg_text(svg::capacity::capacity(&chart))?, Some(&plot))?;
            }
            Ok(())
        }
        Command::Timeline {
            cluster,
            workload,
            planner,
            seed,
            format,
            out,
        } => {
            let pair = load_pair(&cluster, &workload)?;
            let t = commands::timeline(&pair, &planner, seed)?;
            let text = match format {
                TimelineFormat::ChromeTrace => {
                    chrome_trace::colocation_run(&t.run, t.nodes, t.stages)
                }
                TimelineFormat::Svg => {
                    let title = format!(
                        "{planner} on {}, {}",
                        file_stem(&workload),
                        file_stem(&cluster)
                    );
                    svg_text(svg::timeline::colocation_run(
                        &t.run, t.nodes, t.stages, &title,
                    ))?
                }
            };
            emit(&text, out.as_deref())
        }
        Command::Import {
            command:
                ImportCommand::K8s {
                    files,
                    cpu_manager,
                    allow_misfit,
                    gpu_resources,
                    pool_label,
                    outputs,
                },
        } => {
            let options = coplan::import::k8s::K8sOptions {
                cpu_manager: match cpu_manager {
                    cli::CpuManagerArg::Static => coplan::import::k8s::CpuManager::Static,
                    cli::CpuManagerArg::None => coplan::import::k8s::CpuManager::None,
                },
                allow_misfit,
                gpu_resources,
                pool_label,
            };
            import::distinct_outputs(&outputs.out_cluster, &outputs.out_workload, &files)?;
            write_imported(&import::import_k8s(&files, options)?, &outputs)
        }
        Command::Import {
            command:
                ImportCommand::AlibabaOpenb {
                    nodes,
                    pods,
                    at,
                    next,
                    fill,
                    server_types,
                    qos,
                    gpu_shares,
                    sampled_qos,
                    as_sequence,
                    outputs,
                },
        } => {
            let args = import::AlibabaArgs {
                at,
                next,
                fill,
                server_types,
                qos,
                drop_gpu_shares: gpu_shares == GpuSharesArg::Drop,
                sampled_qos,
                as_sequence,
            };
            import::distinct_outputs(
                &outputs.out_cluster,
                &outputs.out_workload,
                &[nodes.clone(), pods.clone()],
            )?;
            write_imported(&import::import_alibaba(&nodes, &pods, &args)?, &outputs)
        }
        Command::Import {
            command:
                ImportCommand::AzureLlm {
                    file,
                    base,
                    format,
                    rate_scale,
                    limit,
                    out,
                },
        } => {
            if format == ImportFormat::Json && out.is_none() {
                return Err(input(
                    "--format json prints the summary on stdout, where the workload goes without --out".into(),
                    Some("add --out W.toml".into()),
                ));
            }
            let (spec, comments, summary) =
                import::import_azure(&file, rate_scale, limit, base.as_deref())?;
            let text = toml::colocation_workload(&comments, &spec);
            let name = out.as_ref().map_or_else(
                || "the generated workload".into(),
                |p| p.display().to_string(),
            );
            import::check_generated(&[(name, text.clone())])?;
            emit(&text, out.as_deref())?;
            print_summary(&summary, format)
        }
        Command::Import {
            command:
                ImportCommand::VidurProfile {
                    file,
                    layers_per_stage,
                    tp,
                    attention_efficiency,
                    max_tokens,
                    out,
                },
        } => {
            let options = VidurOptions {
                layers_per_stage,
                tensor_parallel: tp,
                attention_efficiency,
                max_tokens,
            };
            let (samples, comments) = commands::import_vidur(&file, &options)?;
            emit(&csv::latency_samples(&comments, &samples), out.as_deref())
        }
        Command::Diff {
            a,
            b,
            format,
            out,
            fail_on_regression,
        } => {
            let report = coplan::session::diff::diff_files(&a, &b, &fail_on_regression)?;
            let text = match format {
                cli::DiffFormat::Table => terminal_text(table::diff::diff(&report)),
                cli::DiffFormat::Json => json::to_json(&report),
                cli::DiffFormat::Csv => csv::diff(&report),
            };
            emit(&text, out.as_deref())?;
            match report.regression_message() {
                Some(message) => Err(Failure::Infeasible(message)),
                None => Ok(()),
            }
        }
        Command::Profile {
            command: ProfileCommand::Fit { samples, out },
        } => emit(
            &toml::model_fit(&commands::profile_fit(&samples)?),
            out.as_deref(),
        ),
    }
}

/// Writes an import's cluster and workload (each atomically, after both validate) and prints
/// its summary.
fn write_imported(imported: &Imported, outputs: &SpecOutputs) -> Result<(), Failure> {
    let cluster = toml::cluster(&imported.comments, &imported.cluster);
    let workload = toml::preemption_workload(&imported.comments, &imported.workload);
    import::check_generated(&[
        (outputs.out_cluster.display().to_string(), cluster.clone()),
        (outputs.out_workload.display().to_string(), workload.clone()),
    ])?;
    emit(&cluster, Some(&outputs.out_cluster))?;
    emit(&workload, Some(&outputs.out_workload))?;
    print_summary(&imported.summary, outputs.format)
}

/// The import summary: text on stderr, or JSON on stdout.
fn print_summary(summary: &ImportSummary, format: ImportFormat) -> Result<(), Failure> {
    match format {
        ImportFormat::Json => print(&json::to_json(summary)),
        ImportFormat::Text => {
            let _ = std::io::stderr()
                .write_all(terminal_text(table::import::summary(summary)).as_bytes());
            Ok(())
        }
    }
}

fn validate(files: &[std::path::PathBuf]) -> Result<(), Failure> {
    let v = commands::validate(files);
    if v.clusters > 1 {
        let note = format!(
            "note: {} clusters given; cross-file checks (running pods' nodes, stages) need exactly one\n",
            v.clusters
        );
        let _ = std::io::stderr().write_all(note.as_bytes());
    }
    let lines: String = v
        .valid
        .iter()
        .zip(&v.estimates)
        .map(|(l, estimate)| {
            let mut line = format!(
                "{}: {}\n",
                l.source.name,
                terminal_text(table::summary::summary(&l.spec))
            );
            if let Some(e) = estimate {
                line.push_str(&terminal_text(table::summary::estimate(e)));
            }
            line
        })
        .collect();
    print(&lines)?;
    if !v.unreadable.is_empty() {
        let text: String = v
            .unreadable
            .into_iter()
            .map(|(message, help)| {
                let d = PlainDiagnostic {
                    message,
                    help,
                    code: "coplan::input",
                };
                diagnostic::render(&d, Style::Plain)
            })
            .collect();
        let _ = std::io::stderr().write_all(text.as_bytes());
        if v.invalid.is_empty() {
            return Err(Failure::Invalid(Vec::new()));
        }
    }
    if v.invalid.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid(v.invalid))
    }
}

/// A table or summary as the terminal shows it: control characters in the user's names
/// written out (`\u{1b}`), not sent to the terminal.
fn terminal_text(text: String) -> String {
    coplan::report::terminal::escape_controls(&text).into_owned()
}

fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(input(format!("cannot write output: {e}"), None)),
    }
}

/// An SVG printer's text; a server the cluster lacks is an input error, a drawing failure a bug.
fn svg_text(picture: Result<String, svg::error::SvgError>) -> Result<String, Failure> {
    picture.map_err(|e| match e {
        svg::error::SvgError::UnknownServer { .. } => input(e.to_string(), None),
        svg::error::SvgError::Draw(m) => Failure::Internal(m),
    })
}

/// A file's name without folder and extension, for titles.
fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Writes to `--out` atomically (temporary file in the same folder, then rename), or stdout.
/// Writes `text` to `--out` (or stdout). A regular file is replaced atomically (a temporary
/// file beside it, renamed over it), keeping the replaced file's permissions, so a failed run
/// never leaves half a file; a symlink is written through (the file it points to is replaced,
/// the link kept); a FIFO or a device (`/dev/stdout`, `/dev/null`) is written directly, since
/// renaming over it would replace it with a regular file.
fn emit(text: &str, out: Option<&Path>) -> Result<(), Failure> {
    // A stop requested after the run finished still wins: the user asked for nothing new.
    if STOP_REQUESTED.load(Ordering::Relaxed) {
        return Err(Failure::Interrupted(
            "interrupted: stopped before the output was written; nothing was written".into(),
        ));
    }
    let Some(path) = out else {
        return print(text);
    };
    let cannot = |e: std::io::Error| input(format!("cannot write `{}`: {e}", path.display()), None);
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if is_link {
        std::fs::canonicalize(path).map_err(cannot)?
    } else {
        path.to_path_buf()
    };
    let existing = std::fs::metadata(&target).ok();
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(input(
                format!("cannot write `{}`: it is a directory", path.display()),
                None,
            ));
        }
        if !m.is_file() {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(cannot);
        }
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text)
        .and_then(|()| match &existing {
            Some(m) => std::fs::set_permissions(&tmp, m.permissions()),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &target));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })
}

/// `--events` as the table printer takes it.
fn event_lines(events: Option<cli::EventsArg>) -> table::plan::EventLines {
    match events {
        None => table::plan::EventLines::Auto,
        Some(cli::EventsArg::None) => table::plan::EventLines::None,
        Some(cli::EventsArg::Worst) => table::plan::EventLines::Worst,
        Some(cli::EventsArg::All) => table::plan::EventLines::All,
    }
}
