//! The checker's own records and arithmetic, apart from its replay: a pod as it records it,
//! the budgets covering each pod, per-QoS tallies, and the level, score and tolerance it
//! recomputes with (none of them a planner's).

use std::collections::{BTreeMap, BTreeSet};

use crate::spec::PreemptionSpec;
use crate::spec::preemption::TopologyScore;
use crate::topology::state::Pod;
use crate::topology::{Cluster, Level, ServerType};
use crate::verify::devices::numa_of_core;

/// Where and why a plan was rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Where the plan broke a rule: the preemptor's name, or `plan` / `metrics` for whole-plan
    /// checks.
    pub event: String,
    /// The rule broken, with the values found.
    pub reason: String,
}

pub(super) struct PodRecord {
    pub(super) server: String,
    pub(super) gpus: BTreeSet<u32>,
    pub(super) cores: BTreeSet<u32>,
    pub(super) priority: i64,
    pub(super) preemptible: bool,
    /// The PodDisruptionBudgets covering it, by index.
    pub(super) budgets: Vec<usize>,
}

impl PodRecord {
    /// A pod of the initial state as the checker records it, covered by `budgets`.
    pub(super) fn of(cluster: &Cluster, p: &Pod, budgets: Vec<usize>) -> Self {
        PodRecord {
            server: cluster.server(p.server).name.clone(),
            gpus: p.gpus.iter().map(|g| g as u32).collect(),
            cores: p.cores.iter().map(|c| c as u32).collect(),
            priority: p.priority,
            preemptible: p.preemptible,
            budgets,
        }
    }
}

const EPS: f64 = 1e-6;

pub(super) fn reject(event: &str, reason: String) -> Rejection {
    Rejection {
        event: event.to_string(),
        reason,
    }
}

pub(super) fn level_of(t: &ServerType, gpus: &BTreeSet<u32>, cores: &BTreeSet<u32>) -> Level {
    let numas: BTreeSet<usize> = gpus
        .iter()
        .map(|&g| t.gpu_numa[g as usize])
        .chain(cores.iter().map(|&c| numa_of_core(t, c)))
        .collect();
    let sockets: BTreeSet<usize> = numas.iter().map(|n| n / t.numa_per_socket).collect();
    if numas.len() <= 1 {
        Level::Numa
    } else if sockets.len() <= 1 {
        Level::Socket
    } else {
        Level::CrossSocket
    }
}

pub(super) fn score(spec: &PreemptionSpec, t: &ServerType, level: Level) -> f64 {
    match spec.flextopo.topology_score {
        TopologyScore::Scores(s) => match level {
            Level::Numa => s.numa,
            Level::Socket => s.socket,
            Level::CrossSocket => s.cross_socket,
        },
        TopologyScore::Named(_) => {
            let p = &t.penalty;
            1.0 / match level {
                Level::Numa => p.numa,
                Level::Socket => p.socket,
                Level::CrossSocket => p.cross_socket,
            }
        }
    }
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EPS * a.abs().max(b.abs()).max(1.0)
}

/// Which PodDisruptionBudgets name each pod and each class, read from the spec.
pub(super) struct BudgetIndex<'s> {
    by_pod: BTreeMap<&'s str, BTreeSet<usize>>,
    by_class: BTreeMap<&'s str, BTreeSet<usize>>,
}

impl<'s> BudgetIndex<'s> {
    pub(super) fn new(spec: &'s PreemptionSpec) -> Self {
        let mut index = BudgetIndex {
            by_pod: BTreeMap::new(),
            by_class: BTreeMap::new(),
        };
        for (i, b) in spec.disruption_budget.iter().enumerate() {
            for pod in &b.pods {
                index.by_pod.entry(pod).or_default().insert(i);
            }
            for class in &b.workloads {
                index.by_class.entry(class).or_default().insert(i);
            }
        }
        index
    }

    /// The budgets covering a pod of class `class` named `name`, ascending.
    pub(super) fn of(&self, class: Option<&str>, name: &str) -> Vec<usize> {
        let mut out: BTreeSet<usize> = self.by_pod.get(name).cloned().unwrap_or_default();
        if let Some(set) = class.and_then(|c| self.by_class.get(c)) {
            out.extend(set);
        }
        out.into_iter().collect()
    }
}

/// The events of one QoS class, for its metrics.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClassTally {
    pub(super) preemptors: u64,
    pub(super) hits: u64,
    pub(super) placed: u64,
    pub(super) slowdown_sum: f64,
}

impl ClassTally {
    pub(super) fn hit_rate(&self) -> Option<f64> {
        (self.preemptors > 0).then(|| self.hits as f64 / self.preemptors as f64)
    }

    pub(super) fn slowdown(&self) -> Option<f64> {
        (self.placed > 0).then(|| self.slowdown_sum / self.placed as f64)
    }
}
