//! Shards written by `coplan sweep`'s own printers, cut, edited and merged back: the
//! merge's checks (phantom planners, unknown metrics, duplicates, missing rows, seeds) on
//! files as the printers write them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use coplan::report::{csv, json};
use coplan::sim::fingerprint::{SweepInputs, SweptKey, VERSION, content_hash};
use coplan::sim::merge::*;
use coplan::sim::sweep::*;

/// A preemption sweep over alpha = 0, 1 with two planners and seeds 1..=2, every planner
/// reporting `hits` and `victims` on every seed.
fn whole() -> SweepOutput {
    let inputs = SweepInputs {
        version: VERSION.into(),
        cluster: content_hash("c"),
        workload: content_hash("w"),
        sets: vec![SweptKey {
            key: "flextopo.alpha".into(),
            values: vec!["0".into(), "1".into()],
        }],
        seeds: "1..=2".into(),
        cycles: Some(1),
        planners: vec!["k8s-default".into(), "flextopo-imp".into()],
        solver: None,
        event_solver: None,
        time_limit: None,
    };
    let mut rows = Vec::new();
    for (scenario, alpha) in ["0", "1"].iter().enumerate() {
        for planner in &inputs.planners {
            for seed in 1..=2 {
                for metric in ["hits", "victims"] {
                    rows.push(Row {
                        scenario,
                        params: vec![("flextopo.alpha".into(), alpha.to_string())].into(),
                        planner: planner.as_str().into(),
                        seed,
                        metric: metric.into(),
                        value: scenario as f64 + seed as f64 / 10.0,
                    });
                }
            }
        }
    }
    SweepOutput {
        keys: vec!["flextopo.alpha".into()],
        scenario_count: 2,
        shard: (0, 1),
        rows,
        inputs: Some(inputs),
    }
}

fn merged(file: &str, text: &str) -> Result<SweepOutput, MergeError> {
    merge(&[(file.into(), parse(file, text)?)])
}

/// The CSV text with every occurrence of `from` on line `line` replaced by `to`.
fn edited(text: &str, line: usize, from: &str, to: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                l.replace(from, to)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn shards_written_by_sweep_merge_back_row_for_row() {
    let out = whole();
    for text in [csv::sweep(&out), json::sweep_lines(&out)] {
        assert_eq!(merged("w", &text), Ok(out.clone()));
    }
    let shard = |i: usize| SweepOutput {
        shard: (i, 2),
        rows: out
            .rows
            .iter()
            .filter(|r| r.scenario % 2 == i)
            .cloned()
            .collect(),
        ..out.clone()
    };
    let (b, a) = (json::sweep_lines(&shard(1)), csv::sweep(&shard(0)));
    let inputs = [
        ("b".to_string(), parse("b", &b).expect("b")),
        ("a".to_string(), parse("a", &a).expect("a")),
    ];
    assert_eq!(merge(&inputs), Ok(out));
}

#[test]
fn a_phantom_planner_is_refused_at_its_line() {
    let text = csv::sweep(&whole());
    // Line 3 is the first row: k8s-default, seed 1, hits.
    let phantom = edited(&text, 3, "k8s-default", "phantom");
    let e = merged("s.csv", &phantom).expect_err("phantom");
    assert_eq!((e.file.as_str(), e.line), ("s.csv", 3), "{e}");
    assert!(
        e.message.starts_with(
            "planner `phantom` is not among the sweep's planners (k8s-default, flextopo-imp)"
        ),
        "{e}"
    );
    let lines = json::sweep_lines(&whole());
    // Line 6 is flextopo-imp's first row.
    let phantom = edited(&lines, 6, "flextopo-imp", "phantom");
    let e = merged("s.jsonl", &phantom).expect_err("phantom");
    assert_eq!(e.line, 6, "{e}");
}

#[test]
fn a_metric_the_sweep_does_not_write_is_refused_at_its_line() {
    let text = csv::sweep(&whole());
    for metric in ["gpu_utilization", "runtime_ms", "hits_total"] {
        let bad = edited(&text, 4, "victims", metric);
        let e = merged("s.csv", &bad).expect_err("unknown metric");
        assert_eq!(e.line, 4, "{e}");
        assert!(
            e.message.starts_with(&format!(
                "metric `{metric}` is not one a preemption sweep writes (preemptions, placed"
            )),
            "{e}"
        );
    }
}

#[test]
fn a_planner_whose_rows_are_gone_is_named_as_missing() {
    let mut out = whole();
    out.rows
        .retain(|r| !(r.scenario == 1 && &*r.planner == "flextopo-imp"));
    let mut text = csv::sweep(&out);
    // The header still counts the rows the sweep wrote.
    text = text.replacen("rows=0:8;1:4", "rows=0:8;1:8", 1);
    let e = merged("s.csv", &text).expect_err("missing");
    assert_eq!(e.line, 1);
    assert_eq!(
        e.message,
        "missing rows: the header counts 8 rows for scenario 1, 4 are in the file (planner flextopo-imp, seed 1, metric hits)"
    );
}

#[test]
fn a_header_claiming_more_seeds_than_a_sweep_runs_is_refused_before_listing_them() {
    let mut out = whole();
    if let Some(inputs) = out.inputs.as_mut() {
        inputs.seeds = format!("1..={}", u64::MAX);
    }
    let e = merged("s.csv", &csv::sweep(&out)).expect_err("too many seeds");
    assert_eq!(e.line, 1);
    assert!(
        e.message
            .contains("are more than the 10000 a sweep may run"),
        "{e}"
    );
}

#[test]
fn a_scenario_beyond_any_sweep_is_quoted_as_written() {
    let text = csv::sweep(&whole());
    let big = edited(&text, 5, "0,0,k8s", "99999999999,0,k8s");
    let e = merged("s.csv", &big).expect_err("out of range");
    assert_eq!(
        (e.line, e.message.as_str()),
        (5, "scenario 99999999999 is out of range 0…1")
    );
}

#[test]
fn the_first_repeated_row_is_refused_naming_the_copy_before_it() {
    let text = csv::sweep(&whole());
    let lines: Vec<&str> = text.lines().collect();
    // Line 4 again after line 6, and line 3 again after that.
    let mut edited: Vec<&str> = lines[..6].to_vec();
    edited.extend([lines[3], lines[2]]);
    edited.extend(&lines[6..]);
    let e = merged("s.csv", &edited.join("\n")).expect_err("duplicate");
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.ends_with("is already on line 4"), "{e}");
}
