//! The run loop: replay the corpus, then mutate; time every execution, catch its panics, keep
//! inputs that reach an outcome not seen before, write every finding to `artifacts/`.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::mutate::mutate;
use crate::rng::Rng;
use crate::targets::Target;
use crate::verdict::Verdict;

pub struct RunOptions {
    pub runs: u64,
    pub seed: u64,
    pub timeout_ms: u64,
    pub corpus: PathBuf,
    pub max_len: usize,
}

/// Peak resident memory above which a run is a finding.
const RSS_LIMIT_KB: u64 = 200 * 1024;

/// Inputs kept for mutation beyond the seeds (each reached a new outcome).
const POOL_LIMIT: usize = 4096;

/// Distinct findings printed in full; the rest are only counted and written.
const PRINT_LIMIT: usize = 20;

fn fuzz_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn corpus_dir(target: &str) -> PathBuf {
    fuzz_root().join("corpus").join(target)
}

fn artifact_dir(target: &str) -> PathBuf {
    fuzz_root().join("artifacts").join(target)
}

/// FNV-1a: a stable name for an input.
fn hash(input: &[u8]) -> u64 {
    input.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where the last panic happened and what it said, recorded by the silent hook.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// The input in flight and when it started (ms since the run began; `u64::MAX` when idle),
/// for the watchdog.
static IN_FLIGHT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static STARTED_MS: AtomicU64 = AtomicU64::new(u64::MAX);

fn silence_panics() {
    panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = format!("{message}{at}");
        }
    }));
}

/// One execution's result.
struct Execution {
    verdict: Verdict,
    elapsed: Duration,
}

fn execute(target: &Target, input: &[u8], epoch: Instant) -> Execution {
    if let Ok(mut slot) = IN_FLIGHT.lock() {
        slot.clear();
        slot.extend_from_slice(input);
    }
    let start = Instant::now();
    STARTED_MS.store(
        start.duration_since(epoch).as_millis() as u64,
        Ordering::SeqCst,
    );
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    let elapsed = start.elapsed();
    STARTED_MS.store(u64::MAX, Ordering::SeqCst);
    let verdict = match outcome {
        Ok(v) => v,
        Err(_) => {
            let last = LAST_PANIC.lock().map(|l| l.clone()).unwrap_or_default();
            Verdict::Finding(format!("panic: {last}"))
        }
    };
    Execution { verdict, elapsed }
}

/// Aborts the process when one execution runs far past the timeout (a hang cannot be
/// interrupted in-process), after writing the input in flight as an artifact.
fn start_watchdog(target: &'static str, timeout_ms: u64, epoch: Instant) {
    let limit = timeout_ms.saturating_mul(10).max(10_000);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let started = STARTED_MS.load(Ordering::SeqCst);
            if started == u64::MAX {
                continue;
            }
            let now = epoch.elapsed().as_millis() as u64;
            if now.saturating_sub(started) > limit {
                let input = IN_FLIGHT.lock().map(|i| i.clone()).unwrap_or_default();
                let path = write_artifact(target, "hang", &input);
                eprintln!(
                    "\nHANG: one execution has run {} ms (limit {limit} ms); input written to {}\nreplay: cargo run --release -- replay {target} {}",
                    now - started,
                    path.display(),
                    path.display()
                );
                std::process::abort();
            }
        }
    });
}

fn write_artifact(target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let dir = artifact_dir(target);
    let path = dir.join(format!("{kind}-{:016x}", hash(input)));
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(&path, input);
    }
    path
}

/// Peak resident set size of this process in KiB (`VmHWM`), where /proc has it.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The seed inputs of a corpus folder, in name order (the order is part of the run).
fn read_corpus(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            std::fs::read(&p)
                .map(|bytes| (p.display().to_string(), bytes))
                .map_err(|e| format!("cannot read {}: {e}", p.display()))
        })
        .collect()
}

/// Findings of a run, deduplicated by message shape for printing.
struct Findings {
    target: &'static str,
    count: u64,
    printed: BTreeSet<String>,
}

impl Findings {
    fn record(&mut self, kind: &str, message: &str, input: &[u8]) {
        self.count += 1;
        let path = write_artifact(self.target, kind, input);
        let shape: String = message.chars().filter(|c| !c.is_ascii_digit()).collect();
        if self.printed.len() < PRINT_LIMIT && self.printed.insert(shape) {
            eprintln!(
                "\nFINDING ({kind}): {message}\n  input: {}\n  replay: cargo run --release -- replay {} {}",
                path.display(),
                self.target,
                path.display()
            );
        }
    }
}

