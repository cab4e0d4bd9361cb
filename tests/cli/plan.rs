//! `coplan plan` through the binary: the JSON contract, CSV and `--out`, exit codes, and the
//! tables of `tests/fixtures/plan` (`--events`, the `hit none` column, plans without
//! preemptors or without a solution, spent time budgets).

use crate::common::{self, root};
use crate::support::{fixture_args, run, run_strs, snapshot_every_fixture, tiny_json};

#[test]
fn plan_json_follows_the_contract() {
    let v = tiny_json("plan");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "preemption");
    let planners = v["planners"].as_array().expect("planners");
    assert_eq!(planners.len(), 6);
    for p in planners {
        for key in [
            "name",
            "status",
            "objective",
            "gap",
            "gap_is_bound",
            "bound",
            "decision_gap",
            "runtime_ms",
            "metrics",
            "events",
        ] {
            assert!(p.get(key).is_some(), "planner field {key}");
        }
        for key in [
            "preemptions",
            "placed",
            "unplaced",
            "hits",
            "hit_rate",
            "hit_rate_guaranteed",
            "hit_rate_best_effort",
            "victims",
            "victim_priority_sum",
            "wasted_evictions",
            "slowdown_mean",
            "slowdown_guaranteed",
            "slowdown_best_effort",
            "gpu_hours_evicted",
            "objective",
            "gap",
            "decision_gap",
            "runtime_ms",
            "subsets_evaluated",
        ] {
            assert!(p["metrics"].get(key).is_some(), "metric {key}");
        }
        for e in p["events"].as_array().expect("events") {
            for key in [
                "preemptor",
                "node",
                "victims",
                "gpus",
                "cores",
                "level",
                "required_level",
                "hit",
                "cost",
                "subsets_evaluated",
            ] {
                assert!(e.get(key).is_some(), "event field {key}");
            }
        }
    }
    let batch = planners
        .iter()
        .find(|p| p["name"] == "ilp-batch")
        .expect("ilp-batch");
    assert_eq!(batch["status"], "optimal");
}

#[test]
fn plan_writes_csv_and_out_files_and_honours_flags() {
    let dir = std::env::temp_dir().join(format!("coplan-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("plan.csv");
    let (code, stdout, err) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--format".into(),
        "csv".into(),
        "--planners".into(),
        "k8s-default,ilp".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty(), "--out keeps stdout empty");
    let csv = std::fs::read_to_string(&out).expect("written");
    assert!(csv.starts_with("scenario,planner,seed,metric,value\n"));
    assert!(csv.contains(",k8s-default,,hit_rate,1.0"));
    assert!(!csv.contains("flextopo"));
    let _ = std::fs::remove_dir_all(&dir);

    let (code, _, err) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/valid/tiny-running.toml".into(),
        "--planners".into(),
        "k8s-default,gödel".into(),
    ]);
    assert_eq!(code, 2, "unknown planner is an input error");
    assert!(err.contains("unknown planner `gödel`"), "{err}");
}

#[test]
fn require_all_placed_exits_3_when_no_planner_places_everything() {
    let (code, stdout, _) = run(&[
        "plan".into(),
        "tests/fixtures/valid/tiny-cluster.toml".into(),
        "tests/fixtures/preemption/unplaceable.toml".into(),
        "--require-all-placed".into(),
    ]);
    assert_eq!(code, 3);
    assert!(stdout.contains("k8s-default"), "the plan is still printed");
}

// `plan` tables on a real cluster: `--events`, the `hit none` column, a plan without
// preemptors and a planner without a solution (fixtures in `tests/fixtures/plan`).

/// `coplan plan` on the fixtures of `tests/fixtures/plan` (one command each).
#[test]
fn plan_table_fixtures_match_their_snapshots() {
    snapshot_every_fixture("plan", "plan", "plan_table__", Some(0));
}

