//! A co-location run as Chrome Trace Event JSON (Perfetto, chrome://tracing): pid = node,
//! tid = stage, one complete event per op.

use serde_json::json;

use crate::plan::colocation::ColocationRun;

/// The trace as one line of JSON.
pub fn colocation_run(run: &ColocationRun, nodes: usize, stages: usize) -> String {
    super::json::to_json_line(&trace_value(run, nodes, stages))
}

/// A run as Chrome Trace Event JSON (Perfetto): pid = node, tid = stage.
fn trace_value(run: &ColocationRun, nodes: usize, stages: usize) -> serde_json::Value {
    let mut events = Vec::new();
    for n in 0..nodes {
        events.push(json!({"name": "process_name", "ph": "M", "pid": n, "args": {"name": format!("node-{n}")}}));
        for s in 0..stages {
            events.push(json!({"name": "thread_name", "ph": "M", "pid": n, "tid": s, "args": {"name": format!("stage-{s}")}}));
        }
    }
    for op in &run.ops {
        let kind = serde_json::to_value(op.kind).unwrap_or_default();
        let label = match op.tasks {
            [] => kind.as_str().unwrap_or("op").to_string(),
            [t] => format!("{} t{}", kind.as_str().unwrap_or("op"), t.0),
            many => format!("{} ×{}", kind.as_str().unwrap_or("op"), many.len()),
        };
        events.push(json!({
            "name": label,
            "cat": kind,
            "ph": "X",
            "ts": op.start_s * 1e6,
            "dur": (op.end_s - op.start_s) * 1e6,
            "pid": op.node,
            "tid": op.stage,
            "args": {"tasks": op.tasks.iter().map(|t| t.0).collect::<Vec<_>>()},
        }));
    }
    crate::spec::sorted_keys(json!({"traceEvents": events, "displayTimeUnit": "ms"}))
}