pub fn run(target: &'static Target, options: &RunOptions) -> Result<u64, String> {
    let seeds = read_corpus(&options.corpus)?;
    let mut pool: Vec<Vec<u8>> = seeds.iter().map(|(_, b)| b.clone()).collect();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let seed_count = pool.len();
    let mut rng = Rng::new(options.seed);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut findings = Findings {
        target: target.name,
        count: 0,
        printed: BTreeSet::new(),
    };
    let mut slowest: (Duration, Vec<u8>) = (Duration::ZERO, Vec::new());
    let timeout = Duration::from_millis(options.timeout_ms);
    let epoch = Instant::now();
    silence_panics();
    start_watchdog(target.name, options.timeout_ms, epoch);
    let mut executions: u64 = 0;
    let mut last_report = Instant::now();
    eprintln!(
        "{}: {} seed input(s) from {}, {} runs, seed {}, timeout {} ms",
        target.name,
        seed_count,
        options.corpus.display(),
        options.runs,
        options.seed,
        options.timeout_ms
    );
    // The corpus first, as it is: every past crash is replayed on every run.
    let mut queue: Vec<Vec<u8>> = pool.clone();
    queue.reverse();
    while executions < options.runs {
        let input = match queue.pop() {
            Some(i) => i,
            None if target.generated && rng.one_in(4) => {
                let n = 8 + rng.below(88);
                (0..n).map(|_| rng.next_u64() as u8).collect()
            }
            None => {
                let base = &pool[rng.below(pool.len())];
                mutate(base, &pool, &mut rng, options.max_len)
            }
        };
        let e = execute(target, &input, epoch);
        executions += 1;
        if e.elapsed > slowest.0 {
            slowest = (e.elapsed, input.clone());
        }
        match e.verdict {
            Verdict::Fine(signature) => {
                if pool.len() < seed_count + POOL_LIMIT && seen.insert(signature) {
                    pool.push(input.clone());
                }
            }
            Verdict::Finding(message) => {
                let kind = if message.starts_with("panic") {
                    "crash"
                } else {
                    "failure"
                };
                findings.record(kind, &message, &input);
            }
        }
        if e.elapsed > timeout {
            findings.record(
                "slow",
                &format!(
                    "one execution took {} ms (timeout {} ms)",
                    e.elapsed.as_millis(),
                    options.timeout_ms
                ),
                &input,
            );
        }
        if last_report.elapsed() >= Duration::from_secs(30) {
            last_report = Instant::now();
            let secs = epoch.elapsed().as_secs_f64();
            eprintln!(
                "  {executions} executions, {:.0}/s, {} findings, {} inputs kept, {:.0} s",
                executions as f64 / secs,
                findings.count,
                pool.len(),
                secs
            );
        }
    }
    let wall = epoch.elapsed().as_secs_f64();
    let rss = peak_rss_kb();
    if rss.is_some_and(|kb| kb > RSS_LIMIT_KB) {
        findings.record(
            "memory",
            &format!(
                "peak RSS {} MB above {} MB",
                rss.unwrap_or(0) / 1024,
                RSS_LIMIT_KB / 1024
            ),
            &slowest.1,
        );
    }
    let slowest_path = write_artifact(target.name, "slowest", &slowest.1);
    println!("target          {}", target.name);
    println!("seed            {}", options.seed);
    println!("executions      {executions}");
    println!("wall            {wall:.1} s");
    println!("exec/s          {:.0}", executions as f64 / wall);
    println!("findings        {}", findings.count);
    println!(
        "slowest         {:.2} ms ({})",
        slowest.0.as_secs_f64() * 1000.0,
        slowest_path.display()
    );
    println!(
        "peak RSS        {}",
        rss.map_or_else(
            || "unknown".into(),
            |kb| format!("{:.1} MB", kb as f64 / 1024.0)
        )
    );
    println!("inputs kept     {}", pool.len() - seed_count);
    Ok(findings.count)
}

pub fn replay(target: &'static Target, files: &[String]) -> Result<u64, String> {
    let epoch = Instant::now();
    silence_panics();
    let mut findings = 0;
    for file in files {
        let input = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        let e = execute(target, &input, epoch);
        let ms = e.elapsed.as_secs_f64() * 1000.0;
        match e.verdict {
            Verdict::Fine(signature) => println!("{file}: fine ({signature}) in {ms:.2} ms"),
            Verdict::Finding(message) => {
                findings += 1;
                println!("{file}: FINDING in {ms:.2} ms: {message}");
            }
        }
    }
    Ok(findings)
}
