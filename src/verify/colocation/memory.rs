//! The memory step of `certify`. Its bit-for-bit agreement with the reference's sums rests on
//! an ordering argument of its own (see `certify_memory`) that the scan does not need, so it is
//! read and changed apart from the scan that feeds it.

use crate::plan::colocation::{ColocationRun, RunBounds, Task, TaskId, TaskKind};

/// One op of a task on one stage: (node, start, end).
pub(super) type Slot = Option<(usize, f64, f64)>;

/// What the linear pass found of each task's ops, for the memory replay.
#[derive(Clone, Copy)]
pub(super) struct Slots<'a> {
    pub(super) forward: &'a [Slot],
    pub(super) backward: &'a [Slot],
    pub(super) offloaded: &'a [bool],
}

/// Step 3 of `certify`: the memory replay. The reference sorts all allocations and frees by
/// (time, MiB) and keeps a running sum per GPU; only each GPU's own order matters to its sums,
/// and entries equal in both keys are equal, so any order of a GPU's entries sorted by
/// (time, MiB) gives the same sums bit for bit. The few prompt, activation and free entries
/// are sorted per GPU; the token entries (one per decoded token and stage, all of the same
/// size) are taken in the order of the decode ops that produced them, which is time order in
/// an engine run, and merged in as they come. If they are not in order, every GPU's entries
/// are sorted instead.
// Its one caller is the scan in `certify.rs`; inlined there, as it was when both shared a
// file, the replay runs without a call boundary (the verifier's instructions on the Azure
// hour are otherwise 1.7 % more).
#[inline]
pub(super) fn certify_memory(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    slots: &Slots<'_>,
    decode_tasks: &[TaskId],
    known: usize,
) -> bool {
    let stages = cfg.stages;
    let gpus = cfg.nodes * stages;
    let kv = cfg.kv_mib_per_token;
    let grows = |i: usize| slots.grows(stages, i);
    let (others, tokens_total) = other_entries(cfg, tasks, run, slots);
    let capacity = cfg.gpu_memory_mib * 1.0 + 1e-6;
    // Per GPU: the running sum, how many of its other entries are in, and the last token time.
    let mut used = vec![cfg.weights_mib; gpus];
    let mut next = vec![0usize; gpus];
    let mut last_token = vec![f64::NEG_INFINITY; gpus];
    let mut in_order = true;
    // Adds a token entry at `t` to GPU `g` after the other entries that sort before it.
    let mut token = |g: usize, t: f64| -> bool {
        if !in_order {
            return true;
        }
        if t.total_cmp(&last_token[g]) == std::cmp::Ordering::Less {
            in_order = false;
            return true;
        }
        last_token[g] = t;
        let list = &others[g];
        let u = &mut used[g];
        while let Some(&(ot, od)) = list.get(next[g])
            && by_time_then_mib(&(ot, od), &(t, kv)) == std::cmp::Ordering::Less
        {
            *u += od;
            if *u > capacity && od > 0.0 {
                return false;
            }
            next[g] += 1;
        }
        *u += kv;
        !(*u > capacity && kv > 0.0)
    };
    // Token times in decode-op order: each last-stage decode op of a task takes its next one.
    let mut taken = vec![0usize; known];
    for t in decode_tasks {
        let i = t.index();
        if i >= known || !matches!(tasks[i].kind, TaskKind::Inference { .. }) {
            continue;
        }
        let Some(&time) = run.outcomes[i].token_times.get(taken[i]) else {
            continue;
        };
        taken[i] += 1;
        for g in grows(i) {
            if !token(g, time) {
                return false;
            }
        }
    }
    // Token times no decode op took, in task order.
    for (i, (task, o)) in tasks.iter().zip(&run.outcomes).enumerate() {
        if !matches!(task.kind, TaskKind::Inference { .. }) {
            continue;
        }
        for &time in o.token_times.iter().skip(taken[i]) {
            for g in grows(i) {
                if !token(g, time) {
                    return false;
                }
            }
        }
    }
    if !in_order {
        return replay_sorted(cfg, tasks, run, slots, others, tokens_total);
    }
    for g in 0..gpus {
        for &(_, d) in &others[g][next[g]..] {
            used[g] += d;
            if used[g] > capacity && d > 0.0 {
                return false;
            }
        }
    }
    true
}

