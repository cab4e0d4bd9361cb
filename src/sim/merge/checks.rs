//! The checks `merge` runs on each file: its header against itself, every row against the
//! sweep, and every scenario's row count.

use std::collections::{BTreeMap, BTreeSet};

use super::metrics::SweepKind;
use super::read::ShardFile;
use super::rows::*;
use crate::sim::fingerprint::{SweepInputs, VERSION, parse_seeds};
use crate::spec::limits::MAX_SEEDS;

/// The sweep a shard's header describes, checked against itself: its fingerprint is the
/// digest of its inputs, its keys and scenario count are those of its swept values.
pub(super) struct Described<'a> {
    pub(super) inputs: &'a SweepInputs,
    pub(super) declared_rows: &'a BTreeMap<usize, usize>,
    pub(super) seeds: BTreeSet<u64>,
}

pub(super) fn describe<'a>(file: &str, shard: &'a ShardFile) -> Result<Described<'a>, MergeError> {
    let header = &shard.header;
    let rerun = format!(
        "re-run its sweep with this coplan ({VERSION}), which records what each shard ran on"
    );
    let (Some(inputs), Some(fingerprint), Some(declared_rows)) =
        (&header.inputs, &header.fingerprint, &header.declared_rows)
    else {
        return Err(merr(
            file,
            1,
            format!(
                "this shard has no fingerprint (it was written by an older coplan), so merge cannot check that it belongs with the others: {rerun}"
            ),
        ));
    };
    if *fingerprint != inputs.fingerprint() {
        return Err(merr(
            file,
            1,
            format!(
                "the header's fingerprint {fingerprint} is not that of the inputs it records ({}): the header was edited",
                inputs.fingerprint()
            ),
        ));
    }
    let keys: Vec<&str> = inputs.sets.iter().map(|s| s.key.as_str()).collect();
    let product: usize = inputs
        .sets
        .iter()
        .fold(1usize, |n, s| n.saturating_mul(s.values.len()));
    if header.keys != keys || header.scenario_count != product {
        return Err(merr(
            file,
            1,
            format!(
                "the header's keys [{}] and {} scenarios do not match the sweep it records (keys [{}], {product} scenarios)",
                header.keys.join(", "),
                header.scenario_count,
                keys.join(", ")
            ),
        ));
    }
    Ok(Described {
        inputs,
        declared_rows,
        seeds: sweep_seeds(file, &inputs.seeds)?,
    })
}

/// The seeds a header records, no more than a sweep may run: a run `1..=N` is counted
/// before it is listed.
pub(super) fn sweep_seeds(file: &str, text: &str) -> Result<BTreeSet<u64>, MergeError> {
    let too_many = || {
        merr(
            file,
            1,
            format!("the header's seeds `{text}` are more than the {MAX_SEEDS} a sweep may run"),
        )
    };
    if let Some((first, last)) = text.split_once("..=")
        && let (Ok(first), Ok(last)) = (first.parse::<u64>(), last.parse::<u64>())
        && last.saturating_sub(first) >= MAX_SEEDS
    {
        return Err(too_many());
    }
    let seeds = parse_seeds(text)
        .ok_or_else(|| merr(file, 1, format!("malformed seeds `{text}` in the header")))?;
    if seeds.len() as u64 > MAX_SEEDS {
        return Err(too_many());
    }
    Ok(seeds.into_iter().collect())
}

