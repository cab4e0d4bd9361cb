//! The linear pass that accepts a run without sorting its timeline. It is a fast path only:
//! it must never accept a run the replay of record (`reference`) rejects, so every step names
//! the reference check it mirrors, and the memory step, whose agreement rests on an ordering
//! argument of its own, is kept in `memory`.

use super::memory::{Slot, Slots, certify_memory};
use super::reference::EPS;
use crate::plan::colocation::{ColocationRun, OpKind, RunBounds, Task, TaskId, TaskKind};

/// Logs at least this long are scanned in two halves at once.
const PARALLEL_SCAN_OPS: usize = 1 << 16;

/// What `certify`'s linear pass finds in a stretch of the log.
struct Scan {
    /// Per GPU: the first and the last span of the stretch.
    first: Vec<Option<(f64, f64)>>,
    last: Vec<Option<(f64, f64)>>,
    forward: Vec<Slot>,
    backward: Vec<Slot>,
    decode_iters: Vec<u32>,
    /// The tasks of the last-stage decode ops, op by op in log order (the memory replay's
    /// token order), so that the replay need not read the log again.
    decode_tasks: Vec<TaskId>,
    offloaded: Vec<bool>,
    /// Log positions of reload ops.
    reloads: Vec<usize>,
}

/// Whether a span may follow the previous span of its GPU (step 1 of `certify`).
fn follows(previous: (f64, f64), start: f64, end: f64) -> bool {
    let order = previous
        .0
        .total_cmp(&start)
        .then(previous.1.total_cmp(&end));
    order != std::cmp::Ordering::Greater && start + EPS >= previous.1
}

/// Steps 1 and 2 of `certify` over the ops at `positions`; `None` when a check fails.
fn scan(
    cfg: &RunBounds,
    known: usize,
    run: &ColocationRun,
    positions: std::ops::Range<usize>,
) -> Option<Scan> {
    let stages = cfg.stages;
    let gpus = cfg.nodes.saturating_mul(stages);
    let key = |i: usize, s: usize| i * stages + s;
    // 1. One op at a time per GPU. The reference sorts each GPU's spans by (start, end) and
    // compares neighbours; when every GPU's spans already come in that order in the log (ops
    // are logged as they end), the stable sort keeps them as they are, so comparing each span
    // with the GPU's previous one is the same check.
    let mut first: Vec<Option<(f64, f64)>> = vec![None; gpus];
    let mut last: Vec<Option<(f64, f64)>> = vec![None; gpus];
    // 2. Pipeline order: each task's forward and backward per stage (a second op of a task on
    // one stage is left to the reference), decode iterations on the last stage, offloads.
    let mut forward: Vec<Slot> = vec![None; known * stages];
    let mut backward: Vec<Slot> = vec![None; known * stages];
    let mut decode_iters: Vec<u32> = vec![0; known];
    // About one task per last-stage op: a stage's share of the stretch.
    let mut decode_tasks: Vec<TaskId> = Vec::with_capacity(positions.len() / stages);
    let mut offloaded: Vec<bool> = vec![false; known * stages];
    let mut reloads: Vec<usize> = Vec::new();
    let start = positions.start;
    for (k, op) in (start..).zip(run.ops.iter_range(positions)) {
        if op.node >= cfg.nodes || op.stage >= stages || op.end_s + EPS < op.start_s {
            return None;
        }
        let g = op.node * stages + op.stage;
        match last[g] {
            Some(previous) if !follows(previous, op.start_s, op.end_s) => return None,
            Some(_) => {}
            None => first[g] = Some((op.start_s, op.end_s)),
        }
        last[g] = Some((op.start_s, op.end_s));
        let rec = Some((op.node, op.start_s, op.end_s));
        match op.kind {
            OpKind::Forward | OpKind::Backward => {
                let slots = if op.kind == OpKind::Forward {
                    &mut forward
                } else {
                    &mut backward
                };
                for t in op.tasks {
                    let i = t.index();
                    if i >= known {
                        if op.kind == OpKind::Forward {
                            return None;
                        }
                        // The reference reads backward ops only of tasks with a forward.
                        continue;
                    }
                    let slot = &mut slots[key(i, op.stage)];
                    if slot.is_some() {
                        return None;
                    }
                    *slot = rec;
                }
            }
            OpKind::Decode if op.stage == stages - 1 => {
                for t in op.tasks {
                    // The reference counts others too, and never reads their count.
                    if let Some(c) = decode_iters.get_mut(t.index()) {
                        *c += 1;
                    }
                }
                decode_tasks.extend_from_slice(op.tasks);
            }
            OpKind::Offload => {
                for t in op.tasks {
                    match offloaded.get_mut(key(t.index(), op.stage)) {
                        Some(o) if t.index() < known => *o = true,
                        _ => return None,
                    }
                }
            }
            OpKind::Reload => reloads.push(k),
            _ => {}
        }
    }
    Some(Scan {
        first,
        last,
        forward,
        backward,
        decode_iters,
        decode_tasks,
        offloaded,
        reloads,
    })
}