/// Runs the command of `tests/fixtures/plan/<name>.toml` with `extra` arguments; its stdout.
fn plan_fixture(name: &str, extra: &[&str]) -> String {
    let rel = format!("tests/fixtures/plan/{name}.toml");
    let mut args = fixture_args(&root().join(&rel), &rel);
    args.extend(extra.iter().map(|a| a.to_string()));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// The event tables of a plan table: each planner's title line and its rows.
fn event_tables(table: &str) -> Vec<(String, Vec<String>)> {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = table.lines().peekable();
    while let Some(line) = lines.next() {
        let is_title = line.contains(" events") && line.ends_with(':') && !line.contains("  ");
        if !is_title {
            continue;
        }
        let Some(header) = lines.next() else { break };
        assert!(header.starts_with("preemptor"), "{line}: {header}");
        let mut rows = Vec::new();
        while let Some(row) = lines.next_if(|l| !l.is_empty()) {
            rows.push(row.to_string());
        }
        tables.push((line.to_string(), rows));
    }
    tables
}

/// The cost of an event line (the sixth column; the columns before it hold no spaces).
fn event_cost(row: &str) -> f64 {
    row.split_whitespace()
        .nth(5)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no cost in `{row}`"))
}

#[test]
fn plan_events_prints_every_event_none_or_each_planners_costliest() {
    let all = plan_fixture("events-above-50", &["--events", "all"]);
    let worst = plan_fixture("events-above-50", &["--events", "worst"]);
    let none = plan_fixture("events-above-50", &["--events", "none"]);
    let auto = plan_fixture("events-above-50", &[]);

    let every = event_tables(&all);
    assert_eq!(every.len(), 2, "one table per planner:\n{all}");
    for (title, rows) in &every {
        assert_eq!(rows.len(), 60, "{title}");
    }

    // The 10 costliest, the earlier on a tie, in list order.
    let costliest = event_tables(&worst);
    assert_eq!(costliest.len(), every.len());
    for ((title, rows), (all_title, all_rows)) in costliest.iter().zip(&every) {
        let name = all_title.trim_end_matches(" events:");
        assert_eq!(
            title,
            &format!("{name} events (the 10 costliest of 60; --events all lists every one):")
        );
        let mut order: Vec<usize> = (0..all_rows.len()).collect();
        order.sort_by(|&a, &b| {
            event_cost(&all_rows[b])
                .total_cmp(&event_cost(&all_rows[a]))
                .then(a.cmp(&b))
        });
        order.truncate(10);
        order.sort_unstable();
        // Cells, not padding: the columns of ten rows may be narrower than of sixty.
        let cells = |row: &String| row.split_whitespace().collect::<Vec<_>>().join(" ");
        let expected: Vec<String> = order.iter().map(|&i| cells(&all_rows[i])).collect();
        assert_eq!(
            rows.iter().map(cells).collect::<Vec<_>>(),
            expected,
            "{title}"
        );
    }

    // `none`: the comparison table and its notes, no event table.
    assert!(event_tables(&none).is_empty(), "{none}");
    assert!(none.contains("flextopo-imp  heuristic"), "{none}");
    assert!(!none.contains("\npreemptor "), "{none}");
    assert!(!none.contains("costliest"), "{none}");

    // Above 50 preemptors the default is `worst`, with a note saying how to get every event.
    let note = "\nevents: the plan has 60 preemptors (more than 50), so each planner lists only its 10 costliest events; --events all prints every one.\n";
    assert!(auto.contains(note), "{auto}");
    assert_eq!(
        event_tables(&auto.replacen(note, "", 1)),
        costliest,
        "auto is worst above 50"
    );
    assert!(
        !worst.contains(note),
        "asked for, the worst events need no note"
    );

    // JSON keeps every event whatever `--events` says.
    let json = plan_fixture("events-above-50", &["--format", "json", "--events", "none"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        assert_eq!(
            p["events"].as_array().map(Vec::len),
            Some(60),
            "{}",
            p["name"]
        );
    }
}

#[test]
fn plan_events_default_lists_every_event_up_to_50_preemptors() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "plan",
            "examples/clusters/paper-4090-x100.toml",
            "examples/workloads/paper-preemption.toml",
            "--planners",
            "k8s-default,flextopo-imp",
        ];
        a.extend(extra);
        let (code, out, err) = run_strs(&a);
        assert_eq!(code, 0, "{err}");
        out
    };
    let (auto, all) = (args(&[]), args(&["--events", "all"]));
    assert!(auto.contains(": 50 preemptors\n"), "{auto}");
    let tables = event_tables(&auto);
    assert_eq!(tables.len(), 2, "{auto}");
    assert!(tables.iter().all(|(_, rows)| rows.len() == 50));
    assert_eq!(tables, event_tables(&all));
    assert!(!auto.contains("costliest"), "{auto}");
}

