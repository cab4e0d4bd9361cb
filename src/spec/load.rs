//! Loading one spec file: its kind, structural deserialization and semantic validation, every
//! issue located in the source.

use toml::de::DeValue;

use super::cluster::ClusterSpec;
use super::colocation::ColocationSpec;
use super::kind::SpecKind;
use super::preemption::PreemptionSpec;
use super::source::{self, Finding, Issue, SourceFile, SpanIndex};
use super::validate;

/// What a command expects a file argument to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Any kind (`coplan validate`).
    Any,
    /// A cluster file.
    Cluster,
    /// A workload file (preemption or co-location).
    Workload,
}

/// A parsed spec of any kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A cluster spec.
    Cluster(ClusterSpec),
    /// A preemption workload.
    Preemption(Box<PreemptionSpec>),
    /// A co-location workload.
    Colocation(Box<ColocationSpec>),
}

impl Spec {
    /// The kind of file it was read from.
    pub fn kind(&self) -> SpecKind {
        match self {
            Spec::Cluster(_) => SpecKind::Cluster,
            Spec::Preemption(_) => SpecKind::Preemption,
            Spec::Colocation(_) => SpecKind::Colocation,
        }
    }
}

/// A spec with the source it came from, so later (cross-file) checks can point into it.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    /// The file's name and text, for diagnostics.
    pub source: SourceFile,
    /// The parsed, validated spec.
    pub spec: Spec,
}

/// A [`SpanIndex`] built the first time a finding needs it.
struct LazySpans<'a, 'i> {
    root: &'a toml::Spanned<toml::de::DeTable<'i>>,
    index: std::cell::OnceCell<SpanIndex>,
}

