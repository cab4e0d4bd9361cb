//! `coplan import`: read the input files, run an importer, map its errors to located
//! diagnostics, and check that what it will write validates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::colocate::trace::workload_from_trace;
use crate::import::alibaba::{self, AlibabaOptions, At, GpuShares};
use crate::import::build::parse_qos_override;
use crate::import::error::ImportError;
use crate::import::k8s;
pub use crate::import::k8s::Imported;
use crate::import::limits::MAX_EXPORT_BYTES;
pub use crate::import::summary::ImportSummary;
use crate::session::error::SessionError;
use crate::session::load::{
    load_spec, located_error, read_azure_trace, read_source, read_text_within,
};
use crate::spec::limits::{MAX_PREEMPTORS, MAX_TIMESTAMP_S};
use crate::spec::{self, ColocationSpec, Expect, SourceFile, Spec};
use crate::topology::Cluster;
use crate::topology::state::running_state;

/// An importer's error against the files it read: located in the file it names.
pub fn import_error(sources: &[SourceFile], e: ImportError) -> SessionError {
    match e {
        ImportError::Input { message, help } => SessionError::input(message, help),
        ImportError::At {
            file,
            line,
            column,
            message,
            label,
            help,
        } => match sources.get(file) {
            Some(source) => located_error(
                source,
                (line, column),
                &message,
                ("import::malformed", &label),
                &help,
            ),
            None => SessionError::Internal(format!("an import error names file {file}: {message}")),
        },
    }
}

/// Imports a Kubernetes snapshot from its files (each up to [`MAX_EXPORT_BYTES`]). The texts
/// are held once: the sources a diagnostic shows are made of them only when there is one.
pub fn import_k8s(paths: &[PathBuf], options: k8s::K8sOptions) -> Result<Imported, SessionError> {
    let files = paths
        .iter()
        .map(|p| read_text_within(p, MAX_EXPORT_BYTES, "a Kubernetes export"))
        .collect::<Result<Vec<_>, _>>()?;
    let imported = k8s::import_with(&files, options).map_err(|e| {
        let sources: Vec<SourceFile> = match &e {
            ImportError::At { file, .. } => files
                .iter()
                .enumerate()
                .map(|(i, (name, text))| {
                    SourceFile::new(name.clone(), if i == *file { text.as_str() } else { "" })
                })
                .collect(),
            ImportError::Input { .. } => Vec::new(),
        };
        import_error(&sources, e)
    })?;
    within_workload_limits(&imported)?;
    Ok(imported)
}

/// Refuses a snapshot whose workload would exceed what a preemption workload may hold (a
/// cluster of many nodes, each with its DaemonSet pods, can): an input error naming the
/// limit, where writing the workload would fail to load it back.
fn within_workload_limits(imported: &Imported) -> Result<(), SessionError> {
    use crate::spec::limits::{MAX_PREEMPTORS, MAX_RUNNING_PODS};
    let help = || Some("docs/spec.md, \"Limits\", lists the limits and why they are set".into());
    let running = imported.workload.running.len();
    if running > MAX_RUNNING_PODS {
        return Err(SessionError::input(
            format!(
                "the snapshot has {running} running pods that request CPU or GPUs; a preemption workload holds at most {MAX_RUNNING_PODS}"
            ),
            help(),
        ));
    }
    let preemptors: i64 = imported.workload.preempt.iter().map(|p| p.count).sum();
    if preemptors > MAX_PREEMPTORS {
        return Err(SessionError::input(
            format!(
                "the snapshot has {preemptors} Pending pods; a preemption workload holds at most {MAX_PREEMPTORS} preemptors"
            ),
            help(),
        ));
    }
    Ok(())
}

/// The options of `import alibaba-openb` as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct AlibabaArgs {
    /// `T` (seconds) or `peak`.
    pub at: Option<String>,
    /// `--next`: the pods created after the moment (or after the fill) that become preemptors.
    pub next: usize,
    /// `--fill`: share of GPUs a sampled list fills to.
    pub fill: f64,
    /// `MODEL=TYPE` each.
    pub server_types: Vec<String>,
    /// `CLASS=PRIORITY:TOPOLOGY[:preemptible]` each.
    pub qos: Vec<String>,
    /// `--gpu-shares drop`: leave out pods requesting a fraction of a GPU instead of giving them
    /// a whole one.
    pub drop_gpu_shares: bool,
    /// `FILL,NEXT`.
    pub sampled_qos: String,
    /// `--as-sequence`: read a timed list as an arrival sequence (fill, then the next pods).
    pub as_sequence: bool,
}

