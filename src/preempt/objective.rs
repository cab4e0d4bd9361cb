//! The canonical preemption cost (DESIGN §5.4) that every planner is measured by.

use crate::plan::explain::CostTerms;
use crate::spec::preemption::{PreemptionObjective, PreemptionSpec, TopologyScore};
use crate::topology::{Level, ServerType};

/// Weights, the priority range and the topology scores, fixed for one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// The `[objective]` weights of the spec.
    pub weights: PreemptionObjective,
    /// The `[flextopo] topology_score` setting that gives T(level).
    pub scores: TopologyScore,
    /// Lowest and highest priority among the spec's workloads.
    pub p_lo: i64,
    /// P_hi of the canonical cost: the highest priority among the spec's workloads.
    pub p_hi: i64,
}

impl CostModel {
    /// The cost model of `spec`: its weights, topology scores and priority range (0..0 when the
    /// spec has no workload).
    pub fn new(spec: &PreemptionSpec) -> Self {
        let prios = spec.workload.iter().map(|w| w.priority);
        CostModel {
            weights: spec.objective.clone(),
            scores: spec.flextopo.topology_score,
            p_lo: prios.clone().min().unwrap_or(0),
            p_hi: prios.max().unwrap_or(0),
        }
    }

    /// T(level) in [0, 1]: the configured score, or 1 / penalty when calibrated.
    pub fn topology_score(&self, t: &ServerType, level: Level) -> f64 {
        match self.scores {
            TopologyScore::Scores(s) => match level {
                Level::Numa => s.numa,
                Level::Socket => s.socket,
                Level::CrossSocket => s.cross_socket,
            },
            TopologyScore::Named(_) => 1.0 / level.penalty(&t.penalty),
        }
    }

    /// Cost of evicting one pod of priority `prio`.
    pub fn victim_cost(&self, prio: i64) -> f64 {
        let span = (self.p_hi - self.p_lo + 1) as f64;
        self.weights.per_victim + self.weights.victim_priority * (prio - self.p_lo) as f64 / span
    }

    /// Cost of a gang of `pods` pods spread across a domain whose `[topology] penalty` is
    /// `penalty` (DESIGN §12.3): each pod's topology term, T = 1 / penalty as for a server's
    /// levels, so a gang inside one host costs nothing.
    pub fn spread_cost(&self, pods: u32, penalty: f64) -> f64 {
        pods as f64 * self.weights.topology * (1.0 - 1.0 / penalty)
    }

    /// Cost of a placement at `level` on a server of type `t`.
    pub fn placement_cost(&self, t: &ServerType, level: Level) -> f64 {
        self.weights.topology * (1.0 - self.topology_score(t, level))
    }

    /// [`event_cost`](Self::event_cost) term by term (`coplan explain`); `total` is computed as
    /// `event_cost` computes it, so it is the decision's cost bit for bit.
    pub fn event_terms(
        &self,
        placed: Option<(&ServerType, Level)>,
        victim_prios: &[i64],
    ) -> CostTerms {
        let span = (self.p_hi - self.p_lo + 1) as f64;
        let (topology, unplaced) = match placed {
            Some((t, level)) => (self.placement_cost(t, level), 0.0),
            None => (0.0, self.weights.unplaced),
        };
        CostTerms {
            victims: self.weights.per_victim * victim_prios.len() as f64,
            priority: victim_prios
                .iter()
                .map(|&p| self.weights.victim_priority * (p - self.p_lo) as f64 / span)
                .sum(),
            topology,
            unplaced,
            total: self.event_cost(placed, victim_prios),
        }
    }

    /// Cost of one decision: `placed` is the server type and level of the placement, if any.
    pub fn event_cost(&self, placed: Option<(&ServerType, Level)>, victim_prios: &[i64]) -> f64 {
        let base = match placed {
            Some((t, level)) => self.placement_cost(t, level),
            None => self.weights.unplaced,
        };
        base + victim_prios
            .iter()
            .map(|&p| self.victim_cost(p))
            .sum::<f64>()
    }
}
