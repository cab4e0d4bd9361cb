//! `coplan capacity`: each planner's sustainable request rate.

use std::fmt::Write;

use super::grid::aligned;
use crate::colocate::capacity::CapacityReport;

pub fn capacity(r: &CapacityReport) -> String {
    let mut out = format!(
        "sustainable request rate{} on {}: {} requests per probe, seed {}\n\n",
        r.workload
            .as_ref()
            .map_or(String::new(), |w| format!(" of `{w}`")),
        r.cluster,
        r.requests,
        r.seed
    );
    let rows: Vec<Vec<String>> = r
        .planners
        .iter()
        .map(|c| {
            vec![
                c.planner.clone(),
                format!("{:.2}", c.rate_rps),
                c.load_of_spec_rate
                    .map_or_else(|| "-".into(), |l| format!("{l:.2}")),
                c.probes.len().to_string(),
            ]
        })
        .collect();
    out.push_str(&aligned(
        &[
            "planner",
            "capacity (rps)",
            "load at the spec's rate",
            "probes",
        ],
        &rows,
        &[false, true, true, true],
    ));
    let _ = writeln!(
        out,
        "\ncapacity: the highest Poisson rate at which the backlog of requests not yet done (prefill and\ndecode) stays bounded (mean over the window's last third ≤ 2 × its first third + one request per node), by bisection."
    );
    out
}
