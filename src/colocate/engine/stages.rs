//! Stage queues and ops: enqueueing an op on a stage, choosing the next op of a queue
//! (`queue_order`, the planner's rank, memory admission), starting it, and its end.
//!
//! Handles `OpDone`: a forward passes to the next stage (or turns into the backward, or ends a
//! prefill), a backward passes to the previous stage (or completes its training task), a
//! decode iteration passes on (or ends its iteration); the freed stage takes its next op.

use super::dispatch::Dispatcher;
use super::event::Event;
use super::simulator::DiscreteEventEngine;
use super::state::{Pending, Queued, Running};
use crate::plan::colocation::OpKind;
use crate::spec::colocation::QueueOrder;

impl<'a> DiscreteEventEngine<'a> {
    /// Puts an op in a stage's queue (or starts it at once on an idle stage). Its decode path is
    /// repeated in `events.rs::pass_decode_on`: keep the two alike.
    pub(super) fn enqueue(&mut self, node: usize, stage: usize, op: Pending, estimate_s: f64) {
        if !matches!(op, Pending::Decode(_)) {
            self.restore_decode_ends(node);
        }
        self.seq += 1;
        if let Pending::Decode(iter) = op {
            let st = &self.nodes[node].stages[stage];
            if st.running.is_none()
                && st.queue.is_empty()
                && self.flight(node, iter).is_some_and(|f| !f.reloads)
            {
                // What queueing it and `try_start` would do: the op is the only one, and a
                // decode iteration without reloads always starts. The queued time is added
                // and taken off as it would be, so that it stays the same to the last bit.
                let st = &mut self.nodes[node].stages[stage];
                st.queued_s += estimate_s;
                st.queued_s -= estimate_s;
                self.start(node, stage, op, false);
                return;
            }
        }
        let rank = match op {
            Pending::Forward(id) | Pending::Backward(id) => self.ranks[id.index()],
            Pending::Decode(_) | Pending::Sync => None,
        };
        let task_key = match op {
            Pending::Forward(id) | Pending::Backward(id) => i64::from(id.0),
            Pending::Decode(iter) => self.flight(node, iter).map_or(i64::MAX, |f| f.task_key),
            Pending::Sync => -1,
        };
        let q = Queued {
            op,
            ready_at: self.now,
            rank,
            task_key,
            seq: self.seq,
            estimate_s,
        };
        let st = &mut self.nodes[node].stages[stage];
        st.queued_s += q.estimate_s;
        st.queue.push(q);
        self.try_start(node, stage);
    }

    /// The first startable op of a stage queue in queue order, found in one pass: whether an
    /// op can start does not depend on the others, so the first startable one in the sorted
    /// queue is the least startable one. `None` when none can start, or when the queue order
    /// is not a plain lexicographic key (task-id order with planner ranks compares ids only
    /// between unranked ops), where `try_start` sorts as it always did.
    pub(super) fn first_startable(&self, node: usize, stage: usize) -> Option<(usize, bool, bool)> {
        let queue = &self.nodes[node].stages[stage].queue;
        let by_task_id = self.cfg.queue_order == QueueOrder::TaskId;
        if by_task_id && queue.iter().any(|q| q.rank.is_some()) {
            return None;
        }
        // The sort key of `try_start`'s order, lexicographic here.
        let before = |x: &Queued, y: &Queued| {
            let ids = if by_task_id {
                x.task_key.cmp(&y.task_key)
            } else {
                std::cmp::Ordering::Equal
            };
            let (rx, ry) = (x.rank.unwrap_or(x.ready_at), y.rank.unwrap_or(y.ready_at));
            ids.then(rx.total_cmp(&ry))
                .then(x.ready_at.total_cmp(&y.ready_at))
                .then(x.seq.cmp(&y.seq))
                == std::cmp::Ordering::Less
        };
        let mut best: Option<(usize, bool, bool)> = None;
        for (i, q) in queue.iter().enumerate() {
            if best.is_some_and(|(b, _, _)| !before(q, &queue[b])) {
                continue;
            }
            if let Ok((offload, drop)) = self.startable(node, stage, q) {
                best = Some((i, offload, drop));
            }
        }
        best
    }

