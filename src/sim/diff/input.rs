//! Reading one simulate output, with errors located in its file: a diff is only as good as
//! its inputs, so anything odd is refused here before any comparison starts.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::error::DiffError;

/// The largest magnitude of a value `diff` compares. B − A of two such values is at most
/// 2e300, and the interval of the mean of such differences at most t(0.975, 1) = 12.7 times
/// that again: every number a diff writes stays finite. Beyond it, B − A of ±1e308 would
/// overflow to ±inf and the interval to NaN. No simulate metric comes near it (`docs/spec.md`,
/// "Limits", bounds every input of one far below).
pub const MAX_COMPARABLE: f64 = 1e300;

/// The words that open the refusal of a value beyond [`MAX_COMPARABLE`]: serde_json gives the
/// position only of an error raised within the typed read, so the refusal is raised there and
/// told from a shape error by these words.
const TOO_LARGE: &str = "a value diff cannot compare:";

/// A per-seed value or mean within [`MAX_COMPARABLE`]: refused as its number is read, so that
/// the error's position is the number's.
fn comparable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_option(ComparableVisitor)
}

/// Reads null or a number within [`MAX_COMPARABLE`].
struct ComparableVisitor;

impl<'de> Visitor<'de> for ComparableVisitor {
    type Value = Option<f64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_f64(self)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<f64>, E> {
        if v.abs() <= MAX_COMPARABLE {
            Ok(Some(v))
        } else {
            Err(E::custom(format!(
                "{TOO_LARGE} {v:e} is beyond ±{MAX_COMPARABLE:e}, where B − A and its confidence interval would overflow"
            )))
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<f64>, E> {
        self.visit_f64(v as f64)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<f64>, E> {
        self.visit_f64(v as f64)
    }
}

/// One value of a `per_seed` list, read through [`comparable`].
struct Comparable(Option<f64>);

impl<'de> Deserialize<'de> for Comparable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        comparable(d).map(Comparable)
    }
}

/// `per_seed`, every value within [`MAX_COMPARABLE`].
fn comparable_per_seed<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, Vec<Option<f64>>>, D::Error> {
    let lists = BTreeMap::<String, Vec<Comparable>>::deserialize(d)?;
    Ok(lists
        .into_iter()
        .map(|(metric, values)| (metric, values.into_iter().map(|c| c.0).collect()))
        .collect())
}

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
    /// Metric → one value per entry of `seeds`, null where the planner had none; each within
    /// [`MAX_COMPARABLE`].
    #[serde(deserialize_with = "comparable_per_seed")]
    pub per_seed: BTreeMap<String, Vec<Option<f64>>>,
}

/// The part of a metric's summary the comparison reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MeanInput {
    /// Null only where a simulation wrote a non-finite mean (JSON has no NaN); within
    /// [`MAX_COMPARABLE`].
    #[serde(default, deserialize_with = "comparable")]
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
        match message.strip_prefix(TOO_LARGE) {
            Some(why) => DiffError::TooLarge {
                file,
                line,
                column,
                message: format!("value{why}"),
            },
            None => DiffError::Shape {
                file,
                line,
                column,
                message,
            },
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

    #[test]
    fn values_whose_differences_would_overflow_are_refused_where_they_are() {
        let huge = "{\"kind\": \"simulation\", \"cluster\": \"c\", \"seeds\": [1, 2],\n\
                    \"planners\": [{\"name\": \"p\", \"metrics\": {},\n\
                    \"per_seed\": {\"victims\": [1.0,\n -1e308]}}]}";
        let e = parse("x.json", huge).expect_err("too large");
        match &e {
            DiffError::TooLarge { line, message, .. } => {
                assert_eq!(*line, 4, "{e:?}");
                assert!(
                    message.starts_with("value -1e308 is beyond ±1e300"),
                    "{e:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        let mean = r#"{"kind": "simulation", "cluster": "c", "seeds": [1],
            "planners": [{"name": "p", "metrics": {"victims": {"mean": 1.7e308}},
            "per_seed": {"victims": [1.0]}}]}"#;
        assert!(matches!(
            parse("x.json", mean),
            Err(DiffError::TooLarge { line: 2, .. })
        ));
        let within = r#"{"kind": "simulation", "cluster": "c", "seeds": [1, 2],
            "planners": [{"name": "p", "metrics": {"victims": {"mean": -1e300}},
            "per_seed": {"victims": [-1e300, null]}}]}"#;
        assert!(parse("x.json", within).is_ok());
    }
}
