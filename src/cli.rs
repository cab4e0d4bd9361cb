//! Command-line definitions: every flag lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "coplan",
    version,
    about = "Offline planner for GPU clusters running co-located LLM workloads",
    long_about = "coplan reads TOML specs of a cluster and a workload, builds the hardware topology \
                  graph, and plans topology-aware preemption and training/inference co-location \
                  with greedy heuristics and an exact ILP.\n\nExit codes: 0 success, 1 internal \
                  error, 2 invalid input, 3 infeasible plan under an enforced requirement."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and validate spec files; print a one-line summary of each valid file.
    ///
    /// Cross-file references (a running pod's node, a co-location's stages against the servers'
    /// GPUs) are checked when exactly one cluster is among the files.
    Validate {
        /// Spec files (clusters and workloads, in any order).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of a spec kind (the same as schemas/<kind>.schema.json).
    Schema {
        #[arg(value_enum)]
        kind: SchemaKind,
    },
    /// Plan a workload on a cluster with every planner and compare them with the optimum.
    Plan {
        cluster: PathBuf,
        workload: PathBuf,
        #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
        format: PlanFormat,
        /// Planners to run, comma-separated (default: the workload's [planners].run).
        #[arg(long, value_delimiter = ',')]
        planners: Option<Vec<String>>,
        /// Seed of the initial fill (overrides [fill].seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Write the output to FILE (atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Exit with code 3 when no planner places every preemptor.
        #[arg(long)]
        require_all_placed: bool,
    },
    /// Print the topology graph of a cluster, with used-by marks from a workload's running pods.
    Topology {
        cluster: PathBuf,
        workload: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = TopologyFormat::Table)]
        format: TopologyFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Table,
    Json,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    Cluster,
    Preemption,
    Colocation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopologyFormat {
    Dot,
    Json,
    Table,
}
