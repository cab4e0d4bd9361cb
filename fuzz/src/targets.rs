//! The fuzz targets: each takes one input and runs it through the library the way the
//! `coplan` binary would, then checks what came back. A clean input error (the library's
//! typed errors, with a diagnostic located inside the file it names) is a fine outcome; an
//! internal error, a diagnostic pointing outside its file, a generated file that does not
//! validate or a verifier rejection is a finding (and so is a panic, caught by the driver).

use coplan::colocate::setup::{cluster_findings, setup};
use coplan::preempt::scenario;
use coplan::report;
use coplan::sim::merge;
use coplan::spec::{self, Expect, LoadedSpec, SourceFile, Spec};
use coplan::topology::Cluster;
use coplan::topology::state::running_state;

use crate::diagnostic_targets::{diagnostics_long_lines, diagnostics_many_errors};
use crate::generate;
use crate::import_targets::{import_alibaba, import_azure, import_k8s, import_vidur};
use crate::verdict::Verdict::{self, Finding, Fine};
use crate::verdict::{
    DEFAULT_CLUSTER, cross_verdict, invalid_verdict, load_cluster, parts, shape, text_of,
};

/// A fuzz target.
pub struct Target {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&[u8]) -> Verdict,
    /// Inputs are bytes that drive a generator rather than text files.
    pub generated: bool,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "spec-cluster",
        about: "cluster TOML: parse, validate, build the cluster",
        run: spec_cluster,
        generated: false,
    },
    Target {
        name: "spec-preemption",
        about: "cluster %% preemption workload: parse, validate, cross-file checks, initial state",
        run: spec_preemption,
        generated: false,
    },
    Target {
        name: "spec-colocation",
        about: "cluster %% co-location workload: parse, validate, cross-file checks, task set",
        run: spec_colocation,
        generated: false,
    },
    Target {
        name: "import-azure",
        about: "Azure LLM trace CSV → co-location workload, which must validate",
        run: import_azure,
        generated: false,
    },
    Target {
        name: "import-vidur",
        about: "Vidur mlp.csv → stage samples, which must parse back and fit; samples CSV → fit",
        run: import_vidur,
        generated: false,
    },
    Target {
        name: "import-alibaba",
        about: "options %% openb nodes CSV %% openb pods CSV → cluster + workload, which must validate",
        run: import_alibaba,
        generated: false,
    },
    Target {
        name: "import-k8s",
        about: "Kubernetes YAML/JSON files (split by %%) → cluster + workload, which must validate",
        run: import_k8s,
        generated: false,
    },
    Target {
        name: "merge",
        about: "sweep shard files (CSV or JSON Lines, split by %%) → merged output, which must parse back",
        run: merge_shards,
        generated: false,
    },
    Target {
        name: "diagnostics-long-lines",
        about: "a spec or data file with one line stretched to 1–70,000 columns → its diagnostics, drawn in bounded text at the right line and column",
        run: diagnostics_long_lines,
        generated: false,
    },
    Target {
        name: "diagnostics-many-errors",
        about: "a workload whose entry is repeated up to 400 times → at most 100 diagnostics drawn, then a count",
        run: diagnostics_many_errors,
        generated: false,
    },
    Target {
        name: "plan-preemption",
        about: "generated cluster + preemption workload → every planner's plan, verified; no heuristic below the proven optimum",
        run: plan_preemption,
        generated: true,
    },
    Target {
        name: "plan-colocation",
        about: "generated cluster + co-location workload → every planner's run, verified; no planner below the proven optimum",
        run: plan_colocation,
        generated: true,
    },
];

pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

fn spec_cluster(input: &[u8]) -> Verdict {
    let text = text_of(input);
    match load_cluster("cluster.toml", &text) {
        Ok(cluster) => {
            if cluster.servers.is_empty() {
                return Finding("a valid cluster with no server".into());
            }
            Fine("ok".into())
        }
        Err(v) => v,
    }
}

/// Servers above which the deeper stages (fill, task sets) are skipped: the size limits of a
/// spec bound them, but a fuzz execution must stay in milliseconds.
const DEEP_MAX_SERVERS: usize = 64;

