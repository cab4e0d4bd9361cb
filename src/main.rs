//! The `coplan` binary: parse arguments, read files, call the library, render, exit.

mod cli;

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use cli::{
    Cli, Command, ImportCommand, LongFormat, MergeFormat, PlanFormat, ProfileCommand, SchemaKind,
    TopologyFormat,
};
use coplan::preempt::engine::{self, PlanFailure, PlanOptions};
use coplan::report::diagnostic::{self, PlainDiagnostic, Style};
use coplan::report::sim as sim_report;
use coplan::report::{plan as plan_report, summary, topology as topo_report};
use coplan::sim::{self, SimOptions, merge as sweep_files, sweep};
use coplan::spec::{self, Expect, InvalidSpec, LoadedSpec, SourceFile, Spec, SpecKind};
use coplan::topology::Cluster;
use coplan::topology::state::{ClusterState, running_state};

/// Why a command failed, mapped to an exit code.
enum Failure {
    /// Invalid spec files (exit 2).
    Invalid(Vec<InvalidSpec>),
    /// Other invalid input: unreadable file, bad argument (exit 2).
    Input(PlainDiagnostic),
    /// A bug or an unexpected failure of the library (exit 1).
    Internal(String),
    /// The output was written, but a requirement the user enforced does not hold (exit 3).
    Infeasible(String),
}

impl Failure {
    fn input(message: String, help: Option<String>) -> Self {
        Failure::Input(PlainDiagnostic {
            message,
            help,
            code: "coplan::input",
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
            };
            let _ = std::io::stderr().write_all(text.as_bytes());
            ExitCode::from(code)
        }
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
            print(&schema_text(kind))
        }
        Command::Topology {
            cluster,
            workload,
            format,
        } => topology(&cluster, workload.as_deref(), format),
        Command::Simulate {
            cluster,
            workload,
            seeds,
            cycles,
            planners,
            format,
            out,
        } => simulate(
            &cluster,
            &workload,
            sim_options(seeds, cycles, planners),
            format,
            out.as_deref(),
        ),
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
        } => run_sweep(
            &cluster,
            &workload,
            &sets,
            sim_options(seeds, cycles, planners),
            shard.as_deref(),
            shards,
            format,
            out.as_deref(),
        ),
        Command::Merge { files, format, out } => merge(&files, format, out.as_deref()),
        Command::Timeline {
            cluster,
            workload,
            planner,
            seed,
            out,
        } => timeline(&cluster, &workload, &planner, seed, out.as_deref()),
        Command::Import {
            command:
                ImportCommand::AzureLlm {
                    file,
                    rate_scale,
                    limit,
                    out,
                },
        } => import_azure(&file, rate_scale, limit, out.as_deref()),
        Command::Profile {
            command: ProfileCommand::Fit { samples, out },
        } => profile_fit(&samples, out.as_deref()),
        Command::Plan {
            cluster,
            workload,
            format,
            planners,
            seed,
            out,
            require_all_placed,
        } => plan(
            &cluster,
            &workload,
            format,
            PlanOptions { planners, seed },
            out.as_deref(),
            require_all_placed,
        ),
    }
}

fn schema_text(kind: SpecKind) -> String {
    let mut text = serde_json::to_string_pretty(&spec::json_schema(kind)).unwrap_or_default();
    text.push('\n');
    text
}

fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::input(format!("cannot write output: {e}"), None)),
    }
}

fn read_source(path: &Path) -> Result<SourceFile, Failure> {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(e) => Err(Failure::input(
            format!("cannot read `{name}`: {e}"),
            Some("check the path; spec files are UTF-8 TOML".into()),
        )),
    }
}

fn load(path: &Path, expect: Expect) -> Result<LoadedSpec, Failure> {
    let source = read_source(path)?;
    spec::load(source, expect).map_err(|e| Failure::Invalid(vec![e]))
}

