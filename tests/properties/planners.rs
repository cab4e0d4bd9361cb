//! One list of planner names per workload kind: spec validation checks `[planners].run`
//! against it, the registries build exactly its planners in its order, and the committed JSON
//! Schemas offer exactly its names.

use coplan::colocate::registry as colocation;
use coplan::plan::PlannerRole;
use coplan::preempt::registry as preemption;
use coplan::spec::colocation::COLOCATION_PLANNERS;
use coplan::spec::preemption::PREEMPTION_PLANNERS;
use coplan::spec::{SpecKind, json_schema};

/// The names the committed schema allows in `[planners].run`.
fn schema_names(kind: SpecKind, planners_def: &str) -> Vec<String> {
    let path = format!("{}/schemas/{kind}.schema.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("committed schema");
    let committed: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    assert_eq!(committed, json_schema(kind), "{path} is up to date");
    committed["$defs"][planners_def]["properties"]["run"]["items"]["enum"]
        .as_array()
        .expect("run items list the planner names")
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect()
}

#[test]
fn preemption_names_registry_and_schema_agree() {
    let built: Vec<&str> = preemption::registry().iter().map(|p| p.name()).collect();
    assert_eq!(built, PREEMPTION_PLANNERS, "registry order = the list");
    for name in PREEMPTION_PLANNERS {
        let planner = preemption::planner(name).expect("every listed name builds");
        assert_eq!(planner.name(), name);
    }
    assert!(preemption::planner("lemix").is_none());
    assert_eq!(
        schema_names(SpecKind::Preemption, "PreemptionPlanners"),
        PREEMPTION_PLANNERS
    );
    let roles: Vec<(&str, PlannerRole)> = preemption::registry()
        .iter()
        .filter(|p| p.role() != PlannerRole::Candidate)
        .map(|p| (p.name(), p.role()))
        .collect();
    assert_eq!(
        roles,
        [
            ("ilp", PlannerRole::PerEventReference),
            ("ilp-batch", PlannerRole::BatchReference)
        ]
    );
}

#[test]
fn colocation_names_registry_and_schema_agree() {
    let built: Vec<&str> = colocation::registry().iter().map(|p| p.name()).collect();
    assert_eq!(built, COLOCATION_PLANNERS, "registry order = the list");
    for name in COLOCATION_PLANNERS {
        let planner = colocation::planner(name).expect("every listed name builds");
        assert_eq!(planner.name(), name);
    }
    assert!(colocation::planner("k8s-default").is_none());
    assert_eq!(
        schema_names(SpecKind::Colocation, "ColocationPlanners"),
        COLOCATION_PLANNERS
    );
    let references: Vec<&str> = colocation::registry()
        .iter()
        .filter(|p| p.role() == PlannerRole::ScheduleOptimum)
        .map(|p| p.name())
        .collect();
    assert_eq!(references, ["ilp"]);
}

#[test]
fn unknown_names_are_errors_naming_the_name() {
    let err = preemption::resolve(&["k8s-default".into(), "flextopo".into()])
        .err()
        .expect("unknown name");
    assert_eq!(err.to_string(), "unknown planner `flextopo`");
    assert!(colocation::resolve(&["lemix-x".into()]).is_err());
}
