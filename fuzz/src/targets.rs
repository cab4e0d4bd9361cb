//! The fuzz targets: each takes one input and runs it through the library the way the
//! `coplan` binary would, then checks what came back. A clean input error (the library's
//! typed errors, with a diagnostic located inside the file it names) is a fine outcome; an
//! internal error, a diagnostic pointing outside its file, a generated file that does not
//! validate or a verifier rejection is a finding (and so is a panic, caught by the driver).

use coplan::colocate::latency;
use coplan::colocate::setup::{cluster_findings, setup};
use coplan::colocate::trace::{parse_azure, workload_from_trace};
use coplan::colocate::vidur::{self, VidurOptions};
use coplan::import::alibaba;
use coplan::import::error::ImportError;
use coplan::import::k8s::{self, Imported};
use coplan::preempt::scenario;
use coplan::report;
use coplan::session::error::SessionError;
use coplan::session::import::{AlibabaArgs, alibaba_options, check_generated, import_error};
use coplan::session::load::line_error;
use coplan::sim::merge;
use coplan::spec::{self, Expect, InvalidSpec, LoadedSpec, SourceFile, Spec};
use coplan::topology::Cluster;
use coplan::topology::state::running_state;

use crate::generate;

/// What one execution showed.
pub enum Verdict {
    /// Nothing wrong; the string names the kind of outcome (an error code, `ok`), so that the
    /// driver can keep inputs that reach outcomes it has not seen.
    Fine(String),
    /// Something wrong that did not panic.
    Finding(String),
}

use Verdict::{Finding, Fine};

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

/// The line that separates the files of a multi-file input.
pub const SEPARATOR: &str = "\n%%\n";

/// The files of a multi-file input.
fn parts(text: &str) -> Vec<&str> {
    text.split(SEPARATOR).collect()
}