/// The cluster and the workload of a spec target's input (`cluster %% workload`, or a workload
/// alone against the built-in cluster, which also stands in for an invalid cluster so the
/// workload is still checked).
fn cluster_and_workload(input: &[u8]) -> Result<(Cluster, LoadedSpec), Verdict> {
    let text = text_of(input);
    let files = parts(&text);
    let (cluster_text, workload_text) = match files.as_slice() {
        [c, w, ..] => (*c, *w),
        [w] => (DEFAULT_CLUSTER, *w),
        [] => return Err(Fine("empty".into())),
    };
    let cluster = match load_cluster("cluster.toml", cluster_text) {
        Ok(c) => c,
        Err(Finding(f)) => return Err(Finding(f)),
        Err(Fine(_)) => load_cluster("default.toml", DEFAULT_CLUSTER)?,
    };
    let loaded = spec::load(
        SourceFile::new("workload.toml", workload_text),
        Expect::Workload,
    )
    .map_err(|e| invalid_verdict(&e))?;
    Ok((cluster, loaded))
}

fn spec_preemption(input: &[u8]) -> Verdict {
    let (cluster, loaded) = match cluster_and_workload(input) {
        Ok(pair) => pair,
        Err(v) => return v,
    };
    let Spec::Preemption(w) = &loaded.spec else {
        return Fine("other-kind".into());
    };
    if let Err(findings) = running_state(&cluster, w) {
        return cross_verdict(&loaded, findings)
            .unwrap_or(Finding("running_state failed with no finding".into()));
    }
    // Saturating: counts are validated one by one, and their sum may exceed i64.
    let preemptors = w
        .preempt
        .iter()
        .fold(0i64, |sum, p| sum.saturating_add(p.count.max(0)));
    if cluster.servers.len() > DEEP_MAX_SERVERS || preemptors > 4096 {
        return Fine("ok-large".into());
    }
    match scenario::initial_state(&cluster, w, None) {
        Ok(mut state) => {
            let listed = scenario::preemptors(&cluster, w, &mut state);
            if listed.len() as i64 != preemptors {
                return Finding(format!(
                    "{} preemptors listed, the spec asks for {preemptors}",
                    listed.len()
                ));
            }
            Fine("ok".into())
        }
        Err(findings) => cross_verdict(&loaded, findings)
            .unwrap_or(Finding("initial_state failed with no finding".into())),
    }
}

fn spec_colocation(input: &[u8]) -> Verdict {
    let (cluster, loaded) = match cluster_and_workload(input) {
        Ok(pair) => pair,
        Err(v) => return v,
    };
    let Spec::Colocation(w) = &loaded.spec else {
        return Fine("other-kind".into());
    };
    if let Some(v) = cross_verdict(&loaded, cluster_findings(&cluster, w)) {
        return v;
    }
    // A trace is a second file (the import-azure target reads those); requests beyond a few
    // thousand only make the task set longer.
    let small = w.inference.count <= 2000
        && w.inference
            .requests
            .as_ref()
            .is_none_or(|r| r.len() <= 2000);
    if w.inference.trace.is_some() || !small || cluster.servers.len() > DEEP_MAX_SERVERS {
        return Fine("ok-large".into());
    }
    let s = setup(&cluster, w, None, None);
    if !(s.slo_base_s.is_finite() && s.slo_base_s >= 0.0) {
        return Finding(format!(
            "a valid workload gives the SLO base {}",
            s.slo_base_s
        ));
    }
    Fine("ok".into())
}

fn merge_shards(input: &[u8]) -> Verdict {
    let text = text_of(input);
    let mut inputs = Vec::new();
    for (i, t) in parts(&text).into_iter().enumerate() {
        let name = format!("shard-{i}.csv");
        match merge::parse(&name, t) {
            Ok(parsed) => inputs.push((name, parsed)),
            Err(e) => return Fine(format!("parse:{}", shape(&e.message))),
        }
    }
    let merged = match merge::merge(&inputs) {
        Ok(m) => m,
        Err(e) => return Fine(format!("merge:{}", shape(&e.message))),
    };
    // The merged output is itself one complete shard: written and read back, it merges alone
    // into the same rows.
    let written = report::csv::sweep(&merged);
    let back = match merge::parse("merged.csv", &written) {
        Ok(b) => b,
        Err(e) => return Finding(format!("the merged output does not parse back: {e}")),
    };
    match merge::merge(&[("merged.csv".into(), back)]) {
        Ok(again) if again.rows.len() == merged.rows.len() => Fine("ok".into()),
        Ok(again) => Finding(format!(
            "{} rows merged, {} after a round trip",
            merged.rows.len(),
            again.rows.len()
        )),
        Err(e) => Finding(format!("the merged output does not merge alone: {e}")),
    }
}

fn plan_preemption(input: &[u8]) -> Verdict {
    generate::plan_preemption(input)
}

fn plan_colocation(input: &[u8]) -> Verdict {
    generate::plan_colocation(input)
}
