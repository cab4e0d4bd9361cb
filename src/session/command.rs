//! Every command: its arguments, the one session function that runs it, and its outcome.
//! The shell parses a [`Command`], calls [`run`], renders the [`Outcome`] with
//! `report::render`, writes it and exits with its [`Outcome::verdict`].

use super::capacity::{self, CapacityArgs, CapacityOutcome};
use super::diff::{self, DiffArgs, DiffOutcome};
use super::error::SessionError;
use super::explain::{self, ExplainArgs, ExplainOutcome};
use super::import::{self, ImportCommand, Imported};
use super::merge::{self, MergeArgs, MergeOutcome};
use super::plan::{self, PlanArgs, PlanOutcome};
use super::profile::{self, FitOutcome, ProfileCommand};
use super::simulate::{self, SimulateArgs, SimulateOutcome};
use super::sweep::{self, SweepArgs, SweepOutcome};
use super::timeline::{self, TimelineArgs, TimelineOutcome};
use super::topology::{self, TopologyArgs, TopologyOutcome};
use super::validate::{self, ValidateArgs, Validation};
use crate::session::import::azure::AzureOutcome;
use crate::session::import::k8s::SpecOutputs;
use crate::session::import::vidur::VidurOutcome;
use crate::spec::{self, SpecKind};

/// The commands of `coplan`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Parse and validate spec files; print a one-line summary of each valid file.
    ///
    /// Cross-file references (a running pod's node, a co-location's stages against the servers'
    /// GPUs) are checked when exactly one cluster is among the files.
    Validate(ValidateArgs),
    /// Print the JSON Schema of a spec kind (the same as schemas/<kind>.schema.json).
    Schema {
        /// The spec kind.
        #[arg(value_enum)]
        kind: SchemaKind,
    },
    /// Plan a workload on a cluster with every planner and compare them with the optimum.
    Plan(PlanArgs),
    /// Explain one decision: every planner's choice beside the per-event optimum on the same
    /// state, with every term of the canonical cost and the term that decides the difference.
    ///
    /// Preemption workloads: `--event N`, the N-th preemptor of the `[[preempt]]` list (from 1).
    /// Co-location workloads: `--task ID`, a task (request or training task) by its id in the
    /// plan's events (from 0): each planner's node choice with the node scores it compared,
    /// its deferrals and why, the task's response, TTFT and TBT as run, and where `ilp` put it.
    Explain(ExplainArgs),
    /// Run the paper's protocol: per seed, fill by seeded churn; per cycle, plan the preemptor
    /// list with every planner from the same state; report mean, 95 % CI, min, max and totals.
    Simulate(SimulateArgs),
    /// Simulate the Cartesian product of spec values; write long-format rows.
    ///
    /// KEY is a dotted path into the workload (`flextopo.alpha`, `fill.target_gpu_utilization`)
    /// or, for `pool.…`, `server_type.…` and `cluster.…`, into the cluster; numbers index arrays
    /// (`pool.0.server_type`). Scenario k runs in shard k mod N: `--shard I/N`, or
    /// JOB_COMPLETION_INDEX with `--shards N` (Kubernetes Indexed Job), or
    /// SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (Slurm array).
    Sweep(SweepArgs),
    /// Join sweep shard outputs (CSV or JSON Lines); reject overlaps and missing scenarios.
    Merge(MergeArgs),
    /// How much cluster a workload needs.
    ///
    /// Preemption workloads: the fewest servers in one pool (the other pools fixed) at which
    /// `--target` holds for each planner, by bisection over simulated outcomes (mean and 95 %
    /// CI over seeds at every size tried; a bracket where the CI straddles the target).
    /// Co-location workloads: each planner's sustainable request rate, the highest Poisson rate
    /// at which its serving backlog stays bounded, by bisection on the simulator.
    Capacity(CapacityArgs),
    /// Write a co-location plan's node timelines as Chrome Trace Event JSON (open in Perfetto):
    /// pid = node, tid = stage; forward, backward, decode, offload and sync ops as events. Or,
    /// with `--format svg`, a static Gantt chart of the node stages.
    Timeline(TimelineArgs),
    /// Turn what you run into specs: a Kubernetes snapshot, the Alibaba GPU trace, the Azure LLM
    /// trace, Vidur's profiles.
    Import {
        /// The subcommand.
        #[command(subcommand)]
        command: ImportCommand,
    },
    /// Latency profiles of the co-location model.
    Profile {
        /// The subcommand.
        #[command(subcommand)]
        command: ProfileCommand,
    },
    /// Compare two `coplan simulate --format json` outputs of the same planners and seeds:
    /// per planner and metric, A's and B's means, B − A and the 95 % confidence interval of
    /// the paired per-seed differences, with whether it excludes 0 (better / worse).
    Diff(DiffArgs),
    /// Print the topology graph of a cluster, with used-by marks from a workload's running pods.
    Topology(TopologyArgs),
}

