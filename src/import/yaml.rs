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

use super::error::ImportError;
use super::k8s_objects::{MapWant, Want};
use super::limits::{MAX_ALIAS_VALUES, MAX_NESTING};
use super::tree::{Node, Pos, Sink, Value};

/// The help line of malformed YAML.
const YAML_HELP: &str = "expected a Kubernetes object (Node, Pod, NodeResourceTopology) or a `kind: List` of them, as `kubectl get … -o yaml|json` writes";

/// Reads every document of the YAML text of the `file`-th input into `sink`.
pub fn read(file: usize, text: &str, sink: &mut dyn Sink) -> Result<(), ImportError> {
    match block::read(text, sink)? {
        block::Outcome::Done => Ok(()),
        block::Outcome::Fallback { items } => {
            let mut rest = Unread { sink, items };
            read_events(file, text, &mut rest)
        }
    }
}

/// The sink of a reading that follows the block reader: the items it handed on (the first
/// `items` of document 1) are not handed on again.
struct Unread<'s> {
    sink: &'s mut dyn Sink,
    items: usize,
}

impl Sink for Unread<'_> {
    fn item(&mut self, document: usize, index: usize, node: Node) -> Result<(), ImportError> {
        if document == 1 && index <= self.items {
            return Ok(());
        }
        self.sink.item(document, index, node)
    }

    fn document(
        &mut self,
        document: usize,
        rest: Node,
        items: Option<usize>,
    ) -> Result<(), ImportError> {
        self.sink.document(document, rest, items)
    }
}

