//! `coplan sweep`: the Cartesian product of `--set KEY=V1,V2,…` over spec keys by dotted path,
//! each scenario simulated over the seeds, written in long format. Scenario k runs in shard
//! k mod N.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use toml::Value;

use super::colocation::{self, SeedValues};
use super::fingerprint::SweepInputs;
use super::preemption::{self, SimOptions, TIMING_METRICS};
use crate::colocate::setup::cluster_findings;
use crate::colocate::trace::TraceRequest;
use crate::plan::error::PlanningError;
use crate::spec::{ClusterSpec, ColocationSpec, PreemptionSpec, validate};
use crate::topology::Cluster;

/// The first words of a sweep shard's CSV output (its metadata line), which `merge` reads.
pub const CSV_MAGIC: &str = "# coplan sweep";

/// One `--set KEY=V1,V2,…`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetArg {
    /// The spec key to vary, a dotted path (`cluster.…`, `pool.…` and `server_type.…` address the
    /// cluster, anything else the workload).
    pub key: String,
    /// The values to try, trimmed, at least one; each parsed as a TOML value, else taken as a
    /// string.
    pub values: Vec<String>,
}

/// Why a sweep could not run (input errors, exit 2, unless `Plan` says otherwise).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// A `--set` argument that is not `KEY=V1,V2,…` (no `=`, an empty key or no value).
    #[error("`--set {0}`: expected KEY=V1,V2,…")]
    Syntax(String),
    /// A `--set` key that names nothing the spec can hold.
    #[error("invalid sweep key `{key}`: {reason}")]
    Key {
        /// The key as given.
        key: String,
        /// Why the spec has no such key.
        reason: String,
    },
    /// A `--set` value the key cannot take.
    #[error("invalid value `{value}` for `{key}`: {reason}")]
    Value {
        /// The key it was given for.
        key: String,
        /// The value as given.
        value: String,
        /// Why the spec refuses it.
        reason: String,
    },
    /// A `--shard` that is not `I/N` with 0 ≤ I < N.
    #[error("invalid shard `{0}`: expected I/N with 0 ≤ I < N")]
    Shard(String),
    /// The batch job's environment does not name a shard (or names it wrongly).
    #[error("{0}")]
    ShardEnv(String),
    /// The same key in two `--set`s: one scenario would have two values for it.
    #[error("`--set {0}=…` is given twice")]
    RepeatedKey(String),
    /// The product of the `--set` values is above `MAX_SCENARIOS`.
    #[error(
        "the --set values make {0} scenarios, above the limit of {max} (docs/spec.md, \"Limits\")",
        max = crate::spec::limits::MAX_SCENARIOS
    )]
    TooManyScenarios(u64),
    /// A planning or simulation failure in some scenario.
    #[error(transparent)]
    Plan(#[from] PlanningError),
    /// A stop was requested: the scenarios of `finished` (of `total`, in `shard`) had run.
    #[error("interrupted")]
    Interrupted {
        /// Indices of the scenarios that had finished.
        finished: Vec<usize>,
        /// Scenarios in the whole sweep.
        total: usize,
        /// The shard run: (index I, count N).
        shard: (usize, usize),
    },
    /// A scenario reads a trace that was not loaded for it.
    #[error("trace `{0}` was not loaded")]
    TraceNotLoaded(String),
}

/// Parses one `--set KEY=V1,V2,…` (values split at commas and trimmed; empty ones dropped).
pub fn parse_set(arg: &str) -> Result<SetArg, SweepError> {
    let (key, values) = arg
        .split_once('=')
        .ok_or_else(|| SweepError::Syntax(arg.into()))?;
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if key.trim().is_empty() || values.is_empty() {
        return Err(SweepError::Syntax(arg.into()));
    }
    Ok(SetArg {
        key: key.trim().to_string(),
        values,
    })
}