/// Resolves the command-line options; a malformed one is an input error that says what was
/// expected.
pub fn alibaba_options(args: &AlibabaArgs) -> Result<AlibabaOptions, SessionError> {
    let bad = |m: String, h: &str| SessionError::input(m, Some(h.to_string()));
    let at = match args.at.as_deref() {
        None => None,
        Some("peak") => Some(At::Peak),
        Some(t) => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && (0.0..=MAX_TIMESTAMP_S).contains(&v) => Some(At::Time(v)),
            Ok(v) if v.is_finite() && v > MAX_TIMESTAMP_S => {
                return Err(bad(
                    format!("--at `{t}` is past the limit of {MAX_TIMESTAMP_S:e} s"),
                    "a workload's clock reaches at most 1e10 s (the year 2286; docs/spec.md, \"Limits\"); the openb trace's times are seconds from its start",
                ));
            }
            _ => {
                return Err(bad(
                    format!("--at `{t}` is neither a time in seconds nor `peak`"),
                    "give the trace time in seconds (e.g. --at 9000000) or --at peak",
                ));
            }
        },
    };
    let mut server_types = BTreeMap::new();
    for s in &args.server_types {
        let Some((model, t)) = s
            .split_once('=')
            .filter(|(m, t)| !m.is_empty() && !t.is_empty())
        else {
            return Err(bad(
                format!("--server-type `{s}` is not MODEL=TYPE"),
                "e.g. --server-type G2=gpu-2s4n8g (a built-in server type)",
            ));
        };
        if server_types
            .insert(model.to_string(), t.to_string())
            .is_some()
        {
            return Err(bad(
                format!("--server-type maps model `{model}` twice"),
                "give each model once",
            ));
        }
    }
    let mut qos = BTreeMap::new();
    for q in &args.qos {
        let (class, mapping) = parse_qos_override(q).map_err(|m| {
            SessionError::input(m, Some("the default table is in docs/import.md".into()))
        })?;
        qos.insert(class, mapping);
    }
    let Some((fill_qos, next_qos)) = args
        .sampled_qos
        .split_once(',')
        .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
    else {
        return Err(bad(
            format!("--sampled-qos `{}` is not FILL,NEXT", args.sampled_qos),
            "e.g. --sampled-qos BE,LS: the fill pods' class, then the preemptors'",
        ));
    };
    if args.next as u64 > MAX_PREEMPTORS as u64 {
        return Err(bad(
            format!(
                "--next `{}` is above the limit of {MAX_PREEMPTORS} preemptors",
                args.next
            ),
            "docs/spec.md, \"Limits\"",
        ));
    }
    if args.next == 0 {
        return Err(bad(
            "--next must be at least 1".into(),
            "the preemptors are the next N pods to arrive",
        ));
    }
    Ok(AlibabaOptions {
        at,
        next: args.next,
        fill: args.fill,
        server_types,
        qos,
        gpu_shares: if args.drop_gpu_shares {
            GpuShares::Drop
        } else {
            GpuShares::Whole
        },
        sampled_qos: (fill_qos.trim().to_string(), next_qos.trim().to_string()),
        as_sequence: args.as_sequence,
    })
}

/// Imports the Alibaba GPU trace's node list and a pod list.
pub fn import_alibaba(
    nodes: &Path,
    pods: &Path,
    args: &AlibabaArgs,
) -> Result<Imported, SessionError> {
    let options = alibaba_options(args)?;
    let options = &options;
    let sources = [read_source(nodes)?, read_source(pods)?];
    alibaba::import(
        (&sources[0].name, &sources[0].text),
        (&sources[1].name, &sources[1].text),
        options,
    )
    .map_err(|e| import_error(&sources, e))
}

