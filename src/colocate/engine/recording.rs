//! What a run records and no decision reads: the op log and the token times. A search turns
//! recording off in its clones and takes the history out before cloning, so that recording
//! costs the plain run only. Handles no event.

use super::simulator::DiscreteEventEngine;
use crate::plan::colocation::{OpKind, OpLog, TaskId};

/// What a run has recorded so far and no decision depends on: the op log and the token
/// times. A search takes it out of an engine before cloning the engine many times.
#[derive(Debug, Default)]
pub struct History {
    pub(super) ops: OpLog,
    pub(super) token_times: Vec<Vec<f64>>,
}

impl<'a> DiscreteEventEngine<'a> {
    /// Stops recording ops and token times: a search's clone needs the outcomes only.
    pub fn quiet(&mut self) {
        self.recording = false;
    }

    pub(super) fn record(
        &mut self,
        node: usize,
        stage: usize,
        kind: OpKind,
        tasks: &[TaskId],
        start_s: f64,
        end_s: f64,
    ) {
        if self.recording {
            let tasks = self.ops.tasks(tasks);
            self.ops.push(node, stage, kind, tasks, start_s, end_s);
        }
    }

    /// Logs a stage op of decode iteration `iter`, storing its batch once per iteration.
    pub(super) fn record_decode(
        &mut self,
        node: usize,
        stage: usize,
        iter: u64,
        start_s: f64,
        end_s: f64,
    ) {
        if !self.recording {
            return;
        }
        let group = self
            .group_of(node, iter)
            .map(|g| &mut self.nodes[node].decode.groups[g]);
        // The op's tasks are its iteration's batch (none when the iteration has no group).
        let tasks = match group {
            Some(g) => match g.flight.logged {
                Some(t) => t,
                None => {
                    let t = self.ops.tasks(&g.members);
                    g.flight.logged = Some(t);
                    t
                }
            },
            None => self.ops.tasks(&[]),
        };
        self.ops
            .push(node, stage, OpKind::Decode, tasks, start_s, end_s);
    }

    /// Forgets the log's shared batches held by iterations in flight: the log they are in has
    /// been taken out or rebuilt.
    pub(super) fn forget_logged_batches(&mut self) {
        for n in &mut self.nodes {
            for g in &mut n.decode.groups {
                g.flight.logged = None;
            }
        }
    }

    /// Takes the op log and token times out (see `History`); `restore_history` puts them back.
    pub fn take_history(&mut self) -> History {
        self.forget_logged_batches();
        History {
            ops: std::mem::take(&mut self.ops),
            token_times: self
                .outcomes
                .iter_mut()
                .map(|o| std::mem::take(&mut o.token_times))
                .collect(),
        }
    }

    /// Puts back what `take_history` took, before anything recorded since.
    pub fn restore_history(&mut self, history: History) {
        let later = std::mem::replace(&mut self.ops, history.ops);
        self.ops.append(&later);
        self.forget_logged_batches();
        for (o, mut earlier) in self.outcomes.iter_mut().zip(history.token_times) {
            earlier.append(&mut o.token_times);
            o.token_times = earlier;
        }
    }
}