/// `I/N`.
pub fn parse_shard(text: &str) -> Result<(usize, usize), SweepError> {
    let bad = || SweepError::Shard(text.into());
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The shard of a batch job when `--shard` is absent: a Kubernetes Indexed Job
/// (`JOB_COMPLETION_INDEX` with `--shards N`) or a Slurm array (`SLURM_ARRAY_TASK_ID`, counted
/// from `SLURM_ARRAY_TASK_MIN`, out of `SLURM_ARRAY_TASK_COUNT`). A variable that is set but not
/// a number, or `--shards N` without an index in the environment, is an error: running every
/// scenario as shard 0 would silently repeat the work of every other shard.
pub fn shard_from_env(
    get: &dyn Fn(&str) -> Option<String>,
    shards: Option<usize>,
) -> Result<Option<(usize, usize)>, SweepError> {
    for key in [
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_COUNT",
    ] {
        if let Some(v) = get(key)
            && v.trim().parse::<usize>().is_err()
        {
            return Err(SweepError::ShardEnv(format!(
                "{key}={v:?} is not a shard index (a non-negative integer)"
            )));
        }
    }
    let num = |k: &str| get(k).and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(i) = num("JOB_COMPLETION_INDEX") {
        let n = shards.ok_or_else(|| {
            SweepError::ShardEnv(format!(
                "JOB_COMPLETION_INDEX={i} needs --shards N (the Job's completions)"
            ))
        })?;
        return parse_shard(&format!("{i}/{n}")).map(Some);
    }
    if let Some(id) = num("SLURM_ARRAY_TASK_ID") {
        let min = num("SLURM_ARRAY_TASK_MIN").unwrap_or(0);
        let n = num("SLURM_ARRAY_TASK_COUNT").or(shards).ok_or_else(|| {
            SweepError::ShardEnv(format!(
                "SLURM_ARRAY_TASK_ID={id} needs SLURM_ARRAY_TASK_COUNT or --shards N"
            ))
        })?;
        return parse_shard(&format!("{}/{n}", id.saturating_sub(min))).map(Some);
    }
    match shards {
        Some(n) => Err(SweepError::ShardEnv(format!(
            "--shards {n} takes this shard's index from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (a Slurm array), and neither is set; use --shard I/{n} to name it"
        ))),
        None => Ok(None),
    }
}

/// One point of the product: its index and its `(key, value)` pairs in `--set` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Position of the scenario in the product, from 0 (the first `--set` varies slowest).
    pub index: usize,
    /// The `(key, value)` pairs of this scenario, in `--set` order.
    pub params: Vec<(String, String)>,
}

/// The Cartesian product, the first `--set` varying slowest.
pub fn scenarios(sets: &[SetArg]) -> Vec<Scenario> {
    let mut out = vec![Vec::new()];
    for set in sets {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<(String, String)>| {
                set.values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((set.key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out.into_iter()
        .enumerate()
        .map(|(index, params)| Scenario { index, params })
        .collect()
}

/// Which file a key addresses: `cluster.…` always the cluster, `pool.…` and `server_type.…` the
/// cluster, anything else the workload.
fn target(key: &str) -> (bool, &str) {
    if let Some(rest) = key.strip_prefix("cluster.") {
        (true, rest)
    } else if key.starts_with("pool.") || key.starts_with("server_type.") {
        (true, key)
    } else {
        (false, key.strip_prefix("workload.").unwrap_or(key))
    }
}

/// A `--set` value as TOML (`0.5`, `true`, `[1, 2]`, …); text that does not parse as TOML is a
/// string.
pub fn parse_value(text: &str) -> Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(text.into())),
        Err(_) => Value::String(text.into()),
    }
}

/// Sets `path` (dotted, numbers index arrays) in `root`, creating missing tables.
fn set_path(root: &mut Value, key: &str, path: &str, value: Value) -> Result<(), SweepError> {
    let err = |reason: String| SweepError::Key {
        key: key.into(),
        reason,
    };
    let parts: Vec<&str> = path.split('.').collect();
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| Value::Table(toml::Table::new()))
            }
            Value::Array(items) => {
                let idx: usize = part
                    .parse()
                    .map_err(|_| err(format!("`{part}` indexes an array: use a number")))?;
                let len = items.len();
                let slot = items.get_mut(idx).ok_or_else(|| {
                    err(format!(
                        "index {idx} is out of range (the array has {len} entries)"
                    ))
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => {
                return Err(err(format!(
                    "`{}` is not a table or an array",
                    parts[..i].join(".")
                )));
            }
        };
    }
    Err(err("empty key".into()))
}

/// The workload of one scenario, of either kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioWorkload {
    /// A preemption workload.
    Preemption(Box<PreemptionSpec>),
    /// A co-location workload.
    Colocation(Box<ColocationSpec>),
}

