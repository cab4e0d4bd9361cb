//! Reading spec and data files: a cluster + workload pair with its cross-file checks, and the
//! inference traces a co-location workload reads.

use crate::spec::limits::{MAX_DATA_BYTES, MAX_SPEC_BYTES};
use std::path::Path;

use super::error::SessionError;
use crate::colocate::setup::cluster_findings;
use crate::colocate::trace::{TraceRequest, parse_azure};
use crate::plan::error::PlanningError;
use crate::spec::SolverBackend;
use crate::spec::colocation::COLOCATION_PLANNERS;
use crate::spec::preemption::EventSolver;
use crate::spec::preemption::PREEMPTION_PLANNERS;
use crate::spec::{
    self, ColocationSpec, Expect, InvalidSpec, Issue, LoadedSpec, PreemptionSpec, SourceFile,
    SpanIndex, Spec, SpecKind,
};
use crate::topology::Cluster;

/// The help line of a malformed Azure trace row.
const AZURE_FORMAT_HELP: &str =
    "expected the Azure LLM trace format `TIMESTAMP,ContextTokens,GeneratedTokens`";

/// Reads a text file; an unreadable one is an input error naming it.
pub fn read_source(path: &Path) -> Result<SourceFile, SessionError> {
    read_within(path, MAX_DATA_BYTES, "a data file")
}

/// Reads a spec file (TOML), refusing one above [`MAX_SPEC_BYTES`].
pub fn read_spec_source(path: &Path) -> Result<SourceFile, SessionError> {
    read_within(path, MAX_SPEC_BYTES, "a spec file")
}

/// Reads at most `limit` bytes and refuses a longer file: the read itself is bounded, so a
/// device or a FIFO that never ends (`/dev/zero`) is refused as surely as a large file.
fn read_within(path: &Path, limit: u64, what: &str) -> Result<SourceFile, SessionError> {
    let (name, text) = read_text_within(path, limit, what)?;
    Ok(SourceFile::new(name, text))
}

/// The name and text of a file of at most `limit` bytes (`what` names the kind of file in the
/// refusal). A regular file above the limit is refused by its size, before a byte is read; a
/// stream (a FIFO, a device) is read in chunks and refused at the first NUL byte, which no
/// text file holds (so `/dev/zero` ends at once), or as soon as it passes the limit. Bytes
/// that are not UTF-8 are refused at their line and column. A large export is held once, in a
/// buffer of its size.
pub fn read_text_within(
    path: &Path,
    limit: u64,
    what: &str,
) -> Result<(String, String), SessionError> {
    use std::io::Read;
    let name = path.display().to_string();
    let unreadable = |e: std::io::Error| {
        SessionError::input(
            format!("cannot read `{name}`: {e}"),
            Some("check the path; spec files are UTF-8 TOML".into()),
        )
    };
    let too_large = || {
        let size = if limit >= 1 << 30 {
            format!("{} GiB", limit >> 30)
        } else {
            format!("{} MiB", limit >> 20)
        };
        SessionError::input(
            format!("`{name}` is larger than {size}, coplan's limit for {what}"),
            Some("docs/spec.md, \"Limits\", lists the limits and why they are set".into()),
        )
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    if metadata.is_file() && metadata.len() > limit {
        return Err(too_large());
    }
    // A regular file's size sizes the buffer once; a stream grows it as it is read.
    let size = if metadata.is_file() {
        metadata.len()
    } else {
        0
    };
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        };
        if let Some(at) = chunk[..n].iter().position(|&b| b == 0) {
            bytes.extend_from_slice(&chunk[..at]);
            return Err(not_text(&name, &bytes, bytes.len(), "a NUL byte".into()));
        }
        if (bytes.len() + n) as u64 > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let byte = bytes.get(at).copied().unwrap_or(0);
            Err(not_text(
                &name,
                &bytes,
                at,
                format!("byte 0x{byte:02x}, not UTF-8"),
            ))
        }
    }
}

/// A file that is not text, located at byte `at`: the lines before it are shown as they are,
/// the line holding it up to that byte, and the span points at where the byte stands.
fn not_text(name: &str, bytes: &[u8], at: usize, what: String) -> SessionError {
    let line_start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    // Only the offending line is drawn: the bytes before it are valid (or were read).
    let shown = String::from_utf8_lossy(&bytes[line_start..at]).into_owned();
    let line = bytes[..line_start].iter().filter(|&&b| b == b'\n').count() + 1;
    let column = shown.chars().count() + 1;
    let mut text = "\n".repeat(line - 1);
    let start = text.len() + shown.len();
    text.push_str(&shown);
    text.push('\u{fffd}');
    SessionError::Invalid(vec![InvalidSpec {
        source_file: SourceFile::new(name, text),
        issues: vec![Issue {
            code: "coplan::not-text",
            message: format!("`{name}` is not a text file: {what} at line {line}, column {column}"),
            label: what,
            help: Some(
                "spec and data files are UTF-8 text (TOML, CSV, YAML, JSON); save the file as UTF-8".into(),
            ),
            span: start..start + '\u{fffd}'.len_utf8(),
        }],
    }])
}