/// `coplan schema KIND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    /// A cluster spec.
    Cluster,
    /// A preemption workload.
    Preemption,
    /// A co-location workload.
    Colocation,
}

/// What a command produced, with how its output is to be written.
pub enum Outcome {
    /// `validate`.
    Validate(Validation),
    /// `schema`: the JSON Schema.
    Schema(serde_json::Value),
    /// `topology`.
    Topology(TopologyOutcome),
    /// `plan`.
    Plan(PlanOutcome),
    /// `explain`.
    Explain(ExplainOutcome),
    /// `simulate`.
    Simulate(SimulateOutcome),
    /// `sweep`.
    Sweep(SweepOutcome),
    /// `merge`.
    Merge(MergeOutcome),
    /// `capacity`.
    Capacity(CapacityOutcome),
    /// `timeline`.
    Timeline(TimelineOutcome),
    /// `import k8s` and `import alibaba-openb`: a cluster and a workload to write.
    ImportSpecs(Box<Imported>, SpecOutputs),
    /// `import azure-llm`.
    ImportAzure(Box<AzureOutcome>),
    /// `import vidur-profile`.
    ImportVidur(VidurOutcome),
    /// `diff`.
    Diff(DiffOutcome),
    /// `profile fit`.
    ProfileFit(FitOutcome),
}

/// Runs one command: reads its inputs, checks its options, computes its result.
pub fn run(command: &Command) -> Result<Outcome, SessionError> {
    Ok(match command {
        Command::Validate(a) => Outcome::Validate(validate::validate(&a.files)),
        Command::Schema { kind } => Outcome::Schema(spec::json_schema(match kind {
            SchemaKind::Cluster => SpecKind::Cluster,
            SchemaKind::Preemption => SpecKind::Preemption,
            SchemaKind::Colocation => SpecKind::Colocation,
        })),
        Command::Topology(a) => Outcome::Topology(topology::run(a)?),
        Command::Plan(a) => Outcome::Plan(plan::run(a)?),
        Command::Explain(a) => Outcome::Explain(explain::run(a)?),
        Command::Simulate(a) => Outcome::Simulate(simulate::run(a)?),
        Command::Sweep(a) => Outcome::Sweep(sweep::run(a)?),
        Command::Merge(a) => Outcome::Merge(merge::run(a)?),
        Command::Capacity(a) => Outcome::Capacity(capacity::run(a)?),
        Command::Timeline(a) => Outcome::Timeline(timeline::run(a)?),
        Command::Import { command } => match command {
            ImportCommand::K8s(a) => {
                Outcome::ImportSpecs(Box::new(import::k8s::run(a)?), a.outputs.clone())
            }
            ImportCommand::AlibabaOpenb(a) => {
                Outcome::ImportSpecs(Box::new(import::alibaba::run(a)?), a.outputs.clone())
            }
            ImportCommand::AzureLlm(a) => Outcome::ImportAzure(Box::new(import::azure::run(a)?)),
            ImportCommand::VidurProfile(a) => Outcome::ImportVidur(import::vidur::run(a)?),
        },
        Command::Profile { command } => Outcome::ProfileFit(profile::run(command)?),
        Command::Diff(a) => Outcome::Diff(diff::run(a)?),
    })
}

impl Outcome {
    /// The exit status once the output is written: a requirement the user enforced that does
    /// not hold (exit 3), or invalid files `validate` found (exit 2).
    pub fn verdict(self) -> Result<(), SessionError> {
        match self {
            Outcome::Validate(v) => v.verdict(),
            Outcome::Plan(p) => p.verdict(),
            Outcome::Diff(d) => d.verdict(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Command;
    use clap::Subcommand;

    /// Every command's arguments, flattened groups included, form a valid command line: clap
    /// checks ids, value names and defaults only when a command is built, so build them all.
    #[test]
    fn every_command_line_is_well_formed() {
        Command::augment_subcommands(clap::Command::new("coplan")).debug_assert();
    }
}
