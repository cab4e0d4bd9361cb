//! The import targets: Azure and Vidur traces, the Alibaba trace and Kubernetes exports,
//! each imported as `coplan import` would and its output validated.

use coplan::colocate::latency;
use coplan::colocate::trace::{parse_azure, workload_from_trace};
use coplan::colocate::vidur::{self, VidurOptions};
use coplan::import::alibaba;
use coplan::import::error::ImportError;
use coplan::import::k8s::{self, Imported};
use coplan::report;
use coplan::session::error::SessionError;
use coplan::session::import::{AlibabaArgs, alibaba_options, check_generated, import_error};
use coplan::spec::SourceFile;

use crate::verdict::Verdict::{self, Finding, Fine};
use crate::verdict::{located, parts, session_verdict, text_of};

pub(crate) fn import_azure(input: &[u8]) -> Verdict {
    let text = text_of(input);
    let source = SourceFile::new("trace.csv", text.as_str());
    // The limit and rate scale come from the input's length, so both vary deterministically.
    let limit = input.len().is_multiple_of(3).then_some(input.len() % 17);
    let rate_scale = [1.0, 0.5, 3.0, 1e-6, 1e6][input.len() % 5];
    let rows = match parse_azure(&text, rate_scale, limit) {
        Ok(r) => r,
        Err(e) => return located(&source, e.line, &e.message),
    };
    if rows.is_empty() {
        return Fine("no-requests".into());
    }
    let (spec, comments) = workload_from_trace(&rows, "trace.csv", rate_scale, None);
    let generated = report::toml::colocation_workload(&comments, &spec);
    match check_generated(&[("generated.toml", &generated)]) {
        Ok(()) => Fine("ok".into()),
        Err(e) => match e {
            SessionError::Internal(m) => Finding(m),
            other => Finding(format!("a generated workload fails as input: {other}")),
        },
    }
}

pub(crate) fn import_vidur(input: &[u8]) -> Verdict {
    let text = text_of(input);
    let source = SourceFile::new("mlp.csv", text.as_str());
    let options = VidurOptions {
        layers_per_stage: [16, 1, 80][input.len() % 3],
        tensor_parallel: [1, 2, 4][input.len() % 3],
        attention_efficiency: 0.5,
        max_tokens: [4096, 1, 65536][(input.len() / 3) % 3],
    };
    // The same text as a samples file (`coplan profile fit`).
    let as_samples = match latency::parse_samples(&text) {
        Ok(samples) => {
            if !samples.is_empty() {
                let fit = latency::fit(&samples);
                let _ = report::toml::model_fit(&fit);
            }
            "samples-ok"
        }
        Err(e) => match located(&source, e.line, &e.message) {
            Finding(f) => return Finding(f),
            Fine(_) => "samples-err",
        },
    };
    let (samples, comments) = match vidur::stage_samples(&text, &options) {
        Ok(s) => s,
        Err(e) => {
            return match located(&source, e.line, &e.message) {
                Finding(f) => Finding(f),
                Fine(code) => Fine(format!("{as_samples}:{code}")),
            };
        }
    };
    let written = report::csv::latency_samples(&comments, &samples);
    match latency::parse_samples(&written) {
        Ok(back) if back.len() == samples.len() => {
            if !back.is_empty() {
                let _ = latency::fit(&back);
            }
            Fine(format!("{as_samples}:ok"))
        }
        Ok(back) => Finding(format!(
            "{} samples written, {} read back",
            samples.len(),
            back.len()
        )),
        Err(e) => Finding(format!(
            "the written samples do not parse back: line {}: {}",
            e.line, e.message
        )),
    }
}

/// An importer's error, located as `coplan import` locates it.
pub(crate) fn import_verdict(sources: &[SourceFile], e: ImportError) -> Verdict {
    session_verdict(&import_error(sources, e))
}

/// What an import writes must load, validate and fit its cluster.
pub(crate) fn imported_verdict(imported: &Imported) -> Verdict {
    let cluster = report::toml::cluster(&imported.comments, &imported.cluster);
    let workload = report::toml::preemption_workload(&imported.comments, &imported.workload);
    match check_generated(&[("cluster.toml", &cluster), ("workload.toml", &workload)]) {
        Ok(()) => Fine("ok".into()),
        Err(e) => Finding(format!("the imported files fail: {e}")),
    }
}

pub(crate) fn alibaba_args(line: &str) -> AlibabaArgs {
    let mut args = AlibabaArgs {
        next: 3,
        fill: 1.0,
        sampled_qos: "BE,LS".into(),
        ..AlibabaArgs::default()
    };
    for token in line.split_whitespace() {
        let (key, value) = token.split_once('=').unwrap_or((token, ""));
        match key {
            "at" => args.at = Some(value.to_string()),
            "next" => args.next = value.parse().unwrap_or(args.next),
            "fill" => args.fill = value.parse().unwrap_or(args.fill),
            "server-type" => args.server_types.push(value.to_string()),
            "qos" => args.qos.push(value.to_string()),
            "drop" => args.drop_gpu_shares = true,
            "sequence" => args.as_sequence = true,
            "sampled" => args.sampled_qos = value.to_string(),
            _ => {}
        }
    }
    // A `--next` in the millions only lengthens the preemptor list.
    args.next = args.next.min(10_000);
    args
}

pub(crate) fn import_alibaba(input: &[u8]) -> Verdict {
    let text = text_of(input);
    let files = parts(&text);
    let (options, nodes, pods) = match files.as_slice() {
        [o, n, p, ..] => (*o, *n, *p),
        [n, p] => ("", *n, *p),
        [n] => ("", *n, ""),
        [] => return Fine("empty".into()),
    };
    let options = match alibaba_options(&alibaba_args(options)) {
        Ok(o) => o,
        Err(e) => return session_verdict(&e),
    };
    let sources = [
        SourceFile::new("nodes.csv", nodes),
        SourceFile::new("pods.csv", pods),
    ];
    match alibaba::import(
        (&sources[0].name, &sources[0].text),
        (&sources[1].name, &sources[1].text),
        &options,
    ) {
        Ok(imported) => imported_verdict(&imported),
        Err(e) => import_verdict(&sources, e),
    }
}

pub(crate) fn import_k8s(input: &[u8]) -> Verdict {
    let text = text_of(input);
    let sources: Vec<SourceFile> = parts(&text)
        .iter()
        .enumerate()
        .map(|(i, t)| SourceFile::new(format!("snapshot-{i}.yaml"), *t))
        .collect();
    let files: Vec<(String, String)> = sources
        .iter()
        .map(|s| (s.name.clone(), s.text.to_string()))
        .collect();
    match k8s::import(&files) {
        Ok(imported) => imported_verdict(&imported),
        Err(e) => import_verdict(&sources, e),
    }
}
