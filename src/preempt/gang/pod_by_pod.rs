//! Gang-blind preemption: the gang's pods decided one at a time by a single-pod planner, each
//! on the state its predecessors left (as kube-scheduler preempts for the pods of a job that
//! no gang scheduler holds back). Pods may land in different domains, or some not at all,
//! and the victims evicted for them stay evicted either way.

use super::decision::{GangDecision, GangPoint, PodPlacement};
use crate::plan::error::PlanningError;
use crate::preempt::apply::apply;
use crate::preempt::problem::{Decision, DecisionPoint};

/// The gang decided pod by pod with `decide`.
pub fn decide(
    at: &GangPoint<'_>,
    decide: &dyn Fn(&DecisionPoint<'_>) -> Result<Decision, PlanningError>,
) -> Result<GangDecision, PlanningError> {
    let mut scratch = at.state.clone();
    let mut d = GangDecision::default();
    let mut refused = 0;
    for k in 0..at.gang.pods {
        let pod = at.gang.pod(k);
        let decision = decide(&DecisionPoint {
            problem: at.problem,
            state: &scratch,
            preemptor: &pod,
        })?;
        let applied = apply(at.problem, &mut scratch, &pod, &decision)?;
        d.victims.extend(&decision.victims);
        d.subsets_evaluated += decision.subsets_evaluated;
        match (applied.ids.server, applied.ids.placement) {
            (Some(server), Some((gpus, cores, _))) => d.pods.push(PodPlacement {
                server,
                gpus,
                cores,
            }),
            _ => refused += 1,
        }
    }
    d.victims.sort_unstable();
    d.search = format!(
        "pod by pod: {} of {} pods placed, {} victims",
        d.pods.len(),
        at.gang.pods,
        d.victims.len()
    ) + if refused > 0 {
        " (the rest found no server)"
    } else {
        ""
    };
    Ok(d)
}