    /// Starts the first startable queued op of an idle stage.
    pub(super) fn try_start(&mut self, node: usize, stage: usize) {
        loop {
            let st = &self.nodes[node].stages[stage];
            if st.running.is_some() || st.queue.is_empty() {
                return;
            }
            if let Some(chosen) = self.first_startable(node, stage) {
                if self.take_queued(node, stage, chosen) {
                    return;
                }
                continue;
            }
            // Nothing can start (or an order that needs the sort): the queue in sorted order,
            // the wake-up at the earliest memory deadline.
            let st = &self.nodes[node].stages[stage];
            let mut order: Vec<usize> = (0..st.queue.len()).collect();
            let by_task_id = self.cfg.queue_order == QueueOrder::TaskId;
            order.sort_by(|&a, &b| {
                let (x, y) = (&st.queue[a], &st.queue[b]);
                let (rx, ry) = (x.rank.unwrap_or(x.ready_at), y.rank.unwrap_or(y.ready_at));
                let ids = if by_task_id && x.rank.is_none() && y.rank.is_none() {
                    x.task_key.cmp(&y.task_key)
                } else {
                    std::cmp::Ordering::Equal
                };
                ids.then(rx.total_cmp(&ry))
                    .then(x.ready_at.total_cmp(&y.ready_at))
                    .then(x.seq.cmp(&y.seq))
            });
            let mut chosen = None;
            let mut wake_at: Option<f64> = None;
            for i in order {
                let q = &self.nodes[node].stages[stage].queue[i];
                match self.startable(node, stage, q) {
                    Ok((offload, drop)) => {
                        chosen = Some((i, offload, drop));
                        break;
                    }
                    Err(deadline) => {
                        wake_at = Some(wake_at.map_or(deadline, |w: f64| w.min(deadline)));
                    }
                }
            }
            let Some(chosen) = chosen else {
                if let Some(at) = wake_at {
                    self.wake(node, at);
                }
                return;
            };
            if self.take_queued(node, stage, chosen) {
                return;
            }
        }
    }

    /// Takes queued op `i` off the stage's queue and starts it (offloaded or not), or drops
    /// its task; true when an op started.
    pub(super) fn take_queued(
        &mut self,
        node: usize,
        stage: usize,
        (i, offload, drop): (usize, bool, bool),
    ) -> bool {
        let q = self.nodes[node].stages[stage].queue.remove(i);
        self.nodes[node].stages[stage].queued_s -= q.estimate_s;
        if drop {
            if let Pending::Forward(id) = q.op {
                self.drop_task(id);
            }
            return false;
        }
        self.start(node, stage, q.op, offload);
        true
    }

