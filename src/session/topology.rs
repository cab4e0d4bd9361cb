//! `coplan topology`: a cluster's topology graph, with the state of a workload's running pods.

use std::path::{Path, PathBuf};

use super::args::TopologyFormat;
use super::error::SessionError;
use super::load::{load_cluster, load_spec};
use crate::colocate::setup::cluster_findings;
use crate::spec::{Expect, Spec};
use crate::topology::Cluster;
use crate::topology::state::{ClusterState, running_state};

/// `coplan topology`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct TopologyArgs {
    /// The cluster spec (TOML).
    pub cluster: PathBuf,
    /// A workload whose running pods mark the GPUs and cores they hold.
    pub workload: Option<PathBuf>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = TopologyFormat::Table)]
    pub format: TopologyFormat,
    /// With `--format svg`: draw this one server large, with core and GPU ids.
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
}

/// A cluster to draw, in the format asked for.
pub struct TopologyOutcome {
    /// The cluster.
    pub cluster: Cluster,
    /// The state of the workload's running pods, when a preemption workload was given.
    pub state: Option<ClusterState>,
    /// The output format.
    pub format: TopologyFormat,
    /// The one server to draw large (`--format svg`).
    pub server: Option<String>,
}

/// Checks the options, loads the cluster and the workload's running pods.
pub fn run(args: &TopologyArgs) -> Result<TopologyOutcome, SessionError> {
    if args.server.is_some() && args.format != TopologyFormat::Svg {
        return Err(SessionError::input(
            "`--server` draws one server; it needs `--format svg`",
            None,
        ));
    }
    let (cluster, state) = topology(&args.cluster, args.workload.as_deref())?;
    Ok(TopologyOutcome {
        cluster,
        state,
        format: args.format,
        server: args.server.clone(),
    })
}

/// A cluster and, with a preemption workload, the state of its `[[running]]` pods.
pub fn topology(
    cluster_path: &Path,
    workload_path: Option<&Path>,
) -> Result<(Cluster, Option<ClusterState>), SessionError> {
    let cluster = load_cluster(cluster_path)?;
    let Some(path) = workload_path else {
        return Ok((cluster, None));
    };
    let w = load_spec(path, Expect::Workload)?;
    let state = match &w.spec {
        Spec::Preemption(p) => match running_state(&cluster, p) {
            Ok(state) => Some(state),
            Err(findings) => {
                w.check(findings)
                    .map_err(|e| SessionError::Invalid(vec![e]))?;
                None
            }
        },
        Spec::Colocation(c) => {
            w.check(cluster_findings(&cluster, c))
                .map_err(|e| SessionError::Invalid(vec![e]))?;
            None
        }
        Spec::Cluster(_) => None,
    };
    Ok((cluster, state))
}
