//! Reading a spec file: TOML syntax, serde structure and the map from key paths to source spans
//! that lets later validation point at the offending text.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A spec file's name (as the user gave it) and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The file name as the user gave it (or the name of a generated file), for messages.
    pub name: String,
    /// The whole text of the file.
    pub text: Arc<str>,
}

impl SourceFile {
    /// A source from its name and text.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based line and column of a byte offset, for plain-text messages.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
        (line, col)
    }
}

/// One problem found in a spec file, located by byte span.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    /// Stable short code, e.g. `spec::unknown-key`.
    pub code: &'static str,
    /// One-line description of the problem.
    pub message: String,
    /// Text under the underlined span.
    pub label: String,
    /// Further advice on fixing it, printed below the snippet.
    pub help: Option<String>,
    /// Byte range of the offending text (`0..0` when it cannot be located).
    pub span: Range<usize>,
}

/// A validation finding that names a key path (`server_type[1].gpu_numa[3]`) instead of a span;
/// the loader resolves the path against the file's [`SpanIndex`].
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable short code, e.g. `spec::unknown-key`.
    pub code: &'static str,
    /// Key path of the offending value, e.g. `server_type[1].gpu_numa[3]`.
    pub path: String,
    /// One-line description of the problem.
    pub message: String,
    /// Text under the underlined span.
    pub label: String,
    /// Further advice on fixing it.
    pub help: Option<String>,
}

impl Finding {
    /// A finding at `path` without help text.
    pub fn new(
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Self {
            code,
            path: path.into(),
            message: message.into(),
            label: label.into(),
            help: None,
        }
    }

    /// Adds the help text.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Builds key paths in the form the span index uses: `pool[2].count`.
pub fn path(parts: &[PathPart<'_>]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            PathPart::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathPart::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// One step of a key path.
#[derive(Debug, Clone, Copy)]
pub enum PathPart<'a> {
    /// A table key (`.key`).
    Key(&'a str),
    /// An array index (`[i]`).
    Index(usize),
}

impl<'a> From<&'a str> for PathPart<'a> {
    fn from(k: &'a str) -> Self {
        PathPart::Key(k)
    }
}

impl From<usize> for PathPart<'_> {
    fn from(i: usize) -> Self {
        PathPart::Index(i)
    }
}

/// `p!["server_type", i, "gpu_numa", j]` → `"server_type[i].gpu_numa[j]"`.
#[macro_export]
macro_rules! p {
    ($($part:expr),* $(,)?) => {
        $crate::spec::source::path(&[$($crate::spec::source::PathPart::from($part)),*])
    };
}

/// Key path → (span of the key, span of the value) for every entry of a parsed document.
#[derive(Debug, Clone, Default)]
pub struct SpanIndex {
    entries: BTreeMap<String, (Option<Range<usize>>, Range<usize>)>,
}

impl SpanIndex {
    /// Indexes every key and array element of a parsed document.
    pub fn build(root: &Spanned<DeTable<'_>>) -> Self {
        let mut index = SpanIndex::default();
        index.walk_table(String::new(), root.get_ref());
        index
    }

    fn walk_table(&mut self, prefix: String, table: &DeTable<'_>) {
        for (key, value) in table.iter() {
            let p = if prefix.is_empty() {
                key.get_ref().to_string()
            } else {
                format!("{prefix}.{}", key.get_ref())
            };
            self.entries
                .insert(p.clone(), (Some(key.span()), value.span()));
            self.walk_value(p, value);
        }
    }

    fn walk_value(&mut self, p: String, value: &Spanned<DeValue<'_>>) {
        match value.get_ref() {
            DeValue::Table(t) => self.walk_table(p, t),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let ip = format!("{p}[{i}]");
                    self.entries.insert(ip.clone(), (None, item.span()));
                    self.walk_value(ip, item);
                }
            }
            _ => {}
        }
    }

    /// Span of the value at `path`, or of the nearest enclosing entry that exists (a defaulted
    /// key points at its table), or the start of the file.
    pub fn value_span(&self, path: &str) -> Range<usize> {
        let mut p = path;
        loop {
            if let Some((_, v)) = self.entries.get(p) {
                return v.clone();
            }
            match parent_path(p) {
                Some(parent) => p = parent,
                None => return 0..0,
            }
        }
    }

    /// Span of the key at `path` when the path names a key, else its value span.
    pub fn key_span(&self, path: &str) -> Range<usize> {
        match self.entries.get(path) {
            Some((Some(k), _)) => k.clone(),
            _ => self.value_span(path),
        }
    }

    /// Whether the document has an entry at exactly `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    /// Locates a finding: its span is the value at its path (or the nearest enclosing entry).
    pub fn resolve(&self, finding: Finding) -> Issue {
        Issue {
            code: finding.code,
            span: self.value_span(&finding.path),
            message: finding.message,
            label: finding.label,
            help: finding.help,
        }
    }
}

