//! The arguments several commands share, each defined once and flattened into the commands
//! that take it, and the value types of the command line.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::error::SessionError;
use super::interrupt::cooperative_stop;
use super::load::{Pair, load_pair};
use crate::sim::preemption::SimOptions;
use crate::spec::SolverBackend;
use crate::spec::limits::{MAX_CYCLES, MAX_SEEDS};
use crate::spec::preemption::EventSolver;

/// A cluster spec and a workload spec, the two inputs of every planning command.
#[derive(Debug, Clone, clap::Args)]
pub struct Inputs {
    /// The cluster spec (TOML).
    pub cluster: PathBuf,
    /// The workload spec (TOML): a preemption or a co-location workload.
    pub workload: PathBuf,
}

/// The planners to run.
#[derive(Debug, Clone, clap::Args)]
pub struct PlannerList {
    /// Planners to run, comma-separated (default: the workload's [planners].run).
    #[arg(long, value_delimiter = ',')]
    pub planners: Option<Vec<String>>,
}

/// How the exact side solves, and the run's time budget.
#[derive(Debug, Clone, clap::Args)]
pub struct Solving {
    /// MILP/LP backend of every solve (overrides [planners].solver); `highs` needs a
    /// binary built with `--features highs`.
    #[arg(long, value_enum)]
    pub solver: Option<SolverArg>,
    /// Preemption: how `ilp` and every decision gap find the per-event optimum (overrides
    /// [planners].event_solver): `exact` (branch and bound, the default) or `milp` (one
    /// MILP per server on --solver, the reference).
    #[arg(long, value_enum)]
    pub event_solver: Option<EventSolverArg>,
    /// The time budget in seconds of one run (`plan`, `explain`), or of each planned cycle
    /// (each seed of a co-location run) of `simulate`, `sweep` and `capacity`: one deadline
    /// shared by its solves, bounds and searches (the exact side then reports its best plan
    /// and proven bound so far).
    #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT_S, value_parser = time_limit_arg)]
    pub time_limit: f64,
}

/// Seeds and cycles of a repeated run.
#[derive(Debug, Clone, clap::Args)]
pub struct Repeats {
    /// Seeds 1..=N (default: the workload's [simulation].seeds; at most 10 000).
    #[arg(long, value_parser = seeds_arg())]
    pub seeds: Option<u64>,
    /// Cycles per seed (default: [simulation].cycles; at most 1 000 000).
    #[arg(long, value_parser = cycles_arg())]
    pub cycles: Option<u64>,
}

/// Where the main output goes.
#[derive(Debug, Clone, clap::Args)]
pub struct OutFile {
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// A picture drawn beside the main output.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotFile {
    /// Also draw the result as SVG to this file: `simulate`, the headline metrics (bars with
    /// 95 % CI whiskers); `sweep` and `merge`, a line per planner with 95 % CI bands over the
    /// swept value, a panel per metric; `capacity`, the metric against the pool size.
    #[arg(long, value_name = "F.svg")]
    pub plot: Option<PathBuf>,
}

/// Where the main output goes, and the chart drawn beside it.
#[derive(Debug, Clone, clap::Args)]
pub struct Written {
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
    /// The chart, when asked for.
    #[command(flatten)]
    pub plot: PlotFile,
}

/// The default of `--time-limit`, seconds.
pub const DEFAULT_TIME_LIMIT_S: f64 = 10.0;

/// `--time-limit S`: a finite number of seconds above 0 and at most a day.
fn time_limit_arg(text: &str) -> Result<f64, String> {
    let s: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if s.is_finite() && s > 0.0 && s <= 86_400.0 {
        Ok(s)
    } else {
        Err(format!("`{text}`: expected seconds in (0, 86400]"))
    }
}

/// `--seeds N`: 1 ..= `MAX_SEEDS` (docs/spec.md, "Limits").
pub fn seeds_arg() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=MAX_SEEDS)
}