/// The specs of one scenario, checked like files are.
pub fn apply(
    cluster: &Value,
    workload: &Value,
    scenario: &Scenario,
) -> Result<(ClusterSpec, ScenarioWorkload), SweepError> {
    let (mut c, mut w) = (cluster.clone(), workload.clone());
    for (key, value) in &scenario.params {
        let (is_cluster, path) = target(key);
        set_path(
            if is_cluster { &mut c } else { &mut w },
            key,
            path,
            parse_value(value),
        )?;
    }
    let blame = |reason: String| {
        let (key, value) = scenario
            .params
            .iter()
            .find(|(k, _)| reason.contains(target(k).1.rsplit('.').next().unwrap_or(k)))
            .or(scenario.params.first())
            .cloned()
            .unwrap_or_default();
        if reason.starts_with("unknown field") {
            SweepError::Key { key, reason }
        } else {
            SweepError::Value { key, value, reason }
        }
    };
    let cluster_spec: ClusterSpec = c
        .try_into()
        .map_err(|e: toml::de::Error| blame(e.message().to_string()))?;
    let colocation = w.get("kind").and_then(Value::as_str) == Some("colocation");
    let (workload_spec, findings) = if colocation {
        let spec: ColocationSpec = w
            .try_into()
            .map_err(|e: toml::de::Error| blame(e.message().to_string()))?;
        let cluster_model = Cluster::from_spec(&cluster_spec);
        let mut f = validate::colocation(&spec);
        f.extend(cluster_findings(&cluster_model, &spec));
        (ScenarioWorkload::Colocation(Box::new(spec)), f)
    } else {
        let spec: PreemptionSpec = w
            .try_into()
            .map_err(|e: toml::de::Error| blame(e.message().to_string()))?;
        let f = validate::preemption(&spec);
        (ScenarioWorkload::Preemption(Box::new(spec)), f)
    };
    let findings: Vec<String> = validate::cluster(&cluster_spec)
        .into_iter()
        .chain(findings)
        .map(|f| format!("{} ({})", f.message, f.path))
        .collect();
    if let Some(first) = findings.first() {
        return Err(blame(first.clone()));
    }
    Ok((cluster_spec, workload_spec))
}

/// One long-format row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Index of the scenario in the sweep's product.
    pub scenario: usize,
    /// The scenario's `(key, value)` pairs, in `--set` order; shared by every row of the
    /// scenario (a merged sweep holds millions of rows).
    pub params: Arc<[(String, String)]>,
    /// The planner's registry name, shared by its rows.
    pub planner: Arc<str>,
    /// The seed of this value.
    pub seed: u64,
    /// The metric's name as in `simulate`, shared by its rows (timing metrics are left out:
    /// they are not reproducible).
    pub metric: Arc<str>,
    /// The metric's value on this seed (preemption: the mean over the seed's cycles).
    pub value: f64,
}

/// Sweep output: its rows plus what `merge` needs to check completeness.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOutput {
    /// The swept keys, in `--set` order.
    pub keys: Vec<String>,
    /// Scenarios in the whole sweep (every shard together).
    pub scenario_count: usize,
    /// The shard this output holds: (index I, count N); scenario `s` belongs to shard `s mod N`.
    pub shard: (usize, usize),
    /// One row per scenario of this shard, seed, planner and metric.
    pub rows: Vec<Row>,
    /// What the sweep ran on; `None` only for outputs built in memory without it (a shard
    /// file without it is refused by `merge`).
    pub inputs: Option<SweepInputs>,
}

impl SweepOutput {
    /// Rows per scenario, in scenario order: written in a shard's header, so that `merge`
    /// notices a row that went missing.
    pub fn rows_per_scenario(&self) -> BTreeMap<usize, usize> {
        let mut counts = BTreeMap::new();
        for r in &self.rows {
            *counts.entry(r.scenario).or_insert(0) += 1;
        }
        counts
    }
}

/// The requests of every trace a sweep's co-location scenarios read, by the path written in
/// `[inference] trace`.
pub type Traces = BTreeMap<String, Vec<TraceRequest>>;

