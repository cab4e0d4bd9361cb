//! The full replay, the checker of record: it names the first violation, and the fast path's
//! tolerance and verdicts are defined against it, so it owns the tolerance both use.

use std::collections::BTreeMap;

use crate::plan::colocation::{ColocationRun, OpKind, RunBounds, Task, TaskKind};

/// Shared with `certify`, which must tolerate exactly what the replay tolerates.
pub(super) const EPS: f64 = 1e-9;

/// Start, end and kind of one op on a GPU.
type Span = (f64, f64, OpKind);

/// The full replay (the checker of record): it names the first violation. `verify_run` calls
/// it for every run `certify` does not accept.
pub fn verify_run_reference(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
) -> Result<(), String> {
    check_arrivals(tasks, run)?;
    check_one_op_at_a_time(cfg, run)?;
    let ops = TaskOps::of(cfg, run);
    check_reloads(run, &ops)?;
    check_pipeline_order(cfg, tasks, run, &ops)?;
    check_memory(cfg, tasks, run, &ops)?;
    check_outcomes(run)
}

/// Per task, the ops that name it: its forwards and backwards as (node, stage, start, end),
/// its decode iterations (counted on the last stage), and the stages it was offloaded on.
#[derive(Default)]
struct TaskOps {
    forward: BTreeMap<usize, Vec<StageOp>>,
    backward: BTreeMap<usize, Vec<StageOp>>,
    decode_iters: BTreeMap<usize, u32>,
    offloaded: BTreeMap<(usize, usize), ()>,
}

/// (node, stage, start, end) of one forward or backward.
type StageOp = (usize, usize, f64, f64);

impl TaskOps {
    fn of(cfg: &RunBounds, run: &ColocationRun) -> Self {
        let mut ops = TaskOps::default();
        let TaskOps {
            forward,
            backward,
            decode_iters,
            offloaded,
        } = &mut ops;
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
        ops
    }
}

/// (0) Every task's time counts from its submission.
fn check_arrivals(tasks: &[Task], run: &ColocationRun) -> Result<(), String> {
    for (o, t) in run.outcomes.iter().zip(tasks) {
        if o.arrival_s.to_bits() != t.arrival_s.to_bits() {
            return Err(format!(
                "task {}: arrival {} is not its submission {}",
                t.id.0, o.arrival_s, t.arrival_s
            ));
        }
    }
    Ok(())
}

/// (1) One op at a time per GPU.
fn check_one_op_at_a_time(cfg: &RunBounds, run: &ColocationRun) -> Result<(), String> {
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
    Ok(())
}

/// Every reload brings back what an offload moved out on its stage.
fn check_reloads(run: &ColocationRun, ops: &TaskOps) -> Result<(), String> {
    for op in run.ops.iter().filter(|o| o.kind == OpKind::Reload) {
        if let Some(t) = op
            .tasks
            .iter()
            .find(|t| !ops.offloaded.contains_key(&(t.index(), op.stage)))
        {
            return Err(format!(
                "task {}: a reload on stage {} of nothing offloaded",
                t.index(),
                op.stage
            ));
        }
    }
    Ok(())
}

/// (2) Pipeline order per task, on one node: its forwards run through every stage in order,
/// after its arrival and release; a training task's backwards follow in reverse order, and a
/// request decodes one iteration per token.
fn check_pipeline_order(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    ops: &TaskOps,
) -> Result<(), String> {
    for (i, fw) in &ops.forward {
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
        if let (Some(first), Some(released)) = (fw.first(), run.outcomes[*i].released_s)
            && first.2 + EPS < released
        {
            return Err(format!("{name}: starts before A-PP releases it"));
        }
        if task.is_training() && !run.outcomes[*i].dropped {
            let mut bw = ops.backward.get(i).cloned().unwrap_or_default();
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
            let iters = ops.decode_iters.get(i).copied().unwrap_or(0);
            if iters != output_tokens {
                return Err(format!(
                    "{name}: {iters} decode iterations for {output_tokens} tokens"
                ));
            }
        }
    }
    Ok(())
}

/// (3) Memory at every forward start stays within the GPU (a replay of allocations).
fn check_memory(
    cfg: &RunBounds,
    tasks: &[Task],
    run: &ColocationRun,
    ops: &TaskOps,
) -> Result<(), String> {
    let mut allocs: Vec<(f64, usize, usize, f64)> = Vec::new(); // (time, node, stage, +/- MiB)
    for (i, fw) in &ops.forward {
        let task = &tasks[*i];
        let o = &run.outcomes[*i];
        for &(n, s, start, _) in fw {
            if ops.offloaded.contains_key(&(*i, s)) {
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
                    ops.backward
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
    Ok(())
}

/// (4) Outcomes agree with the timeline.
fn check_outcomes(run: &ColocationRun) -> Result<(), String> {
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
