//! Events and their order. Owns the heap, `EventKey` (time by `total_cmp`, then sequence
//! number), the inference arrivals kept sorted beside the heap, and the decode-op ends kept out
//! of it (`catch_up`), so that one order decides every run whichever path an event takes.
//!
//! Handles `AppTimeout` (to `training.rs`), `OpDone` (to `stages.rs`, or done in place here
//! for a kept decode-op end) and `Wake` (a node's decode batch and stage queues are
//! re-examined). An `Arrive` is handed out by `advance` (`simulator.rs`); `handle` sees one only
//! after `close_arrivals`, and drops it. The in-place handlers (`pass_decode_on`,
//! `end_iteration_in_place`) repeat steps of `stages.rs` and `decode.rs` for one case each:
//! a change there must be made here too (the equivalence test in `tests/colocation.rs`
//! compares both paths).

use std::cmp::Reverse;

use super::dispatch::{Dispatcher, NoDispatch};
use super::event::{Event, EventKey};
use super::simulator::DiscreteEventEngine;
use super::state::{Pending, Queued, Running};
use crate::plan::colocation::OpKind;

impl<'a> DiscreteEventEngine<'a> {
    pub(super) fn push(&mut self, at: f64, e: Event) {
        self.seq += 1;
        self.pushes += 1;
        self.events.push(Reverse((EventKey::new(at, self.seq), e)));
    }

    /// Schedules a wake-up of `node` at `at`, unless an earlier or equal one is scheduled.
    pub(super) fn wake(&mut self, node: usize, at: f64) {
        let n = &mut self.nodes[node];
        if n.wake_at.is_none_or(|w| at < w) {
            n.wake_at = Some(at);
            self.push(at, Event::Wake { node });
        }
    }

    /// The key of the next inference arrival.
    pub(super) fn arrival_key(&self) -> Option<EventKey> {
        self.arrivals
            .get(self.next_arrival)
            .map(|&(at, seq, _)| EventKey::new(at, seq))
    }

    /// The key of the next event of the heap and the arrivals (`EventKey::LAST` if none).
    pub(super) fn next_key(&self) -> EventKey {
        let heap = self.events.peek().map(|Reverse((k, _))| *k);
        heap.into_iter()
            .chain(self.arrival_key())
            .min()
            .unwrap_or(EventKey::LAST)
    }

    /// The next event: the earlier of the heap's first and the next inference arrival, by
    /// (time, sequence number) — the order one heap holding both would pop them in — after
    /// the kept decode-op ends before it (`catch_up`).
    pub(super) fn pop_event(&mut self) -> Option<(f64, Event)> {
        self.catch_up();
        if let (Some(&(at, _, id)), Some(key)) =
            (self.arrivals.get(self.next_arrival), self.arrival_key())
        {
            let first = match self.events.peek() {
                Some(Reverse((k, _))) => key < *k,
                None => true,
            };
            if first {
                self.next_arrival += 1;
                return Some((at, Event::Arrive(id)));
            }
        }
        self.events.pop().map(|Reverse((k, e))| (k.time(), e))
    }

    /// Processes one event other than an open arrival.
    pub(super) fn handle(&mut self, e: Event, planner: &mut dyn Dispatcher) {
        {
            let t = self.now;
            match e {
                Event::Arrive(_) => {}
                Event::AppTimeout { task, offer } => {
                    if self.offers[task.index()] == offer {
                        self.close_slot(task);
                    }
                }
                Event::OpDone { node, stage } => self.op_done(node, stage, planner),
                Event::Wake { node } => {
                    self.restore_decode_ends(node);
                    if self.nodes[node].wake_at == Some(t) {
                        self.nodes[node].wake_at = None;
                    }
                    self.try_decode(node);
                    for s in 0..self.cfg.stages {
                        self.try_start(node, s);
                    }
                }
            }
        }
    }

    /// Schedules the end of decode op `(node, stage)`: kept out of the heap when its node runs
    /// decode iterations only (`decode_only`), else in it.
    pub(super) fn schedule_decode_end(&mut self, node: usize, stage: usize, at: f64) {
        if self.cfg.defer_decode_ends && self.decode_only(node) {
            self.defer_decode_end(node, stage, at);
        } else {
            self.push(at, Event::OpDone { node, stage });
        }
    }