/// Reads and validates one spec file.
pub fn load_spec(path: &Path, expect: Expect) -> Result<LoadedSpec, SessionError> {
    let source = read_spec_source(path)?;
    spec::load(source, expect).map_err(|e| SessionError::Invalid(vec![e]))
}

/// Reads a cluster file and builds the cluster.
pub fn load_cluster(path: &Path) -> Result<Cluster, SessionError> {
    match load_spec(path, Expect::Cluster)?.spec {
        Spec::Cluster(c) => Ok(Cluster::from_spec(&c)),
        _ => Err(SessionError::Internal(
            "a workload file loaded as a cluster".into(),
        )),
    }
}

/// A workload of either kind, checked against its cluster, with what it reads.
pub enum Workload {
    /// A preemption workload.
    Preemption(Box<PreemptionSpec>),
    /// A co-location workload.
    Colocation {
        /// The workload spec.
        spec: Box<ColocationSpec>,
        /// The requests of `[inference] trace`, when it names one.
        trace: Option<Vec<TraceRequest>>,
    },
}

/// A cluster and a workload, both valid and checked against each other.
pub struct Pair {
    /// The resolved cluster.
    pub cluster: Cluster,
    /// The workload.
    pub workload: Workload,
    /// The workload file, for later findings (the initial state of a preemption workload is
    /// built when planning) and for paths relative to it.
    pub source: LoadedSpec,
}

impl Pair {
    /// The kind of the workload.
    pub fn kind(&self) -> SpecKind {
        match self.workload {
            Workload::Preemption(_) => SpecKind::Preemption,
            Workload::Colocation { .. } => SpecKind::Colocation,
        }
    }

    /// The pair with every solve done by `solver` (when given; `--solver` overrides the
    /// workload's `[planners] solver`). A backend this binary lacks is an input error.
    pub fn with_solver(mut self, solver: Option<SolverBackend>) -> Result<Self, SessionError> {
        let planners_solver = match &mut self.workload {
            Workload::Preemption(p) => &mut p.planners.solver,
            Workload::Colocation { spec, .. } => &mut spec.planners.solver,
        };
        if let Some(s) = solver {
            *planners_solver = s;
        }
        check_solver_built(*planners_solver)?;
        Ok(self)
    }

    /// The pair with the per-event optimum found by `event_solver` (when given;
    /// `--event-solver` overrides the workload's `[planners] event_solver`). Co-location
    /// workloads have no per-event optimum: giving it for one is an input error.
    pub fn with_event_solver(
        mut self,
        event_solver: Option<EventSolver>,
    ) -> Result<Self, SessionError> {
        match (&mut self.workload, event_solver) {
            (_, None) => {}
            (Workload::Preemption(p), Some(e)) => p.planners.event_solver = e,
            (Workload::Colocation { .. }, Some(_)) => return Err(event_solver_not_colocation()),
        }
        Ok(self)
    }

    /// A planning failure as a session error: findings point into the workload file, unknown
    /// planner names list the planners of its kind.
    pub fn planning_error(&self, e: PlanningError) -> SessionError {
        planning_error(&self.source, self.kind(), e)
    }
}

/// Maps a planning failure of a workload of `kind` from `source`.
pub fn planning_error(source: &LoadedSpec, kind: SpecKind, e: PlanningError) -> SessionError {
    match e {
        PlanningError::Invalid(findings) => match source.check(findings) {
            Err(invalid) => SessionError::Invalid(vec![invalid]),
            Ok(()) => SessionError::Internal("empty findings".into()),
        },
        PlanningError::UnknownPlanner(name) => SessionError::input(
            format!("unknown planner `{name}`"),
            Some(format!(
                "expected one of {}",
                planner_names(kind).join(", ")
            )),
        ),
        PlanningError::OutOfRange(message) => SessionError::input(message, None),
        PlanningError::Interrupted => interrupted(),
        other => SessionError::Internal(other.to_string()),
    }
}

/// A run stopped on request, before it wrote anything.
pub fn interrupted() -> SessionError {
    SessionError::Interrupted(
        "interrupted: stopped before the run finished; nothing was written".into(),
    )
}

/// `--event-solver` given for a co-location workload.
pub fn event_solver_not_colocation() -> SessionError {
    SessionError::input(
        "`--event-solver` applies to preemption workloads",
        Some(
            "it picks how `ilp` and the decision gaps find the per-event optimum; co-location \
             planners have none (use `--solver` for their LP)"
                .into(),
        ),
    )
}

/// An input error when `backend` is not built into this binary.
pub fn check_solver_built(backend: SolverBackend) -> Result<(), SessionError> {
    if backend.built() {
        return Ok(());
    }
    Err(SessionError::input(
        format!(
            "the solver `{}` is not built into this binary",
            backend.name()
        ),
        Some(format!(
            "build with `cargo build --release --features {}` (needs cmake, a C++ compiler and libclang), or use `--solver microlp`",
            backend.name()
        )),
    ))
}