fn validate(files: &[std::path::PathBuf]) -> Result<(), Failure> {
    let mut invalid = Vec::new();
    let mut unreadable = Vec::new();
    let mut loaded = Vec::new();
    for path in files {
        match read_source(path) {
            Ok(source) => match spec::load(source, Expect::Any) {
                Ok(l) => loaded.push(l),
                Err(e) => invalid.push(e),
            },
            Err(Failure::Input(d)) => unreadable.push(d),
            Err(other) => return Err(other),
        }
    }
    let clusters: Vec<&LoadedSpec> = loaded
        .iter()
        .filter(|l| l.spec.kind() == SpecKind::Cluster)
        .collect();
    let cluster = match clusters.as_slice() {
        [only] => match &only.spec {
            Spec::Cluster(c) => Some(Cluster::from_spec(c)),
            _ => None,
        },
        _ => None,
    };
    let mut lines = String::new();
    for l in &loaded {
        let cross = match (&cluster, &l.spec) {
            (Some(c), Spec::Preemption(w)) => running_state(c, w).err().unwrap_or_default(),
            (Some(c), Spec::Colocation(w)) => spec::validate::colocation_on_cluster(c, w),
            _ => Vec::new(),
        };
        match l.check(cross) {
            Ok(()) => lines.push_str(&format!(
                "{}: {}\n",
                l.source.name,
                summary::summary(&l.spec)
            )),
            Err(e) => invalid.push(e),
        }
    }
    if clusters.len() > 1 {
        let note = format!(
            "note: {} clusters given; cross-file checks (running pods' nodes, stages) need exactly one\n",
            clusters.len()
        );
        let _ = std::io::stderr().write_all(note.as_bytes());
    }
    print(&lines)?;
    if !unreadable.is_empty() {
        let style = Style::Plain;
        let text: String = unreadable
            .iter()
            .map(|d| diagnostic::render(d, style))
            .collect();
        let _ = std::io::stderr().write_all(text.as_bytes());
        if invalid.is_empty() {
            return Err(Failure::Invalid(Vec::new()));
        }
    }
    if invalid.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid(invalid))
    }
}

fn topology(
    cluster_path: &Path,
    workload: Option<&Path>,
    format: TopologyFormat,
) -> Result<(), Failure> {
    let loaded = load(cluster_path, Expect::Cluster)?;
    let Spec::Cluster(cluster_spec) = &loaded.spec else {
        return Err(Failure::Internal(
            "a cluster file loaded as a workload".into(),
        ));
    };
    let cluster = Cluster::from_spec(cluster_spec);
    let state: Option<ClusterState> = match workload {
        None => None,
        Some(path) => {
            let w = load(path, Expect::Workload)?;
            match &w.spec {
                Spec::Preemption(p) => match running_state(&cluster, p) {
                    Ok(state) => Some(state),
                    Err(findings) => {
                        w.check(findings).map_err(|e| Failure::Invalid(vec![e]))?;
                        None
                    }
                },
                Spec::Colocation(c) => {
                    w.check(spec::validate::colocation_on_cluster(&cluster, c))
                        .map_err(|e| Failure::Invalid(vec![e]))?;
                    None
                }
                Spec::Cluster(_) => None,
            }
        }
    };
    let text = match format {
        TopologyFormat::Json => {
            let mut t =
                serde_json::to_string_pretty(&topo_report::to_json(&cluster, state.as_ref()))
                    .map_err(|e| Failure::Internal(e.to_string()))?;
            t.push('\n');
            t
        }
        TopologyFormat::Dot => topo_report::to_dot(&cluster, state.as_ref()),
        TopologyFormat::Table => topo_report::to_table(&cluster, state.as_ref()),
    };
    print(&text)
}

/// Writes to `--out` atomically (temporary file in the same folder, then rename), or stdout.
fn emit(text: &str, out: Option<&Path>) -> Result<(), Failure> {
    let Some(path) = out else {
        return print(text);
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::input(format!("cannot write `{}`: {e}", path.display()), None)
    })
}

fn load_pair(cluster_path: &Path, workload_path: &Path) -> Result<(Cluster, LoadedSpec), Failure> {
    let loaded = load(cluster_path, Expect::Cluster)?;
    let Spec::Cluster(cluster_spec) = &loaded.spec else {
        return Err(Failure::Internal(
            "a cluster file loaded as a workload".into(),
        ));
    };
    let cluster = Cluster::from_spec(cluster_spec);
    let workload = load(workload_path, Expect::Workload)?;
    Ok((cluster, workload))
}

