//! Helpers shared by the diff unit tests: simulate outputs built in memory and read back
//! through `parse`, as the command would read them.

use serde_json::json;

use super::input::{SimulationInput, parse};

/// A simulate output of `planners` over `seeds`, every planner with the per-seed values
/// `metrics` and their means.
pub(super) fn output(
    file: &str,
    seeds: &[u64],
    planners: &[&str],
    metrics: &[(&str, &[Option<f64>])],
) -> SimulationInput {
    let planner = |name: &str| {
        let mut m = serde_json::Map::new();
        let mut per_seed = serde_json::Map::new();
        for (metric, vals) in metrics {
            let present: Vec<f64> = vals.iter().flatten().copied().collect();
            if !present.is_empty() {
                let mean = present.iter().sum::<f64>() / present.len() as f64;
                m.insert(metric.to_string(), json!({ "mean": mean }));
            }
            per_seed.insert(metric.to_string(), json!(vals));
        }
        json!({ "name": name, "metrics": m, "per_seed": per_seed })
    };
    let v = json!({
        "schema_version": 1,
        "kind": "simulation",
        "cluster": "c",
        "workload": "w",
        "seeds": seeds,
        "cycles": 2,
        "planners": planners.iter().map(|p| planner(p)).collect::<Vec<_>>(),
    });
    parse(file, &v.to_string()).expect("a valid simulate output")
}

pub(super) fn some(v: &[f64]) -> Vec<Option<f64>> {
    v.iter().copied().map(Some).collect()
}
