//! The co-location adapter: `colocate::capacity` searches rates its own way, and this puts
//! its answer in the one capacity shape so that the command prints both kinds alike.

use super::report::{CapacityProbe, CapacityReport, PlannerCapacity, ProbeStatus, Verdict};
use crate::colocate::capacity::CapacityReport as RateReport;

/// The co-location rates in the one capacity shape.
pub fn from_rates(r: RateReport) -> CapacityReport {
    CapacityReport {
        schema_version: 2,
        kind: "capacity",
        workload_kind: "colocation",
        cluster: r.cluster,
        workload: r.workload,
        searched: "rate_rps",
        target: None,
        pool: None,
        hold: None,
        held_pods: Vec::new(),
        seeds: vec![r.seed],
        seeds_requested: Vec::new(),
        notes: Vec::new(),
        cycles: None,
        requests: Some(r.requests),
        min: None,
        max: None,
        planners: r
            .planners
            .into_iter()
            .map(|c| {
                let mut probes: Vec<CapacityProbe> = c
                    .probes
                    .iter()
                    .map(|p| CapacityProbe {
                        value: p.rate_rps,
                        status: if p.stable {
                            ProbeStatus::Holds
                        } else {
                            ProbeStatus::Fails
                        },
                        metric: None,
                        fill_pods: None,
                        removed_servers: Vec::new(),
                        replaced_pods: None,
                        displaced_pods: None,
                        displaced: Vec::new(),
                        backlog_first: Some(p.backlog_first),
                        backlog_last: Some(p.backlog_last),
                    })
                    .collect();
                probes.sort_by(|a, b| a.value.total_cmp(&b.value));
                PlannerCapacity {
                    planner: c.planner,
                    verdict: Verdict::Found,
                    answer: Some(c.rate_rps),
                    bracket: None,
                    load_of_spec_rate: c.load_of_spec_rate,
                    non_monotone: Vec::new(),
                    probes,
                }
            })
            .collect(),
    }
}