fn text_of(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

/// Every issue of a located diagnostic must point inside its file, on character boundaries:
/// the renderer shows the snippet under the span.
fn check_invalid(e: &InvalidSpec) -> Result<String, String> {
    let text = &e.source_file.text;
    let Some(first) = e.issues.first() else {
        return Err(format!("an invalid `{}` with no issue", e.source_file.name));
    };
    for i in &e.issues {
        let s = &i.span;
        if s.start > s.end
            || s.end > text.len()
            || !text.is_char_boundary(s.start)
            || !text.is_char_boundary(s.end)
        {
            return Err(format!(
                "issue `{}` ({}) has span {:?} outside its {}-byte file",
                i.code,
                i.message,
                s,
                text.len()
            ));
        }
        if i.message.is_empty() {
            return Err(format!("issue `{}` has an empty message", i.code));
        }
    }
    Ok(first.code.to_string())
}

/// A session error: invalid input is fine when located correctly; an internal error is a bug.
fn session_verdict(e: &SessionError) -> Verdict {
    match e {
        SessionError::Invalid(list) => {
            let mut code = String::from("invalid");
            for i in list {
                match check_invalid(i) {
                    Ok(c) => code = c,
                    Err(f) => return Finding(f),
                }
            }
            Fine(code)
        }
        SessionError::Input { message, .. } => Fine(format!("input:{}", shape(message))),
        SessionError::Internal(m) => Finding(format!("internal error: {m}")),
        // Nothing asks a fuzz run to stop: a stop it did not ask for is a bug.
        SessionError::Interrupted(m) => Finding(format!("interrupted unasked: {m}")),
    }
}

/// A message with its digits dropped: outcomes that differ only in a number are one kind.
fn shape(message: &str) -> String {
    message
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .take(48)
        .collect()
}

fn invalid_verdict(e: &InvalidSpec) -> Verdict {
    match check_invalid(e) {
        Ok(code) => Fine(code),
        Err(f) => Finding(f),
    }
}

/// Cross-file findings resolved against the workload file, as `coplan validate` does.
fn cross_verdict(
    loaded: &LoadedSpec,
    findings: Vec<coplan::spec::source::Finding>,
) -> Option<Verdict> {
    match loaded.check(findings) {
        Ok(()) => None,
        Err(e) => Some(invalid_verdict(&e)),
    }
}

fn load_cluster(name: &str, text: &str) -> Result<Cluster, Verdict> {
    match spec::load(SourceFile::new(name, text), Expect::Cluster) {
        Ok(l) => match &l.spec {
            Spec::Cluster(c) => Ok(Cluster::from_spec(c)),
            _ => Err(Finding("a cluster load returned a workload".into())),
        },
        Err(e) => Err(invalid_verdict(&e)),
    }
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

/// The cluster a single-file workload input is checked against.
const DEFAULT_CLUSTER: &str = "kind = \"cluster\"\nname = \"fuzz\"\n\n[[pool]]\nserver_type = \"gpu-2s4n8g\"\ncount = 2\nname_prefix = \"node-\"\n";

fn located(source: &SourceFile, line: usize, message: &str) -> Verdict {
    session_verdict(&line_error(source, line, message, "help"))
}

fn import_azure(input: &[u8]) -> Verdict {
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
    match check_generated(&[("generated.toml".into(), generated)]) {
        Ok(()) => Fine("ok".into()),
        Err(e) => match e {
            SessionError::Internal(m) => Finding(m),
            other => Finding(format!("a generated workload fails as input: {other}")),
        },
    }
}

fn import_vidur(input: &[u8]) -> Verdict {
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
fn import_verdict(sources: &[SourceFile], e: ImportError) -> Verdict {
    session_verdict(&import_error(sources, e))
}

/// What an import writes must load, validate and fit its cluster.
fn imported_verdict(imported: &Imported) -> Verdict {
    let cluster = report::toml::cluster(&imported.comments, &imported.cluster);
    let workload = report::toml::preemption_workload(&imported.comments, &imported.workload);
    match check_generated(&[
        ("cluster.toml".into(), cluster),
        ("workload.toml".into(), workload),
    ]) {
        Ok(()) => Fine("ok".into()),
        Err(e) => Finding(format!("the imported files fail: {e}")),
    }
}

fn alibaba_args(line: &str) -> AlibabaArgs {
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

fn import_alibaba(input: &[u8]) -> Verdict {
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

fn import_k8s(input: &[u8]) -> Verdict {
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

/// Bytes a drawn diagnostic may take: a line above 4 KB is drawn as a window of 60 characters
/// each side of the span, so a snippet is at most three lines of 4 KB, each tab drawn four
/// columns wide, and an underline of three-byte box characters under the span's line; plus
/// the message (quotes cut to 80 characters) and the help.
const DRAWN_BYTES_PER_ISSUE: usize = 128 * 1024;

/// Draws every diagnostic of an invalid file and checks the drawing: bounded (at most
/// `MAX_ISSUES_DRAWN` drawn, each in bounded text), counted, and located at the line and
/// column of each drawn issue's span.
fn drawn(e: &InvalidSpec) -> Verdict {
    if let Err(f) = check_invalid(e) {
        return Finding(f);
    }
    let text = report::diagnostic::render_invalid(e, report::diagnostic::Style::Plain);
    let drawn = e.issues.len().min(report::diagnostic::MAX_ISSUES_DRAWN);
    if text.len() > (drawn + 1) * DRAWN_BYTES_PER_ISSUE {
        return Finding(format!(
            "{} issues drew {} bytes, above {} per issue",
            drawn,
            text.len(),
            DRAWN_BYTES_PER_ISSUE
        ));
    }
    let count = format!("{}: {} error", e.source_file.name, e.issues.len());
    if !text.contains(&count) {
        return Finding(format!("the count line `{count}` is missing"));
    }
    let source = &e.source_file.text;
    for issue in e.issues.iter().take(drawn) {
        let at = issue.span.start.min(source.len());
        let before = &source.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        // miette counts a lone `\r` as a line break too; such files are left to its own count.
        if before.contains(&b'\r') {
            continue;
        }
        let location = format!("{}:{line}:{column}]", e.source_file.name);
        if !text.contains(&location) {
            return Finding(format!(
                "issue `{}` at byte {at} is not drawn at {location}",
                issue.code
            ));
        }
    }
    Fine(format!("drawn:{}", e.issues.first().map_or("", |i| i.code)))
}

/// The input's first byte picks the file kind, its second the line to stretch and its third
/// and fourth the length (up to 70,000 columns, past the 65,535 a renderer's column fits in);
/// the stretch is the line's own text repeated, or blanks before its first value.
fn diagnostics_long_lines(input: &[u8]) -> Verdict {
    let [kind, which, hi, lo, rest @ ..] = input else {
        return Fine("short".into());
    };
    let text = text_of(rest);
    let lines: Vec<&str> = text.split('\n').collect();
    let target = usize::from(*which) % lines.len().max(1);
    let width = (usize::from(*hi) << 8 | usize::from(*lo)) * 70_000 / 65_536 + 1;
    let mut out = String::with_capacity(text.len() + width);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if i != target {
            out.push_str(line);
            continue;
        }
        match (kind % 2, line.find('=')) {
            (0, Some(eq)) => {
                out.push_str(&line[..=eq]);
                out.extend(std::iter::repeat_n(' ', width));
                out.push_str(&line[eq + 1..]);
            }
            _ => {
                while out.len() < width && !line.is_empty() {
                    out.push_str(line);
                }
                out.push_str(line);
            }
        }
    }
    let expect = match kind % 4 {
        0 | 1 => Expect::Any,
        2 => Expect::Cluster,
        _ => Expect::Workload,
    };
    if kind % 8 >= 6 {
        // As a data file: an Azure trace row error is drawn from the same renderer.
        let source = SourceFile::new("trace.csv", out.as_str());
        return match parse_azure(&out, 1.0, None) {
            Ok(_) => Fine("trace-ok".into()),
            Err(e) => match line_error(&source, e.line, &e.message, "") {
                SessionError::Invalid(list) => list.first().map_or(Fine("none".into()), drawn),
                other => session_verdict(&other),
            },
        };
    }
    match spec::load(SourceFile::new("long.toml", out), expect) {
        Ok(_) => Fine("ok".into()),
        Err(e) => drawn(&e),
    }
}

/// The input is one entry (a `[[running]]` pod, a `[[preempt]]` list, a `[[workload]]` class,
/// anything) repeated: its first byte sets how many times (1–400, mostly under 40), the rest
/// is the entry, after a workload head that defines one class.
fn diagnostics_many_errors(input: &[u8]) -> Verdict {
    let [times, rest @ ..] = input else {
        return Fine("short".into());
    };
    let times = if times % 4 == 0 {
        usize::from(*times) * 400 / 256 + 1
    } else {
        usize::from(*times) % 40 + 1
    };
    let entry = text_of(rest);
    let mut text = String::from(
        "kind = \"preemption\"\n[[workload]]\nname = \"b\"\npriority = 1\ngpus = 1\ncores = 1\n",
    );
    for _ in 0..times {
        text.push_str(&entry);
        text.push('\n');
    }
    match spec::load(SourceFile::new("many.toml", text), Expect::Workload) {
        Ok(loaded) => match load_cluster("default.toml", DEFAULT_CLUSTER) {
            Ok(cluster) => match &loaded.spec {
                Spec::Preemption(w) => match running_state(&cluster, w) {
                    Ok(_) => Fine("ok".into()),
                    Err(findings) => match loaded.check(findings) {
                        Ok(()) => Fine("ok".into()),
                        Err(e) => drawn(&e),
                    },
                },
                _ => Fine("other-kind".into()),
            },
            Err(v) => v,
        },
        Err(e) => drawn(&e),
    }
}
