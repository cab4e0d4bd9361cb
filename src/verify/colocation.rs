//! The independent checker of a co-location run: it reads only the op timeline and the task
//! set, and checks that no stage runs two ops at once, that every task's ops respect pipeline
//! order on one node, that memory never exceeds a GPU's capacity (offloaded forwards excepted),
//! and that the counted outcomes match the timeline.

use std::collections::BTreeMap;

use crate::plan::colocation::{
    ColocationMetrics, ColocationRun, OpKind, RunBounds, Task, TaskId, TaskKind,
};
use crate::spec::colocation::ColocationObjective;

const EPS: f64 = 1e-9;

/// Start, end and kind of one op on a GPU.
type Span = (f64, f64, OpKind);

/// Checks a run; `Err` names the first violation.
///
/// A run the engine produced has millions of ops (a decode iteration per token and stage), so
/// the checks first run in one linear pass that exploits the order the timeline is normally in
/// (`certify`); it accepts only runs that the full replay (`verify_run_reference`) accepts,
/// and anything it cannot certify — a violation, or a timeline out of its usual order — goes to
/// that replay, which names the first violation exactly as before.
pub fn verify_run(cfg: &RunBounds, tasks: &[Task], run: &ColocationRun) -> Result<(), String> {
    if run.ops.overflowed() {
        return Err(
            "the op log overflowed (more than 65 536 nodes, 2 048 stages or 2^32 task \
             lists): the timeline is incomplete"
                .into(),
        );
    }
    if certify(cfg, tasks, run) {
        return Ok(());
    }
    verify_run_reference(cfg, tasks, run)
}

/// One op of a task on one stage: (node, start, end).
type Slot = Option<(usize, f64, f64)>;

/// What the linear pass found of each task's ops, for the memory replay.
#[derive(Clone, Copy)]
struct Slots<'a> {
    forward: &'a [Slot],
    backward: &'a [Slot],
    offloaded: &'a [bool],
}

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
    let Some(Scan {
        forward,
        backward,
        decode_iters,
        decode_tasks,
        offloaded,
        reloads,
        ..
    }) = scanned
    else {
        return false;
    };
    for &k in &reloads {
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
            || fw.first().is_some_and(|f| f.1 + EPS < o.arrival_s)
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
            && decode_iters[i] != output_tokens
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
        forward: &forward,
        backward: &backward,
        offloaded: &offloaded,
    };
    certify_memory(cfg, tasks, run, &slots, &decode_tasks, known)
}

/// Step 3 of `certify`: the memory replay. The reference sorts all allocations and frees by
/// (time, MiB) and keeps a running sum per GPU; only each GPU's own order matters to its sums,
/// and entries equal in both keys are equal, so any order of a GPU's entries sorted by
/// (time, MiB) gives the same sums bit for bit. The few prompt, activation and free entries
/// are sorted per GPU; the token entries (one per decoded token and stage, all of the same
/// size) are taken in the order of the decode ops that produced them, which is time order in
/// an engine run, and merged in as they come. If they are not in order, every GPU's entries
/// are sorted instead.
fn certify_memory(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    slots: &Slots<'_>,
    decode_tasks: &[TaskId],
    known: usize,
) -> bool {
    let Slots {
        forward,
        backward,
        offloaded,
    } = *slots;
    let stages = cfg.stages;
    let gpus = cfg.nodes * stages;
    let kv = cfg.kv_mib_per_token;
    // The GPUs whose memory a task's tokens grow: its forwards not offloaded.
    let grows = |i: usize| {
        (0..stages).filter_map(move |s| {
            let k = i * stages + s;
            match forward[k] {
                Some((n, _, _)) if !offloaded[k] => Some(n * stages + s),
                _ => None,
            }
        })
    };
    let mut others: Vec<Vec<(f64, f64)>> = vec![Vec::new(); gpus];
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
    let by_time_then_mib =
        |a: &(f64, f64), b: &(f64, f64)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1));
    for list in &mut others {
        list.sort_unstable_by(by_time_then_mib);
    }
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
        // Every GPU's token entries, then each GPU's whole list sorted as the reference does.
        let mut lists = others;
        for list in &mut lists {
            list.reserve(tokens_total / gpus.max(1));
        }
        for (i, (task, o)) in tasks.iter().zip(&run.outcomes).enumerate() {
            if !matches!(task.kind, TaskKind::Inference { .. }) {
                continue;
            }
            for &time in &o.token_times {
                for g in grows(i) {
                    lists[g].push((time, kv));
                }
            }
        }
        return lists.iter_mut().all(|list| {
            list.sort_unstable_by(by_time_then_mib);
            let mut u = cfg.weights_mib;
            list.iter().all(|&(_, d)| {
                u += d;
                !(u > capacity && d > 0.0)
            })
        });
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

