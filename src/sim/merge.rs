//! Long-format sweep files (CSV or JSON Lines) and `coplan merge`: read shard outputs, check
//! they belong to one sweep (the same fingerprint), that no row is there twice and none is
//! missing, and that together they hold every scenario exactly once; join them.
//!
//! A shard can hold millions of rows, each repeating its swept values, planner and metric
//! names: rows are held as numbers (names interned per file, swept values reduced to whether
//! they are their scenario's) and become owned rows only once every check has passed.

mod checks;
mod metrics;
mod read;
mod rows;

use self::checks::{check_row_counts, check_rows, describe};
pub use self::read::{ShardFile, parse};
pub use self::rows::MergeError;
use self::rows::{Grid, merr};

use std::collections::BTreeMap;
use std::sync::Arc;

use self::metrics::SweepKind;
use super::sweep::{Row, SweepOutput};
use crate::spec::limits::MAX_SCENARIOS;

/// Joins shard outputs. All must carry the same fingerprint (the same inputs, swept values,
/// seeds, cycles, planners, solvers and version); every row must be its scenario's (its swept
/// values, a seed, planner and metric of the sweep) and appear once; every scenario must be in
/// exactly one file, with as many rows as its shard's header counts.
pub fn merge(inputs: &[(String, ShardFile)]) -> Result<SweepOutput, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(merr("merge", 0, "no input files"));
    };
    let reference = describe(first_file, first)?;
    // A header may claim any product: it is counted before any scenario is read off it,
    // against the limit a sweep itself keeps to.
    let claimed = reference
        .inputs
        .sets
        .iter()
        .fold(1u64, |n, s| n.saturating_mul(s.values.len() as u64));
    if claimed > MAX_SCENARIOS {
        return Err(merr(
            first_file,
            1,
            format!(
                "the header's --set values make {claimed} scenarios, above the limit of {MAX_SCENARIOS} a sweep keeps to"
            ),
        ));
    }
    let grid = Grid {
        sets: &reference.inputs.sets,
    };
    let scenario_count = claimed;
    let kind = SweepKind::of(reference.inputs.cycles);
    // Scenario → the file (and row line) it came from.
    let mut owner: BTreeMap<u64, (&str, usize)> = BTreeMap::new();
    for (file, shard) in inputs {
        let described = describe(file, shard)?;
        if let Some((mine, theirs)) = described
            .inputs
            .differences(reference.inputs)
            .into_iter()
            .next()
        {
            return Err(merr(
                file,
                1,
                format!("not a shard of the same sweep: `{file}` {mine}; `{first_file}` {theirs}"),
            ));
        }
        check_rows(file, shard, &described, (kind, scenario_count), &owner)?;
        check_row_counts(file, shard, &described, kind)?;
        for row in &shard.rows {
            owner
                .entry(shard.scenario(row))
                .or_insert((file.as_str(), row.line()));
        }
    }
    let missing: Vec<String> = (0..scenario_count)
        .filter(|s| !owner.contains_key(s))
        .map(|s| s.to_string())
        .collect();
    if !missing.is_empty() {
        let which = match missing.as_slice() {
            [one] => format!("scenario {one} is"),
            many => format!("scenarios {} are", many.join(", ")),
        };
        return Err(merr(
            first_file,
            1,
            format!(
                "the sweep has {scenario_count} scenarios; {which} in none of the inputs (a shard failed or was not given)"
            ),
        ));
    }
    // Each scenario's rows come from one file in run order: ordered by scenario, then file and
    // row, they are the unsharded output. Scenarios are below `MAX_SCENARIOS` (checked above),
    // so the order is 12 bytes a row; a scenario's values and each name are held once.
    let mut order: Vec<(u32, u32, u32)> = inputs
        .iter()
        .enumerate()
        .flat_map(|(f, (_, shard))| {
            shard.rows.iter().enumerate().map(move |(i, r)| {
                (
                    r.scenario,
                    u32::try_from(f).unwrap_or(u32::MAX),
                    u32::try_from(i).unwrap_or(u32::MAX),
                )
            })
        })
        .collect();
    order.sort_unstable();
    let names: Vec<Vec<Arc<str>>> = inputs
        .iter()
        .map(|(_, shard)| shard.names.by_id.iter().map(|n| Arc::from(&**n)).collect())
        .collect();
    let mut params: BTreeMap<u32, Arc<[(String, String)]>> = BTreeMap::new();
    let mut rows = Vec::with_capacity(order.len());
    for (s, f, i) in order {
        let (Some((_, shard)), Some(names)) = (inputs.get(f as usize), names.get(f as usize))
        else {
            continue;
        };
        let Some(r) = shard.rows.get(i as usize) else {
            continue;
        };
        let (Some(planner), Some(metric)) =
            (names.get(r.planner as usize), names.get(r.metric as usize))
        else {
            continue;
        };
        rows.push(Row {
            scenario: s as usize,
            params: Arc::clone(params.entry(s).or_insert_with(|| grid.params(u64::from(s)))),
            planner: Arc::clone(planner),
            seed: r.seed,
            metric: Arc::clone(metric),
            value: r.value,
        });
    }
    Ok(SweepOutput {
        keys: first.header.keys.clone(),
        scenario_count: usize::try_from(scenario_count).unwrap_or(usize::MAX),
        shard: (0, 1),
        rows,
        inputs: Some(reference.inputs.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::rows::StoredRow;

    #[test]
    fn a_row_is_held_in_32_bytes() {
        assert_eq!(std::mem::size_of::<StoredRow>(), 32);
    }
}
