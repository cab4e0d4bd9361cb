//! Facts of one event that every explanation states, single pod or gang: which 1-based event
//! is asked for, and which servers the scheduler's filter keeps the preemptor off.

use crate::plan::error::PlanningError;
use crate::plan::explain::{FilteredServer, VictimFacts};
use crate::plan::preemption::Preemptor;
use crate::spec::PreemptionSpec;
use crate::topology::eligibility::Eligibility;
use crate::topology::state::Pod;
use crate::topology::{Cluster, ServerId};

/// Every server the filter keeps `p` off, in name order, with the rule.
pub fn filtered_out(
    cluster: &Cluster,
    spec: &PreemptionSpec,
    p: &Preemptor,
) -> Vec<FilteredServer> {
    let mut out: Vec<FilteredServer> = (0..cluster.servers.len() as u32)
        .map(ServerId)
        .filter_map(|s| {
            Eligibility::why(cluster, spec, p.workload, s).map(|r| FilteredServer {
                server: cluster.server(s).name.clone(),
                rule: r.rule(),
                reason: r.to_string(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.server.cmp(&b.server));
    out
}

/// The 0-based index of a 1-based event, or an input error naming the range.
pub fn event_index(event: usize, preemptors: usize) -> Result<usize, PlanningError> {
    if event == 0 || event > preemptors {
        return Err(PlanningError::OutOfRange(match preemptors {
            0 => format!("--event {event}: the workload has no preemptors"),
            n => format!(
                "--event {event} is out of range: the workload has {n} preemptors (events 1–{n})"
            ),
        }));
    }
    Ok(event - 1)
}

/// The evicted pods as an explanation lists them: name, class, priority and QoS.
pub fn victim_facts(spec: &PreemptionSpec, victims: &[Pod]) -> Vec<VictimFacts> {
    victims
        .iter()
        .map(|v| {
            let class = &spec.workload[v.workload];
            VictimFacts {
                name: v.name.clone(),
                class: class.name.clone(),
                priority: v.priority,
                topology_qos: class.topology_qos,
            }
        })
        .collect()
}