/// The full replay (the checker of record): it names the first violation. `verify_run` calls
/// it for every run `certify` does not accept.
pub fn verify_run_reference(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
) -> Result<(), String> {
    // 1. One op at a time per GPU.
    let mut per_gpu: BTreeMap<(usize, usize), Vec<Span>> = BTreeMap::new();
    for op in &run.ops {
        if op.node >= cfg.nodes || op.stage >= cfg.stages {
            return Err(format!(
                "an op on node {} stage {} outside the cluster",
                op.node, op.stage
            ));
        }
        if op.end_s + EPS < op.start_s {
            return Err(format!(
                "an op on node {} stage {} ends before it starts",
                op.node, op.stage
            ));
        }
        per_gpu
            .entry((op.node, op.stage))
            .or_default()
            .push((op.start_s, op.end_s, op.kind));
    }
    for ((n, s), ops) in per_gpu.iter_mut() {
        ops.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for w in ops.windows(2) {
            // An offload runs just before its own forward on the same stage.
            if w[1].0 + EPS < w[0].1 {
                return Err(format!(
                    "node {n} stage {s} runs two ops at once: {:?} [{}, {}] and {:?} from {}",
                    w[0].2, w[0].0, w[0].1, w[1].2, w[1].0
                ));
            }
        }
    }
    // 2. Pipeline order per task, on one node.
    let mut forward: BTreeMap<usize, Vec<(usize, usize, f64, f64)>> = BTreeMap::new();
    let mut backward: BTreeMap<usize, Vec<(usize, usize, f64, f64)>> = BTreeMap::new();
    let mut decode_iters: BTreeMap<usize, u32> = BTreeMap::new();
    let mut offloaded: BTreeMap<(usize, usize), ()> = BTreeMap::new();
    for op in &run.ops {
        for t in op.tasks {
            let rec = (op.node, op.stage, op.start_s, op.end_s);
            match op.kind {
                OpKind::Forward => forward.entry(t.index()).or_default().push(rec),
                OpKind::Backward => backward.entry(t.index()).or_default().push(rec),
                OpKind::Decode if op.stage == cfg.stages - 1 => {
                    *decode_iters.entry(t.index()).or_default() += 1
                }
                OpKind::Offload => {
                    offloaded.insert((t.index(), op.stage), ());
                }
                _ => {}
            }
        }
    }
    for op in run.ops.iter().filter(|o| o.kind == OpKind::Reload) {
        if let Some(t) = op
            .tasks
            .iter()
            .find(|t| !offloaded.contains_key(&(t.index(), op.stage)))
        {
            return Err(format!(
                "task {}: a reload on stage {} of nothing offloaded",
                t.index(),
                op.stage
            ));
        }
    }
    for (i, fw) in &forward {
        let task = &tasks[*i];
        let name = format!("task {i}");
        let mut fw = fw.clone();
        fw.sort_by_key(|r| r.1);
        if fw.iter().map(|r| r.1).collect::<Vec<_>>() != (0..cfg.stages).collect::<Vec<_>>()
            && !run.outcomes[*i].dropped
        {
            return Err(format!(
                "{name}: forward stages {:?}",
                fw.iter().map(|r| r.1).collect::<Vec<_>>()
            ));
        }
        if fw.iter().any(|r| r.0 != fw[0].0) {
            return Err(format!("{name}: forward ops on several nodes"));
        }
        if fw.windows(2).any(|w| w[1].2 + EPS < w[0].3) {
            return Err(format!(
                "{name}: a forward stage starts before the previous one ends"
            ));
        }
        if let Some(first) = fw.first()
            && first.2 + EPS < run.outcomes[*i].arrival_s
        {
            return Err(format!("{name}: starts before it arrives"));
        }
        if task.is_training() && !run.outcomes[*i].dropped {
            let mut bw = backward.get(i).cloned().unwrap_or_default();
            bw.sort_by_key(|r| std::cmp::Reverse(r.1));
            if bw.len() != cfg.stages {
                return Err(format!(
                    "{name}: {} backward stages of {}",
                    bw.len(),
                    cfg.stages
                ));
            }
            let last_forward = fw.last().map_or(0.0, |r| r.3);
            if bw[0].2 + EPS < last_forward || bw.windows(2).any(|w| w[1].2 + EPS < w[0].3) {
                return Err(format!("{name}: backward out of pipeline order"));
            }
        }
        if let TaskKind::Inference { output_tokens, .. } = task.kind
            && !run.outcomes[*i].dropped
            && run.outcomes[*i].end_s.is_some()
        {
            let iters = decode_iters.get(i).copied().unwrap_or(0);
            if iters != output_tokens {
                return Err(format!(
                    "{name}: {iters} decode iterations for {output_tokens} tokens"
                ));
            }
        }
    }
    // 3. Memory at every forward start stays within the GPU (a replay of allocations).
    let mut allocs: Vec<(f64, usize, usize, f64)> = Vec::new(); // (time, node, stage, +/- MiB)
    for (i, fw) in &forward {
        let task = &tasks[*i];
        let o = &run.outcomes[*i];
        for &(n, s, start, _) in fw {
            if offloaded.contains_key(&(*i, s)) {
                continue;
            }
            let (mib, free_at) = match task.kind {
                TaskKind::Inference { prompt_tokens, .. } => {
                    // Each decoded token adds its KV on every stage when it is produced.
                    let per_token = cfg.kv_mib_per_token;
                    for &t in &o.token_times {
                        allocs.push((t, n, s, per_token));
                    }
                    if let Some(end) = o.end_s {
                        allocs.push((end, n, s, -per_token * o.token_times.len() as f64));
                    }
                    (cfg.kv_mib_per_token * prompt_tokens as f64, o.end_s)
                }
                TaskKind::Training { tokens, batch } => (
                    cfg.activation_mib_per_token * tokens as f64 * batch as f64,
                    backward
                        .get(i)
                        .and_then(|b| b.iter().find(|r| r.1 == s).map(|r| r.3)),
                ),
            };
            allocs.push((start, n, s, mib));
            if let Some(t) = free_at {
                allocs.push((t, n, s, -mib));
            }
        }
    }
    // Frees before allocations at the same instant.
    allocs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.3.total_cmp(&b.3)));
    let mut used: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for (t, n, s, d) in allocs {
        let u = used.entry((n, s)).or_insert(cfg.weights_mib);
        *u += d;
        if *u > cfg.gpu_memory_mib * 1.0 + 1e-6 && d > 0.0 {
            return Err(format!(
                "node {n} stage {s} holds {u:.0} MiB at {t:.3} s, above the GPU's {:.0} MiB",
                cfg.gpu_memory_mib
            ));
        }
    }
    // 4. Outcomes agree with the timeline.
    for (i, o) in run.outcomes.iter().enumerate() {
        if o.dropped && o.end_s.is_some() {
            return Err(format!("task {i}: dropped and completed"));
        }
        if !o.dropped && o.end_s.is_none() {
            return Err(format!("task {i}: neither completed nor dropped"));
        }
    }
    Ok(())
}

