//! Continuous batching (LeMix Algorithm 3): requests join decode groups after their prefill,
//! up to one group per stage so that iterations of different groups pipeline across stages;
//! a batch that starts from empty waits up to T_w for company (its node's `Wake`), and each
//! iteration's end gives every member not dropped its token. Also a request's life around it:
//! its prefill's end (`prefill_done`) and its finish (`finish_request`: its memory freed, a
//! `Wake` of its node).

use super::simulator::DiscreteEventEngine;
use super::state::{DecodeGroup, Flight, Pending, slot};
use crate::plan::colocation::{TaskId, TaskKind};

impl<'a> DiscreteEventEngine<'a> {
    /// The requests of decode iteration `iter` on `node`: the members of its group, which do
    /// not change while it is in flight (none if it has no group).
    pub(super) fn batch(&self, node: usize, iter: u64) -> &[TaskId] {
        self.group_of(node, iter).map_or(&[], |g| {
            self.nodes[node].decode.groups[g].members.as_slice()
        })
    }

    /// The launch-time facts of decode iteration `iter` on `node`, while it is in flight.
    pub(super) fn flight(&self, node: usize, iter: u64) -> Option<&Flight> {
        self.group_of(node, iter)
            .map(|g| &self.nodes[node].decode.groups[g].flight)
    }

    /// The index of the group whose iteration `iter` is in flight on `node`.
    pub(super) fn group_of(&self, node: usize, iter: u64) -> Option<usize> {
        self.nodes[node]
            .decode
            .groups
            .iter()
            .position(|g| g.in_flight == Some(iter))
    }

    /// Fixes what the stage ops of an iteration of `members` read (see `Flight`).
    pub(super) fn launch_flight(&self, members: &[TaskId]) -> Flight {
        let context_tokens = members
            .iter()
            .map(|t| match self.tasks[t.index()].kind {
                TaskKind::Inference { prompt_tokens, .. } => {
                    (prompt_tokens + self.generated[t.index()]) as u64
                }
                TaskKind::Training { .. } => 0,
            })
            .sum();
        let stages = self.cfg.stages;
        Flight {
            context_tokens,
            task_key: members
                .iter()
                .map(|t| i64::from(t.0))
                .min()
                .unwrap_or(i64::MAX),
            reloads: members
                .iter()
                .any(|t| (0..stages).any(|s| self.held.offloaded[slot(stages, *t, s)] > 0.0)),
            logged: None,
        }
    }

    pub(super) fn prefill_done(&mut self, node: usize, id: TaskId) {
        let now = self.now;
        let total = self.training_done;
        let reflected = self.nodes[node].reflected;
        let o = &mut self.outcomes[id.index()];
        o.prefill_end_s = Some(now);
        o.staleness = Some(total.saturating_sub(reflected));
        let output = match self.tasks[id.index()].kind {
            TaskKind::Inference { output_tokens, .. } => output_tokens,
            TaskKind::Training { .. } => 0,
        };
        if output == 0 {
            self.finish_request(node, id);
        } else {
            if self.recording {
                // One time per token to come: no regrowth while it decodes.
                o.token_times.reserve_exact(output as usize);
            }
            self.nodes[node].decode.waiting.push_back(id);
            self.try_decode(node);
        }
    }

    pub(super) fn finish_request(&mut self, node: usize, id: TaskId) {
        self.outcomes[id.index()].end_s = Some(self.now);
        self.release_reservation(node, id);
        for s in 0..self.cfg.stages {
            self.free_held(node, s, id);
        }
        self.wake(node, self.now);
    }

    /// Starts a decode iteration for every idle group of the node: waiting requests first top
    /// up the idle groups, then open new groups (up to one per stage) while every group is in
    /// flight. A node whose decoding starts from nothing waits up to T_w for company. One of
    /// its cases (one group relaunched alone) is repeated in
    /// `events.rs::end_iteration_in_place`: keep the two alike.
    pub(super) fn try_decode(&mut self, node: usize) {
        let now = self.now;
        let max = self.cfg.batch_max;
        let stages = self.cfg.stages;
        let d = &mut self.nodes[node].decode;
        let was_empty = d.active() == 0;
        for g in d.groups.iter_mut().filter(|g| g.in_flight.is_none()) {
            while g.members.len() < max {
                match d.waiting.pop_front() {
                    Some(id) => g.members.push(id),
                    None => break,
                }
            }
        }
        while !d.waiting.is_empty() && d.groups.len() < stages {
            let members: Vec<TaskId> = (0..max).map_while(|_| d.waiting.pop_front()).collect();
            d.groups.push(DecodeGroup {
                members,
                in_flight: None,
                flight: Flight::default(),
            });
        }
        d.groups
            .retain(|g| g.in_flight.is_some() || !g.members.is_empty());
        if d.active() == 0 {
            d.collect_until = None;
            return;
        }
        if d.active() < max && self.cfg.batch_wait_s > 0.0 {
            match d.collect_until {
                None if was_empty => {
                    let until = now + self.cfg.batch_wait_s;
                    d.collect_until = Some(until);
                    self.wake(node, until);
                    return;
                }
                Some(until) if now + 1e-12 < until => {
                    // Still collecting: keep the wake-up at the end of the wait.
                    self.wake(node, until);
                    return;
                }
                _ => {}
            }
        }
        d.collect_until = None;
        for g in 0..d.groups.len() {
            let group = &self.nodes[node].decode.groups[g];
            if group.in_flight.is_some() || group.members.is_empty() {
                continue;
            }
            self.launch(node, g);
        }
    }