/// `--cycles N`: 1 ..= `MAX_CYCLES` (docs/spec.md, "Limits").
pub fn cycles_arg() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=MAX_CYCLES)
}

/// `--solver`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SolverArg {
    /// microlp, built in.
    Microlp,
    /// HiGHS (a binary built with `--features highs`).
    Highs,
}

impl From<SolverArg> for SolverBackend {
    fn from(a: SolverArg) -> Self {
        match a {
            SolverArg::Microlp => SolverBackend::Microlp,
            SolverArg::Highs => SolverBackend::Highs,
        }
    }
}

/// `--event-solver`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventSolverArg {
    /// Branch and bound over servers and victim sets (proven optimal).
    Exact,
    /// One MILP per server on the `--solver` backend (the reference).
    Milp,
}

impl From<EventSolverArg> for EventSolver {
    fn from(a: EventSolverArg) -> Self {
        match a {
            EventSolverArg::Exact => EventSolver::Exact,
            EventSolverArg::Milp => EventSolver::Milp,
        }
    }
}

/// `plan --format` and `simulate --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// A terminal table.
    Table,
    /// JSON.
    Json,
    /// Long-format CSV rows.
    Csv,
    /// Per preemptor, its node and the pods evicted for it, by name (JSON; preemption only).
    Evictions,
}

/// `explain --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// A terminal table.
    Table,
    /// JSON.
    Json,
}

/// `capacity --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CapacityFormat {
    /// A terminal table.
    Table,
    /// JSON, with every probe.
    Json,
}

/// `diff --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// A terminal table.
    Table,
    /// JSON.
    Json,
    /// CSV rows.
    Csv,
}

/// `sweep --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LongFormat {
    /// Long-format CSV rows.
    Csv,
    /// JSON Lines, one row a line.
    Jsonl,
}

/// `merge --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    /// A summary table per planner and metric.
    Table,
    /// Long-format CSV rows.
    Csv,
    /// JSON Lines, one row a line.
    Jsonl,
}

/// `topology --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopologyFormat {
    /// Graphviz DOT.
    Dot,
    /// JSON.
    Json,
    /// A terminal table.
    Table,
    /// A server map: sockets, NUMA nodes, cores and GPUs coloured by the pod holding them (a
    /// rack map of a cluster with `[topology] levels`, when no workload is given).
    Svg,
}

/// `timeline --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimelineFormat {
    /// Chrome Trace Event JSON (open in Perfetto).
    ChromeTrace,
    /// A static SVG Gantt chart of the node stages.
    Svg,
}

/// The format of an import summary: text on stderr, or JSON on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// Text on stderr.
    Text,
    /// JSON on stdout.
    Json,
}

/// `plan --events`: which event lines a preemption table prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsArg {
    /// No event lines.
    None,
    /// The costliest events of each planner.
    Worst,
    /// Every event.
    All,
}

impl Inputs {
    /// The cluster and workload, with `--solver` and `--event-solver` applied.
    pub fn load_solving(&self, solving: &Solving) -> Result<Pair, SessionError> {
        load_pair(&self.cluster, &self.workload)?
            .with_solver(solving.solver.map(Into::into))?
            .with_event_solver(solving.event_solver.map(Into::into))
    }

    /// "workload on cluster", by their file names, for titles.
    pub fn subject(&self) -> String {
        format!(
            "{} on {}",
            file_stem(&self.workload),
            file_stem(&self.cluster)
        )
    }
}

/// A file's name without folder and extension, for titles.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The options of a repeated run that stops itself at a stop request, each cycle (each seed of
/// a co-location run) with its own budget.
pub fn sim_options(
    repeats: &Repeats,
    planners: &PlannerList,
    solver: Option<SolverBackend>,
    time_limit: f64,
) -> SimOptions {
    SimOptions {
        seeds: repeats.seeds.map(|n| (1..=n).collect()),
        cycles: repeats.cycles,
        planners: planners.planners.clone(),
        solver,
        cancel: cooperative_stop().with_budget(time_limit),
    }
}