/// Reads every document with the general parser.
fn read_events(file: usize, text: &str, sink: &mut dyn Sink) -> Result<(), ImportError> {
    let mut r = Reader {
        file,
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
        let mut rest = Vec::new();
        let mut items = None;
        let mut want = MapWant::new(Want::Object);
        loop {
            let (event, span) = self.next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            let key = self.key(event, span)?;
            let streams = key == "items"
                && items.is_none()
                && matches!(self.peek()?.0, Event::SequenceStart(0, _));
            if streams {
                self.next()?;
                let mut n = 0;
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    let item = self.build(event, span, 2, Want::Object)?;
                    n += 1;
                    sink.item(document, n, item)?;
                }
                items = Some(n);
            } else {
                let (event, span) = self.next()?;
                let value = self.entry(event, span, 1, &mut want, &key)?;
                rest.push((key, value));
            }
        }
        sink.document(
            document,
            Node {
                at,
                value: Value::Map(rest),
            },
            items,
        )
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
        if depth >= MAX_NESTING {
            return Err(ImportError::at(
                self.file,
                at.line,
                Some(at.column),
                format!(
                    "values nest deeper than {MAX_NESTING} levels, coplan's limit for an export"
                ),
            )
            .with(
                "too deep",
                "Kubernetes objects nest about 15 deep; docs/spec.md, \"Limits\", lists the limits",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::import::tree::collected::Collect;

    fn collect(text: &str) -> Result<Collect, ImportError> {
        Collect::from(read, text)
    }

    #[test]
    fn documents_and_list_items_keep_their_places() {
        let text = "# header\n---\nkind: List\nitems:\n- kind: Node\n  metadata:\n    name: a\n- kind: Pod\n---\n# only a comment\n---\nkind: Pod\nspec:\n  priority: 5\n...\n";
        let c = collect(text).expect("valid");
        assert_eq!(c.items.len(), 2);
        assert_eq!(c.items[0].2.at, Pos { line: 5, column: 3 });
        let name = c.items[0]
            .2
            .get("metadata")
            .and_then(|m| m.get("name"))
            .expect("name");
        assert_eq!(
            name.at,
            Pos {
                line: 7,
                column: 11
            }
        );
        assert_eq!(c.documents.len(), 2);
        assert_eq!(c.documents[0].2, Some(2));
        assert_eq!(c.documents[1].0, 2);
        assert_eq!(
            c.documents[1].1.at,
            Pos {
                line: 12,
                column: 1
            }
        );
    }

    #[test]
    fn aliases_and_merges_expand() {
        let c = collect("base: &b {cpu: \"8\", gpu: 1}\nnode:\n  <<: *b\n  gpu: 2\ncopy: *b\n")
            .expect("valid");
        let doc = &c.documents[0].1;
        let node = doc.get("node").expect("node");
        assert_eq!(node.get("cpu").and_then(Node::as_str), Some("8"));
        assert_eq!(node.get("gpu").and_then(Node::as_str), Some("2"));
        assert_eq!(
            doc.get("copy")
                .and_then(|c| c.get("cpu"))
                .map(|n| n.at.line),
            Some(1)
        );
    }

    #[test]
    fn a_billion_laughs_is_refused_and_honest_values_are_not_counted() {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            text.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 9].join(",")
            ));
            prev = name;
        }
        match collect(&text) {
            Err(ImportError::At { message, .. }) => {
                assert!(message.contains("1000000"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let honest: String = (0..300_000).map(|i| format!("- {i}\n")).collect();
        let c = collect(&format!("items:\n{honest}")).expect("honest values");
        assert_eq!(c.items.len(), 300_000);
    }

    /// What the block reader and the fallback hand on, against the general reader alone:
    /// the same items, documents and errors.
    fn same_as_general(text: &str) -> bool {
        let general = Collect::from(read_events, text);
        let both = collect(text);
        match (&general, &both) {
            (Ok(g), Ok(b)) => {
                assert_eq!(g.items, b.items, "{text}");
                assert_eq!(g.documents, b.documents, "{text}");
            }
            (Err(g), Err(b)) => assert_eq!(format!("{g:?}"), format!("{b:?}"), "{text}"),
            _ => panic!("{text}: {general:?} against {both:?}"),
        }
        struct Nothing;
        impl Sink for Nothing {
            fn item(&mut self, _: usize, _: usize, _: Node) -> Result<(), ImportError> {
                Ok(())
            }
            fn document(&mut self, _: usize, _: Node, _: Option<usize>) -> Result<(), ImportError> {
                Ok(())
            }
        }
        matches!(block::read(text, &mut Nothing), Ok(block::Outcome::Done))
    }

    const KUBECTL: &str = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    annotations:\n      a: \"0\"\n    labels:\n      nvidia.com/gpu.product: H100\n      empty: \"\"\n    name: n1\n    managedFields:\n    - apiVersion: v1\n      fieldsV1:\n        f:metadata:\n          .: {}\n          \"k:{\\\"name\\\":\\\"0\\\"}\":\n            .: {}\n      manager: kubelet\n  spec:\n    taints:\n    - effect: NoSchedule\n      key: k\n    podCIDRs: []\n  status:\n    allocatable:\n      cpu: \"64\"\n      nvidia.com/gpu: \"8\"\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    namespace: default\n    labels:\n      app: x\n  spec:\n    containers:\n    - args:\n      - --port=80\n      - -v\n      image: 'repo/img:1.0'\n      name: c\n      resources:\n        requests:\n          cpu: 500m\n          nvidia.com/gpu: 1\n    nodeName: n1\n    priority: -5\n  status:\n    phase: Running\n    qosClass: Burstable\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";

    #[test]
    fn the_block_reader_reads_kubectl_style_as_the_general_reader_does() {
        assert!(same_as_general(KUBECTL));
        for text in [
            "a: 1\nitems: []\nkind: List\n",
            "kind: Pod\nspec:\n  containers:\n  - name: c\n    args:\n    - - x\n      - y\n    - {}\n    - []\n    - 'it''s'\n",
            "items:\n  - kind: Pod\n    metadata:\n      name: a\n  - kind: Pod\nkind: List",
            "kind: Node\nmetadata:\n  labels:\n    a: \"x\\ty\\\\z\\\"\"\n    b: http://x:80/y\n    c: a#b\n",
            "kind: Pod\nspec:\n  list:\n    - a\n    - b\n  next: 1\n",
        ] {
            assert!(same_as_general(text), "{text}");
        }
    }

    #[test]
    fn anything_else_is_read_by_the_general_reader_with_the_same_result() {
        let lines: Vec<&str> = KUBECTL.lines().collect();
        // Each line of a kubectl export changed into something the block reader does not
        // read, or into an error, at every place.
        let changes: [fn(&str) -> String; 14] = [
            |l| format!("{l} # comment"),
            |l| format!("{l}\n"),
            |l| l.replacen(": ", ":  ", 1),
            |l| l.replacen(": ", ": &a ", 1),
            |l| l.replacen(": ", ": !!str ", 1),
            |l| l.replacen("- ", "-\t", 1),
            |l| l.replacen(' ', "\t", 1),
            |l| format!("{l} é"),
            |l| format!("{l}\n  continued"),
            |l| format!("{l}\n---\nkind: Pod"),
            |l| l.replacen(": ", ": [1, 2]", 1),
            |l| l.replacen(": ", ": |\n  text", 1),
            |l| l.replacen(':', "", 1),
            |l| format!(" {l}"),
        ];
        let mut fast = 0;
        for (i, _) in lines.iter().enumerate() {
            for change in changes {
                let mut changed = lines.clone();
                let new = change(lines[i]);
                changed[i] = &new;
                let text = changed.join("\n");
                fast += usize::from(same_as_general(&text));
            }
        }
        // Some changes leave text the block reader reads (a trailing comment-free blank line
        // is not among them); most do not.
        assert!(fast < lines.len() * 14 / 2, "{fast}");
    }

    #[test]
    fn scalars_and_keys_at_the_edge_of_the_subset_read_as_the_general_reader_reads_them() {
        for text in [
            "a: x]\n",
            "a: x{y}\n",
            "a: x,y\n",
            "a: 'x'\n",
            "a: \"\"\n",
            "a: ''\n",
            "a: x:y\n",
            "a: x #y\n",
            "a: x#y\n",
            "'a': 1\n",
            "\"a\": 1\n",
            "a: -1\n",
            "a: -\n",
            "a: --x\n",
            "a: ~\n",
            "a: null\n",
            "a: \"\\x41\"\n",
            "a: \"x\\\"y\"\n",
            "f:metadata: {}\n",
            "a:b: c\n",
            "a: b: c\n",
            "a: @x\n",
            "a: %x\n",
            "a: `x\n",
            "a: ?x\n",
            "a: :x\n",
            "a: !x\n",
            "a: *x\n",
            "a: &x y\n",
            "a: |\n  x\n",
            "a: {}\nb: []\n",
            "a: {b: 1}\n",
            "a: [1]\n",
            "- a\n",
            "a: 1",
            "a:\n- 1\n- 2",
            "a:\n  - 1\n  - 2\nb: 3\n",
            "a:\n  - 1\n b: 3\n",
            "a:\n  b: 1\n c: 2\n",
            "a: 1\n  b: 2\n",
            "a: \"x\" y\n",
            "a: 'x' : y\n",
            "a:  x\n",
            "items:\n- kind: Pod\n-\n",
            "items:\n- - 1\n  - 2\n- 3\n",
            "items:\n- a: 1\n  b:\n  - c\n  - d\n",
            "items: []\n",
            "items: [1]\n",
            "kind: List\nitems:\n- kind: Pod\nitems:\n- kind: Node\n",
            "<<: {}\n",
            "a:\n  <<: {}\n",
            "---\na: 1\n",
            "a: 1\n...\n",
            "a: 1\n# end\n",
        ] {
            same_as_general(text);
        }
    }

    /// Compares the block reader with the general one on a large export:
    /// `COPLAN_YAML_DIFF=FILE cargo test --release --lib yaml -- --ignored`.
    #[test]
    #[ignore]
    fn the_block_reader_matches_the_general_reader_on_a_file() {
        use std::hash::{Hash, Hasher};
        let Ok(path) = std::env::var("COPLAN_YAML_DIFF") else {
            return;
        };
        let text = std::fs::read_to_string(path).expect("readable");
        struct Hashes(Vec<u64>);
        impl Sink for Hashes {
            fn item(&mut self, d: usize, i: usize, node: Node) -> Result<(), ImportError> {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                format!("{d} {i} {node:?}").hash(&mut h);
                self.0.push(h.finish());
                Ok(())
            }
            fn document(
                &mut self,
                d: usize,
                node: Node,
                n: Option<usize>,
            ) -> Result<(), ImportError> {
                self.item(d, n.unwrap_or(0), node)
            }
        }
        let mut fast = Hashes(Vec::new());
        assert!(matches!(
            block::read(&text, &mut fast),
            Ok(block::Outcome::Done)
        ));
        let mut general = Hashes(Vec::new());
        read_events(0, &text, &mut general).expect("valid");
        assert_eq!(fast.0.len(), general.0.len());
        assert!(fast.0 == general.0);
    }

    #[test]
    fn malformed_yaml_is_located() {
        match collect("a: 1\nb: [1, 2\nc: 3\n") {
            Err(ImportError::At { line, .. }) => assert!(line >= 2, "{line}"),
            other => panic!("{other:?}"),
        }
    }
}