/// An Azure LLM trace as a co-location workload, its requests in place of the base
/// workload's arrivals when one is given: the spec, its comment lines and the summary.
pub fn import_azure(
    path: &Path,
    rate_scale: f64,
    limit: Option<usize>,
    base: Option<&Path>,
) -> Result<(ColocationSpec, Vec<String>, ImportSummary), SessionError> {
    if !(rate_scale.is_finite() && rate_scale > 0.0) {
        return Err(SessionError::input(
            format!("--rate-scale must be positive, got {rate_scale}"),
            None,
        ));
    }
    let base_spec = match base {
        Some(b) => match load_spec(b, Expect::Workload)?.spec {
            Spec::Colocation(c) => Some((*c, b.display().to_string())),
            other => {
                return Err(SessionError::input(
                    format!(
                        "--base `{}` is a {} workload; the requests of a trace go into a co-location workload",
                        b.display(),
                        other.kind().as_str()
                    ),
                    Some("give a workload with kind = \"colocation\"".into()),
                ));
            }
        },
        None => None,
    };
    let rows = read_azure_trace(path, rate_scale, limit)?;
    let name = path.display().to_string();
    if rows.is_empty() {
        return Err(SessionError::input(format!("{name}: no requests"), None));
    }
    let mut summary = ImportSummary::new("azure-llm", vec![name.clone()]);
    summary.read("requests", rows.len() as u64);
    summary.mapped("requests", rows.len() as u64);
    if let Some(n) = limit {
        summary.list("limit", n.to_string());
    }
    match &base_spec {
        Some((b, base_name)) => {
            summary.files.push(base_name.clone());
            if b.inference.load.is_some() {
                summary.warn(format!(
                    "the base sets [inference] load; the trace's own arrival times replace it (rate scale {rate_scale})"
                ));
                summary.dropped("base_inference_load", 1);
            }
            if b.inference.arrival.is_some() || b.inference.trace.is_some() {
                summary.dropped("base_arrivals_replaced", 1);
            }
        }
        None => {
            summary.defaulted("model_profile_llama_3_8b_2_stages", 1);
            summary.defaulted("nodes_every_server_of_the_cluster", 1);
        }
    }
    let (spec, comments) = workload_from_trace(
        &rows,
        &name,
        rate_scale,
        base_spec.as_ref().map(|(s, n)| (s, n.as_str())),
    );
    Ok((spec, comments, summary))
}

/// Checks that generated spec texts load and validate, and, for a cluster and a preemption
/// workload, that the workload's running pods fit the cluster. A failure is a bug of the
/// importer (an internal error naming the first issue), never a file written.
pub fn check_generated(files: &[(&str, &str)]) -> Result<(), SessionError> {
    let mut cluster = None;
    let mut workloads = Vec::new();
    for (name, text) in files {
        // What no command could read back is refused here, as an input too large.
        if text.len() as u64 > crate::spec::limits::MAX_SPEC_BYTES {
            return Err(SessionError::input(
                format!(
                    "the generated {name} would be {} bytes; a spec file holds at most {} bytes",
                    text.len(),
                    crate::spec::limits::MAX_SPEC_BYTES
                ),
                Some("docs/spec.md, \"Limits\", lists the limits and why they are set".into()),
            ));
        }
        let loaded = spec::load(SourceFile::new(*name, *text), Expect::Any).map_err(|e| {
            SessionError::Internal(format!(
                "the generated {name} does not validate: {}",
                e.issues
                    .first()
                    .map_or_else(String::new, |i| i.message.clone())
            ))
        })?;
        match &loaded.spec {
            Spec::Cluster(c) => cluster = Some(Cluster::from_spec(c)),
            _ => workloads.push(loaded),
        }
    }
    if let Some(c) = &cluster {
        for w in &workloads {
            if let Spec::Preemption(p) = &w.spec
                && let Err(findings) = running_state(c, p)
            {
                return Err(SessionError::Internal(format!(
                    "the generated {} does not fit its cluster: {}",
                    w.source.name,
                    findings
                        .first()
                        .map_or_else(String::new, |f| f.message.clone())
                )));
            }
        }
    }
    Ok(())
}

/// An importer writes two files: they must be two, and neither may be one of its inputs (a
/// cluster written over the node list it was read from is a lost trace).
pub fn distinct_outputs(
    cluster: &Path,
    workload: &Path,
    inputs: &[PathBuf],
) -> Result<(), SessionError> {
    if same_file(cluster, workload) {
        return Err(SessionError::input(
            "--out-cluster and --out-workload name the same file: the workload would overwrite the cluster",
            Some("give the cluster and the workload a file each".into()),
        ));
    }
    for (flag, out) in [("--out-cluster", cluster), ("--out-workload", workload)] {
        if let Some(read) = inputs.iter().find(|i| same_file(out, i)) {
            return Err(SessionError::input(
                format!(
                    "{flag} `{}` is an input of this import, `{}`",
                    out.display(),
                    read.display()
                ),
                Some("write the specs beside the inputs, not over them".into()),
            ));
        }
    }
    Ok(())
}

/// Whether two paths name one file: the same path once resolved, the file's directory
/// resolved when the file does not exist yet.
fn same_file(a: &Path, b: &Path) -> bool {
    let resolve = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
        })
    };
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
