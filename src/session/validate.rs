//! `coplan validate`: parse and validate spec files, with the cross-file checks when exactly
//! one cluster is among them.

use std::path::PathBuf;

use super::error::SessionError;
use super::load::read_spec_source;
use crate::colocate::setup::cluster_findings;
use crate::plan::estimate::{self, WorkEstimate};
use crate::spec::{self, Expect, InvalidSpec, LoadedSpec, Spec, SpecKind};
use crate::topology::Cluster;
use crate::topology::state::running_state;

/// `coplan validate`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// Spec files (clusters and workloads, in any order).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

impl Validation {
    /// Exit status: invalid (2) when any file is invalid or unreadable.
    pub fn verdict(self) -> Result<(), SessionError> {
        if self.invalid.is_empty() && self.unreadable.is_empty() {
            Ok(())
        } else {
            Err(SessionError::Invalid(self.invalid))
        }
    }
}

/// What `validate` found: the valid files, the invalid ones, the unreadable ones.
pub struct Validation {
    /// The files that loaded and validated, in argument order.
    pub valid: Vec<LoadedSpec>,
    /// The work each valid file asks for, where it is large (one entry per `valid` file; a
    /// preemption workload's needs the cluster among the files).
    pub estimates: Vec<Option<WorkEstimate>>,
    /// The files with spec errors, each with its located issues.
    pub invalid: Vec<InvalidSpec>,
    /// (message, help) of each file that could not be read.
    pub unreadable: Vec<(String, Option<String>)>,
    /// Clusters among the files; cross-file checks ran only with exactly one.
    pub clusters: usize,
}

/// Parses and validates every file; with exactly one cluster among them, checks each workload
/// against it.
pub fn validate(files: &[PathBuf]) -> Validation {
    let mut invalid = Vec::new();
    let mut unreadable = Vec::new();
    let mut loaded = Vec::new();
    for path in files {
        match read_spec_source(path) {
            Ok(source) => match spec::load(source, Expect::Any) {
                Ok(l) => loaded.push(l),
                Err(e) => invalid.push(e),
            },
            Err(SessionError::Input { message, help }) => unreadable.push((message, help)),
            Err(SessionError::Invalid(list)) => invalid.extend(list),
            Err(other) => unreadable.push((other.to_string(), None)),
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
    let cluster_count = clusters.len();
    let mut valid = Vec::new();
    for l in loaded {
        let cross = match (&cluster, &l.spec) {
            (Some(c), Spec::Preemption(w)) => running_state(c, w).err().unwrap_or_default(),
            (Some(c), Spec::Colocation(w)) => cluster_findings(c, w),
            _ => Vec::new(),
        };
        match l.check(cross) {
            Ok(()) => valid.push(l),
            Err(e) => invalid.push(e),
        }
    }
    let estimates = valid
        .iter()
        .map(|l| {
            let estimate = match (&cluster, &l.spec) {
                (Some(c), Spec::Preemption(w)) => Some(estimate::preemption(c, w)),
                (_, Spec::Colocation(w)) => Some(estimate::colocation(w)),
                _ => None,
            };
            estimate.filter(WorkEstimate::is_large)
        })
        .collect();
    Validation {
        valid,
        estimates,
        invalid,
        unreadable,
        clusters: cluster_count,
    }
}
