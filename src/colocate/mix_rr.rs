//! `mix-rr` (NAIVEMIX): co-locate everything; tasks go round-robin over the nodes.

use super::engine::{Assignment, Dispatcher, View};
use super::workload::Task;

#[derive(Debug, Default)]
pub struct MixRr {
    next: usize,
}

impl Dispatcher for MixRr {
    fn assign(&mut self, view: &View<'_>, _task: &Task) -> Assignment {
        let n = self.next % view.config.nodes.max(1);
        self.next += 1;
        Assignment::Node(n)
    }
}
