//! Limits of the export readers (`coplan import k8s`), sized for a cluster of 10,000 nodes
//! and 200,000 pods and checked while reading, so that an input beyond them is a located
//! input error (exit 2) that names the limit, never an exhausted machine. `docs/spec.md`
//! ("Limits") lists them with the spec limits.

use super::error::ImportError;
use super::tree::Pos;

/// Bytes of one Kubernetes export file. A snapshot of 10,000 nodes and 200,000 pods with
/// managedFields and NRT objects (`scripts/k8s-snapshot.py --nodes 10000 --noise
/// --pods-per-node 20`) is 1.37 GB as `-o yaml` and 2.99 GB as `-o json` (indented by four, as
/// kubectl writes it); the reader holds the file once and one object at a time. Columns and
/// lines stay below 2^32 (the range of a diagnostic's place).
pub const MAX_EXPORT_BYTES: u64 = 3 << 30;

/// Nesting of maps and sequences in one document: Kubernetes objects nest about 15 deep
/// (managedFields' `fieldsV1` the deepest); the readers recurse once per level.
pub const MAX_NESTING: usize = 128;

/// Refuses a map or sequence of the `file`-th input starting at `at` that nests `depth`
/// levels deep or more: the readers' [`MAX_NESTING`].
pub fn check_nesting(file: usize, depth: usize, at: Pos) -> Result<(), ImportError> {
    if depth >= MAX_NESTING {
        return Err(ImportError::at(
            file,
            at.line,
            Some(at.column),
            format!("values nest deeper than {MAX_NESTING} levels, coplan's limit for an export"),
        )
        .with(
            "too deep",
            "Kubernetes objects nest about 15 deep; docs/spec.md, \"Limits\", lists the limits",
        ));
    }
    Ok(())
}

/// Values one YAML document may produce by expanding aliases (`*name`): far above what
/// anchors in a hand-written export produce, far below what a "billion laughs" document asks
/// for (10^9 values from a few hundred bytes). Honest values (written out) are not counted.
pub const MAX_ALIAS_VALUES: u64 = 1_000_000;

/// The largest resource quantity read (CPU cores, GPUs, in a Node's, a Pod's or an NRT zone's
/// resources): the range of the allocator's request (`docs/spec.md`: GPUs and cores one pod
/// requests), far above any node.
pub const MAX_QUANTITY: f64 = crate::spec::limits::MAX_POD_CORES as f64;

/// Seconds between the earliest and the latest pod creation time: the range of a preemption
/// workload's clock (`now_s`, `start_time_s`, counted from the earliest pod), about 317 years.
pub const MAX_CLOCK_SPAN_S: f64 = crate::spec::limits::MAX_TIMESTAMP_S;
