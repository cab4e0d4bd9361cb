//! `coplan timeline`: one planner's co-location run, op by op on every node stage.

use std::path::PathBuf;

use super::args::{Inputs, OutFile, TimelineFormat, file_stem};
use super::error::SessionError;
use super::load::{Pair, Workload, load_pair};
use crate::colocate::planning::candidate_run;
use crate::colocate::setup::setup;
use crate::plan::colocation::ColocationRun;

/// `coplan timeline`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct TimelineArgs {
    /// The cluster and the workload.
    #[command(flatten)]
    pub inputs: Inputs,
    /// The planner whose run is drawn.
    #[arg(long)]
    pub planner: String,
    /// Overrides [planners].seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Chrome Trace Event JSON (Perfetto), or a static SVG Gantt of the node stages.
    #[arg(long, value_enum, default_value_t = TimelineFormat::ChromeTrace)]
    pub format: TimelineFormat,
    /// Where the output goes.
    #[command(flatten)]
    pub out: OutFile,
}

/// A run to draw, and how.
pub struct TimelineOutcome {
    /// The run.
    pub timeline: Timeline,
    /// The output format.
    pub format: TimelineFormat,
    /// Where the output goes (`None`: stdout).
    pub out: Option<PathBuf>,
    /// "planner on workload, cluster", the chart's title.
    pub title: String,
}

/// Loads the inputs and runs the planner.
pub fn run(args: &TimelineArgs) -> Result<TimelineOutcome, SessionError> {
    let pair = load_pair(&args.inputs.cluster, &args.inputs.workload)?;
    Ok(TimelineOutcome {
        timeline: timeline(&pair, &args.planner, args.seed)?,
        format: args.format,
        out: args.out.out.clone(),
        title: format!(
            "{} on {}, {}",
            args.planner,
            file_stem(&args.inputs.workload),
            file_stem(&args.inputs.cluster)
        ),
    })
}

/// One planner's run of a co-location workload, for its timeline.
pub struct Timeline {
    /// The planner's run: its events on every node and stage.
    pub run: ColocationRun,
    /// Nodes (pipeline replicas) of the run.
    pub nodes: usize,
    /// Pipeline stages per node.
    pub stages: usize,
}

/// The run of a candidate co-location planner on one seed.
pub fn timeline(pair: &Pair, planner: &str, seed: Option<u64>) -> Result<Timeline, SessionError> {
    let Workload::Colocation { spec, trace } = &pair.workload else {
        return Err(SessionError::input(
            format!(
                "`{}`: timeline takes a `kind = \"colocation\"` workload",
                pair.source.source.name
            ),
            None,
        ));
    };
    let s = setup(&pair.cluster, spec, trace.as_deref(), seed);
    match candidate_run(planner, &s).map_err(|e| pair.planning_error(e))? {
        Some(run) => Ok(Timeline {
            run,
            nodes: s.config.nodes,
            stages: s.config.stages,
        }),
        None => Err(SessionError::input(
            format!("planner `{planner}` has no timeline in this version"),
            None,
        )),
    }
}
