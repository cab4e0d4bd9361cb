//! YAML exports (`kubectl … -o yaml`, multi-document streams) read event by event: each
//! document's top-level `items` sequence is handed on one item at a time as it is read, so a
//! List of any length is never held as a whole. Aliases are expanded (anchors are kept for
//! their document), and what they expand to is counted against [`MAX_ALIAS_VALUES`]: a
//! "billion laughs" document is refused after a million values, while honest values, written
//! out, are never counted.
//!
//! kubectl's own block style is read first by a reader of that subset alone (`block.rs`),
//! several times faster; on anything else it stops and this reader reads the file.

mod block;

use std::collections::HashMap;

use saphyr_parser_bw::{Event, Parser, ScalarStyle, ScanError, Span, StrInput};

use super::document::DocumentMap;
use super::error::ImportError;
use super::fields::{MapWant, Want};
use super::limits::{MAX_ALIAS_VALUES, check_nesting};
use super::tree::{Node, Pos, Sink, Value};

/// The help line of malformed YAML.
const YAML_HELP: &str = "expected a Kubernetes object (Node, Pod, NodeResourceTopology) or a `kind: List` of them, as `kubectl get … -o yaml|json` writes";

/// Reads every document of the YAML text of the `file`-th input into `sink`.
pub fn read(file: usize, text: &str, sink: &mut dyn Sink) -> Result<(), ImportError> {
    match block::read(text, sink)? {
        block::Outcome::Done => Ok(()),
        block::Outcome::Fallback { items } => read_events(file, text, sink, items),
    }
}

/// Reads every document with the general parser; the first `handed_on` items of the first
/// document's `items` are not handed on again (the block reader did).
fn read_events(
    file: usize,
    text: &str,
    sink: &mut dyn Sink,
    handed_on: usize,
) -> Result<(), ImportError> {
    let mut r = Reader {
        file,
        handed_on,
        parser: Parser::new_from_str(text),
        peeked: None,
        anchors: HashMap::new(),
        expanded: 0,
        built: 0,
    };
    let mut document = 0;
    loop {
        let (event, span) = r.next()?;
        match event {
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            Event::StreamEnd => return Ok(()),
            Event::DocumentStart(_) => {
                r.anchors.clear();
                r.expanded = 0;
                let (event, span) = r.next()?;
                match event {
                    // A document of only comments (or nothing) is no document.
                    Event::Scalar(ref t, ScalarStyle::Plain, 0, None)
                        if matches!(t.as_ref(), "" | "~" | "null") => {}
                    Event::MappingStart(0, _) => {
                        document += 1;
                        r.streamed_map(document, pos(&span), sink)?;
                    }
                    event => {
                        document += 1;
                        let node = r.build(event, span, 0, Want::Whole)?;
                        sink.document(document, node, None)?;
                    }
                }
            }
            _ => return Err(r.error(pos(&span), "unexpected YAML event".into())),
        }
    }
}