/// Every row of one file in order: its scenario in range and in the file's shard, its swept
/// values its scenario's, its seed, planner and metric the sweep's, its scenario in no earlier
/// file, and no row twice. The first row that is not is refused at its line.
pub(super) fn check_rows(
    file: &str,
    shard: &ShardFile,
    described: &Described<'_>,
    (kind, scenario_count): (SweepKind, u64),
    owner: &BTreeMap<u64, (&str, usize)>,
) -> Result<(), MergeError> {
    let (index, count) = shard.header.shard;
    let planners = &described.inputs.planners;
    let names = &shard.names;
    let planner_ok: Vec<bool> = names
        .by_id
        .iter()
        .map(|n| planners.iter().any(|p| **p == **n))
        .collect();
    let metric_ok: Vec<bool> = names.by_id.iter().map(|n| kind.writes(n)).collect();
    let duplicate = first_duplicate(&shard.rows);
    for (i, row) in shard.rows.iter().enumerate() {
        let (s, line) = (shard.scenario(row), row.line());
        if s >= scenario_count {
            return Err(merr(
                file,
                line,
                format!(
                    "scenario {s} is out of range 0…{}",
                    scenario_count.saturating_sub(1)
                ),
            ));
        }
        if s % count as u64 != index as u64 {
            return Err(merr(
                file,
                line,
                format!("scenario {s} does not belong to this file's shard {index}/{count}"),
            ));
        }
        if !row.params_match() {
            let expected: Vec<String> = Grid {
                sets: &described.inputs.sets,
            }
            .params(s)
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
            return Err(merr(
                file,
                line,
                format!(
                    "scenario {s} of this sweep is {}; this row says otherwise",
                    expected.join(", ")
                ),
            ));
        }
        if !described.seeds.contains(&row.seed) {
            return Err(merr(
                file,
                line,
                format!(
                    "seed {} is not among the sweep's seeds {}",
                    row.seed, described.inputs.seeds
                ),
            ));
        }
        if !planner_ok
            .get(row.planner as usize)
            .copied()
            .unwrap_or(false)
        {
            return Err(merr(
                file,
                line,
                format!(
                    "planner `{}` is not among the sweep's planners ({}): this row was not written by the sweep its header records",
                    names.name(row.planner),
                    planners.join(", ")
                ),
            ));
        }
        if !metric_ok.get(row.metric as usize).copied().unwrap_or(false) {
            return Err(merr(
                file,
                line,
                format!(
                    "metric `{}` is not one a {} sweep writes ({})",
                    names.name(row.metric),
                    kind.words(),
                    kind.listed()
                ),
            ));
        }
        if let Some((other_file, other_line)) = owner.get(&s) {
            return Err(merr(
                file,
                line,
                format!(
                    "scenario {s} also appears in {other_file} (line {other_line}): overlapping shards"
                ),
            ));
        }
        if let Some((_, earlier)) = duplicate.filter(|(d, _)| *d == i) {
            return Err(merr(
                file,
                line,
                format!(
                    "duplicate row: scenario {s}, planner {}, seed {}, metric {} is already on line {earlier}",
                    names.name(row.planner),
                    row.seed,
                    names.name(row.metric)
                ),
            ));
        }
    }
    Ok(())
}

/// The first row (by position) that repeats an earlier one's scenario, planner, seed and
/// metric, with the line of the copy before it; found by sorting positions rather than by a
/// set of every row, which would hold as much again as the rows.
pub(super) fn first_duplicate(rows: &[StoredRow]) -> Option<(usize, usize)> {
    let key = |r: &StoredRow| (r.scenario, r.planner, r.seed, r.metric);
    // Positions fit in u32 as lines do; a row past them (none in a file merge reads) is left
    // out rather than wrapped.
    let mut order: Vec<u32> = (0..rows.len())
        .filter_map(|i| u32::try_from(i).ok())
        .collect();
    order.sort_unstable_by_key(|&i| rows.get(i as usize).map(|r| (key(r), i)));
    order
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (rows.get(w[0] as usize)?, rows.get(w[1] as usize)?);
            (key(a) == key(b)).then_some((w[1] as usize, a.line()))
        })
        .min()
}

