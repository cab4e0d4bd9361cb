//! `mix-luf`: co-locate; each task goes to the node with the lowest GPU memory utilisation
//! (ties: lowest index).

use super::engine::{Assignment, Dispatcher, View};
use super::workload::Task;

#[derive(Debug, Default)]
pub struct MixLuf;

impl Dispatcher for MixLuf {
    fn assign(&mut self, view: &View<'_>, _task: &Task) -> Assignment {
        let best = (0..view.config.nodes)
            .min_by(|&a, &b| {
                view.memory_utilization(a)
                    .total_cmp(&view.memory_utilization(b))
                    .then(a.cmp(&b))
            })
            .unwrap_or(0);
        Assignment::Node(best)
    }
}
