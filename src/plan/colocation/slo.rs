//! The response-time SLO as every planner, bound, metric and verifier reads it.

/// Whether a response of `latency_s` meets an SLO of `slo_s` seconds. Responses are sums of
/// stage latencies that carry rounding, so one a hair above the SLO still meets it.
pub fn slo_met(latency_s: f64, slo_s: f64) -> bool {
    latency_s <= slo_s + 1e-12
}

/// The `slo_attainment` key of R ≤ k · SLO base: `5x`, `2.5x`.
pub fn slo_key(k: f64) -> String {
    format!("{k}x")
}
