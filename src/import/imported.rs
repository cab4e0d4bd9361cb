//! What an importer produces: the cluster and workload specs it generated, the summary of what
//! it read, and the comment lines that head both files.

use super::summary::ImportSummary;
use crate::spec::{ClusterSpec, PreemptionSpec};

/// What an import produced.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The generated cluster: one server type per distinct node layout (identical layouts share
    /// one), every node under its own name.
    pub cluster: ClusterSpec,
    /// The generated preemption workload: Running pods as `[[running]]`, Pending pods as
    /// `[[preempt]]` in creation order.
    pub workload: PreemptionSpec,
    /// Counts of what was read, mapped, defaulted, rounded and dropped.
    pub summary: ImportSummary,
    /// Comment lines for the top of both files: where they came from.
    pub comments: Vec<String>,
}

impl Imported {
    /// What `coplan import {command}` made of `sources`: the comment lines say so, then
    /// `notes` (each a whole comment line).
    pub(crate) fn new(
        (cluster, workload): (ClusterSpec, PreemptionSpec),
        summary: ImportSummary,
        (command, sources): (&str, &str),
        notes: &[&str],
    ) -> Imported {
        let mut comments = vec![format!(
            "# Imported by `coplan import {command}` from {sources}."
        )];
        comments.extend(notes.iter().map(|n| n.to_string()));
        Imported {
            cluster,
            workload,
            summary,
            comments,
        }
    }
}