/// The cells of a planner's row in the comparison table (`decision gap` and the other
/// two-word headers are one cell; a cell holds no space).
fn planner_row(table: &str, planner: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(planner))
        .unwrap_or_else(|| panic!("no row for {planner}:\n{table}"))
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn hit_none_column_appears_when_qos_none_preemptors_make_hits_differ() {
    let table = plan_fixture("qos-none-preemptors", &[]);
    let header = table
        .lines()
        .find(|l| l.starts_with("planner "))
        .expect("comparison header");
    assert!(header.contains("hit BE  hit none  placed"), "{header}");
    assert!(
        table.contains("hit none: hit rate of the preemptors without topology QoS"),
        "{table}"
    );
    // Cells: planner, status, objective, gap, decision gap, hits, hit G, hit BE, hit none, …
    let json = plan_fixture("qos-none-preemptors", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        let name = p["name"].as_str().expect("name");
        let events = p["events"].as_array().expect("events");
        let of_none: Vec<_> = events
            .iter()
            .filter(|e| e["topology_qos"] == "none")
            .collect();
        let hits = of_none.iter().filter(|e| e["hit"] == true).count();
        let expected = format!("{:.1}%", 100.0 * hits as f64 / of_none.len() as f64);
        let row = planner_row(&table, name);
        assert_eq!(row[8], expected, "{name}: {row:?}");
    }
    // k8s-default: both hits are QoS-none pods, which `hit G` and `hit BE` do not count.
    let k8s = planner_row(&table, "k8s-default");
    assert_eq!(&k8s[5..9], ["2/3", "0.0%", "-", "100.0%"], "{k8s:?}");

    // Without QoS-none preemptors the column is not there.
    let (code, out, err) = run_strs(&[
        "plan",
        "tests/fixtures/valid/tiny-cluster.toml",
        "tests/fixtures/valid/tiny-running.toml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("hit none"), "{out}");
}

#[test]
fn a_plan_without_preemptors_says_so_instead_of_empty_sums_and_0_of_0() {
    let table = plan_fixture("no-preemptors", &[]);
    assert!(
        table.contains("`no-preemptors` on tiny: no preemptors\n"),
        "{table}"
    );
    assert!(table.contains("no preemptors: the workload's [[preempt]] list is empty"));
    for absent in ["0/0", "-0.000", "status", " events"] {
        assert!(!table.contains(absent), "`{absent}` in\n{table}");
    }
    // JSON: every rate and mean over preemptors is null; the evicted GPU-hours (now_s is set)
    // are an empty sum, +0.
    let json = plan_fixture("no-preemptors", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for p in plan["planners"].as_array().expect("planners") {
        let m = &p["metrics"];
        assert_eq!(m["preemptions"], 0);
        for key in [
            "hit_rate_guaranteed",
            "hit_rate_best_effort",
            "slowdown_mean",
            "slowdown_guaranteed",
            "slowdown_best_effort",
        ] {
            assert!(m[key].is_null(), "{}: {key} = {}", p["name"], m[key]);
        }
        let hours = m["gpu_hours_evicted"].as_f64().expect("gpu_hours_evicted");
        assert!(hours == 0.0 && hours.is_sign_positive(), "{}", p["name"]);
    }
}

#[test]
fn a_planner_without_a_solution_prints_dashes_not_0_of_0() {
    let json = plan_fixture("no-solution", &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(plan["planners"][0]["status"], "no_solution", "{json}");
    let table = plan_fixture("no-solution", &[]);
    assert!(table.contains(": no planner found a plan\n"), "{table}");
    assert!(!table.contains("0/0"), "{table}");
    // Cells: planner, status, objective, gap, decision gap, hits, hit G, hit BE, placed,
    // victims, wasted, slowdown G, slowdown BE, subsets, time.
    let row = planner_row(&table, "ilp-batch");
    assert_eq!(row[1], "no_solution");
    assert!(row[2..13].iter().all(|c| c == "-"), "{row:?}");
    assert!(table.contains("\nilp-batch events: none (no_solution: no plan)\n"));
}

/// `--time-limit S` is a number of seconds in (0, 86400]: anything else is a usage error.
#[test]
fn time_limit_refuses_what_is_not_a_budget() {
    for bad in ["0", "-1", "abc", "inf", "NaN", "86401"] {
        let (code, _, err) = common::run_coplan(&[
            "plan".to_string(),
            "examples/clusters/paper-4090-x100.toml".into(),
            "examples/workloads/paper-preemption.toml".into(),
            format!("--time-limit={bad}"),
        ]);
        assert_eq!(code, 2, "--time-limit {bad}: {err}");
        assert!(err.contains("--time-limit"), "--time-limit {bad}: {err}");
    }
}

/// A budget spent before the searches begin: the exact side is anytime and says so — the
/// batch keeps the best sequential plan as its incumbent (`time_limit`, no bound, so no gap),
/// flextopo-exhaustive sources the events as IMP does and is marked `truncated` — and every
/// plan still passes the verifier (exit 0).
#[test]
fn a_spent_budget_gives_honest_statuses_not_a_failure() {
    let plan = plan_within_a_millisecond(
        "examples/clusters/paper-4090-x100.toml",
        "examples/workloads/paper-preemption.toml",
    );
    let by = |name: &str| planner_named(&plan, name);
    let batch = by("ilp-batch");
    assert_eq!(batch["status"], "time_limit");
    // Its bound, if any, is the proven placement floor: below its incumbent.
    let bound = batch["bound"].as_f64();
    let best_sequential = [
        "k8s-default",
        "k8s-nrt",
        "flextopo-imp",
        "flextopo-exhaustive",
        "ilp",
    ]
    .iter()
    .map(|n| by(n)["objective"].as_f64().expect("objective"))
    .fold(f64::INFINITY, f64::min);
    let batch_objective = batch["objective"].as_f64().expect("an incumbent");
    assert!(
        batch_objective <= best_sequential + 1e-9,
        "{batch_objective} > {best_sequential}"
    );
    assert!(
        bound.is_none_or(|b| b <= batch_objective + 1e-9),
        "{bound:?}"
    );
    // Every gap is against that bound, so an upper bound.
    for p in plan["planners"].as_array().expect("planners") {
        assert!(p["gap"].is_null() || p["gap_is_bound"] == true, "{p}");
    }
    assert_eq!(by("flextopo-exhaustive")["truncated"], true);
    assert_eq!(
        by("flextopo-exhaustive")["objective"],
        by("flextopo-imp")["objective"]
    );
    // Co-location: the exact search stops after its first dive and says so.
    let plan = plan_within_a_millisecond(
        "examples/clusters/a100-x16.toml",
        "examples/workloads/colocation-small.toml",
    );
    let ilp = planner_named(&plan, "ilp");
    assert_eq!(ilp["status"], "time_limit", "{ilp}");
}

/// `coplan plan --time-limit 0.001` as JSON: a budget spent before the searches begin.
fn plan_within_a_millisecond(cluster: &str, workload: &str) -> serde_json::Value {
    let (code, out, err) = run_strs(&[
        "plan",
        cluster,
        workload,
        "--time-limit",
        "0.001",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("JSON")
}

/// The planner `name` of a `plan --format json` output.
fn planner_named(plan: &serde_json::Value, name: &str) -> serde_json::Value {
    plan["planners"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} ran"))
}
