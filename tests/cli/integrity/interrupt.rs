//! Ctrl-C: a long `simulate`, `sweep` or `capacity` stops within a second of SIGINT, exits
//! 130, writes no `--out` (an older one stays as it was), and a sweep says which scenarios
//! had finished.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::root;

const CLUSTER: &str = "examples/clusters/gpu-2s4n8g-x4.toml";
const WORKLOAD: &str = "tests/fixtures/valid/sim-small.toml";

/// Runs coplan, sends SIGINT after `after`, and returns (exit code, stderr, seconds from the
/// signal to the exit).
fn interrupted(args: &[&str], after: Duration) -> (i32, String, f64) {
    let child = Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("coplan starts");
    std::thread::sleep(after);
    // A run that had already ended would make the test pass or fail on the machine's speed:
    // the runs below are sized to last minutes, so this names the cause if one ever does not.
    let mut child = child;
    assert!(
        child.try_wait().expect("coplan's state").is_none(),
        "the run ended before the signal: make it longer"
    );
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -INT failed");
    let out = child.wait_with_output().expect("coplan ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        sent.elapsed().as_secs_f64(),
    )
}

/// Interrupts after a second a run of `args` that would last minutes (100,000 cycles of three
/// planners), writing JSON to `out`: as [`interrupted`].
fn interrupted_json_run(args: &[&str], out: &Path) -> (i32, String, f64) {
    let out = out.display().to_string();
    let mut all = args.to_vec();
    all.extend([
        "--cycles",
        "100000",
        "--planners",
        "k8s-default,flextopo-imp,ilp",
        "--format",
        "json",
        "--out",
        &out,
    ]);
    interrupted(&all, Duration::from_secs(1))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coplan-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn ctrl_c_stops_a_long_simulate_without_writing_out() {
    let out = scratch("simulate.json");
    let _ = std::fs::remove_file(&out);
    let (code, err, waited) =
        interrupted_json_run(&["simulate", CLUSTER, WORKLOAD, "--seeds", "64"], &out);
    assert_eq!(code, 130, "{err}");
    assert!(waited < 1.5, "stopped {waited:.2} s after the signal");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!out.exists(), "no partial --out");
}

#[test]
fn ctrl_c_stops_a_sweep_naming_the_finished_scenarios_and_keeps_the_old_out() {
    let out = scratch("sweep.csv");
    std::fs::write(&out, "an older result\n").expect("write");
    let (code, err, waited) = interrupted(
        &[
            "sweep",
            CLUSTER,
            WORKLOAD,
            // Scenario 0 (one cycle) ends in milliseconds and the others last minutes, so the
            // signal finds exactly one finished on any machine.
            "--set",
            "simulation.cycles=1,100000,100000,100000,100000",
            "--seeds",
            "4",
            "--planners",
            "k8s-default,flextopo-imp,ilp",
            "--out",
            &out.display().to_string(),
        ],
        Duration::from_millis(2500),
    );
    assert_eq!(code, 130, "{err}");
    assert!(waited < 1.5, "stopped {waited:.2} s after the signal");
    assert!(
        err.contains("interrupted: scenario 0 of 5 finished"),
        "names what finished: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).expect("the old file"),
        "an older result\n",
        "the old --out is untouched"
    );
}

#[test]
fn ctrl_c_stops_a_capacity_search() {
    let out = scratch("capacity.json");
    let _ = std::fs::remove_file(&out);
    let capacity = [
        "capacity",
        CLUSTER,
        WORKLOAD,
        "--target",
        "hit_rate>=0.99",
        "--seeds",
        "32",
    ];
    let (code, err, waited) = interrupted_json_run(&capacity, &out);
    assert_eq!(code, 130, "{err}");
    assert!(waited < 1.5, "stopped {waited:.2} s after the signal");
    assert!(!out.exists(), "no partial --out");
}
