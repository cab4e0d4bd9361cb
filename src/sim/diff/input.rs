//! Reading one simulate output, with errors located in its file: a diff is only as good as
//! its inputs, so anything odd is refused here before any comparison starts.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use super::error::DiffError;

/// The part of a `coplan simulate --format json` output that the comparison reads; every
/// other field is ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SimulationInput {
    /// The file it was read from, for messages.
    #[serde(skip)]
    pub file: String,
    /// The output's `kind`; anything but `simulation` is refused before the typed read.
    pub kind: String,
    /// `colocation` in co-location outputs; preemption outputs have none.
    #[serde(default)]
    pub workload_kind: Option<String>,
    /// Name of the cluster simulated.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    #[serde(default)]
    pub workload: Option<String>,
    /// The seeds run, in the output's order (the order of every `per_seed` list).
    pub seeds: Vec<u64>,
    /// Cycles per seed (preemption outputs only).
    #[serde(default)]
    pub cycles: Option<u64>,
    /// One entry per planner, in the output's order.
    pub planners: Vec<PlannerInput>,
}

/// One planner's summaries and per-seed values, as a simulate output writes them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PlannerInput {
    /// The planner's registry name.
    pub name: String,
    /// Metric → its summary over seeds (only the mean is read).
    pub metrics: BTreeMap<String, MeanInput>,
    /// Metric → one value per entry of `seeds`, null where the planner had none.
    pub per_seed: BTreeMap<String, Vec<Option<f64>>>,
}

/// The part of a metric's summary the comparison reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MeanInput {
    /// Null only where a simulation wrote a non-finite mean (JSON has no NaN).
    pub mean: Option<f64>,
}

impl SimulationInput {
    /// `preemption` or `colocation`.
    pub fn workload_kind(&self) -> &str {
        self.workload_kind.as_deref().unwrap_or("preemption")
    }
}

/// Splits serde_json's message from the position it appends.
fn json_error(file: &str, e: &serde_json::Error) -> (String, usize, usize, String) {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
    (file.to_string(), e.line(), e.column(), message)
}

/// Reads one simulate output. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<SimulationInput, DiffError> {
    // A first pass as plain JSON tells syntax errors, other kinds of output and outputs of
    // older versions apart before the typed read, whose errors then point into a real
    // simulate output.
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let (file, line, column, message) = json_error(file, &e);
        DiffError::Syntax {
            file,
            line,
            column,
            message,
        }
    })?;
    let not_simulation = |reason: String| DiffError::NotSimulation {
        file: file.to_string(),
        reason,
    };
    match value.get("kind") {
        Some(Value::String(k)) if k == "simulation" => {}
        Some(Value::String(k)) => {
            return Err(not_simulation(format!(
                "its `kind` is `{k}`, not `simulation`"
            )));
        }
        _ if value.is_object() => return Err(not_simulation("it has no `kind`".into())),
        _ => return Err(not_simulation("it is not a JSON object".into())),
    }
    if let Some(planners) = value.get("planners").and_then(Value::as_array)
        && planners.iter().any(|p| p.get("per_seed").is_none())
    {
        return Err(DiffError::NoPerSeed { file: file.into() });
    }
    let mut input: SimulationInput = serde_json::from_str(text).map_err(|e| {
        let (file, line, column, message) = json_error(file, &e);
        DiffError::Shape {
            file,
            line,
            column,
            message,
        }
    })?;
    input.file = file.to_string();
    check_consistent(&input)?;
    Ok(input)
}

/// Seeds and planners named once each, one per-seed value per seed.
fn check_consistent(input: &SimulationInput) -> Result<(), DiffError> {
    let fail = |message: String| DiffError::Inconsistent {
        file: input.file.clone(),
        message,
    };
    let mut seen = BTreeSet::new();
    if let Some(dup) = input.seeds.iter().find(|s| !seen.insert(**s)) {
        return Err(fail(format!("seed {dup} is listed twice")));
    }
    let mut names = BTreeSet::new();
    for p in &input.planners {
        if !names.insert(p.name.as_str()) {
            return Err(fail(format!("planner `{}` is listed twice", p.name)));
        }
        for (metric, values) in &p.per_seed {
            if values.len() != input.seeds.len() {
                return Err(fail(format!(
                    "planner `{}`: `per_seed.{metric}` has {} values for {} seeds",
                    p.name,
                    values.len(),
                    input.seeds.len()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_that_are_not_comparable_simulate_outputs_are_refused() {
        let e = parse("x.json", "{\n  \"kind\": \"simulation\",\n  oops\n}").expect_err("syntax");
        assert!(
            matches!(
                &e,
                DiffError::Syntax {
                    line: 3,
                    column: 3,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = parse("x.json", r#"{"kind": "preemption", "planners": []}"#).expect_err("plan");
        assert!(e.to_string().contains("its `kind` is `preemption`"), "{e}");
        let e = parse("x.json", "[1, 2]").expect_err("array");
        assert!(matches!(e, DiffError::NotSimulation { .. }), "{e}");
        let old = r#"{"kind": "simulation", "cluster": "c", "seeds": [1],
            "planners": [{"name": "p", "metrics": {"victims": {"mean": 1.0}}}]}"#;
        let e = parse("x.json", old).expect_err("old");
        assert!(matches!(e, DiffError::NoPerSeed { .. }), "{e}");
        assert!(e.to_string().contains("re-run `coplan simulate"), "{e}");
        let short = r#"{"kind": "simulation", "cluster": "c", "seeds": [1, 2],
            "planners": [{"name": "p", "metrics": {}, "per_seed": {"victims": [1.0]}}]}"#;
        let e = parse("x.json", short).expect_err("short");
        assert!(e.to_string().contains("1 values for 2 seeds"), "{e}");
        let typed = r#"{"kind": "simulation", "cluster": "c", "seeds": "all",
            "planners": []}"#;
        let e = parse("x.json", typed).expect_err("type");
        assert!(matches!(e, DiffError::Shape { line: 1, .. }), "{e:?}");
    }
}