/// Runs the scenarios of one shard.
pub fn sweep(
    cluster: &Value,
    workload: &Value,
    sets: &[SetArg],
    options: &SimOptions,
    shard: (usize, usize),
    traces: &Traces,
    progress: &(dyn Fn() + Sync),
) -> Result<SweepOutput, SweepError> {
    let all = scenarios(sets);
    // Check every scenario first: a bad value fails fast, before hours of simulation.
    let specs: Vec<(Scenario, ClusterSpec, ScenarioWorkload)> = all
        .iter()
        .map(|s| apply(cluster, workload, s).map(|(c, w)| (s.clone(), c, w)))
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    let mut finished = Vec::new();
    let interrupted = |finished: &[usize]| SweepError::Interrupted {
        finished: finished.to_vec(),
        total: all.len(),
        shard,
    };
    for (scenario, c, w) in specs
        .into_iter()
        .filter(|(s, _, _)| s.index % shard.1 == shard.0)
    {
        if options.cancel.requested() {
            return Err(interrupted(&finished));
        }
        let cluster = Cluster::from_spec(&c);
        let stopped = |e: PlanningError| match e {
            PlanningError::Interrupted => interrupted(&finished),
            other => SweepError::Plan(other),
        };
        // (seed, planner, metric → value) of every seed of the scenario.
        let per_seed: Vec<SeedValues> = match &w {
            ScenarioWorkload::Preemption(w) => {
                preemption::simulate_every_seed(&cluster, w, options, progress)
                    .map_err(stopped)?
                    .per_seed
                    .into_iter()
                    .map(|sr| {
                        (
                            sr.seed,
                            sr.per_planner.into_iter().map(|(n, m, _)| (n, m)).collect(),
                        )
                    })
                    .collect()
            }
            ScenarioWorkload::Colocation(w) => {
                let seeds = options.seeds.clone().unwrap_or_else(|| (1..=10).collect());
                let trace = match &w.inference.trace {
                    Some(path) => Some(
                        traces
                            .get(path)
                            .ok_or_else(|| SweepError::TraceNotLoaded(path.clone()))?
                            .as_slice(),
                    ),
                    None => None,
                };
                colocation::simulate(
                    &cluster,
                    w,
                    trace,
                    &seeds,
                    options.planners.as_deref(),
                    (progress, options.cancel),
                )
                .map_err(stopped)?
                .per_seed
            }
        };
        let params: Arc<[(String, String)]> = scenario.params.clone().into();
        for (seed, planners) in &per_seed {
            for (planner, metrics) in planners {
                for (metric, value) in metrics {
                    if TIMING_METRICS.contains(&metric.as_str()) {
                        continue;
                    }
                    rows.push(Row {
                        scenario: scenario.index,
                        params: Arc::clone(&params),
                        planner: Arc::from(planner.as_str()),
                        seed: *seed,
                        metric: Arc::from(metric.as_str()),
                        value: *value,
                    });
                }
            }
        }
        finished.push(scenario.index);
    }
    Ok(SweepOutput {
        keys: sets.iter().map(|s| s.key.clone()).collect(),
        scenario_count: all.len(),
        shard,
        rows,
        inputs: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_varies_the_first_key_slowest() {
        let sets = vec![
            parse_set("a=1,2").expect("valid"),
            parse_set("b=x,y,z").expect("valid"),
        ];
        let s = scenarios(&sets);
        assert_eq!(s.len(), 6);
        assert_eq!(
            s[1].params,
            vec![("a".into(), "1".into()), ("b".into(), "y".into())]
        );
        assert_eq!(s[3].params[0].1, "2");
    }

    #[test]
    fn set_and_shard_syntax() {
        assert!(parse_set("alpha").is_err());
        assert!(parse_set("=1").is_err());
        assert!(parse_set("a=").is_err());
        assert_eq!(parse_shard("1/3"), Ok((1, 3)));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("x/3").is_err());
    }

    #[test]
    fn shard_from_batch_environments() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            shard_from_env(&env(&[("JOB_COMPLETION_INDEX", "2")]), Some(4)),
            Ok(Some((2, 4)))
        );
        assert!(shard_from_env(&env(&[("JOB_COMPLETION_INDEX", "2")]), None).is_err());
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(shard_from_env(&slurm, None), Ok(Some((2, 4))));
        assert_eq!(shard_from_env(&env(&[]), None), Ok(None));
        // --shards without an index, or an index that is not a number: errors, never shard 0.
        assert!(shard_from_env(&env(&[]), Some(3)).is_err());
        assert!(shard_from_env(&env(&[("JOB_COMPLETION_INDEX", "abc")]), Some(2)).is_err());
        assert!(shard_from_env(&env(&[("SLURM_ARRAY_TASK_ID", "x")]), None).is_err());
    }

    #[test]
    fn values_parse_as_toml_or_strings() {
        assert_eq!(parse_value("0.5"), Value::Float(0.5));
        assert_eq!(parse_value("3"), Value::Integer(3));
        assert_eq!(
            parse_value("rtx4090-8g"),
            Value::String("rtx4090-8g".into())
        );
        assert_eq!(
            parse_value("\"calibrated\""),
            Value::String("calibrated".into())
        );
    }
}
