//! The run verifier's linear pass (`certify`) held to its full replay
//! (`verify_run_reference`): it certifies the engine's runs of the examples (so the fast path
//! is the one taken), and on corrupted runs it never accepts one the replay rejects, so
//! `verify_run` answers exactly as the replay, message included.

use super::registry;
use super::setup::{Setup, setup};
use crate::plan::colocation::{
    ColocationRun, OpKind, OpLog, OpRecord, RunBounds, TaskId, TaskList,
};
use crate::plan::{PlanStatus, PlannerRole};
use crate::spec::colocation::MemoryTimeout;
use crate::spec::{ClusterSpec, ColocationSpec};
use crate::topology::Cluster;
use crate::verify::colocation::{
    certify, certify_scanning_halves_from, verify_run, verify_run_reference,
};

use super::planner::PlannerRun;

fn example<T: serde::de::DeserializeOwned>(rel: &str) -> T {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A small instance of an example workload (few requests, short outputs), or its memory-bound
/// variant that offloads or drops.
fn small(workload: &str, drop: bool) -> Setup {
    let cluster: ClusterSpec = example("examples/clusters/a100-x16.toml");
    let cluster = Cluster::from_spec(&cluster);
    let mut spec: ColocationSpec = example(&format!("examples/workloads/{workload}.toml"));
    spec.inference.count = 40;
    spec.inference.output_tokens.max = 24;
    if drop {
        spec.lemix.on_memory_timeout = MemoryTimeout::Drop;
        spec.lemix.max_wait_s = 0.05;
    }
    setup(&cluster, &spec, None, Some(3))
}

/// Every candidate planner's run of a setup.
fn runs(s: &Setup) -> Vec<ColocationRun> {
    registry::registry()
        .iter()
        .filter(|p| p.role() == PlannerRole::Candidate)
        .filter_map(|p| match p.run(s, 0.0) {
            Ok(PlannerRun::Ran {
                run,
                status: PlanStatus::Heuristic,
                ..
            }) => Some(run),
            _ => None,
        })
        .collect()
}

fn setups() -> Vec<Setup> {
    vec![
        small("colocation-small", false),
        small("colocation-70b-memory", false),
        small("colocation-70b-memory", true),
    ]
}

#[test]
fn the_linear_pass_certifies_the_engine_runs() {
    for s in setups() {
        let bounds = s.config.bounds();
        let all = runs(&s);
        assert!(all.len() >= 4, "every heuristic planner ran");
        for run in &all {
            assert_eq!(verify_run_reference(&bounds, &s.tasks, run), Ok(()));
            assert!(certify(&bounds, &s.tasks, run), "the fast path accepts it");
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a thread pool");
                let halves =
                    pool.install(|| certify_scanning_halves_from(&bounds, &s.tasks, run, 0));
                assert!(halves, "the halves certify it on {threads} threads");
            }
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A time shift: tiny (around the tolerance), small or large, either way.
    fn shift(&mut self) -> f64 {
        let size = [1e-10, 1e-8, 1e-3, 0.05, 1.0, 50.0][self.below(6)];
        if self.next().is_multiple_of(2) {
            size
        } else {
            -size
        }
    }
}

/// One random corruption of a run; task ids stay in range (the reference indexes by them).
fn corrupt(run: &mut ColocationRun, tasks: usize, bounds: &RunBounds, rng: &mut Rng) {
    let mut ops = run.ops.to_records();
    corrupt_timeline(&mut ops, run, tasks, bounds, rng);
    run.ops = OpLog::from(ops);
}

/// `corrupt` on the timeline as owned records (the log itself is append-only).
fn corrupt_timeline(
    ops: &mut Vec<OpRecord>,
    run: &mut ColocationRun,
    tasks: usize,
    bounds: &RunBounds,
    rng: &mut Rng,
) {
    let n = ops.len();
    if n == 0 {
        return;
    }
    let i = rng.below(n);
    match rng.below(14) {
        0 => ops[i].start_s += rng.shift(),
        1 => ops[i].end_s += rng.shift(),
        2 => {
            let d = rng.shift();
            ops[i].start_s += d;
            ops[i].end_s += d;
        }
        3 => {
            ops.remove(i);
        }
        4 => {
            let op = ops[i].clone();
            let at = rng.below(n);
            ops.insert(at, op);
        }
        5 => {
            // Two ops change places in the log (the order the fast path relies on).
            let j = rng.below(n);
            ops.swap(i, j);
        }
        6 => ops[i].node = rng.below(bounds.nodes + 1),
        7 => ops[i].stage = rng.below(bounds.stages + 1),
        8 => {
            ops[i].kind = OpKind::ALL[rng.below(OpKind::ALL.len())];
        }
        9 => {
            let mut ids = ops[i].tasks.to_vec();
            let id = TaskId(rng.below(tasks) as u32);
            if ids.is_empty() || rng.next().is_multiple_of(2) {
                ids.push(id);
            } else {
                let k = rng.below(ids.len());
                ids[k] = id;
            }
            ops[i].tasks = TaskList::from(ids);
        }
        10 => {
            let t = rng.below(run.outcomes.len());
            let times = &mut run.outcomes[t].token_times;
            match rng.below(3) {
                0 if !times.is_empty() => {
                    let k = rng.below(times.len());
                    times[k] += rng.shift();
                }
                1 if !times.is_empty() => {
                    let k = rng.below(times.len());
                    times.remove(k);
                }
                _ => {
                    let at = times.last().copied().unwrap_or(0.0) + rng.shift();
                    times.push(at);
                }
            }
        }
        11 => {
            let t = rng.below(run.outcomes.len());
            let o = &mut run.outcomes[t];
            match rng.below(3) {
                0 => o.dropped = !o.dropped,
                1 => o.end_s = None,
                _ => o.end_s = Some(o.end_s.unwrap_or(0.0) + rng.shift()),
            }
        }
        12 => {
            let t = rng.below(run.outcomes.len());
            run.outcomes[t].arrival_s += rng.shift();
        }
        _ => {
            // A whole task's ops move in time together.
            let Some(&id) = ops[i].tasks.first() else {
                return;
            };
            let d = rng.shift();
            for op in ops.iter_mut().filter(|o| o.tasks.contains(&id)) {
                op.start_s += d;
                op.end_s += d;
            }
        }
    }
}

#[test]
fn the_linear_pass_never_accepts_what_the_reference_rejects() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut rejected, mut accepted) = (0, 0);
    for s in setups() {
        let base = s.config.bounds();
        for run in runs(&s).iter().take(3) {
            for case in 0..150 {
                let mut bounds = base;
                if case % 3 == 0 {
                    // Less GPU memory, so that the memory replay is what fails (or just holds).
                    let room = base.gpu_memory_mib - base.weights_mib;
                    bounds.gpu_memory_mib =
                        base.weights_mib + room * [0.02, 0.1, 0.3][case % 9 / 3];
                }
                let mut bad = run.clone();
                if case % 3 != 0 || case % 2 == 0 {
                    for _ in 0..=rng.below(2) {
                        corrupt(&mut bad, s.tasks.len(), &bounds, &mut rng);
                    }
                }
                let reference = verify_run_reference(&bounds, &s.tasks, &bad);
                // Read in two halves, the log certifies exactly as in one pass.
                assert_eq!(
                    certify_scanning_halves_from(&bounds, &s.tasks, &bad, 0),
                    certify(&bounds, &s.tasks, &bad),
                    "case {case}: the halves disagree with the single pass"
                );
                if certify(&bounds, &s.tasks, &bad) {
                    assert_eq!(reference, Ok(()), "case {case}: certified a rejected run");
                }
                assert_eq!(verify_run(&bounds, &s.tasks, &bad), reference);
                match reference {
                    Ok(()) => accepted += 1,
                    Err(_) => rejected += 1,
                }
            }
        }
    }
    // The corruptions exercise both answers.
    assert!(
        rejected > 300 && accepted > 100,
        "{rejected} rejected, {accepted} accepted"
    );
}

#[test]
fn a_log_that_overflowed_is_rejected_and_a_rebuilt_log_verifies_alike() {
    let s = small("colocation-small", false);
    let bounds = s.config.bounds();
    let run = runs(&s).into_iter().next().expect("a planner ran");
    // The engine's log (decode batches shared by their stage ops) and the same ops re-logged
    // one by one are the same timeline.
    let rebuilt = OpLog::from(run.ops.to_records());
    assert_eq!(rebuilt, run.ops);
    let mut bad = run.clone();
    bad.ops.push_record(&OpRecord {
        node: 0,
        stage: OpLog::MAX_STAGES,
        kind: OpKind::Decode,
        tasks: TaskList::from_slice(&[TaskId(0)]),
        start_s: 0.0,
        end_s: 0.0,
    });
    assert!(bad.ops.overflowed());
    let err = verify_run(&bounds, &s.tasks, &bad).expect_err("an incomplete log is rejected");
    assert!(err.contains("overflowed"), "{err}");
}
