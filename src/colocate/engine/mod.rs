//! The co-location discrete-event engine: a simulator of node timelines (DESIGN §6.1) on which
//! every co-location planner and both `ilp` searches run (the searches' floors read its
//! states). Per node S pipeline stages
//! (stage s on GPU s), each running one op at a time: forward (prefill), backward and decode
//! iterations, plus weight syncs, KV offloads and reloads.
//!
//! - Pipeline order: a task's forward on stage s + 1 starts after its forward on stage s;
//!   training backward runs from the last stage to the first.
//! - Continuous batching (LeMix Algorithm 3): after its prefill, an inference request joins its
//!   node's decode batch (at most `batch_max`); an iteration passes through all stages; a batch
//!   that starts from empty waits up to T_w for company, and a training arrival ends the wait.
//! - Memory per stage: weights + activations of in-flight training tasks (freed by their
//!   backward) + KV of active requests (growing per decoded token). A forward that would exceed
//!   κ · GPU memory waits up to `max_wait_s`, then is offloaded (its memory moved to the host,
//!   extra time bytes / bandwidth) or dropped.
//! - Training is released A-PP: the next task when the previous one ends its stage-0 forward.
//!
//! A planner decides the node of each task when it arrives (or defers a training task).
//!
//! Each concern lives in its own file, as `impl` blocks of the one engine type (see
//! `docs/colocation.md`, "The event flow"):
//! - `simulator.rs`: the engine (`DiscreteEventEngine`) and the API planners and searches
//!   drive (`run`, `advance`, `place`, `view`, `drain_node`, …); it handles `Arrive`;
//! - `state.rs`: the state of stages, decode batches and held memory the files share;
//! - `event.rs`: the events and their order (`EventKey`);
//! - `config.rs`: the fixed parameters of a run (`EngineConfig`);
//! - `dispatch.rs`: what planners see and answer (`View`, `Dispatcher`, `Assignment`);
//! - `events.rs`: the event heap and its order (`EventKey`), dispatching each event, and the
//!   decode-op ends kept beside the heap (`catch_up`);
//! - `stages.rs`: stage queues, op start and op end (`OpDone`);
//! - `memory.rs`: reservations, KV growth, offload and reload, wait-or-drop;
//! - `decode.rs`: a request's life after its prefill, decode groups and pipelined iterations
//!   (schedules the `Wake` that ends a batch's wait);
//! - `training.rs`: A-PP's training slots (`AppTimeout`), deferral, training completion;
//! - `recording.rs`: the op log and token times, which no decision reads.

mod config;
mod decode;
mod dispatch;
mod event;
mod events;
mod memory;
mod recording;
mod simulator;
mod stages;
mod state;
#[cfg(test)]
mod test_support;
mod training;

pub use self::config::EngineConfig;
pub use self::dispatch::{Assignment, Dispatcher, View};
pub use self::recording::History;
pub use self::simulator::{DiscreteEventEngine, StageLoad};