    /// Launches the next iteration of idle group `g`: it enters stage 0's queue.
    pub(super) fn launch(&mut self, node: usize, g: usize) {
        let iter = self.next_iteration;
        self.next_iteration += 1;
        let group = &mut self.nodes[node].decode.groups[g];
        group.in_flight = Some(iter);
        let members = std::mem::take(&mut group.members);
        let flight = self.launch_flight(&members);
        let group = &mut self.nodes[node].decode.groups[g];
        group.members = members;
        group.flight = flight;
        let est = self.cfg.latency.decode_s(0);
        self.enqueue(node, 0, Pending::Decode(iter), est);
    }

    /// The end of decode iteration `iter` on its last stage: every member not dropped takes its
    /// token; finished requests leave. Repeated, when no member finishes, in
    /// `events.rs::end_iteration_in_place`: keep the two alike.
    pub(super) fn iteration_done(&mut self, node: usize, iter: u64) {
        let now = self.now;
        // The iteration's batch: its group's members, which do not change while the
        // iteration is in flight (taken out while the loop below updates the engine).
        let group = self.group_of(node, iter);
        let batch = match group {
            Some(g) => std::mem::take(&mut self.nodes[node].decode.groups[g].members),
            None => Vec::new(),
        };
        let mut finished = Vec::new();
        for &id in &batch {
            if self.outcomes[id.index()].dropped {
                continue;
            }
            self.add_token(node, id, now);
            if self.output_done(id, 0) {
                finished.push(id);
            }
        }
        if let Some(g) = group {
            let g = &mut self.nodes[node].decode.groups[g];
            g.members = batch;
            g.members.retain(|t| !finished.contains(t));
            g.in_flight = None;
        }
        for id in finished {
            self.finish_request(node, id);
        }
        self.try_decode(node);
    }

    /// Whether a request has decoded all its output after `more` further tokens.
    pub(super) fn output_done(&self, id: TaskId, more: u32) -> bool {
        matches!(self.tasks[id.index()].kind,
            TaskKind::Inference { output_tokens, .. }
                if self.generated[id.index()].saturating_add(more) >= output_tokens)
    }

    /// A training arrival ends a decode batch's wait for company.
    pub(super) fn end_batch_wait(&mut self, node: usize) {
        if self.nodes[node].decode.collect_until.is_some() {
            self.nodes[node].decode.collect_until = Some(self.now);
            self.try_decode(node);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::plan::colocation::OpKind;

    #[test]
    fn prefill_then_decode_iterations_through_the_pipeline() {
        let cfg = config();
        let r = run(&cfg, &[inference(0, 0.0, 2)]);
        let f = ops_of(&r, OpKind::Forward);
        assert_eq!(f.len(), 2);
        assert!(
            close(f[0].1, 0.0) && close(f[0].2, 1.0) && close(f[1].1, 1.0) && close(f[1].2, 2.0)
        );
        let o = &r.outcomes[0];
        assert!(close(o.prefill_end_s.unwrap_or(0.0), 2.0));
        // Two iterations × two stages × 0.1 s.
        assert_eq!(ops_of(&r, OpKind::Decode).len(), 4);
        assert!(close(o.token_times[0], 2.2) && close(o.token_times[1], 2.4));
        assert!(close(o.end_s.unwrap_or(0.0), 2.4));
    }

    #[test]
    fn requests_share_decode_iterations() {
        let mut cfg = config();
        cfg.stages = 1;
        cfg.batch_wait_s = 0.5;
        // One stage, so one decode group: request 0's prefill ends at 1.0 and it waits for
        // company until 1.5; its first iteration queues behind request 1's prefill (stage busy
        // until 2.0) and runs [2.0, 2.1]; request 1 joins the group at the boundary, and both
        // share the next two iterations.
        let r = run(&cfg, &[inference(0, 0.0, 3), inference(1, 0.0, 3)]);
        let batches: Vec<usize> = r
            .ops
            .iter()
            .filter(|o| o.kind == OpKind::Decode)
            .map(|o| o.tasks.len())
            .collect();
        assert_eq!(batches, [1, 2, 2, 1]);
        assert!(close(r.outcomes[0].token_times[0], 2.1));
        assert!(close(r.outcomes[1].end_s.unwrap_or(0.0), 2.4));
    }

    #[test]
    fn decode_groups_are_pipelined_across_stages() {
        let cfg = config();
        // Prefills: request 0 on [0,1] then [1,2], request 1 on [1,2] then [2,3]. Request 0's
        // group decodes from 2.0 (stage 1 waits for request 1's prefill until 3.0); request 1
        // opens a second group at 3.0 while the first is in flight, and the two groups
        // alternate on the two stages, 0.1 s each.
        let r = run(&cfg, &[inference(0, 0.0, 3), inference(1, 0.0, 3)]);
        let times = |i: usize| r.outcomes[i].token_times.clone();
        let expect = |got: Vec<f64>, want: [f64; 3]| {
            got.len() == 3 && got.iter().zip(want).all(|(a, b)| close(*a, b))
        };
        assert!(expect(times(0), [3.1, 3.3, 3.5]), "{:?}", times(0));
        assert!(expect(times(1), [3.2, 3.4, 3.6]), "{:?}", times(1));
        assert!(
            r.ops
                .iter()
                .filter(|o| o.kind == OpKind::Decode)
                .all(|o| o.tasks.len() == 1),
            "two groups, never merged"
        );
    }
}