fn pos(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

struct Reader<'a> {
    file: usize,
    /// Items of the first document's `items` handed on before this reader started.
    handed_on: usize,
    parser: Parser<'a, StrInput<'a>>,
    peeked: Option<(Event<'a>, Span)>,
    /// Anchored values of the current document with their sizes (values, nested included).
    anchors: HashMap<usize, (Node, u64)>,
    /// Values produced by expanding aliases in the current document.
    expanded: u64,
    /// Values built so far (the size of an anchored value is the difference).
    built: u64,
}

impl<'a> Reader<'a> {
    fn error(&self, at: Pos, message: String) -> ImportError {
        ImportError::at(self.file, at.line, Some(at.column), message)
            .with("malformed here", YAML_HELP)
    }

    fn scan_error(&self, e: &ScanError) -> ImportError {
        let m = e.marker();
        self.error(
            Pos {
                line: m.line().max(1),
                column: m.col() + 1,
            },
            e.info().to_string(),
        )
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), ImportError> {
        if let Some(p) = self.peeked.take() {
            return Ok(p);
        }
        match self.parser.next_event() {
            Some(Ok(e)) => Ok(e),
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Ok((Event::StreamEnd, Span::default())),
        }
    }

    fn peek(&mut self) -> Result<&(Event<'a>, Span), ImportError> {
        if self.peeked.is_none() {
            let e = self.next()?;
            self.peeked = Some(e);
        }
        match &self.peeked {
            Some(p) => Ok(p),
            None => Err(ImportError::input("the YAML reader lost an event", None)),
        }
    }

    /// The top-level map of a document: its `items` sequence handed on item by item, its
    /// other entries kept.
    fn streamed_map(
        &mut self,
        document: usize,
        at: Pos,
        sink: &mut dyn Sink,
    ) -> Result<(), ImportError> {
        let mut top = DocumentMap::new();
        loop {
            let (event, span) = self.next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            let key = self.key(event, span)?;
            if top.streams(&key) && matches!(self.peek()?.0, Event::SequenceStart(0, _)) {
                self.next()?;
                let mut n = 0;
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    let item = self.build(event, span, 2, Want::Object)?;
                    n += 1;
                    if document != 1 || n > self.handed_on {
                        sink.item(document, n, item)?;
                    }
                }
                top.streamed(n);
            } else {
                let (event, span) = self.next()?;
                let value = self.entry(event, span, 1, &mut top.want, &key)?;
                top.keep(key, value);
            }
        }
        top.end(document, at, sink)
    }

    /// A map key: a scalar, or an alias of one.
    fn key(&mut self, event: Event<'a>, span: Span) -> Result<String, ImportError> {
        let at = pos(&span);
        match event {
            Event::Scalar(text, _, _, _) => Ok(text.into_owned()),
            Event::Alias(_) => match self.build(event, span, 0, Want::Whole)?.value {
                Value::Scalar { text, .. } => Ok(text),
                _ => Err(self.error(at, "a map key must be a scalar".into())),
            },
            _ => Err(self.error(at, "a map key must be a scalar".into())),
        }
    }

    /// The value of map key `key` that starts with `event`, built as `want` says (skipped when
    /// nothing reads it).
    fn entry(
        &mut self,
        event: Event<'a>,
        span: Span,
        depth: usize,
        want: &mut MapWant,
        key: &str,
    ) -> Result<Node, ImportError> {
        match want.key(key) {
            Some(w) => {
                let v = self.build(event, span, depth, w)?;
                want.read(key, &v);
                Ok(v)
            }
            None => {
                let at = pos(&span);
                self.skip(event, span, depth)?;
                Ok(Node {
                    at,
                    value: Value::Skipped,
                })
            }
        }
    }

    /// Reads the value that starts with `event` as [`Self::build`] does (every check, every
    /// alias counted, every anchor kept) without building what nothing reads.
    fn skip(&mut self, event: Event<'a>, span: Span, depth: usize) -> Result<(), ImportError> {
        let at = pos(&span);
        match event {
            Event::Scalar(_, _, 0, _) => {
                self.built += 1;
                Ok(())
            }
            Event::SequenceStart(0, _) => {
                self.nesting(depth, at)?;
                self.built += 1;
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        return Ok(());
                    }
                    self.skip(event, span, depth + 1)?;
                }
            }
            Event::MappingStart(0, _) => {
                self.nesting(depth, at)?;
                self.built += 1;
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        return Ok(());
                    }
                    let is_merge = matches!(&event, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
                    if !matches!(event, Event::Scalar(..)) {
                        self.key(event, span)?;
                    }
                    let (event, span) = self.next()?;
                    if is_merge {
                        let value = self.build(event, span, depth + 1, Want::Whole)?;
                        let bases = match value.value {
                            Value::Seq(v) => v,
                            other => vec![Node {
                                at: value.at,
                                value: other,
                            }],
                        };
                        if let Some(base) = bases.iter().find(|b| !matches!(b.value, Value::Map(_)))
                        {
                            return Err(self.error(base.at, "`<<` merges maps only".into()));
                        }
                    } else {
                        self.skip(event, span, depth + 1)?;
                    }
                }
            }
            // Anchored values and aliases: built, so that later aliases find them and what
            // they expand to is counted.
            event => self.build(event, span, depth, Want::Whole).map(|_| ()),
        }
    }

    /// The value that starts with `event`, at nesting `depth`, built as `want` says.
    fn build(
        &mut self,
        event: Event<'a>,
        span: Span,
        depth: usize,
        want: Want,
    ) -> Result<Node, ImportError> {
        let at = pos(&span);
        let before = self.built;
        self.built += 1;
        let (value, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                // `!!str 8` is text; other tags change nothing coplan reads.
                let is_str_tag = tag
                    .as_ref()
                    .is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str");
                let plain = matches!(style, ScalarStyle::Plain) && !is_str_tag;
                (
                    Value::Scalar {
                        text: text.into_owned(),
                        plain,
                    },
                    anchor,
                )
            }
            Event::SequenceStart(anchor, _) => {
                self.nesting(depth, at)?;
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.build(event, span, depth + 1, want.items())?);
                }
                (Value::Seq(items), anchor)
            }
            Event::MappingStart(anchor, _) => {
                self.nesting(depth, at)?;
                let mut entries: Vec<(String, Node)> = Vec::new();
                let mut merged: Vec<(String, Node)> = Vec::new();
                let mut want = MapWant::new(want);
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    let is_merge = matches!(&event, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
                    let key = self.key(event, span)?;
                    let (event, span) = self.next()?;
                    let value = if is_merge {
                        self.build(event, span, depth + 1, Want::Whole)?
                    } else {
                        self.entry(event, span, depth + 1, &mut want, &key)?
                    };
                    if is_merge {
                        // `<<: *base` (or a list of them): the base's entries, below the
                        // map's own, the first base first.
                        let bases = match value.value {
                            Value::Seq(v) => v,
                            other => vec![Node {
                                at: value.at,
                                value: other,
                            }],
                        };
                        for base in bases {
                            match base.value {
                                Value::Map(e) => merged.extend(e),
                                _ => {
                                    return Err(self.error(base.at, "`<<` merges maps only".into()));
                                }
                            }
                        }
                    } else {
                        entries.push((key, value));
                    }
                }
                for (k, v) in merged {
                    if !entries.iter().any(|(e, _)| *e == k) {
                        entries.push((k, v));
                    }
                }
                (Value::Map(entries), anchor)
            }
            Event::Alias(id) => {
                let Some((node, size)) = self.anchors.get(&id) else {
                    return Err(
                        self.error(at, "an alias of an anchor not defined before it".into())
                    );
                };
                let size = *size;
                if self.expanded + size > MAX_ALIAS_VALUES {
                    return Err(ImportError::at(
                        self.file,
                        at.line,
                        Some(at.column),
                        format!(
                            "aliases expand to more than {MAX_ALIAS_VALUES} values in this document, coplan's limit"
                        ),
                    )
                    .with(
                        "expanded here",
                        "a Kubernetes export needs no aliases; docs/spec.md, \"Limits\", lists the limits",
                    ));
                }
                self.expanded += size;
                self.built += size;
                let mut node = node.clone();
                node.at = at;
                return Ok(node);
            }
            _ => return Err(self.error(at, "unexpected YAML event".into())),
        };
        let node = Node { at, value };
        if anchor != 0 {
            self.anchors
                .insert(anchor, (node.clone(), self.built - before));
        }
        Ok(node)
    }

    fn nesting(&self, depth: usize, at: Pos) -> Result<(), ImportError> {
        check_nesting(self.file, depth, at)
    }
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
