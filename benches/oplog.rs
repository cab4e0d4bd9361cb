//! The floor of the co-location op log as it is: writing, then reading back, as many ops as
//! `separate` logs in the Azure hour (one per decode iteration and stage) to an `OpLog`, with
//! nothing simulated or verified. A run that logs every op can be no faster than this.
//!
//! Run: `cargo bench --bench oplog` (`-- --ops N` to change the count, `--reserve` to allocate
//! the log at its final size first).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::time::Instant;

mod common;

use common::{flag, number_arg};
use coplan::plan::colocation::{OpKind, OpLog, TaskId};

fn main() {
    let ops: usize = number_arg("--ops", 7_822_658);
    let reserve = flag("--reserve");
    let mut times = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        let mut log = OpLog::new();
        if reserve {
            log.reserve(ops);
        }
        let mut t = 0.0f64;
        for i in 0..ops {
            let tasks = log.tasks(&[TaskId((i % 19_366) as u32)]);
            log.push(i % 16, i % 2, OpKind::Decode, tasks, t, t + 0.01);
            t += 0.0004;
        }
        let busy: f64 = log.iter().map(|o| o.end_s - o.start_s).sum();
        std::hint::black_box(busy);
        drop(log);
        times.push(t0.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{ops} ops of {} bytes, written to an `OpLog` and read back{}: median of 5 {:.3} s (min {:.3} s)",
        OpLog::ENTRY_BYTES,
        if reserve { ", log reserved" } else { "" },
        times[times.len() / 2],
        times[0]
    );
}