/// The order of the reference's sort of a GPU's entries: by time, then by MiB (frees first).
fn by_time_then_mib(a: &(f64, f64), b: &(f64, f64)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
}

impl Slots<'_> {
    /// The GPUs whose memory task `i`'s tokens grow: its forwards not offloaded.
    #[inline]
    fn grows(&self, stages: usize, i: usize) -> impl Iterator<Item = usize> + '_ {
        (0..stages).filter_map(move |s| {
            let k = i * stages + s;
            match self.forward[k] {
                Some((n, _, _)) if !self.offloaded[k] => Some(n * stages + s),
                _ => None,
            }
        })
    }
}

/// Per GPU, its prompt, activation and free entries as (time, MiB), sorted as the reference
/// sorts them; with the number of decoded tokens whose entries are left out.
#[inline]
fn other_entries(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    slots: &Slots<'_>,
) -> (Vec<Vec<(f64, f64)>>, usize) {
    let Slots {
        forward,
        backward,
        offloaded,
    } = *slots;
    let stages = cfg.stages;
    let kv = cfg.kv_mib_per_token;
    let mut others: Vec<Vec<(f64, f64)>> = vec![Vec::new(); cfg.nodes * stages];
    let mut tokens_total = 0usize;
    // (Zipped: the first `known` tasks and outcomes.)
    for (i, (task, o)) in tasks.iter().zip(&run.outcomes).enumerate() {
        for s in 0..stages {
            let k = i * stages + s;
            let Some((n, start, _)) = forward[k] else {
                continue;
            };
            if offloaded[k] {
                continue;
            }
            let list = &mut others[n * stages + s];
            let (mib, free_at) = match task.kind {
                TaskKind::Inference { prompt_tokens, .. } => {
                    tokens_total += o.token_times.len();
                    if let Some(end) = o.end_s {
                        list.push((end, -kv * o.token_times.len() as f64));
                    }
                    (kv * prompt_tokens as f64, o.end_s)
                }
                TaskKind::Training { tokens, batch } => (
                    cfg.activation_mib_per_token * tokens as f64 * batch as f64,
                    backward[k].map(|b| b.2),
                ),
            };
            list.push((start, mib));
            if let Some(t) = free_at {
                list.push((t, -mib));
            }
        }
    }
    for list in &mut others {
        list.sort_unstable_by(by_time_then_mib);
    }
    (others, tokens_total)
}

/// The replay with token entries out of time order: every GPU's token entries added, then
/// each GPU's whole list sorted as the reference does.
#[cold]
fn replay_sorted(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    slots: &Slots<'_>,
    others: Vec<Vec<(f64, f64)>>,
    tokens_total: usize,
) -> bool {
    let (stages, kv) = (cfg.stages, cfg.kv_mib_per_token);
    let gpus = cfg.nodes * stages;
    let capacity = cfg.gpu_memory_mib * 1.0 + 1e-6;
    let mut lists = others;
    for list in &mut lists {
        list.reserve(tokens_total / gpus.max(1));
    }
    for (i, (task, o)) in tasks.iter().zip(&run.outcomes).enumerate() {
        if !matches!(task.kind, TaskKind::Inference { .. }) {
            continue;
        }
        for &time in &o.token_times {
            for g in slots.grows(stages, i) {
                lists[g].push((time, kv));
            }
        }
    }
    lists.iter_mut().all(|list| {
        list.sort_unstable_by(by_time_then_mib);
        let mut u = cfg.weights_mib;
        list.iter().all(|&(_, d)| {
            u += d;
            !(u > capacity && d > 0.0)
        })
    })
}
