//! The kinds of spec file.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `kind` key of a spec file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SpecKind {
    /// A cluster: server types and pools (also a file without `kind`).
    Cluster,
    /// A preemption workload.
    Preemption,
    /// A co-location workload.
    Colocation,
}

impl SpecKind {
    /// The kebab-case value of the `kind` key.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecKind::Cluster => "cluster",
            SpecKind::Preemption => "preemption",
            SpecKind::Colocation => "colocation",
        }
    }
}

impl fmt::Display for SpecKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The JSON Schema of a `[planners].run` list: planner names of one workload kind.
pub fn planner_list_schema(names: &[&str]) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": { "type": "string", "enum": names }
    })
}

/// The MILP/LP backend of every solving planner (`[planners] solver`, `--solver`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SolverBackend {
    /// The embedded pure-Rust solver (always built).
    #[default]
    Microlp,
    /// HiGHS, when the binary was built with `--features highs`.
    Highs,
}

impl SolverBackend {
    /// The name used by `--solver` and `[planners] solver`: `microlp` or `highs`.
    pub fn name(self) -> &'static str {
        match self {
            SolverBackend::Microlp => "microlp",
            SolverBackend::Highs => "highs",
        }
    }

    /// Whether this binary can solve with the backend.
    pub fn built(self) -> bool {
        match self {
            SolverBackend::Microlp => true,
            SolverBackend::Highs => cfg!(feature = "highs"),
        }
    }
}
