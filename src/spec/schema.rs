//! The JSON Schemas of the spec kinds, as committed under `schemas/`.

use super::cluster::ClusterSpec;
use super::colocation::ColocationSpec;
use super::kind::SpecKind;
use super::preemption::PreemptionSpec;

/// JSON Schema of a spec kind, as committed under `schemas/`.
pub fn json_schema(kind: SpecKind) -> serde_json::Value {
    let schema = match kind {
        SpecKind::Cluster => schemars::schema_for!(ClusterSpec),
        SpecKind::Preemption => schemars::schema_for!(PreemptionSpec),
        SpecKind::Colocation => schemars::schema_for!(ColocationSpec),
    };
    sorted_keys(schema.to_value())
}

/// The value with every object's keys in ascending order, whatever order serde_json's maps
/// keep (a dependency turns on its `preserve_order`): JSON output stays byte-stable.
pub fn sorted_keys(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted_keys(v)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sorted_keys).collect())
        }
        other => other,
    }
}
