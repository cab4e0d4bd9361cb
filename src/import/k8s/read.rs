//! Reading a snapshot: the documents of every file parsed into objects, each with the place
//! it came from, so that every later error can point at the file, document and line; the
//! objects sorted by kind. Ignored fields are counted here, where the raw document is at hand.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use crate::import::error::ImportError;
use crate::import::k8s_objects::{Document, Object, Quantity, documents, ignored_fields};
use crate::import::quantity;
use crate::import::summary::ImportSummary;

/// Where an object came from: file, document, item, and the line it starts on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin {
    file: usize,
    document: usize,
    item: Option<usize>,
    line: usize,
}

impl Origin {
    fn describe(&self, files: &[(String, String)]) -> String {
        let item = self.item.map(|i| format!(", item {i}")).unwrap_or_default();
        format!("{}, document {}{item}", files[self.file].0, self.document)
    }
}

pub(super) struct NodeObject {
    pub(super) name: String,
    pub(super) origin: Origin,
    /// First line of the node's document (spans inside it count from there).
    pub(super) doc_line: usize,
    pub(super) object: Object,
}

pub(super) struct PodObject {
    pub(super) origin: Origin,
    pub(super) object: Object,
}

/// The located error of a value written at `at` (a line within the document), its message
/// naming the document (and the item of a List).
pub(super) fn at_span<T>(
    origin: &Origin,
    doc_line: usize,
    s: &Spanned<T>,
    message: String,
) -> ImportError {
    let item = origin
        .item
        .map(|i| format!(", item {i}"))
        .unwrap_or_default();
    ImportError::at(
        origin.file,
        doc_line + s.referenced.line() as usize - 1,
        Some(s.referenced.column() as usize),
        format!("document {}{item}: {message}", origin.document),
    )
}

