//! The committed JSON Schemas under `schemas/` must match the Rust spec types.
//! Regenerate with `cargo run -- schema <kind> > schemas/<kind>.schema.json`.

use coplan::spec::{SpecKind, json_schema};

#[test]
fn committed_schemas_match_the_types() {
    for kind in [
        SpecKind::Cluster,
        SpecKind::Preemption,
        SpecKind::Colocation,
    ] {
        let path = format!("{}/schemas/{kind}.schema.json", env!("CARGO_MANIFEST_DIR"));
        let generated = format!(
            "{}\n",
            serde_json::to_string_pretty(&json_schema(kind)).expect("schema serializes")
        );
        if std::env::var_os("COPLAN_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &generated).expect("write schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{path} drifted from the spec types: run \
             `cargo run -- schema {kind} > schemas/{kind}.schema.json` (or \
             COPLAN_UPDATE_SCHEMAS=1 cargo test --test cli schemas::) and commit the result"
        );
    }
}

#[test]
fn schemas_reject_unknown_keys_and_name_required_ones() {
    let cluster = json_schema(SpecKind::Cluster);
    assert_eq!(cluster["additionalProperties"], false);
    let required: Vec<&str> = cluster["required"]
        .as_array()
        .expect("required list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(required.contains(&"name") && required.contains(&"pool"));
}

#[test]
fn committed_output_schemas_match_the_output_types() {
    for (name, schema) in [
        ("simulation", coplan::sim::diff::simulation_schema()),
        ("diff", coplan::sim::diff::diff_schema()),
        ("explain", coplan::plan::explain::explain_schema()),
        (
            "colocation-explain",
            coplan::plan::explain_colocation::colocation_explain_schema(),
        ),
    ] {
        let path = format!("{}/schemas/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
        let generated = format!(
            "{}\n",
            serde_json::to_string_pretty(&schema).expect("schema serializes")
        );
        if std::env::var_os("COPLAN_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &generated).expect("write schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{path} drifted from the output types: run \
             COPLAN_UPDATE_SCHEMAS=1 cargo test --test cli schemas:: and commit the result"
        );
    }
}