/// Every scenario of the file's shard is there, with the rows its header counts; when one is
/// short, names the first row that is missing.
pub(super) fn check_row_counts(
    file: &str,
    shard: &ShardFile,
    described: &Described<'_>,
    kind: SweepKind,
) -> Result<(), MergeError> {
    let (index, count) = shard.header.shard;
    let scenario_count = shard.header.scenario_count;
    let mut found_rows: BTreeMap<u32, usize> = BTreeMap::new();
    for row in &shard.rows {
        *found_rows.entry(row.scenario).or_insert(0) += 1;
    }
    for s in (index..scenario_count).step_by(count.max(1)) {
        let declared = described.declared_rows.get(&s).copied();
        let found = u32::try_from(s)
            .ok()
            .and_then(|s| found_rows.get(&s))
            .copied()
            .unwrap_or(0);
        match declared {
            None => {
                return Err(merr(
                    file,
                    1,
                    format!(
                        "scenario {s} belongs to shard {index}/{count}, but the header counts no rows for it: the shard is incomplete"
                    ),
                ));
            }
            Some(n) if n == found => {}
            Some(n) if found < n => {
                let which = first_missing_row(shard, s as u64, described, kind).map_or_else(
                    String::new,
                    |(planner, seed, metric)| {
                        format!(" (planner {planner}, seed {seed}, metric {metric})")
                    },
                );
                return Err(merr(
                    file,
                    1,
                    format!(
                        "missing rows: the header counts {n} rows for scenario {s}, {found} are in the file{which}"
                    ),
                ));
            }
            Some(n) => {
                return Err(merr(
                    file,
                    1,
                    format!(
                        "the header counts {n} rows for scenario {s}, but the file has {found}: rows were added"
                    ),
                ));
            }
        }
    }
    if let Some((&s, _)) = described
        .declared_rows
        .iter()
        .find(|(s, _)| **s >= scenario_count || **s % count != index)
    {
        return Err(merr(
            file,
            1,
            format!(
                "the header counts rows for scenario {s}, which is not in shard {index}/{count}"
            ),
        ));
    }
    Ok(())
}

/// The first (planner, seed, metric) scenario `s` lacks, where a planner reports the metrics
/// it reports anywhere in the file for every seed: the row a short scenario most likely lost.
/// A preemption planner reports on every seed, so one of the sweep's planners with no row
/// left in the scenario is looked for too (a co-location planner that could not run has none).
pub(super) fn first_missing_row(
    shard: &ShardFile,
    s: u64,
    described: &Described<'_>,
    kind: SweepKind,
) -> Option<(String, u64, String)> {
    let names = &shard.names;
    let present: BTreeSet<(&str, u64, &str)> = shard
        .rows
        .iter()
        .filter(|r| u64::from(r.scenario) == s)
        .map(|r| (names.name(r.planner), r.seed, names.name(r.metric)))
        .collect();
    let mut planners: BTreeSet<&str> = present.iter().map(|(p, _, _)| *p).collect();
    if kind == SweepKind::Preemption {
        planners.extend(described.inputs.planners.iter().map(String::as_str));
    }
    let in_scenario: BTreeSet<&str> = present.iter().map(|(_, _, m)| *m).collect();
    let metrics_of = |planner: &str| {
        let metrics: BTreeSet<&str> = shard
            .rows
            .iter()
            .filter(|r| names.name(r.planner) == planner)
            .map(|r| names.name(r.metric))
            .collect();
        if metrics.is_empty() {
            in_scenario.clone()
        } else {
            metrics
        }
    };
    // The seeds the scenario ran first: a workload with nothing random runs only the first of
    // the sweep's seeds, and its other seeds lack nothing.
    let ran: BTreeSet<u64> = present.iter().map(|(_, seed, _)| *seed).collect();
    for seeds in [&ran, &described.seeds] {
        for &planner in &planners {
            let metrics = metrics_of(planner);
            for &seed in seeds {
                for &metric in &metrics {
                    if !present.contains(&(planner, seed, metric)) {
                        return Some((planner.to_string(), seed, metric.to_string()));
                    }
                }
            }
        }
    }
    None
}