/// The planner names of a workload kind, in report order.
pub fn planner_names(kind: SpecKind) -> &'static [&'static str] {
    match kind {
        SpecKind::Colocation => &COLOCATION_PLANNERS,
        _ => &PREEMPTION_PLANNERS,
    }
}

/// Reads a cluster and a workload, checks the workload against the cluster and loads the
/// trace it reads.
pub fn load_pair(cluster_path: &Path, workload_path: &Path) -> Result<Pair, SessionError> {
    let cluster = load_cluster(cluster_path)?;
    let source = load_spec(workload_path, Expect::Workload)?;
    let workload = match &source.spec {
        Spec::Preemption(p) => Workload::Preemption(p.clone()),
        Spec::Colocation(c) => {
            source
                .check(cluster_findings(&cluster, c))
                .map_err(|e| SessionError::Invalid(vec![e]))?;
            let trace = match &c.inference.trace {
                Some(rel) => {
                    let requests = load_trace(&source, rel)?;
                    let longest = |f: fn(&TraceRequest) -> u32| {
                        requests.iter().map(|r| i64::from(f(r))).max().unwrap_or(0)
                    };
                    let findings = spec::validate::colocation_with_trace(
                        c,
                        requests.len(),
                        longest(|r| r.prompt_tokens),
                        longest(|r| r.output_tokens),
                    );
                    source
                        .check(findings)
                        .map_err(|e| SessionError::Invalid(vec![e]))?;
                    Some(requests)
                }
                None => None,
            };
            Workload::Colocation {
                spec: c.clone(),
                trace,
            }
        }
        Spec::Cluster(_) => {
            return Err(SessionError::Internal(
                "a cluster file loaded as a workload".into(),
            ));
        }
    };
    Ok(Pair {
        cluster,
        workload,
        source,
    })
}

/// Reads an Azure LLM trace named in a workload, relative to the workload file.
pub fn load_trace(workload: &LoadedSpec, rel: &str) -> Result<Vec<TraceRequest>, SessionError> {
    let base = Path::new(&workload.source.name)
        .parent()
        .unwrap_or(Path::new("."));
    let path = base.join(rel);
    read_azure_trace(&path, 1.0, None).map_err(|e| match e {
        // The file named by `trace =` cannot be read: the diagnostic points at that line.
        SessionError::Input { message, .. } => {
            let span = spec::source::parse_document(&workload.source).map_or(0..0, |root| {
                SpanIndex::build(&root).value_span("inference.trace")
            });
            SessionError::Invalid(vec![InvalidSpec {
                source_file: workload.source.clone(),
                issues: vec![Issue {
                    code: "coplan::input",
                    message,
                    label: format!("read as `{}`", path.display()),
                    help: Some("`trace` is a path relative to the workload file's folder".into()),
                    span,
                }],
            }])
        }
        other => other,
    })
}

/// Reads an Azure LLM trace file; a malformed row is a located diagnostic.
pub fn read_azure_trace(
    path: &Path,
    rate_scale: f64,
    limit: Option<usize>,
) -> Result<Vec<TraceRequest>, SessionError> {
    let source = read_source(path)?;
    parse_azure(&source.text, rate_scale, limit)
        .map_err(|e| line_error(&source, e.line, &e.message, AZURE_FORMAT_HELP))
}

/// A data-file error at a line, as a located diagnostic (file, line, column, the line shown).
pub fn line_error(source: &SourceFile, line: usize, message: &str, help: &str) -> SessionError {
    located_error(
        source,
        (line, None),
        message,
        ("data::malformed-row", "this row"),
        help,
    )
}

/// A data-file error at a line and (1-based) column, as a located diagnostic: the span runs
/// from the column to the end of the line (the whole line without a column).
pub fn located_error(
    source: &SourceFile,
    (line, column): (usize, Option<usize>),
    message: &str,
    (code, label): (&'static str, &str),
    help: &str,
) -> SessionError {
    let mut start = 0;
    for (i, l) in source.text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let text = l.trim_end_matches(['\n', '\r']);
            let end = start + text.len();
            // Columns count characters; spans count bytes.
            let from = column
                .and_then(|c| text.char_indices().nth(c.saturating_sub(1)))
                .map_or(start, |(b, _)| start + b);
            return SessionError::Invalid(vec![InvalidSpec {
                source_file: source.clone(),
                issues: vec![Issue {
                    code,
                    message: message.to_string(),
                    label: label.to_string(),
                    help: (!help.is_empty()).then(|| help.to_string()),
                    span: from..end.max(from),
                }],
            }]);
        }
        start += l.len();
    }
    SessionError::input(
        format!("{}:{line}: {message}", source.name),
        (!help.is_empty()).then(|| help.to_string()),
    )
}