fn parent_path(p: &str) -> Option<&str> {
    if p.is_empty() {
        return None;
    }
    let cut = p.rfind(['.', '[']).unwrap_or(0);
    Some(&p[..cut])
}

/// Parses TOML syntax, reporting every syntax error the parser could recover from.
pub fn parse_document(file: &SourceFile) -> Result<Spanned<DeTable<'_>>, Vec<Issue>> {
    let (root, errors) = DeTable::parse_recoverable(&file.text);
    if errors.is_empty() {
        return Ok(root);
    }
    Err(errors
        .iter()
        .map(|e| Issue {
            code: "spec::toml-syntax",
            message: format!("TOML syntax error: {}", e.message().trim()),
            label: "here".into(),
            help: Some("see https://toml.io for the syntax".into()),
            span: e.span().unwrap_or(0..0),
        })
        .collect())
}

const MAX_STRUCTURAL_ERRORS: usize = 50;

/// The outcome of structural deserialization.
pub struct Structural<T> {
    /// The value of the document after pruning the errors, when one could be built.
    pub value: Option<T>,
    /// Every structural error found.
    pub issues: Vec<Issue>,
    /// Spans of wrong-typed values that were replaced by a neutral placeholder.
    pub placeholders: Vec<Range<usize>>,
    /// Whether whole array elements were dropped (their indices no longer match the file).
    pub removed_elements: bool,
}

/// Deserializes the document into `T`, collecting every structural error (unknown key, wrong
/// type, missing key) rather than stopping at the first. After each error the offending entry
/// is pruned, or a wrong-typed value replaced by a placeholder of the expected type, and
/// deserialization is retried. A required key pruned for its type is not reported again as
/// missing.
pub fn deserialize_all<T: DeserializeOwned>(root: &Spanned<DeTable<'_>>) -> Structural<T> {
    let mut out = Structural {
        value: None,
        issues: Vec::new(),
        placeholders: Vec::new(),
        removed_elements: false,
    };
    // Most documents are valid: try the parsed tree once before keeping a copy to prune, so
    // a large valid spec is held twice at most (the tree and the deserializer's copy), not three
    // times.
    if let Ok(value) = T::deserialize(toml::de::Deserializer::from(root.clone())) {
        out.value = Some(value);
        return out;
    }
    let mut doc = root.clone();
    let mut pruned: Vec<(Range<usize>, String)> = Vec::new();
    for _ in 0..MAX_STRUCTURAL_ERRORS {
        let err = match T::deserialize(toml::de::Deserializer::from(doc.clone())) {
            Ok(value) => {
                out.value = Some(value);
                return out;
            }
            Err(e) => e,
        };
        let span = err.span().unwrap_or(0..0);
        let message = err.message().to_string();
        let missing = missing_field(&message);
        let echo = missing
            .as_deref()
            .is_some_and(|f| pruned.iter().any(|(s, k)| k == f && s.start >= span.start));
        if !echo {
            out.issues.push(structural_issue(&message, span.clone()));
        }
        if let Some(placeholder) = placeholder_for(&message)
            && replace_value(doc.get_mut(), &span, placeholder)
        {
            out.placeholders.push(span);
            continue;
        }
        match prune(doc.get_mut(), &span) {
            Some((_, key)) if key.is_empty() => out.removed_elements = true,
            Some(removed) => pruned.push(removed),
            None => break,
        }
    }
    out
}

/// A neutral value of the type an "invalid type" error expected.
fn placeholder_for(message: &str) -> Option<DeValue<'static>> {
    if !message.starts_with("invalid type") {
        return None;
    }
    let expected = message.split_once(", expected ")?.1;
    let text = match expected {
        "i64" | "u64" | "u32" | "i32" | "usize" | "an integer" => "1",
        "f64" | "f32" | "a number" => "1.0",
        "a boolean" => "false",
        "a string" => "\"\"",
        _ => return None,
    };
    DeValue::parse(text).ok().map(Spanned::into_inner)
}

/// Replaces the value whose span is exactly `span`.
fn replace_value<'i>(table: &mut DeTable<'i>, span: &Range<usize>, new: DeValue<'i>) -> bool {
    for (_, value) in table.iter_mut() {
        if replace_in(value, span, &new) {
            return true;
        }
    }
    false
}

fn replace_in<'i>(
    value: &mut Spanned<DeValue<'i>>,
    span: &Range<usize>,
    new: &DeValue<'i>,
) -> bool {
    if value.span() == *span && !value.get_ref().is_table() {
        *value = Spanned::new(span.clone(), new.clone());
        return true;
    }
    match value.get_mut() {
        DeValue::Table(t) => replace_value(t, span, new.clone()),
        DeValue::Array(items) => items
            .as_mut()
            .iter_mut()
            .any(|item| replace_in(item, span, new)),
        _ => false,
    }
}

