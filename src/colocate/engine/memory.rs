//! GPU memory per stage: what each task holds, the KV reserved for the tokens a request has
//! still to decode (so that decode growth never takes a stage past κ · GPU memory), growth per
//! token, the wait-or-offload-or-drop rule of a forward that does not fit, and reloads of
//! offloaded data. A forward that must wait asks for its node's `Wake` at its deadline
//! (`stages.rs`). Its one event: dropping a training task that never started closes its A-PP
//! slot (`training.rs`), which releases the next one (`Arrive`, `AppTimeout`). A drop frees
//! memory without a `Wake`: the stage whose queue dropped it goes on to its next op at once.

use super::simulator::DiscreteEventEngine;
use super::state::{Pending, Queued, slot};
use crate::plan::colocation::{OpKind, TaskId, TaskKind};
use crate::spec::colocation::MemoryTimeout;

impl<'a> DiscreteEventEngine<'a> {
    pub(super) fn forward_need_mib(&self, id: TaskId) -> f64 {
        match self.tasks[id.index()].kind {
            TaskKind::Inference { prompt_tokens, .. } => {
                self.cfg.kv_mib_per_token * prompt_tokens as f64
            }
            TaskKind::Training { tokens, batch } => {
                self.cfg.activation_mib_per_token * (tokens as f64) * batch as f64
            }
        }
    }

    /// KV a request's decoding will add on each stage (0 for training).
    pub(super) fn growth_mib(&self, id: TaskId) -> f64 {
        match self.tasks[id.index()].kind {
            TaskKind::Inference { output_tokens, .. } => {
                self.cfg.kv_mib_per_token * output_tokens as f64
            }
            TaskKind::Training { .. } => 0.0,
        }
    }

    /// Returns a request's unused reservation on every stage of its node.
    pub(super) fn release_reservation(&mut self, node: usize, id: TaskId) {
        for s in 0..self.cfg.stages {
            let r = std::mem::take(&mut self.held.reserved[slot(self.cfg.stages, id, s)]);
            self.nodes[node].stages[s].reserved_mib -= r;
        }
    }

    /// What `try_start` would do with a queued op, were it first in queue order: start it
    /// (`Some((offload, drop))`: as is, offloaded, or drop its task), or wait for memory until
    /// the deadline (`Err`).
    pub(super) fn startable(
        &self,
        node: usize,
        stage: usize,
        q: &Queued,
    ) -> Result<(bool, bool), f64> {
        if let Pending::Forward(id) = q.op {
            if self.outcomes[id.index()].dropped {
                return Ok((false, true));
            }
            let need = self.forward_need_mib(id) + self.growth_mib(id);
            let st = &self.nodes[node].stages[stage];
            let used = st.mem_mib + st.reserved_mib;
            if used + need > self.cfg.threshold_mib {
                let deadline = self.cfg.memory_deadline_s(q.ready_at);
                if self.cfg.memory_wait_over(self.now, deadline) {
                    return Ok(match self.cfg.on_timeout {
                        MemoryTimeout::Offload => (true, false),
                        MemoryTimeout::Drop => (false, true),
                    });
                }
                return Err(deadline);
            }
        }
        Ok((false, false))
    }

    pub(super) fn drop_task(&mut self, id: TaskId) {
        let o = &mut self.outcomes[id.index()];
        if o.dropped {
            return;
        }
        o.dropped = true;
        let node = o.node;
        if let Some(n) = node {
            self.release_reservation(n, id);
            for s in 0..self.cfg.stages {
                self.free_held(n, s, id);
                self.nodes[n].stages[s].queue.retain(
                    |q| !matches!(q.op, Pending::Forward(t) | Pending::Backward(t) if t == id),
                );
            }
        }
        if self.tasks[id.index()].is_training() && self.outcomes[id.index()].start_s.is_none() {
            // It never reached its stage-0 forward: A-PP must not wait for it.
            self.close_slot(id);
        }
    }

    /// A request's next token, decoded at `now`: counted, timed, and its KV taken out of its
    /// reservation on every stage (or grown on the host where its cache was offloaded).
    pub(super) fn add_token(&mut self, node: usize, id: TaskId, now: f64) {
        self.generated[id.index()] += 1;
        if self.recording {
            self.outcomes[id.index()].token_times.push(now);
        }
        let kv = self.cfg.kv_mib_per_token;
        let stages = self.cfg.stages;
        for s in 0..stages {
            let k = slot(stages, id, s);
            if self.held.offloaded[k] > 0.0 {
                self.held.offloaded[k] += kv;
                continue;
            }
            let held = &mut self.held;
            let from_reserve = held.reserved[k].min(kv);
            held.reserved[k] -= from_reserve;
            held.mib[k] += kv;
            let st = &mut self.nodes[node].stages[s];
            st.reserved_mib -= from_reserve;
            st.mem_mib += kv;
        }
    }

    /// Frees what a task holds on one stage (its backward ended there, or it finished or was
    /// dropped).
    pub(super) fn free_held(&mut self, node: usize, stage: usize, id: TaskId) {
        let mib = std::mem::take(&mut self.held.mib[slot(self.cfg.stages, id, stage)]);
        self.nodes[node].stages[stage].mem_mib -= mib;
    }