/// A YAML parser's message without the location it repeats (relative to the document, which
/// would mislead in a multi-document file; the diagnostic shows the real one).
fn parser_message(text: &str) -> String {
    let first = text.lines().next().unwrap_or("malformed");
    let mut m = first.strip_prefix("error: ").unwrap_or(first);
    if m.starts_with("line ")
        && let Some((_, rest)) = m.split_once(": ")
    {
        m = rest;
    }
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

/// Reads every document of every file into objects with their origin; counts ignored fields.
pub(super) fn read_objects(
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Vec<(Origin, usize, Object)>, ImportError> {
    let mut out = Vec::new();
    for (fi, (_, text)) in files.iter().enumerate() {
        for (
            di,
            Document {
                text: doc,
                first_line,
            },
        ) in documents(text).into_iter().enumerate()
        {
            let document = di + 1;
            summary.read("documents", 1);
            let object: Object = serde_saphyr::from_str(doc).map_err(|e| {
                let (line, column) = e
                    .location()
                    .map(|l| (l.line() as usize, Some(l.column() as usize)))
                    .unwrap_or((1, None));
                let message = parser_message(&e.to_string());
                ImportError::at(
                    fi,
                    first_line + line.max(1) - 1,
                    column,
                    format!("document {document}: {message}"),
                )
                .with(
                    "malformed here",
                    "expected a Kubernetes object (Node, Pod, NodeResourceTopology) or a `kind: List` of them, as `kubectl get … -o yaml|json` writes",
                )
            })?;
            let generic: serde_json::Value =
                serde_saphyr::from_str(doc).unwrap_or(serde_json::Value::Null);
            let origin = Origin {
                file: fi,
                document,
                item: None,
                line: first_line,
            };
            if object.kind.as_deref() == Some("List") || !object.items.is_empty() {
                let generic_items = generic
                    .get("items")
                    .and_then(|v| v.as_array())
                    .cloned()
                    .unwrap_or_default();
                for (ii, item) in object.items.into_iter().enumerate() {
                    let origin = Origin {
                        item: Some(ii + 1),
                        line: first_line + item.referenced.line() as usize - 1,
                        ..origin
                    };
                    let kind = item.value.kind.clone().unwrap_or_default();
                    if let Some(g) = generic_items.get(ii) {
                        count_ignored(&kind, g, summary);
                    }
                    out.push((origin, first_line, item.value));
                }
            } else {
                let kind = object.kind.clone().unwrap_or_default();
                count_ignored(&kind, &generic, summary);
                out.push((origin, first_line, object));
            }
        }
    }
    Ok(out)
}

fn count_ignored(kind: &str, value: &serde_json::Value, summary: &mut ImportSummary) {
    if matches!(kind, "Node" | "Pod" | "NodeResourceTopology") {
        ignored_fields(kind, value, &mut summary.ignored_fields);
    }
}

/// A parsed quantity, or the located error of its text.
pub(super) fn parse_quantity(
    origin: &Origin,
    doc_line: usize,
    q: &Quantity,
    what: &str,
) -> Result<f64, ImportError> {
    let v = quantity::parse(&q.value.0).map_err(|e| {
        at_span(origin, doc_line, q, format!("{what}: {e}")).with(
            "not a quantity",
            "Kubernetes quantities are a number with an optional suffix: 64, 63500m, 512Mi, 1e3",
        )
    })?;
    if v < 0.0 {
        return Err(at_span(
            origin,
            doc_line,
            q,
            format!("{what} is negative: `{}`", q.value.0),
        )
        .with("negative", "resource quantities are at least 0"));
    }
    Ok(v)
}

/// The objects of a snapshot by kind: nodes and NRT objects by name, pods in input order
/// with the first line of their document.
pub(super) struct Snapshot {
    pub(super) nodes: BTreeMap<String, NodeObject>,
    pub(super) nrts: BTreeMap<String, (Origin, usize, Object)>,
    pub(super) pods: Vec<(PodObject, usize)>,
}

/// Sorts the objects by kind; a Node, Pod or NRT object without a name is an error, other
/// kinds are counted and skipped.
pub(super) fn sort_objects(
    objects: Vec<(Origin, usize, Object)>,
    files: &[(String, String)],
    summary: &mut ImportSummary,
) -> Result<Snapshot, ImportError> {
    let mut nodes: BTreeMap<String, NodeObject> = BTreeMap::new();
    let mut nrts: BTreeMap<String, (Origin, usize, Object)> = BTreeMap::new();
    let mut pods: Vec<(PodObject, usize)> = Vec::new();
    for (origin, doc_line, object) in objects {
        let kind = object.kind.clone().unwrap_or_default();
        summary.read(
            &format!(
                "objects.{}",
                if kind.is_empty() { "(no kind)" } else { &kind }
            ),
            1,
        );
        let name = object.metadata.name.clone();
        let missing_name = || {
            ImportError::at(
                origin.file,
                origin.line,
                None,
                format!("{}: a {kind} without metadata.name", origin.describe(files)),
            )
            .with(
                "no name",
                "every Node, Pod and NodeResourceTopology needs metadata.name",
            )
        };
        match kind.as_str() {
            "Node" => {
                let name = name.ok_or_else(missing_name)?;
                if nodes.contains_key(&name) {
                    summary.dropped("duplicate_nodes", 1);
                    summary.warn(format!(
                        "node `{name}` appears twice; the first ({}) is kept",
                        nodes[&name].origin.describe(files)
                    ));
                    continue;
                }
                nodes.insert(
                    name.clone(),
                    NodeObject {
                        name,
                        origin,
                        doc_line,
                        object,
                    },
                );
            }
            "NodeResourceTopology" => {
                let name = name.ok_or_else(missing_name)?;
                if nrts.contains_key(&name) {
                    summary.dropped("duplicate_nrt_objects", 1);
                    summary.warn(format!(
                        "NRT object `{name}` appears twice; the first is kept"
                    ));
                    continue;
                }
                nrts.insert(name, (origin, doc_line, object));
            }
            "Pod" => {
                name.as_ref().ok_or_else(missing_name)?;
                pods.push((PodObject { origin, object }, doc_line));
            }
            _ => summary.dropped("objects_of_other_kinds", 1),
        }
    }
    if nodes.is_empty() {
        return Err(ImportError::input(
            format!("no Node objects in {}", summary.files.join(", ")),
            Some("export the nodes too: `kubectl get nodes,pods -A -o yaml`".into()),
        ));
    }

    Ok(Snapshot { nodes, nrts, pods })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_messages_lose_their_document_relative_places() {
        assert_eq!(
            parser_message(
                "error: line 5 column 22: unexpected event: expected string scalar at line 5, column 22"
            ),
            "unexpected event: expected string scalar"
        );
        assert_eq!(parser_message("invalid i64"), "invalid i64");
    }
}