impl<'a, 'i> LazySpans<'a, 'i> {
    fn new(root: &'a toml::Spanned<toml::de::DeTable<'i>>) -> Self {
        Self {
            root,
            index: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> &SpanIndex {
        self.index.get_or_init(|| SpanIndex::build(self.root))
    }
}

/// A spec file that failed to load: every issue found, located in its source.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} invalid: {} error(s)", source_file.name, issues.len())]
pub struct InvalidSpec {
    /// The file the issues point into.
    pub source_file: SourceFile,
    /// Every issue found, located in the source where its key could be found.
    pub issues: Vec<Issue>,
}

impl LoadedSpec {
    /// Resolves cross-file findings against this file; `Ok` when there are none.
    pub fn check(&self, findings: Vec<Finding>) -> Result<(), InvalidSpec> {
        if findings.is_empty() {
            return Ok(());
        }
        // Findings are rare: the file is parsed again to locate them rather than keeping every
        // key's span of every loaded spec.
        let spans = match source::parse_document(&self.source) {
            Ok(root) => SpanIndex::build(&root),
            Err(_) => SpanIndex::default(),
        };
        Err(InvalidSpec {
            source_file: self.source.clone(),
            issues: findings.into_iter().map(|f| spans.resolve(f)).collect(),
        })
    }
}

/// Structural deserialization, then semantic validation of whatever could be built (skipping
/// findings on placeholder values), so one run reports as many independent errors as it can.
fn structural<T: serde::de::DeserializeOwned>(
    root: &toml::Spanned<toml::de::DeTable<'_>>,
    spans: &LazySpans<'_, '_>,
    wrap: fn(T) -> Spec,
    check: fn(&T) -> Vec<Finding>,
) -> (Option<Spec>, Vec<Issue>) {
    let s = source::deserialize_all::<T>(root);
    let mut issues = s.issues;
    let pruned = !issues.is_empty();
    if let Some(value) = &s.value
        && !s.removed_elements
    {
        for finding in check(value) {
            // After a structural error the value was read without the entry it pruned: a value
            // check that finds a key missing (`[inference] needs arrival`) would report that
            // same entry a second time, as serde's own missing-field echo is not.
            if pruned && finding.code == "spec::missing-key" {
                continue;
            }
            let issue = spans.get().resolve(finding);
            if !s.placeholders.contains(&issue.span) {
                issues.push(issue);
            }
        }
    }
    issues.sort_by_key(|i| (i.span.start, i.span.end));
    (s.value.map(wrap), issues)
}

/// Parses, type-checks and validates one spec file.
pub fn load(source: SourceFile, expect: Expect) -> Result<LoadedSpec, InvalidSpec> {
    let fail = |source: &SourceFile, issues: Vec<Issue>| InvalidSpec {
        source_file: source.clone(),
        issues,
    };
    let root = source::parse_document(&source).map_err(|issues| fail(&source, issues))?;
    // The index of every key's span is only needed to locate findings: built on first use, a
    // valid spec never pays for it (it is the largest part of a large spec's memory).
    let spans = LazySpans::new(&root);
    let kind = detect_kind(&root, &spans, expect).map_err(|i| fail(&source, vec![i]))?;
    let no_kind_help = (kind == SpecKind::Cluster && root.get_ref().get("kind").is_none())
        .then_some(
            "this file has no `kind`, so it was read as a cluster; a workload file starts with \
         kind = \"preemption\" or kind = \"colocation\"",
        );
    let (spec, mut issues) = match kind {
        SpecKind::Cluster => structural(&root, &spans, Spec::Cluster, validate::cluster),
        SpecKind::Preemption => structural(
            &root,
            &spans,
            |p| Spec::Preemption(Box::new(p)),
            validate::preemption,
        ),
        SpecKind::Colocation => structural(
            &root,
            &spans,
            |c| Spec::Colocation(Box::new(c)),
            validate::colocation,
        ),
    };
    if let (Some(help), Some(first)) = (no_kind_help, issues.first_mut())
        && first.code.starts_with("spec::unknown-key")
    {
        first.help = Some(help.to_string());
    }
    let spec = match spec {
        Some(spec) if issues.is_empty() => spec,
        _ => return Err(fail(&source, issues)),
    };
    drop(root);
    Ok(LoadedSpec { source, spec })
}

fn detect_kind(
    root: &toml::Spanned<toml::de::DeTable<'_>>,
    spans: &LazySpans<'_, '_>,
    expect: Expect,
) -> Result<SpecKind, Issue> {
    let value = root.get_ref().get("kind");
    let kind = match value.map(|v| v.get_ref()) {
        None => SpecKind::Cluster,
        Some(DeValue::String(s)) => match s.as_ref() {
            "cluster" => SpecKind::Cluster,
            "preemption" => SpecKind::Preemption,
            "colocation" => SpecKind::Colocation,
            other => {
                return Err(Issue {
                    code: "spec::unknown-kind",
                    message: format!("unknown spec kind `{other}`"),
                    label: "unknown kind".into(),
                    help: Some("expected `cluster`, `preemption` or `colocation`".into()),
                    span: spans.get().value_span("kind"),
                });
            }
        },
        Some(_) => {
            return Err(Issue {
                code: "spec::wrong-type",
                message: "`kind` must be a string".into(),
                label: "not a string".into(),
                help: Some("expected `cluster`, `preemption` or `colocation`".into()),
                span: spans.get().value_span("kind"),
            });
        }
    };
    let mismatch = match (expect, kind) {
        (Expect::Cluster, SpecKind::Preemption | SpecKind::Colocation) => Some((
            format!("expected a cluster spec, found a `{kind}` workload"),
            "pass the cluster file first: coplan <command> CLUSTER WORKLOAD",
        )),
        (Expect::Workload, SpecKind::Cluster) => Some((
            if value.is_none() {
                "expected a workload spec, but this file has no `kind` (read as a cluster)".into()
            } else {
                "expected a workload spec, found a cluster".into()
            },
            "a workload file starts with kind = \"preemption\" or kind = \"colocation\"",
        )),
        _ => None,
    };
    match mismatch {
        Some((message, help)) => Err(Issue {
            code: "spec::wrong-kind",
            message,
            label: if value.is_some() {
                "this kind".into()
            } else {
                "`kind` missing".into()
            },
            help: Some(help.into()),
            span: if value.is_some() {
                spans.get().value_span("kind")
            } else {
                0..0
            },
        }),
        None => Ok(kind),
    }
}