/// Recomputes the counted metrics and the canonical objective from the run's outcomes with its
/// own formula, and compares them with the reported ones.
/// What the metrics of a run are defined against.
#[derive(Debug, Clone, Copy)]
pub struct MetricBasis<'a> {
    /// τ_R.
    pub tau_s: f64,
    pub stages: usize,
    pub warmup_s: f64,
    pub weights: &'a ColocationObjective,
}

pub fn verify_metrics(
    run: &ColocationRun,
    reported: &ColocationMetrics,
    basis: &MetricBasis<'_>,
) -> Result<(), String> {
    let (tau_s, weights) = (basis.tau_s, basis.weights);
    let dropped = run.outcomes.iter().filter(|o| o.dropped).count() as u64;
    let offloaded = run.outcomes.iter().filter(|o| o.offloaded).count() as u64;
    let trained = run
        .outcomes
        .iter()
        .filter(|o| o.training && !o.dropped && o.end_s.is_some())
        .count() as u64;
    let mut nodes: Vec<usize> = run.outcomes.iter().filter_map(|o| o.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut objective = 0.0;
    for o in &run.outcomes {
        if o.dropped {
            objective += weights.dropped;
            continue;
        }
        if !o.training {
            let r = o.prefill_end_s.map(|e| e - o.arrival_s);
            if r.is_none_or(|r| r > tau_s + 1e-12) {
                objective += weights.slo_miss;
            }
        }
        if let Some(end) = o.end_s {
            objective += (end - o.arrival_s) / tau_s;
        }
    }
    // The paper's definitions: per used node, its active window.
    let mut windows: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    let mut compute_s = 0.0;
    for op in &run.ops {
        let w = windows.entry(op.node).or_insert((op.start_s, op.end_s));
        *w = (w.0.min(op.start_s), w.1.max(op.end_s));
        if matches!(op.kind, OpKind::Forward | OpKind::Backward | OpKind::Decode) {
            compute_s += op.end_s - op.start_s;
        }
    }
    let active: f64 = windows.values().map(|(a, b)| b - a).sum();
    let completed = run
        .outcomes
        .iter()
        .filter(|o| !o.dropped && o.end_s.is_some())
        .count() as f64;
    let (throughput_active, utilization_active) = if active > 0.0 {
        (
            completed / active,
            compute_s / (basis.stages as f64 * active),
        )
    } else {
        (0.0, 0.0)
    };
    let arrivals: Vec<f64> = run
        .outcomes
        .iter()
        .filter(|o| !o.training)
        .map(|o| o.arrival_s)
        .collect();
    let first = arrivals.iter().copied().fold(f64::INFINITY, f64::min);
    let last = arrivals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let window = if arrivals.is_empty() {
        (0.0, 0.0)
    } else {
        ((first + basis.warmup_s).min(last), last)
    };
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let checks = [
        (
            "throughput_active",
            near(reported.throughput_active, throughput_active),
        ),
        (
            "utilization_active",
            near(reported.utilization_active, utilization_active),
        ),
        (
            "window",
            near(reported.window_start_s, window.0) && near(reported.window_end_s, window.1),
        ),
        ("dropped", reported.dropped == dropped),
        ("offloaded", reported.offloaded == offloaded),
        (
            "training_tasks_done",
            reported.training_tasks_done == trained,
        ),
        ("nodes_used", reported.nodes_used == nodes.len() as u64),
        (
            "objective",
            (reported.objective - objective).abs() <= 1e-6 * objective.abs().max(1.0),
        ),
    ];
    match checks.iter().find(|(_, ok)| !ok) {
        Some((name, _)) => Err(format!("metric `{name}` does not recompute")),
        None => Ok(()),
    }
}