    /// The memory of a forward starting now on `(node, stage)`: held there with the KV its
    /// decoding will need reserved, or, offloaded, moved to the host first. Returns the time
    /// the move adds to the op (none when nothing is offloaded).
    pub(super) fn hold_forward_memory(
        &mut self,
        node: usize,
        stage: usize,
        id: TaskId,
        offload: bool,
    ) -> Option<f64> {
        let now = self.now;
        let need = self.forward_need_mib(id);
        if offload {
            self.outcomes[id.index()].offloaded = true;
            self.held.offloaded[slot(self.cfg.stages, id, stage)] = need;
            let move_s = need / self.cfg.offload_mib_per_s;
            self.record(node, stage, OpKind::Offload, &[id], now, now + move_s);
            Some(move_s)
        } else {
            let growth = self.growth_mib(id);
            self.held.mib[slot(self.cfg.stages, id, stage)] += need;
            self.held.reserved[slot(self.cfg.stages, id, stage)] += growth;
            let st = &mut self.nodes[node].stages[stage];
            st.mem_mib += need;
            st.reserved_mib += growth;
            None
        }
    }

    /// Brings back what an op starting now on `(node, stage)` needs from the host; returns
    /// the time it takes (none when nothing comes back), which the op waits for.
    pub(super) fn reload_offloaded(
        &mut self,
        node: usize,
        stage: usize,
        op: Pending,
    ) -> Option<f64> {
        let now = self.now;
        // Offloaded data the op needs comes back first: a training task's activations for its
        // backward (then freed), the KV of offloaded requests for every decode iteration (it
        // streams in and stays on the host).
        let may_reload = match op {
            Pending::Backward(_) => true,
            Pending::Decode(iter) => self.flight(node, iter).is_some_and(|f| f.reloads),
            _ => false,
        };
        let backward = [match op {
            Pending::Backward(id) => id,
            _ => TaskId(0),
        }];
        let needs: &[TaskId] = match op {
            Pending::Decode(iter) => self.batch(node, iter),
            Pending::Backward(_) => &backward,
            _ => &[],
        };
        let reloaded: Vec<TaskId> = match op {
            Pending::Backward(_) | Pending::Decode(_) if may_reload => needs
                .iter()
                .copied()
                .filter(|t| self.held.offloaded[slot(self.cfg.stages, *t, stage)] > 0.0)
                .collect(),
            _ => Vec::new(),
        };
        let reload_mib: f64 = reloaded
            .iter()
            .map(|t| self.held.offloaded[slot(self.cfg.stages, *t, stage)])
            .sum();
        if let Pending::Backward(id) = op {
            self.held.offloaded[slot(self.cfg.stages, id, stage)] = 0.0;
        }
        if reload_mib > 0.0 {
            let reload_s = reload_mib / self.cfg.offload_mib_per_s;
            self.record(node, stage, OpKind::Reload, &reloaded, now, now + reload_s);
            return Some(reload_s);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::plan::colocation::OpKind;
    use crate::spec::colocation::MemoryTimeout;

    #[test]
    fn memory_wait_then_run_when_freed() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        // The first request holds 1000 MiB per stage until it completes at 2.0.
        let second = &r.outcomes[1];
        assert!(
            close(second.start_s.unwrap_or(0.0), 2.0),
            "{:?}",
            second.start_s
        );
        assert!(!second.offloaded && !second.dropped);
    }

    #[test]
    fn memory_timeout_offloads_or_drops() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        cfg.max_wait_s = 0.5;
        // Offload: after the wait (stage 0 is free at 1.0), 1000 MiB at 1000 MiB/s = 1 s of
        // transfer, then the forward.
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        let second = &r.outcomes[1];
        assert!(second.offloaded);
        let off = ops_of(&r, OpKind::Offload);
        assert!(close(off[0].1, 1.0) && close(off[0].2, 2.0));
        cfg.on_timeout = MemoryTimeout::Drop;
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 0)]);
        assert!(r.outcomes[1].dropped && r.outcomes[1].end_s.is_none());
        assert!(r.outcomes[0].end_s.is_some());
    }

    #[test]
    fn an_offloaded_request_reloads_its_kv_for_every_decode_iteration() {
        let mut cfg = config();
        cfg.gpu_memory_mib = 1500.0;
        cfg.threshold_mib = 1500.0;
        cfg.max_wait_s = 0.5;
        // Request 1 is offloaded on stage 0 at 1.0 (1000 MiB of prompt KV, 1 s at 1000 MiB/s),
        // its forward runs [2,3] there; request 0 has freed stage 1 by then, so stage 1 holds
        // the KV ([3,4]). Each decode iteration first brings the 1000 MiB back on stage 0: 1 s,
        // then 0.1 s of compute per stage.
        let r = run(&cfg, &[inference(0, 0.0, 0), inference(1, 0.1, 2)]);
        let second = &r.outcomes[1];
        assert!(second.offloaded);
        assert!(
            close(second.prefill_end_s.unwrap_or(0.0), 4.0),
            "{second:?}"
        );
        let reloads = ops_of(&r, OpKind::Reload);
        assert_eq!(reloads.len(), 2, "two iterations, stage 0 only");
        assert!(reloads.iter().all(|r| r.0 == 0));
        assert!(close(reloads[0].1, 4.0) && close(reloads[0].2, 5.0));
        // Iteration 1: stage 0 [4,5.1], stage 1 [5.1,5.2]; the first token's KV (1 MiB) grows
        // on the host too, so iteration 2 reloads 1001 MiB: [5.2,6.301], then [6.301,6.401].
        assert!(
            close(second.token_times[0], 5.2),
            "{:?}",
            second.token_times
        );
        assert!(close(second.end_s.unwrap_or(0.0), 6.401), "{second:?}");
    }
}
