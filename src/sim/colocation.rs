//! `coplan simulate` for co-location workloads: one task set per seed, every planner on it,
//! each metric summarised over seeds (mean, 95 % CI, min, max). Seeds run in parallel; the
//! result equals a sequential run.

use std::collections::BTreeMap;

use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use super::stats::{Summary, summarize};
use crate::colocate::capacity::resolve_load;
use crate::colocate::planning::plan_until;
use crate::colocate::trace::TraceRequest;
use crate::plan::cancel::Cancel;
use crate::plan::colocation::ColocationPlannerReport;
use crate::plan::error::PlanningError;
use crate::spec::ColocationSpec;
use crate::topology::Cluster;

/// One co-location planner summarised over seeds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ColocationPlannerSummary {
    /// The planner's registry name.
    pub name: String,
    /// Metric → its summary over the seeds where it had a value (nested metrics flattened, e.g.
    /// `slo_attainment_5x`; `gap` included).
    pub metrics: BTreeMap<String, Summary>,
    /// Metric → its value on each seed, in the order of the top-level `seeds`; null where the
    /// planner had no value on that seed. What `coplan diff` pairs seed by seed.
    pub per_seed: BTreeMap<String, Vec<Option<f64>>>,
}

/// Per seed: per planner, metric → value.
pub type SeedValues = (u64, Vec<(String, BTreeMap<String, f64>)>);

/// `coplan simulate` output of a co-location workload.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ColocationSimulation {
    /// Version of this output's layout; 1.
    pub schema_version: u32,
    /// Always `"simulation"`.
    pub kind: &'static str,
    /// Always `"colocation"`.
    pub workload_kind: &'static str,
    /// Name of the cluster.
    pub cluster: String,
    /// The workload spec's `name`, when it has one.
    pub workload: Option<String>,
    /// The seeds run, one task set each, in the order given.
    pub seeds: Vec<u64>,
    /// One summary per planner, in the order asked.
    pub planners: Vec<ColocationPlannerSummary>,
    /// Per-seed values, for long-format output (not in JSON: the summaries are).
    #[serde(skip)]
    pub per_seed: Vec<SeedValues>,
}

/// Numeric metrics of a planner, nested maps flattened (`slo_attainment_5x`), plus its gap.
fn flatten(p: &ColocationPlannerReport) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Some(m) = &p.metrics
        && let Some(map) = serde_json::to_value(m)
            .ok()
            .and_then(|v| v.as_object().cloned())
    {
        for (k, v) in map {
            match v {
                serde_json::Value::Object(inner) => {
                    for (ik, iv) in inner {
                        if let Some(x) = iv.as_f64() {
                            out.insert(format!("{k}_{ik}"), x);
                        }
                    }
                }
                other => {
                    if let Some(x) = other.as_f64() {
                        out.insert(k, x);
                    }
                }
            }
        }
    }
    if let Some(g) = p.gap {
        out.insert("gap".into(), g);
    }
    out
}

/// Plans the workload once per seed (in parallel, the result equal to a sequential run) with the
/// named planners (`None`: `[planners].run`) and summarises each metric over the seeds; `progress`
/// is called after each seed, `cancel` stops the run with `Interrupted`.
pub fn simulate(
    cluster: &Cluster,
    spec: &ColocationSpec,
    trace: Option<&[TraceRequest]>,
    seeds: &[u64],
    planners: Option<&[String]>,
    (progress, cancel): (&(dyn Fn() + Sync), Cancel),
) -> Result<ColocationSimulation, PlanningError> {
    // One capacity search for every seed: `load` resolves to the same rate for all of them.
    let spec = &*resolve_load(cluster, spec, trace)?;
    let per_seed: Vec<Result<SeedValues, PlanningError>> = seeds
        .par_iter()
        .map(|&seed| {
            let r = plan_until(
                cluster,
                spec,
                trace,
                planners,
                Some(seed),
                cancel.restarted(),
            )?;
            progress();
            Ok((
                seed,
                r.planners
                    .iter()
                    .map(|p| (p.name.clone(), flatten(p)))
                    .collect(),
            ))
        })
        .collect();
    let per_seed: Vec<SeedValues> = per_seed.into_iter().collect::<Result<_, _>>()?;
    let names: Vec<String> = per_seed
        .first()
        .map(|(_, ps)| ps.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let planners = names
        .iter()
        .map(|name| {
            let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut by_seed: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
            for (i, (_, ps)) in per_seed.iter().enumerate() {
                if let Some((_, m)) = ps.iter().find(|(n, _)| n == name) {
                    for (k, v) in m {
                        by.entry(k.clone()).or_default().push(*v);
                        by_seed
                            .entry(k.clone())
                            .or_insert_with(|| vec![None; per_seed.len()])[i] = Some(*v);
                    }
                }
            }
            ColocationPlannerSummary {
                name: name.clone(),
                metrics: by
                    .into_iter()
                    .filter_map(|(k, v)| summarize(&v).map(|s| (k, s)))
                    .collect(),
                per_seed: by_seed,
            }
        })
        .collect();
    Ok(ColocationSimulation {
        schema_version: 1,
        kind: "simulation",
        workload_kind: "colocation",
        cluster: cluster.name.clone(),
        workload: spec.name.clone(),
        seeds: seeds.to_vec(),
        planners,
        per_seed,
    })
}