fn humanize_type(expected: &str) -> String {
    match expected {
        "i64" | "u64" | "u32" | "i32" | "usize" => "an integer".into(),
        "f64" | "f32" => "a number".into(),
        other => other.to_string(),
    }
}

fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_string())
}

fn structural_issue(message: &str, span: Range<usize>) -> Issue {
    let (code, label, help) = if message.starts_with("unknown field") {
        (
            "spec::unknown-key",
            "unknown key",
            message
                .split_once(", expected ")
                .map(|(_, exp)| format!("expected {exp}")),
        )
    } else if message.starts_with("missing field") {
        (
            "spec::missing-key",
            "in this table",
            Some("add the key; `coplan schema <kind>` lists every key".to_string()),
        )
    } else if message.starts_with("invalid type") || message.starts_with("invalid value") {
        let expected = message
            .split_once(", expected ")
            .map(|(_, e)| humanize_type(e));
        let found = message
            .split_once(", expected ")
            .map_or(message, |(m, _)| m)
            .trim_start_matches("invalid type: ")
            .trim_start_matches("invalid value: ");
        return Issue {
            code: "spec::wrong-type",
            message: match &expected {
                Some(e) => format!("wrong type: expected {e}, found {found}"),
                None => format!("wrong type: found {found}"),
            },
            label: match &expected {
                Some(e) => format!("expected {e}"),
                None => "wrong type".into(),
            },
            help: Some("`coplan schema <kind>` lists every key with its type".into()),
            span,
        };
    } else if message.starts_with("unknown variant") {
        (
            "spec::unknown-value",
            "unknown value",
            message
                .split_once(", expected ")
                .map(|(_, exp)| format!("expected {exp}")),
        )
    } else {
        ("spec::invalid", "here", None)
    };
    let message = message
        .split_once(", expected ")
        .map_or(message, |(m, _)| m);
    Issue {
        code,
        message: message.to_string(),
        label: label.to_string(),
        help,
        span,
    }
}

/// Removes the innermost entry whose key or value covers `span`; returns the span of the table
/// it was removed from and the key name, or `None` when nothing could be pruned.
fn prune<'i>(table: &mut DeTable<'i>, span: &Range<usize>) -> Option<(Range<usize>, String)> {
    let hit = table.iter().find_map(|(k, v)| {
        let hit = covers(&k.span(), span) || value_covers(v, span);
        hit.then(|| k.get_ref().to_string())
    })?;
    let key_hit = table
        .iter()
        .any(|(k, _)| k.get_ref().as_ref() == hit.as_str() && covers(&k.span(), span));
    let descend = if key_hit {
        None
    } else {
        let (_, value) = table
            .iter_mut()
            .find(|(k, _)| k.get_ref().as_ref() == hit.as_str())?;
        let value_span = value.span();
        prune_value(value.get_mut(), span).map(|r| (r, value_span))
    };
    match descend {
        Some((Some(done), _)) => Some(done),
        _ => {
            let key_span = table
                .iter()
                .find(|(k, _)| k.get_ref().as_ref() == hit.as_str())
                .map(|(k, _)| k.span())
                .unwrap_or(0..0);
            table.remove(hit.as_str());
            Some((key_span, hit))
        }
    }
}

/// `Some(Some(r))`: pruned inside; `Some(None)`/`None`: the caller removes the whole value.
fn prune_value<'i>(
    value: &mut DeValue<'i>,
    span: &Range<usize>,
) -> Option<Option<(Range<usize>, String)>> {
    match value {
        DeValue::Table(t) => Some(prune(t, span)),
        DeValue::Array(items) => {
            let pos = items
                .iter()
                .position(|item| value_covers(item, span) || item.span().start == span.start)?;
            let element_span = items[pos].span();
            let inner = match items.as_mut()[pos].get_mut() {
                DeValue::Table(t) if !is_table_header(&element_span, span) => prune(t, span),
                _ => None,
            };
            if inner.is_some() {
                return Some(inner);
            }
            let kept: toml::de::DeArray<'i> =
                std::mem::replace(items, std::iter::empty().collect())
                    .into_iter()
                    .enumerate()
                    .filter_map(|(i, item)| (i != pos).then_some(item))
                    .collect();
            *items = kept;
            Some(Some((element_span, String::new())))
        }
        _ => None,
    }
}

fn is_table_header(element: &Range<usize>, span: &Range<usize>) -> bool {
    element == span
}

/// Whether a value's text covers `span`. Array-of-tables elements span only their header, so
/// their entries are searched too.
fn value_covers(value: &Spanned<DeValue<'_>>, span: &Range<usize>) -> bool {
    if covers(&value.span(), span) {
        return true;
    }
    match value.get_ref() {
        DeValue::Table(t) => t
            .iter()
            .any(|(k, v)| covers(&k.span(), span) || value_covers(v, span)),
        DeValue::Array(items) => items.iter().any(|item| value_covers(item, span)),
        _ => false,
    }
}

fn covers(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end && outer.start < outer.end
}
