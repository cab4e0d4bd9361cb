//! The Kubernetes import goal (docs/performance.md): a `kubectl get nodes,pods -A` snapshot of
//! 10,000 nodes and about 200,000 pods, with what real exports carry besides (managedFields,
//! NodeResourceTopology objects, DaemonSets, finished pods: `scripts/k8s-snapshot.py --noise
//! --pods-per-node 20`), imported by the `coplan` binary as `-o yaml` and as `-o json`, side by
//! side: the median wall time of `--runs` runs (default 3) and the peak resident memory of the
//! process (its `VmHWM`, read from /proc while it runs). Goals: YAML ≤ 10 s and ≤ 2 GB, JSON
//! ≤ 5 s.
//!
//! `cargo bench --bench k8s_import [-- --nodes N] [-- --pods-per-node P] [-- --runs N]
//! [-- --data DIR]`: the snapshots are generated into DIR (a temporary folder by default,
//! removed after) unless DIR already holds them; generating 10,000 nodes takes python3 a few
//! minutes. Skipped without python3.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench may panic: that is its failure

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{arg, count_arg, median, number_arg, root};

/// Peak resident memory (kB) of a running process, from /proc; `None` once it has exited.
fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One import: wall seconds, peak resident MB (the last `VmHWM` read before the process
/// ended, polled every 5 ms), exit code and the last line of stderr.
fn import(file: &Path, dir: &Path) -> (f64, f64, i32, String) {
    let (c, w) = (dir.join("c.toml"), dir.join("w.toml"));
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(["import", "k8s"])
        .arg(file)
        .arg("--out-cluster")
        .arg(&c)
        .arg("--out-workload")
        .arg(&w)
        .args(["--format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the coplan binary runs");
    let mut peak_kb = 0;
    let status = loop {
        if let Some(kb) = vm_hwm_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = t.elapsed().as_secs_f64();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let last = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string();
    (
        elapsed,
        peak_kb as f64 / 1024.0,
        status.code().unwrap_or(-1),
        last,
    )
}

fn main() {
    let nodes: u32 = number_arg("--nodes", 10_000);
    let per_node: u32 = number_arg("--pods-per-node", 20);
    let runs: usize = count_arg("--runs", 3);
    let keep = arg("--data").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("coplan-bench-k8s-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir).expect("data dir");
    let script = root().join("scripts/k8s-snapshot.py");
    println!(
        "import k8s of {nodes} nodes, about {} pods (--noise --pods-per-node {per_node}), {runs} runs",
        nodes * per_node
    );
    println!(
        "{:<6} {:>10} {:>12} {:>12} {:>12} {:>6}",
        "format", "file MB", "median s", "peak RSS MB", "generate s", "exit"
    );
    for format in ["yaml", "json"] {
        let file = dir.join(format!("k8s-{nodes}-{per_node}.{format}"));
        let mut generate_s = 0.0;
        if !file.exists() {
            let t = Instant::now();
            let ok = Command::new("python3")
                .arg(&script)
                .args(["--nodes", &nodes.to_string(), "--seed", "1", "--noise"])
                .args(["--pods-per-node", &per_node.to_string()])
                .args(["--format", format, "--out"])
                .arg(&file)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                println!("skipped: python3 scripts/k8s-snapshot.py did not run");
                return;
            }
            generate_s = t.elapsed().as_secs_f64();
        }
        let size_mb = std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6);
        let (mut times, mut peaks) = (Vec::new(), Vec::new());
        let mut outcome = (0, String::new());
        for _ in 0..runs {
            let (t, peak, code, last) = import(&file, &dir);
            times.push(t);
            peaks.push(peak);
            outcome = (code, last);
        }
        println!(
            "{format:<6} {size_mb:>10.0} {:>12.2} {:>12.0} {generate_s:>12.1} {:>6}",
            median(times),
            peaks.iter().copied().fold(0.0, f64::max),
            outcome.0
        );
        if outcome.0 != 0 {
            println!("       {}", outcome.1);
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