fn plan(
    cluster_path: &Path,
    workload_path: &Path,
    format: PlanFormat,
    options: PlanOptions,
    out: Option<&Path>,
    require_all_placed: bool,
) -> Result<(), Failure> {
    let (cluster, workload) = load_pair(cluster_path, workload_path)?;
    let spec = match &workload.spec {
        Spec::Preemption(p) => p,
        Spec::Colocation(c) => {
            workload
                .check(spec::validate::colocation_on_cluster(&cluster, c))
                .map_err(|e| Failure::Invalid(vec![e]))?;
            let trace = load_trace(&workload, c)?;
            let report = coplan::colocate::plan::plan(
                &cluster,
                c,
                trace.as_deref(),
                options.planners.as_deref(),
                options.seed,
            )
            .map_err(colocation_failure)?;
            let text = match format {
                PlanFormat::Table => coplan::report::colocation::to_table(&report),
                PlanFormat::Json => coplan::report::colocation::to_json(&report),
                PlanFormat::Csv => coplan::report::colocation::to_csv(&report),
            };
            emit(&text, out)?;
            if require_all_placed
                && report
                    .planners
                    .iter()
                    .all(|p| p.metrics.as_ref().is_none_or(|m| m.dropped > 0))
            {
                return Err(Failure::Infeasible(
                    "every planner dropped a task (--require-all-placed)".into(),
                ));
            }
            return Ok(());
        }
        Spec::Cluster(_) => {
            return Err(Failure::Internal(
                "a workload file loaded as a cluster".into(),
            ));
        }
    };
    let report = engine::plan(&cluster, spec, &options).map_err(|f| plan_failure(&workload, f))?;
    for w in &report.warnings {
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
    let text = match format {
        PlanFormat::Table => plan_report::to_table(&report),
        PlanFormat::Json => plan_report::to_json(&report),
        PlanFormat::Csv => plan_report::to_csv(&report),
    };
    emit(&text, out)?;
    if require_all_placed
        && !report
            .planners
            .iter()
            .any(|p| p.objective.is_some() && p.metrics.unplaced == 0)
    {
        return Err(Failure::Infeasible(
            "no planner placed every preemptor (--require-all-placed)".into(),
        ));
    }
    Ok(())
}

fn sim_options(
    seeds: Option<u64>,
    cycles: Option<u64>,
    planners: Option<Vec<String>>,
) -> SimOptions {
    SimOptions {
        seeds: seeds.map(|n| (1..=n).collect()),
        cycles,
        planners,
    }
}

fn plan_failure(workload: &LoadedSpec, f: PlanFailure) -> Failure {
    match f {
        PlanFailure::Invalid(findings) => match workload.check(findings) {
            Err(e) => Failure::Invalid(vec![e]),
            Ok(()) => Failure::Internal("empty findings".into()),
        },
        PlanFailure::UnknownPlanner(name) => Failure::input(
            format!("unknown planner `{name}`"),
            Some(format!(
                "expected one of {}",
                coplan::spec::preemption::PREEMPTION_PLANNERS.join(", ")
            )),
        ),
        other => Failure::Internal(other.to_string()),
    }
}

fn preemption_spec(workload: &LoadedSpec) -> Result<&coplan::spec::PreemptionSpec, Failure> {
    match &workload.spec {
        Spec::Preemption(p) => Ok(p),
        _ => Err(Failure::input(
            format!(
                "`{}`: simulate and sweep take a `kind = \"preemption\"` workload",
                workload.source.name
            ),
            None,
        )),
    }
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cycles {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}

fn simulate(
    cluster_path: &Path,
    workload_path: &Path,
    options: SimOptions,
    format: PlanFormat,
    out: Option<&Path>,
) -> Result<(), Failure> {
    let (cluster, workload) = load_pair(cluster_path, workload_path)?;
    if let Spec::Colocation(c) = &workload.spec {
        workload
            .check(spec::validate::colocation_on_cluster(&cluster, c))
            .map_err(|e| Failure::Invalid(vec![e]))?;
        let trace = load_trace(&workload, c)?;
        let seeds = options.seeds.clone().unwrap_or_else(|| (1..=10).collect());
        let bar = progress_bar(seeds.len() as u64);
        let tick = || bar.inc(1);
        let report = coplan::colocate::sim::simulate(
            &cluster,
            c,
            trace.as_deref(),
            &seeds,
            options.planners.as_deref(),
            &tick,
        )
        .map_err(colocation_failure)?;
        bar.finish_and_clear();
        let text = match format {
            PlanFormat::Table => coplan::report::colocation::sim_table(&report),
            PlanFormat::Json => coplan::report::colocation::sim_json(&report),
            PlanFormat::Csv => coplan::report::colocation::sim_csv(&report),
        };
        return emit(&text, out);
    }
    let spec = preemption_spec(&workload)?;
    let (seeds, cycles, _) = sim::resolve(spec, &options);
    let bar = progress_bar(seeds.len() as u64 * cycles);
    let tick = || bar.inc(1);
    let report =
        sim::simulate(&cluster, spec, &options, &tick).map_err(|f| plan_failure(&workload, f))?;
    bar.finish_and_clear();
    let text = match format {
        PlanFormat::Table => sim_report::to_table(&report),
        PlanFormat::Json => sim_report::to_json(&report),
        PlanFormat::Csv => sim_report::to_csv(&report),
    };
    emit(&text, out)
}

fn toml_value(loaded: &LoadedSpec) -> Result<toml::Value, Failure> {
    toml::from_str::<toml::Table>(&loaded.source.text)
        .map(toml::Value::Table)
        .map_err(|e| Failure::Internal(format!("{}: {e}", loaded.source.name)))
}

#[allow(clippy::too_many_arguments)]
fn run_sweep(
    cluster_path: &Path,
    workload_path: &Path,
    sets: &[String],
    options: SimOptions,
    shard: Option<&str>,
    shards: Option<usize>,
    format: LongFormat,
    out: Option<&Path>,
) -> Result<(), Failure> {
    let input = |e: sweep::SweepError| match e {
        sweep::SweepError::Plan(f) => Failure::Internal(f.to_string()),
        other => Failure::input(
            other.to_string(),
            Some("see `coplan sweep --help` for keys and shards".into()),
        ),
    };
    let sets: Vec<sweep::SetArg> = sets
        .iter()
        .map(|s| sweep::parse_set(s))
        .collect::<Result<_, _>>()
        .map_err(input)?;
    let shard = match shard {
        Some(s) => sweep::parse_shard(s).map_err(input)?,
        None => sweep::shard_from_env(&|k| std::env::var(k).ok(), shards)
            .map_err(input)?
            .unwrap_or((0, 1)),
    };
    let cluster_file = load(cluster_path, Expect::Cluster)?;
    let workload = load(workload_path, Expect::Workload)?;
    let mine = sweep::scenarios(&sets)
        .iter()
        .filter(|s| s.index % shard.1 == shard.0)
        .count();
    let units = match &workload.spec {
        Spec::Colocation(c) => {
            if let Some(bad) = options
                .planners
                .iter()
                .flatten()
                .find(|p| !coplan::spec::colocation::COLOCATION_PLANNERS.contains(&p.as_str()))
            {
                return Err(colocation_failure(
                    coplan::colocate::plan::ColocationError::UnknownPlanner(bad.clone()),
                ));
            }
            let _ = c;
            options.seeds.as_ref().map_or(10, Vec::len) as u64
        }
        _ => {
            let spec = preemption_spec(&workload)?;
            let (seeds, cycles, planners) = sim::resolve(spec, &options);
            engine::check_planner_names(&planners).map_err(|f| plan_failure(&workload, f))?;
            seeds.len() as u64 * cycles
        }
    };
    let bar = progress_bar(mine as u64 * units);
    let tick = || bar.inc(1);
    let output = sweep::sweep(
        &toml_value(&cluster_file)?,
        &toml_value(&workload)?,
        &sets,
        &options,
        shard,
        &tick,
    )
    .map_err(|e| match e {
        sweep::SweepError::Plan(f) => plan_failure(&workload, f),
        other => input(other),
    })?;
    bar.finish_and_clear();
    let text = match format {
        LongFormat::Csv => sweep_files::to_csv(&output),
        LongFormat::Jsonl => sweep_files::to_jsonl(&output),
    };
    emit(&text, out)
}

fn merge(
    files: &[std::path::PathBuf],
    format: MergeFormat,
    out: Option<&Path>,
) -> Result<(), Failure> {
    let mut inputs = Vec::new();
    for path in files {
        let source = read_source(path)?;
        let parsed = sweep_files::parse(&source.name, &source.text).map_err(|e| {
            Failure::input(
                e.to_string(),
                Some("merge takes the CSV or JSON Lines files of `coplan sweep`".into()),
            )
        })?;
        inputs.push((source.name, parsed));
    }
    let merged = sweep_files::merge(&inputs).map_err(|e| Failure::input(e.to_string(), None))?;
    let text = match format {
        MergeFormat::Table => sweep_files::summary_table(&merged),
        MergeFormat::Csv => sweep_files::to_csv(&merged),
        MergeFormat::Jsonl => sweep_files::to_jsonl(&merged),
    };
    emit(&text, out)
}

fn profile_fit(path: &Path, out: Option<&Path>) -> Result<(), Failure> {
    use coplan::colocate::latency;
    let source = read_source(path)?;
    let samples = latency::parse_samples(&source.text).map_err(|e| {
        line_error(
            &source,
            e.line,
            &e.message,
            "expected rows `kind,batch,tokens,stage_s`, kind = forward | backward | decode",
        )
    })?;
    if samples.is_empty() {
        return Err(Failure::input(format!("{}: no samples", source.name), None));
    }
    emit(&latency::to_toml(&latency::fit(&samples)), out)
}

fn colocation_failure(e: coplan::colocate::plan::ColocationError) -> Failure {
    match e {
        coplan::colocate::plan::ColocationError::UnknownPlanner(name) => Failure::input(
            format!("unknown planner `{name}`"),
            Some(format!(
                "expected one of {}",
                coplan::spec::colocation::COLOCATION_PLANNERS.join(", ")
            )),
        ),
        other => Failure::Internal(other.to_string()),
    }
}

/// Reads `[inference] trace` (relative to the workload file), when the workload names one.
fn load_trace(
    workload: &LoadedSpec,
    spec: &coplan::spec::ColocationSpec,
) -> Result<Option<Vec<coplan::colocate::trace::TraceRequest>>, Failure> {
    let Some(rel) = &spec.inference.trace else {
        return Ok(None);
    };
    let base = Path::new(&workload.source.name)
        .parent()
        .unwrap_or(Path::new("."));
    let path = base.join(rel);
    let source = read_source(&path)?;
    coplan::colocate::trace::parse_azure(&source.text, 1.0, None)
        .map(Some)
        .map_err(|e| {
            line_error(
                &source,
                e.line,
                &e.message,
                "expected the Azure LLM trace format `TIMESTAMP,ContextTokens,GeneratedTokens`",
            )
        })
}

fn timeline(
    cluster_path: &Path,
    workload_path: &Path,
    planner: &str,
    seed: Option<u64>,
    out: Option<&Path>,
) -> Result<(), Failure> {
    let (cluster, workload) = load_pair(cluster_path, workload_path)?;
    let Spec::Colocation(spec) = &workload.spec else {
        return Err(Failure::input(
            format!(
                "`{}`: timeline takes a `kind = \"colocation\"` workload",
                workload.source.name
            ),
            None,
        ));
    };
    workload
        .check(spec::validate::colocation_on_cluster(&cluster, spec))
        .map_err(|e| Failure::Invalid(vec![e]))?;
    if !coplan::spec::colocation::COLOCATION_PLANNERS.contains(&planner) {
        return Err(colocation_failure(
            coplan::colocate::plan::ColocationError::UnknownPlanner(planner.into()),
        ));
    }
    let trace = load_trace(&workload, spec)?;
    let setup = coplan::colocate::plan::setup(&cluster, spec, trace.as_deref(), seed);
    let Some((run, _)) =
        coplan::colocate::plan::run_planner(planner, spec, &setup).map_err(colocation_failure)?
    else {
        return Err(Failure::input(
            format!("planner `{planner}` has no timeline in this version"),
            None,
        ));
    };
    let json = coplan::colocate::plan::chrome_trace(&run, setup.config.nodes, setup.config.stages);
    let mut text = serde_json::to_string(&json).map_err(|e| Failure::Internal(e.to_string()))?;
    text.push('\n');
    emit(&text, out)
}

fn import_azure(
    path: &Path,
    rate_scale: f64,
    limit: Option<usize>,
    out: Option<&Path>,
) -> Result<(), Failure> {
    if !(rate_scale.is_finite() && rate_scale > 0.0) {
        return Err(Failure::input(
            format!("--rate-scale must be positive, got {rate_scale}"),
            None,
        ));
    }
    let source = read_source(path)?;
    let rows =
        coplan::colocate::trace::parse_azure(&source.text, rate_scale, limit).map_err(|e| {
            line_error(
                &source,
                e.line,
                &e.message,
                "expected the Azure LLM trace format `TIMESTAMP,ContextTokens,GeneratedTokens`",
            )
        })?;
    if rows.is_empty() {
        return Err(Failure::input(
            format!("{}: no requests", source.name),
            None,
        ));
    }
    emit(
        &coplan::colocate::trace::to_workload_toml(&rows, &source.name, rate_scale),
        out,
    )
}

/// A data-file error at a line, as a located diagnostic (file, line, column, the line shown).
fn line_error(source: &SourceFile, line: usize, message: &str, help: &str) -> Failure {
    let mut start = 0;
    for (i, l) in source.text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let end = start + l.trim_end_matches(['\n', '\r']).len();
            return Failure::Invalid(vec![InvalidSpec {
                source_file: source.clone(),
                issues: vec![coplan::spec::Issue {
                    code: "data::malformed-row",
                    message: message.to_string(),
                    label: "this row".into(),
                    help: Some(help.to_string()),
                    span: start..end,
                }],
            }]);
        }
        start += l.len();
    }
    Failure::input(
        format!("{}:{line}: {message}", source.name),
        Some(help.to_string()),
    )
}
