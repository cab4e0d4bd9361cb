//! Spec files: typed serde models of the three kinds, loading with located diagnostics, and
//! validation (single-file and cross-file).

pub mod cluster;
pub mod colocation;
pub mod eligibility;
pub mod fabric;
pub mod kind;
pub mod limits;
mod load;
pub mod preemption;
mod schema;
pub mod source;
pub mod validate;

pub use cluster::{ClusterSpec, Penalty, PoolSpec, ServerTypeSpec};
pub use colocation::ColocationSpec;
pub use kind::{SolverBackend, SpecKind};
pub use load::{Expect, InvalidSpec, LoadedSpec, Spec, load};
pub use preemption::PreemptionSpec;
pub use schema::{json_schema, sorted_keys};
pub use source::{Finding, Issue, SourceFile, SpanIndex};