    /// Whether decode op `(node, stage)`, starting now, may end outside the heap: its node
    /// runs decode iterations only (none of them reloads), nothing waits to join its batches
    /// and nothing else is queued. Handling the end of such an op changes its own node only;
    /// the one event it can schedule is that node's wake-up.
    pub(super) fn decode_only(&self, node: usize) -> bool {
        let n = &self.nodes[node];
        let decode = |op: Pending| matches!(op, Pending::Decode(_));
        n.decode.waiting.is_empty()
            && n.decode.collect_until.is_none()
            && n.decode.groups.iter().all(|g| !g.flight.reloads)
            && n.stages.iter().all(|st| {
                st.running.as_ref().is_none_or(|r| decode(r.op))
                    && st.queue.iter().all(|q| decode(q.op))
            })
    }

    /// Keeps the end of decode op `(node, stage)` out of the heap, with the key its heap entry
    /// would have had.
    pub(super) fn defer_decode_end(&mut self, node: usize, stage: usize, at: f64) {
        self.seq += 1;
        self.pending_decode[node * self.cfg.stages + stage] = Some(EventKey::new(at, self.seq));
        if !self.pending_listed[node] {
            self.pending_listed[node] = true;
            self.pending_nodes.push(node);
        }
    }

    /// Puts a node's kept decode-op ends back into the heap, with their keys: something other
    /// than its own decode iterations is about to change the node.
    pub(super) fn restore_decode_ends(&mut self, node: usize) {
        if !self.pending_listed[node] {
            return;
        }
        for stage in 0..self.cfg.stages {
            if let Some(key) = self.pending_decode[node * self.cfg.stages + stage].take() {
                self.pushes += 1;
                self.events
                    .push(Reverse((key, Event::OpDone { node, stage })));
            }
        }
    }