    pub(super) fn start(&mut self, node: usize, stage: usize, op: Pending, offload: bool) {
        let now = self.now;
        if let Pending::Decode(iter) = op
            && let Some(f) = self.flight(node, iter)
            && !f.reloads
        {
            // The rest of this function, for a decode iteration that reloads nothing.
            let duration = self.cfg.latency.decode_s(f.context_tokens);
            let st = &mut self.nodes[node].stages[stage];
            st.busy_until = now + duration;
            st.running = Some(Running {
                op,
                kind: OpKind::Decode,
                start_s: now,
            });
            self.schedule_decode_end(node, stage, now + duration);
            return;
        }
        let (kind, mut duration) = match op {
            Pending::Forward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                (OpKind::Forward, self.cfg.latency.forward_s(b, l))
            }
            Pending::Backward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                (OpKind::Backward, self.cfg.latency.backward_s(b, l))
            }
            Pending::Decode(iter) => (
                OpKind::Decode,
                self.cfg
                    .latency
                    .decode_s(self.flight(node, iter).map_or(0, |f| f.context_tokens)),
            ),
            Pending::Sync => (
                OpKind::Sync,
                self.cfg.weights_mib / self.cfg.offload_mib_per_s,
            ),
        };
        if let Pending::Forward(id) = op {
            let o = &mut self.outcomes[id.index()];
            if o.start_s.is_none() {
                o.start_s = Some(now);
            }
            if let Some(move_s) = self.hold_forward_memory(node, stage, id, offload) {
                duration += move_s;
            }
        }
        let mut start_s = if offload {
            now + (duration - self.duration_without_offload(op))
        } else {
            now
        };
        if let Some(reload_s) = self.reload_offloaded(node, stage, op) {
            duration += reload_s;
            start_s = now + reload_s;
        }
        let st = &mut self.nodes[node].stages[stage];
        st.busy_until = now + duration;
        st.running = Some(Running { op, kind, start_s });
        if matches!(op, Pending::Decode(_)) {
            self.schedule_decode_end(node, stage, now + duration);
        } else {
            self.push(now + duration, Event::OpDone { node, stage });
        }
    }

    pub(super) fn duration_without_offload(&self, op: Pending) -> f64 {
        match op {
            Pending::Forward(id) => {
                let (b, l) = self.tasks[id.index()].forward_shape();
                self.cfg.latency.forward_s(b, l)
            }
            _ => 0.0,
        }
    }

    /// The end of the op running on `(node, stage)`. Two of its decode cases are also done in
    /// place for a kept end (`events.rs::pass_decode_on`, `end_iteration_in_place`): keep them
    /// alike.
    pub(super) fn op_done(&mut self, node: usize, stage: usize, planner: &mut dyn Dispatcher) {
        let now = self.now;
        // Read in place rather than moved out: the op is copied nowhere on the hot path.
        let (op, start_s) = match &self.nodes[node].stages[stage].running {
            Some(r) => (r.op, r.start_s),
            None => return,
        };
        if let Pending::Decode(iter) = op {
            self.record_decode(node, stage, iter, start_s, now);
            self.nodes[node].stages[stage].running = None;
        } else if let Some(r) = self.nodes[node].stages[stage].running.take() {
            let task = match r.op {
                Pending::Forward(id) | Pending::Backward(id) => Some(id),
                Pending::Decode(_) | Pending::Sync => None,
            };
            self.record(node, stage, r.kind, task.as_slice(), r.start_s, now);
        }
        let last = self.cfg.stages - 1;
        match op {
            Pending::Forward(id) => {
                let task = self.tasks[id.index()];
                if task.is_training() && stage == 0 {
                    self.close_slot(id);
                }
                if stage < last {
                    let (b, l) = task.forward_shape();
                    let est = self.cfg.latency.forward_s(b, l);
                    self.enqueue(node, stage + 1, Pending::Forward(id), est);
                } else if task.is_training() {
                    let (b, l) = task.forward_shape();
                    let est = self.cfg.latency.backward_s(b, l);
                    self.enqueue(node, last, Pending::Backward(id), est);
                } else {
                    self.prefill_done(node, id);
                }
            }
            Pending::Backward(id) => {
                self.free_held(node, stage, id);
                if stage > 0 {
                    let (b, l) = self.tasks[id.index()].forward_shape();
                    let est = self.cfg.latency.backward_s(b, l);
                    self.enqueue(node, stage - 1, Pending::Backward(id), est);
                } else {
                    self.complete_training(node, id, planner);
                }
                // Freed memory may unblock waiting forwards on this node.
                self.wake(node, now);
            }
            Pending::Decode(iter) => {
                if stage < last {
                    let est = self.cfg.latency.decode_s(0);
                    self.enqueue(node, stage + 1, Pending::Decode(iter), est);
                } else {
                    self.iteration_done(node, iter);
                }
            }
            Pending::Sync => {}
        }
        self.try_start(node, stage);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn far_dependency_waits_for_a_pending_backward() {
        let cfg = config();
        // Training forward: [0,1] on stage 0, [1,2] on stage 1; backward [2,2.5] on stage 1,
        // [2.5,3] on stage 0. A request arriving at 1.2 runs stage 0 in [1.2,2.2] but must wait
        // for the backward on stage 1: [2.5,3.5].
        let tasks = [inference(0, 1.2, 0), training(1)];
        let r = run(&cfg, &tasks);
        let req = &r.outcomes[0];
        assert!(
            close(req.prefill_end_s.unwrap_or(0.0), 3.5),
            "{:?}",
            req.prefill_end_s
        );
        let b = ops_of(&r, OpKind::Backward);
        assert!(close(b[0].1, 2.0) && close(b[0].2, 2.5) && b[0].0 == 1);
        assert!(close(b[1].1, 2.5) && close(b[1].2, 3.0) && b[1].0 == 0);
        assert!(close(r.outcomes[1].end_s.unwrap_or(0.0), 3.0));
    }

    #[test]
    fn stage_queues_in_ready_or_task_id_order() {
        // Request 0 holds stage 0 in [0,1]; request 2 is ready at 0.1, request 1 at 0.5.
        let tasks = [
            inference(0, 0.0, 0),
            inference(1, 0.5, 0),
            inference(2, 0.1, 0),
        ];
        let mut cfg = config();
        let r = run(&cfg, &tasks);
        // Ready order: 2 runs [1,2] on stage 0, then 1 runs [2,3].
        assert!(close(r.outcomes[2].start_s.unwrap_or(0.0), 1.0));
        assert!(close(r.outcomes[1].start_s.unwrap_or(0.0), 2.0));
        cfg.queue_order = QueueOrder::TaskId;
        let r = run(&cfg, &tasks);
        assert!(close(r.outcomes[1].start_s.unwrap_or(0.0), 1.0));
        assert!(close(r.outcomes[2].start_s.unwrap_or(0.0), 2.0));
    }
}
