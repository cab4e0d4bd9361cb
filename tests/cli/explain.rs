//! `coplan explain` against the plans it explains: on every preemption example, every event of
//! every planner of the spec is explained, and the explained decisions are the plan's own, term
//! for term; `plan --worst K` lists the largest excesses, largest first.

// `explain --task` of a co-location workload.
mod colocation;

use coplan::plan::explain::ColumnKind;
use coplan::preempt::explain::explain_events;
use coplan::preempt::planning::{self, PlanOptions};
use coplan::session::load::{Workload, load_pair};

use crate::common::{root, run_coplan};

/// The preemption examples and their clusters (from each example's `# coplan plan` line).
fn preemption_examples() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = root().join("examples/workloads");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        if !text.contains("kind = \"preemption\"") {
            continue;
        }
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("# coplan plan ")) else {
            continue;
        };
        let mut words = line.split_whitespace();
        if let (Some(c), Some(w)) = (words.next(), words.next()) {
            out.push((c.to_string(), w.to_string()));
        }
    }
    out
}

#[test]
fn every_event_of_the_examples_adds_up_to_the_plan() {
    let examples = preemption_examples();
    assert!(examples.len() >= 2, "the preemption examples are found");
    for (c, w) in examples {
        let pair = load_pair(&root().join(&c), &root().join(&w)).expect("example loads");
        let Workload::Preemption(spec) = &pair.workload else {
            panic!("{w} is a preemption workload")
        };
        let report = planning::plan(&pair.cluster, spec, &PlanOptions::default()).expect("plans");
        let explained =
            explain_events(&pair.cluster, spec, None, None, None).expect("every event explains");
        for p in &report.planners {
            let mut sum = 0.0;
            for (i, e) in explained.iter().enumerate() {
                let column = e
                    .columns
                    .iter()
                    .find(|col| col.name == p.name && col.state_of.first() == Some(&p.name))
                    .unwrap_or_else(|| panic!("{w}: {} has a column at event {}", p.name, i + 1));
                let t = &column.terms;
                let terms = t.victims + t.priority + t.topology + t.unplaced;
                assert!(
                    (terms - t.total).abs() <= 1e-9 * t.total.abs().max(1.0),
                    "{w} event {}: {}'s terms {terms} against its cost {}",
                    i + 1,
                    p.name,
                    t.total
                );
                assert_eq!(t.total, p.events[i].cost, "{w} event {}: {}", i + 1, p.name);
                assert_eq!(column.server, p.events[i].node, "{w} event {}", i + 1);
                sum += t.total;
            }
            assert_eq!(Some(sum), p.objective, "{w}: {}'s explained costs", p.name);
        }
        for e in &explained {
            // The optimum's column is never worse than a planner's on the same state.
            for d in &e.differences {
                assert!(
                    d.excess >= -1e-9,
                    "{w} event {}: {} by {}",
                    e.event,
                    d.planner,
                    d.excess
                );
            }
            assert!(e.columns.iter().any(|c| c.column == ColumnKind::Optimum));
        }
    }
}

#[test]
fn worst_decisions_are_the_largest_excesses_largest_first() {
    let args = [
        "plan",
        "examples/clusters/paper-4090-x100.toml",
        "examples/workloads/paper-preemption.toml",
        "--worst",
        "3",
        "--format",
        "json",
    ];
    let (code, out, err) = run_coplan(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let planners = v["planners"].as_array().expect("planners");
    let mut listed = 0;
    for p in planners {
        // Asked for: every planner lists its worst decisions, none where it loses none.
        let worst = p["worst"].as_array().expect("a list per planner");
        if p["name"] == "ilp" {
            assert!(worst.is_empty());
        }
        listed += usize::from(!worst.is_empty());
        assert!(worst.len() <= 3);
        let excess: Vec<f64> = worst.iter().filter_map(|w| w["excess"].as_f64()).collect();
        assert!(excess.windows(2).all(|w| w[0] >= w[1]), "{excess:?}");
        assert!(excess.iter().all(|&e| e > 0.0));
        for w in worst {
            let event = w["event"].as_u64().expect("event") as usize;
            let own = &p["events"][event - 1];
            assert_eq!(own["preemptor"], w["preemptor"]);
            assert!(w["deciding_term"].is_string());
        }
    }
    assert!(
        listed >= 2,
        "the default and FlexTopo-exhaustive lose decisions here"
    );
    // The table lists them after the comparison; the explain command takes the event.
    let (code, table, _) = run_coplan(&args[..5]);
    assert_eq!(code, 0);
    assert!(table.contains("worst decisions"), "{table}");
    // Without --worst nothing changes.
    let (_, plain, _) = run_coplan(&args[..3]);
    assert!(!plain.contains("worst decisions"));
    // K = 0 lists nothing, and CSV has no place for the lists: both are input errors.
    let (code, _, err) = run_coplan(&[args[0], args[1], args[2], "--worst", "0"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) =
        run_coplan(&[args[0], args[1], args[2], "--worst", "3", "--format", "csv"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn worst_tasks_of_a_colocation_plan_follow_the_plan() {
    let base = [
        "plan",
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
    ];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        run_coplan(&args)
    };
    let (code, out, err) = with(&["--worst", "3", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let worst = &v["worst"];
    assert_eq!(worst["kind"], "colocation-worst");
    let planners = worst["planners"].as_array().expect("planners");
    assert!(!planners.is_empty());
    let events_of = |name: &str| {
        v["planners"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == name))
            .map(|p| p["events"].clone())
            .expect("the planner's events")
    };
    let ilp_events = events_of("ilp");
    for p in planners {
        let tasks = p["tasks"].as_array().expect("tasks");
        assert!(tasks.len() <= 3);
        let diffs: Vec<f64> = tasks
            .iter()
            .filter_map(|t| t["difference_s"].as_f64())
            .collect();
        assert!(diffs.windows(2).all(|w| w[0] >= w[1]), "{diffs:?}");
        let own = events_of(p["planner"].as_str().expect("name"));
        for t in tasks {
            let id = t["task"].as_u64().expect("id") as usize;
            assert_eq!(own[id]["node"], t["node"]);
            assert_eq!(ilp_events[id]["node"], t["ilp_node"]);
        }
    }
    // The table lists them after the plan; without `ilp` there is nothing to compare with.
    let (code, table, _) = with(&["--worst", "3"]);
    assert_eq!(code, 0);
    assert!(table.contains("differs"), "{table}");
    let (code, _, err) = with(&["--worst", "3", "--planners", "lemix,mix-rr"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ilp"), "{err}");
}
