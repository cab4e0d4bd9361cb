//! `diff`, the comparison itself: seeds paired by value, one row per planner and metric both
//! sides hold, and the notes and regressions that go with them.

use std::collections::{BTreeMap, BTreeSet};

use super::comparable::{allowed_differences, differences};
use super::direction::better;
use super::error::DiffError;
use super::gate::gated_metrics;
use super::input::{PlannerInput, SimulationInput};
use super::paired::{paired_difference, paired_interval, verdict};
use super::report::{DiffReport, DiffRow, DiffSide, Regression, Verdict};

/// Per-seed values of one metric, null where absent.
fn values<'a>(p: &'a PlannerInput, metric: &str) -> &'a [Option<f64>] {
    p.per_seed.get(metric).map_or(&[], Vec::as_slice)
}

/// One row: both means and the paired interval over `pairs` (index in A's seeds, in B's).
fn row(a: &PlannerInput, b: &PlannerInput, metric: &str, pairs: &[(usize, usize)]) -> DiffRow {
    let mean = |p: &PlannerInput| p.metrics.get(metric).and_then(|m| m.mean);
    let (a_mean, b_mean) = (mean(a), mean(b));
    let (va, vb) = (values(a, metric), values(b, metric));
    let d: Vec<f64> = pairs
        .iter()
        .filter_map(|&(ia, ib)| {
            let (x, y) = (
                va.get(ia).copied().flatten()?,
                vb.get(ib).copied().flatten()?,
            );
            Some(paired_difference(x, y))
        })
        .collect();
    let paired = paired_interval(&d);
    let better = better(metric);
    DiffRow {
        planner: a.name.clone(),
        metric: metric.to_string(),
        better,
        a_mean,
        b_mean,
        diff: a_mean.zip(b_mean).map(|(x, y)| y - x),
        n: paired.n,
        paired_mean: paired.mean,
        ci95_low: paired.ci95.map(|c| c.0),
        ci95_high: paired.ci95.map(|c| c.1),
        verdict: verdict(better, paired.ci95),
    }
}

/// Metrics a planner holds (a summary or per-seed values).
fn metric_names(p: &PlannerInput) -> BTreeSet<&str> {
    p.metrics
        .keys()
        .chain(p.per_seed.keys())
        .map(String::as_str)
        .collect()
}

/// The note on metrics only one side holds.
fn only_note(side: &str, only: &BTreeMap<String, Vec<String>>, planners: usize) -> Vec<String> {
    only.iter()
        .map(|(metric, who)| {
            if who.len() == planners {
                format!("`{metric}` is only in {side}: not compared")
            } else {
                format!(
                    "`{metric}` is only in {side} for {}: not compared",
                    who.join(", ")
                )
            }
        })
        .collect()
}