impl Scan {
    /// This stretch's findings followed by the next stretch's: what one pass over both finds.
    fn then(mut self, next: Scan) -> Option<Scan> {
        for (g, first) in next.first.iter().enumerate() {
            if let (Some(previous), Some(f)) = (self.last[g], first)
                && !follows(previous, f.0, f.1)
            {
                return None;
            }
            if next.last[g].is_some() {
                self.last[g] = next.last[g];
            }
            if self.first[g].is_none() {
                self.first[g] = *first;
            }
        }
        for (mine, theirs) in [
            (&mut self.forward, &next.forward),
            (&mut self.backward, &next.backward),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                match (&a, b) {
                    (Some(_), Some(_)) => return None,
                    (None, Some(_)) => *a = *b,
                    _ => {}
                }
            }
        }
        for (a, b) in self.decode_iters.iter_mut().zip(&next.decode_iters) {
            *a += b;
        }
        self.decode_tasks.extend_from_slice(&next.decode_tasks);
        for (a, b) in self.offloaded.iter_mut().zip(&next.offloaded) {
            *a |= b;
        }
        self.reloads.extend(next.reloads);
        Some(self)
    }
}

/// Whether `verify_run_reference` accepts the run, decided without sorting the timeline:
/// `true` only when every check it makes passes; `false` when one fails or when a shortcut
/// below does not apply (the reference then decides). Each step says which reference check it
/// mirrors. Public for the tests that hold it to the reference.
pub fn certify(cfg: &RunBounds, tasks: &[Task], run: &ColocationRun) -> bool {
    certify_scanning_halves_from(cfg, tasks, run, PARALLEL_SCAN_OPS)
}

/// `certify`, reading the log in two halves at once from `ops` ops on (0: always). Public for
/// the tests that hold the halves' merge to the single pass.
pub fn certify_scanning_halves_from(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    ops: usize,
) -> bool {
    let stages = cfg.stages;
    if stages == 0 {
        return false;
    }
    // Tasks the reference can index (it would panic on others: leave those to it).
    let known = tasks.len().min(run.outcomes.len());
    // The objective counts from submission: an outcome cannot move it.
    if run
        .outcomes
        .iter()
        .zip(tasks)
        .any(|(o, t)| o.arrival_s.to_bits() != t.arrival_s.to_bits())
    {
        return false;
    }
    let key = |i: usize, s: usize| i * stages + s;
    // Steps 1 and 2 read the log once; a long log is read in two halves at once, and the
    // halves' findings merged as one pass would have found them.
    let n = run.ops.len();
    let scanned = if n >= ops {
        let (a, b) = rayon::join(
            || scan(cfg, known, run, 0..n / 2),
            || scan(cfg, known, run, n / 2..n),
        );
        a.zip(b).and_then(|(a, b)| a.then(b))
    } else {
        scan(cfg, known, run, 0..n)
    };
    let Some(found) = scanned else {
        return false;
    };
    let (forward, backward, offloaded) = (&found.forward, &found.backward, &found.offloaded);
    for &k in &found.reloads {
        let Some(op) = run.ops.get(k) else {
            return false;
        };
        if op
            .tasks
            .iter()
            .any(|t| t.index() >= known || !offloaded[key(t.index(), op.stage)])
        {
            return false;
        }
    }
    let has_forward = |i: usize| {
        forward[key(i, 0)..key(i + 1, 0)]
            .iter()
            .any(Option::is_some)
    };
    for i in (0..known).filter(|&i| has_forward(i)) {
        let task = &tasks[i];
        let o = &run.outcomes[i];
        // The forwards in stage order (the reference's sort by stage).
        let fw: Vec<(usize, f64, f64)> = forward[key(i, 0)..key(i + 1, 0)]
            .iter()
            .flatten()
            .copied()
            .collect();
        if fw.len() != stages && !o.dropped {
            return false;
        }
        if fw.iter().any(|r| r.0 != fw[0].0)
            || fw.windows(2).any(|w| w[1].1 + EPS < w[0].2)
            || fw
                .first()
                .is_some_and(|f| f.1 + EPS < o.arrival_s.max(o.released_s.unwrap_or(0.0)))
        {
            return false;
        }
        if task.is_training() && !o.dropped {
            // Backward from the last stage to the first: all of them, in pipeline order.
            let bw = &backward[key(i, 0)..key(i + 1, 0)];
            let Some(first) = bw.last().copied().flatten() else {
                return false;
            };
            if bw.iter().any(Option::is_none) {
                return false;
            }
            let last_forward = fw.last().map_or(0.0, |r| r.2);
            if first.1 + EPS < last_forward
                || bw
                    .windows(2)
                    .any(|w| matches!((w[1], w[0]), (Some(a), Some(b)) if b.1 + EPS < a.2))
            {
                return false;
            }
        }
        if let TaskKind::Inference { output_tokens, .. } = task.kind
            && !o.dropped
            && o.end_s.is_some()
            && found.decode_iters[i] != output_tokens
        {
            return false;
        }
    }
    // 4. Outcomes agree with the timeline (cheap, and before the memory replay).
    // (Dropped and completed, or neither.)
    if run.outcomes.iter().any(|o| o.dropped == o.end_s.is_some()) {
        return false;
    }
    let slots = Slots {
        forward,
        backward,
        offloaded,
    };
    certify_memory(cfg, tasks, run, &slots, &found.decode_tasks, known)
}
