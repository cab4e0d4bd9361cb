//! Small runs the engine's unit tests share: one node of two stages with round numbers, and a
//! planner that puts everything on node 0. Every run is checked by the run verifier.

use super::{Assignment, DiscreteEventEngine, Dispatcher, EngineConfig, View};
use crate::colocate::latency::{LatencyModel, PassCost};
use crate::plan::colocation::{ColocationRun, OpKind, Task, TaskId, TaskKind};
use crate::spec::colocation::{MemoryTimeout, QueueOrder};
use crate::verify::colocation::verify_run;

/// One node of two stages; a 1000-token forward takes 1 s per stage, its backward 0.5 s, a
/// decode iteration 0.1 s per stage.
pub(super) fn config() -> EngineConfig {
    EngineConfig {
        nodes: 1,
        stages: 2,
        latency: LatencyModel {
            forward: PassCost::quadratic(1e-6),
            backward: PassCost::quadratic(0.5e-6),
            decode_base_s: 0.1,
            decode_per_token_s: 0.0,
        },
        gpu_memory_mib: 1e9,
        threshold_mib: 1e9,
        weights_mib: 0.0,
        kv_mib_per_token: 1.0,
        activation_mib_per_token: 1.0,
        max_wait_s: 10.0,
        on_timeout: MemoryTimeout::Offload,
        offload_mib_per_s: 1000.0,
        batch_max: 8,
        batch_wait_s: 0.0,
        app_timeout_s: 100.0,
        queue_order: QueueOrder::Ready,
        defer_decode_ends: true,
    }
}

pub(super) fn inference(id: u32, arrival_s: f64, output_tokens: u32) -> Task {
    Task {
        id: TaskId(id),
        kind: TaskKind::Inference {
            prompt_tokens: 1000,
            output_tokens,
        },
        arrival_s,
    }
}

pub(super) fn training(id: u32) -> Task {
    Task {
        id: TaskId(id),
        kind: TaskKind::Training {
            tokens: 1000,
            batch: 1,
        },
        arrival_s: 0.0,
    }
}

pub(super) struct AllOnZero;
impl Dispatcher for AllOnZero {
    fn assign(&mut self, _: &View<'_>, _: &Task) -> Assignment {
        Assignment::Node(0)
    }
}

pub(super) fn run(cfg: &EngineConfig, tasks: &[Task]) -> ColocationRun {
    let r = DiscreteEventEngine::new(cfg, tasks).run(&mut AllOnZero);
    verify_run(&cfg.bounds(), tasks, &r).expect("the verifier accepts the run");
    r
}

pub(super) fn ops_of(r: &ColocationRun, kind: OpKind) -> Vec<(usize, f64, f64)> {
    let mut v: Vec<(usize, f64, f64)> = r
        .ops
        .iter()
        .filter(|o| o.kind == kind)
        .map(|o| (o.stage, o.start_s, o.end_s))
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}
