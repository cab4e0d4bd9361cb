//! The JSON Schemas of the simulate and diff outputs, generated from the types themselves so
//! that `schemas/` cannot drift from what coplan writes.

use schemars::JsonSchema;
use serde_json::Value;

use super::report::DiffReport;
use crate::sim::colocation::ColocationSimulation;
use crate::sim::preemption::PreemptionSimulation;
use crate::spec::sorted_keys;

/// The output of `coplan simulate --format json`: a preemption or a co-location simulation.
// Never built: it exists for its schema.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
enum SimulationOutput {
    Preemption(PreemptionSimulation),
    Colocation(ColocationSimulation),
}

/// The JSON Schema of `coplan simulate --format json` (`schemas/simulation.schema.json`),
/// keys sorted so that the text is byte-stable.
pub fn simulation_schema() -> Value {
    sorted_keys(schemars::schema_for!(SimulationOutput).to_value())
}

/// The JSON Schema of `coplan diff --format json` (`schemas/diff.schema.json`).
pub fn diff_schema() -> Value {
    sorted_keys(schemars::schema_for!(DiffReport).to_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_describe_both_outputs() {
        let s = simulation_schema();
        assert!(s["anyOf"].as_array().is_some_and(|a| a.len() == 2), "{s}");
        let d = diff_schema();
        assert!(d["properties"]["rows"].is_object(), "{d}");
    }
}
