//! The benches' inputs: an example spec, and the Azure hour — the first hour of the Azure LLM
//! conversation trace (CC-BY 4.0, Splitwise) — loaded one way wherever a figure is measured on
//! it, so that every bench's hour is the same requests.

use std::path::PathBuf;

use coplan::colocate::trace::{TraceRequest, parse_azure};
use coplan::spec::ColocationSpec;

/// The checkout's root, where the benches' relative paths start.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A spec from the repository's `examples/` (panics: a bench's inputs are fixed).
pub fn example<T: serde::de::DeserializeOwned>(rel: &str) -> T {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Seconds of the trace a bench replays.
pub const HOUR_S: f64 = 3600.0;

/// Where the trace is read: `$COPLAN_AZURE_TRACE`, else the shared data folder beside the
/// checkout.
pub fn azure_trace_path() -> String {
    std::env::var("COPLAN_AZURE_TRACE").unwrap_or_else(|_| {
        format!(
            "{}/../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
            env!("CARGO_MANIFEST_DIR")
        )
    })
}

/// The requests arriving in the trace's first hour (arrivals relative to the first, rate
/// scale 1), or `Err` with the path looked at when the trace is not there.
pub fn azure_hour() -> Result<Vec<TraceRequest>, String> {
    let path = azure_trace_path();
    let text = std::fs::read_to_string(&path).map_err(|_| path)?;
    let rows = parse_azure(&text, 1.0, None).expect("the Azure trace parses");
    Ok(rows.into_iter().filter(|r| r.arrival_s <= HOUR_S).collect())
}

/// `base` replaying `hour`: its requests replace the synthetic arrivals (planning is then
/// given `hour` as the trace).
pub fn on_hour(base: &ColocationSpec, hour: &[TraceRequest]) -> ColocationSpec {
    let mut spec = base.clone();
    spec.inference.arrival = None;
    spec.inference.count = hour.len() as i64;
    spec.inference.trace = Some("trace".into());
    spec
}