/// Compares B with A; `fail_on` names the metrics whose worse-side intervals are regressions.
pub fn diff(
    a: &SimulationInput,
    b: &SimulationInput,
    fail_on: &[String],
) -> Result<DiffReport, DiffError> {
    let differences = differences(a, b);
    if !differences.is_empty() {
        return Err(DiffError::Mismatch {
            a: a.file.clone(),
            b: b.file.clone(),
            differences,
        });
    }
    let b_index: BTreeMap<u64, usize> = b.seeds.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let pairs: Vec<(usize, usize)> = a
        .seeds
        .iter()
        .enumerate()
        .filter_map(|(ia, s)| b_index.get(s).map(|ib| (ia, *ib)))
        .collect();
    let mut rows = Vec::new();
    let (mut only_in_a, mut only_in_b) = (BTreeMap::new(), BTreeMap::new());
    for pa in &a.planners {
        let Some(pb) = b.planners.iter().find(|p| p.name == pa.name) else {
            continue;
        };
        let (ma, mb) = (metric_names(pa), metric_names(pb));
        for metric in ma.union(&mb) {
            match (ma.contains(metric), mb.contains(metric)) {
                (true, true) => rows.push(row(pa, pb, metric, &pairs)),
                (true, false) => only_in_a
                    .entry(metric.to_string())
                    .or_insert_with(Vec::new)
                    .push(pa.name.clone()),
                _ => only_in_b
                    .entry(metric.to_string())
                    .or_insert_with(Vec::new)
                    .push(pa.name.clone()),
            }
        }
    }
    let mut notes = allowed_differences(a, b);
    if pairs.len() < 2 {
        notes.push(format!(
            "{} seed(s) paired: no confidence interval, so no verdict and no regression",
            pairs.len()
        ));
    }
    notes.extend(only_note("A", &only_in_a, a.planners.len()));
    notes.extend(only_note("B", &only_in_b, a.planners.len()));
    let fail_on_regression = gated_metrics(fail_on, &rows)?;
    let regressions = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Worse && fail_on_regression.contains(&r.metric))
        .filter_map(|r| {
            Some(Regression {
                planner: r.planner.clone(),
                metric: r.metric.clone(),
                paired_mean: r.paired_mean?,
                ci95_low: r.ci95_low?,
                ci95_high: r.ci95_high?,
            })
        })
        .collect();
    let side = |s: &SimulationInput| DiffSide {
        file: s.file.clone(),
        cluster: s.cluster.clone(),
        workload: s.workload.clone(),
        cycles: s.cycles,
    };
    Ok(DiffReport {
        schema_version: 1,
        kind: "diff",
        workload_kind: a.workload_kind().to_string(),
        a: side(a),
        b: side(b),
        seeds: pairs.iter().map(|&(ia, _)| a.seeds[ia]).collect(),
        notes,
        only_in_a,
        only_in_b,
        rows,
        fail_on_regression,
        regressions,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{output, some};
    use super::*;

    #[test]
    fn identical_outputs_show_no_change_and_no_regression() {
        let v = some(&[0.5, 0.7, 0.6]);
        let w = some(&[3.0, 5.0, 4.0]);
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["x", "y"],
            &[("hit_rate", &v), ("victims", &w)],
        );
        let r = diff(&a, &a, &["hit_rate".into(), "victims".into()]).expect("comparable");
        assert_eq!(r.rows.len(), 4);
        for row in &r.rows {
            assert_eq!(row.verdict, Verdict::NoChange);
            assert_eq!(
                (row.diff, row.ci95_low, row.ci95_high),
                (Some(0.0), Some(0.0), Some(0.0))
            );
        }
        assert!(r.regressions.is_empty() && r.regression_message().is_none());
        assert!(r.notes.is_empty());
        // Planners in A's order, metrics by name.
        let order: Vec<(&str, &str)> = r
            .rows
            .iter()
            .map(|r| (r.planner.as_str(), r.metric.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("x", "hit_rate"),
                ("x", "victims"),
                ("y", "hit_rate"),
                ("y", "victims")
            ]
        );
    }

    #[test]
    fn one_common_seed_has_no_interval() {
        let a = output("a.json", &[7], &["p"], &[("hit_rate", &[Some(0.5)])]);
        let b = output("b.json", &[7], &["p"], &[("hit_rate", &[Some(0.9)])]);
        let r = diff(&a, &b, &["hit_rate".into()]).expect("comparable");
        let row = &r.rows[0];
        assert_eq!((row.n, row.ci95_low, row.ci95_high), (1, None, None));
        assert_eq!(row.verdict, Verdict::NoCi);
        assert!(r.regressions.is_empty());
        assert_eq!(
            r.notes,
            ["1 seed(s) paired: no confidence interval, so no verdict and no regression"]
        );
    }

    #[test]
    fn seeds_without_a_value_on_either_side_leave_the_pairs() {
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["p"],
            &[("slowdown_guaranteed", &[Some(1.0), None, Some(1.2)])],
        );
        let b = output(
            "b.json",
            &[1, 2, 3],
            &["p"],
            &[("slowdown_guaranteed", &[Some(1.0), Some(1.5), None])],
        );
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows[0].n, 1);
        assert_eq!(r.rows[0].verdict, Verdict::NoCi);
    }

    #[test]
    fn seeds_pair_by_value_whatever_their_order() {
        let a = output(
            "a.json",
            &[1, 2, 3],
            &["p"],
            &[("victims", &some(&[1.0, 2.0, 3.0]))],
        );
        let b = output(
            "b.json",
            &[3, 1, 2],
            &["p"],
            &[("victims", &some(&[3.0, 1.0, 2.0]))],
        );
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows[0].ci95_high, Some(0.0));
        assert_eq!(r.seeds, [1, 2, 3]);
    }

    #[test]
    fn allowed_differences_and_one_sided_metrics_are_noted() {
        let v = some(&[1.0, 2.0]);
        let a = output("a.json", &[1, 2], &["p"], &[("victims", &v), ("gap", &v)]);
        let mut b = output("b.json", &[1, 2], &["p"], &[("victims", &v), ("hits", &v)]);
        b.cycles = Some(5);
        b.cluster = "other".into();
        let r = diff(&a, &b, &[]).expect("comparable");
        assert_eq!(r.rows.len(), 1);
        assert_eq!(
            r.notes,
            [
                "the clusters differ: A ran on `c`, B on `other`",
                "the cycles per seed differ: A has 2, B has 5",
                "`gap` is only in A: not compared",
                "`hits` is only in B: not compared",
            ]
        );
        assert_eq!(r.only_in_a["gap"], ["p"]);
        // A metric only one side holds cannot gate.
        let e = diff(&a, &b, &["gap".into()]).expect_err("not compared");
        assert!(matches!(e, DiffError::UnknownMetric { .. }), "{e}");
        assert!(e.to_string().contains("they compare victims"), "{e}");
    }
}