    /// Handles every kept decode-op end that comes before the next event of the heap and the
    /// arrivals, so that the next event finds every node as it would have found it.
    ///
    /// Decode-op ends are most of a run's events. Those of a node that runs only decode
    /// iterations (`decode_only`) change that node alone, so they are handled here node by
    /// node, each node's in time order, without passing through the heap: the state each
    /// node reaches is the same as in time order across nodes. Only the log's interleaving of
    /// different nodes' ops differs. The one event such an end can schedule is its node's
    /// wake-up; the next event is then re-read, so that no node is handled past it.
    pub(super) fn catch_up(&mut self) {
        if self.pending_nodes.is_empty() {
            return;
        }
        let stages = self.cfg.stages;
        let mut bound = self.next_key();
        let mut i = 0;
        while i < self.pending_nodes.len() {
            let node = self.pending_nodes[i];
            loop {
                let slots = &self.pending_decode[node * stages..(node + 1) * stages];
                let Some((stage, key)) = slots
                    .iter()
                    .enumerate()
                    .filter_map(|(s, k)| k.map(|k| (s, k)))
                    .min_by_key(|&(_, k)| k)
                else {
                    break;
                };
                if key >= bound {
                    break;
                }
                self.pending_decode[node * stages + stage] = None;
                let pushes = self.pushes;
                self.now = key.time();
                if !self.pass_decode_on(node, stage) && !self.end_iteration_in_place(node, stage) {
                    self.op_done(node, stage, &mut NoDispatch);
                }
                if self.pushes != pushes {
                    bound = self.next_key();
                }
            }
            if self.pending_decode[node * stages..(node + 1) * stages]
                .iter()
                .all(Option::is_none)
            {
                self.pending_listed[node] = false;
                self.pending_nodes.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// `op_done` of a kept decode-op end that hands its iteration to the next stage, done in
    /// place: the op is logged and enters stage + 1 (started at once when that stage is idle,
    /// as `enqueue` would, and its end kept again; else queued there), and the freed stage
    /// takes its next queued op. False, with nothing done, when the op ends its iteration or
    /// reloads (`op_done` then handles it). It repeats `enqueue`'s two paths without the
    /// checks the op has passed already (its node runs decode iterations only): calling
    /// `enqueue` instead measured 3 % slower on the Azure hour.
    pub(super) fn pass_decode_on(&mut self, node: usize, stage: usize) -> bool {
        let now = self.now;
        let next = stage + 1;
        if next >= self.cfg.stages {
            return false;
        }
        let Some(r) = &self.nodes[node].stages[stage].running else {
            return false;
        };
        let (Pending::Decode(iter), start_s) = (r.op, r.start_s) else {
            return false;
        };
        let Some((duration, task_key)) = self
            .flight(node, iter)
            .filter(|f| !f.reloads)
            .map(|f| (self.cfg.latency.decode_s(f.context_tokens), f.task_key))
        else {
            return false;
        };
        self.record_decode(node, stage, iter, start_s, now);
        self.nodes[node].stages[stage].running = None;
        let estimate = self.cfg.latency.decode_s(0);
        // `enqueue`: its sequence number, then the op starts on an idle stage with nothing
        // queued (the queued time added and taken off as it would be), or waits in its queue.
        self.seq += 1;
        let nxt = &mut self.nodes[node].stages[next];
        if nxt.running.is_none() && nxt.queue.is_empty() {
            nxt.queued_s += estimate;
            nxt.queued_s -= estimate;
            nxt.busy_until = now + duration;
            nxt.running = Some(Running {
                op: Pending::Decode(iter),
                kind: OpKind::Decode,
                start_s: now,
            });
            // The node still runs decode iterations only: the end is kept again.
            self.defer_decode_end(node, next, now + duration);
        } else {
            nxt.queued_s += estimate;
            nxt.queue.push(Queued {
                op: Pending::Decode(iter),
                ready_at: now,
                rank: None,
                task_key,
                seq: self.seq,
                estimate_s: estimate,
            });
            self.try_start(node, next);
        }
        // `op_done`'s last step: the freed stage takes its next queued op.
        self.try_start(node, stage);
        true
    }

    /// `op_done` of a kept decode-op end that ends its iteration, done in place when no member
    /// finishes: the op is logged, every member takes its token, and the group's next
    /// iteration is launched (as `try_decode` would). False, with nothing done, otherwise
    /// (`op_done` then handles it).
    pub(super) fn end_iteration_in_place(&mut self, node: usize, stage: usize) -> bool {
        let now = self.now;
        let last = self.cfg.stages - 1;
        if stage != last {
            return false;
        }
        let n = &self.nodes[node];
        let Some(r) = &n.stages[stage].running else {
            return false;
        };
        let (Pending::Decode(iter), start_s) = (r.op, r.start_s) else {
            return false;
        };
        let Some(g) = self.group_of(node, iter) else {
            return false;
        };
        // `try_decode` would launch this group alone: nothing waits or collects, every other
        // group is in flight.
        let alone = n.decode.waiting.is_empty()
            && n.decode.collect_until.is_none()
            && n.decode
                .groups
                .iter()
                .enumerate()
                .all(|(h, other)| h == g || other.in_flight.is_some());
        let members = &n.decode.groups[g].members;
        if !alone
            || members.is_empty()
            || members
                .iter()
                .any(|&id| self.outcomes[id.index()].dropped || self.output_done(id, 1))
        {
            return false;
        }
        self.record_decode(node, stage, iter, start_s, now);
        self.nodes[node].stages[stage].running = None;
        let members = std::mem::take(&mut self.nodes[node].decode.groups[g].members);
        for &id in &members {
            self.add_token(node, id, now);
        }
        let group = &mut self.nodes[node].decode.groups[g];
        group.members = members;
        group.in_flight = None;
        // What `try_decode` does here: nothing waits and every other group is in flight, so
        // it launches this group's next iteration and nothing else.
        self.launch(node, g);
        // `op_done`'s last step: the freed stage takes its next queued op.
        self.try_start(node, stage);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_order_by_total_cmp_then_sequence() {
        let times = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            0.25,
            0.25 + f64::EPSILON,
            7.0,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &a in &times {
            assert_eq!(EventKey::new(a, 1).time().to_bits(), a.to_bits());
            for &b in &times {
                for (x, y) in [(1, 2), (2, 1), (3, 3)] {
                    let heap = a.total_cmp(&b).then(x.cmp(&y));
                    assert_eq!(
                        EventKey::new(a, x).cmp(&EventKey::new(b, y)),
                        heap,
                        "{a} {b}"
                    );
                }
            }
            assert!(EventKey::new(a, u64::MAX - 1) < EventKey::LAST);
        }
    }
}
