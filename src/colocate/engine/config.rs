//! The fixed parameters of a run, derived once from a co-location spec: the engine and every
//! planner read them, none changes them. Handles no event.

use crate::colocate::latency::LatencyModel;
use crate::plan::colocation::RunBounds;
use crate::spec::colocation::{ColocationSpec, MemoryTimeout, QueueOrder};

/// Fixed parameters of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Co-location nodes: servers that each hold one pipeline-parallel replica of the model.
    pub nodes: usize,
    /// Pipeline stages per node (≥ 1); stage s runs on the node's GPU s.
    pub stages: usize,
    /// Profiled stage latencies (forward, backward, decode) of the model.
    pub latency: LatencyModel,
    /// Memory of one GPU, in MiB.
    pub gpu_memory_mib: f64,
    /// κ · GPU memory.
    pub threshold_mib: f64,
    /// Model weights held on every stage, in MiB.
    pub weights_mib: f64,
    /// KV cache per token in context of an active inference request, per stage, in MiB.
    pub kv_mib_per_token: f64,
    /// Activations per token of an in-flight training task, per stage, in MiB (freed by its
    /// backward).
    pub activation_mib_per_token: f64,
    /// T_max: how long a forward may wait for memory below the threshold before it is offloaded or
    /// dropped, in seconds.
    pub max_wait_s: f64,
    /// What happens to a forward that waited `max_wait_s` for memory: offload to the host or drop.
    pub on_timeout: MemoryTimeout,
    /// MiB per second of host offload (and of weight syncs).
    pub offload_mib_per_s: f64,
    /// Continuous batching C: most inference requests in one node's decode batch (≥ 1).
    pub batch_max: usize,
    /// T_w.
    pub batch_wait_s: f64,
    /// A-PP releases the next training task at the latest this long after the previous one.
    pub app_timeout_s: f64,
    /// Order of ready ops in a stage queue.
    pub queue_order: QueueOrder,
    /// Whether the ends of decode ops on nodes that run nothing else are handled outside the
    /// event heap (`DiscreteEventEngine::catch_up`). Off, every event passes through the
    /// heap: the reference the equivalence tests hold the faster path to.
    pub defer_decode_ends: bool,
}

impl EngineConfig {
    /// Derives the parameters from a spec for `nodes` nodes of `gpu_memory_mib` MiB GPUs;
    /// `mean_prompt` (tokens) sets T_w from the full-pipeline prefill latency of the mean prompt.
    pub fn new(spec: &ColocationSpec, nodes: usize, gpu_memory_mib: f64, mean_prompt: f64) -> Self {
        let l = &spec.lemix;
        let latency = LatencyModel::from_profile(&spec.model);
        let stages = spec.model.stages.max(1) as usize;
        // T_w = factor × inference latency (a full-pipeline prefill of the mean prompt).
        let inference_latency = stages as f64 * latency.forward_s(1, mean_prompt.round() as u32);
        EngineConfig {
            nodes,
            stages,
            latency,
            gpu_memory_mib,
            threshold_mib: l.memory_threshold * gpu_memory_mib,
            weights_mib: spec.model.weights_mib,
            kv_mib_per_token: spec.model.kv_mib_per_token,
            activation_mib_per_token: spec.model.activation_mib_per_token,
            max_wait_s: l.max_wait_s,
            on_timeout: l.on_memory_timeout,
            offload_mib_per_s: l.offload_gbps * 1e9 / (1024.0 * 1024.0),
            batch_max: l.batch_max.max(1) as usize,
            batch_wait_s: l.batch_wait_factor * inference_latency,
            app_timeout_s: l.app_timeout_s,
            queue_order: l.queue_order,
            defer_decode_ends: true,
        }
    }

    /// When a forward ready for its stage at `ready_at_s` stops waiting for memory:
    /// `max_wait_s` later.
    pub fn memory_deadline_s(&self, ready_at_s: f64) -> f64 {
        ready_at_s + self.max_wait_s
    }

    /// Whether a memory wait is over at `now_s`. Event times carry rounding, so a wait ends a
    /// hair before its deadline.
    pub fn memory_wait_over(&self, now_s: f64, deadline_s: f64) -> bool {
        now_s + 1e-12 >= deadline_s
    }

    /// The least a forward has waited for memory when its wait is over: `max_wait_s` less a
    /// margin wider than the hair `memory_wait_over` allows, so that the bounds may count it.
    pub fn least_memory_wait_s(&self) -> f64 {
        (self.max_wait_s - 1e-9).max(0.0)
    }

    /// The shape and memory model the run verifier checks a run against.
    pub fn bounds(&self) -> RunBounds {
        RunBounds {
            nodes: self.nodes,
            stages: self.stages,
            gpu_memory_mib: self.gpu_memory_mib,
            weights_mib: self.weights_mib,
            kv_mib_per_token: self.kv_mib_per_token,
            activation_mib_per_token: self.activation_mib_per_token,
        }
    }
}
