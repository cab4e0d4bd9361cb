//! The block style `kubectl … -o yaml` writes, read line by line without the general YAML
//! parser, which costs most of the time of a large import: one document, a top-level block
//! map, block maps and block sequences (indentless `- ` under a key as kubectl writes them),
//! plain, double- and single-quoted scalars on one line, and the empty flow collections `{}`
//! and `[]`. Only printable ASCII is read here.
//!
//! Anything else (comments, blank lines, tabs, multi-line scalars, block scalars, anchors,
//! aliases, tags, flow collections with content, `---`, merge keys, text this reader cannot
//! vouch for) stops it, and the general reader (`yaml.rs`) reads the file from the start,
//! handing on only the items this one did not: the trees, places and errors are the general
//! reader's by construction. This reader builds exactly the trees the general one builds
//! (the same values, the same places: a sequence of kubectl's indentless style starts where
//! its first item does), which the tests compare on many texts.
//!
//! An item is handed on only once the next item (or the end of the document) has been read:
//! the general parser looks ahead a token or two before it ends an item, and an error it
//! finds there would come before that item's own errors; holding the item back until the
//! next one is read in full keeps the order of what a file with several faults reports.

use crate::import::document::DocumentMap;
use crate::import::error::ImportError;
use crate::import::fields::{MapWant, Want};
use crate::import::limits::MAX_NESTING;
use crate::import::scan::{ONES, run_end};
use crate::import::tree::{Node, Pos, Sink, Value};

/// How far this reader got.
pub(super) enum Outcome {
    /// The whole text read and handed on.
    Done,
    /// Stopped at something outside the subset it reads; the first `items` items of the
    /// first document's `items` were handed on (and nothing else).
    Fallback {
        /// Items handed on.
        items: usize,
    },
}

/// Why reading stopped.
enum Stop {
    /// Outside the subset (or malformed): the general reader takes over.
    Bail,
    /// The sink refused an item: the import's error.
    Sink(ImportError),
}

type R<T> = Result<T, Stop>;

/// One line of the text: where its content starts and ends (excluding the newline) and its
/// indentation.
#[derive(Clone, Copy)]
struct Line {
    indent: usize,
    start: usize,
    end: usize,
}

/// What is made of a value: built under a [`Want`], or only checked (left [`Value::Skipped`]).
#[derive(Clone, Copy)]
enum Mode {
    Build(Want),
    Skip,
}

/// Reads `text` into `sink` when it is in the subset; see [`Outcome`].
pub(super) fn read(text: &str, sink: &mut dyn Sink) -> Result<Outcome, ImportError> {
    let mut r = Reader {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        cur: None,
        pending: None,
        delivered: 0,
    };
    match r.document(sink) {
        Ok(()) => Ok(Outcome::Done),
        Err(Stop::Bail) => Ok(Outcome::Fallback { items: r.delivered }),
        Err(Stop::Sink(e)) => Err(e),
    }
}

struct Reader<'a> {
    b: &'a [u8],
    /// Start of the current line.
    i: usize,
    /// 1-based number of the current line.
    line: usize,
    /// The current line, once scanned.
    cur: Option<Option<Line>>,
    /// The last item read, not yet handed on.
    pending: Option<(usize, Node)>,
    /// Items handed on.
    delivered: usize,
}

impl Reader<'_> {
    /// The current line (`None` at the end of the text); a line this reader does not read
    /// (blank, a comment, a tab, a character outside printable ASCII, a document marker)
    /// stops it.
    fn current(&mut self) -> R<Option<Line>> {
        if let Some(l) = self.cur {
            return Ok(l);
        }
        let b = self.b;
        if self.i >= b.len() {
            self.cur = Some(None);
            return Ok(None);
        }
        let mut p = self.i;
        while p < b.len() && b[p] == b' ' {
            p += 1;
        }
        let start = p;
        p = printable_run(b, p);
        if p < b.len() && b[p] != b'\n' {
            return Err(Stop::Bail);
        }
        let end = p;
        if start == end || b[start] == b'#' || b[end - 1] == b' ' {
            return Err(Stop::Bail);
        }
        let indent = start - self.i;
        if indent == 0 && (b[start..end].starts_with(b"---") || b[start..end].starts_with(b"...")) {
            return Err(Stop::Bail);
        }
        let l = Some(Line { indent, start, end });
        self.cur = Some(l);
        Ok(l)
    }

    /// Moves to the next line.
    fn advance(&mut self, l: Line) {
        self.i = if l.end < self.b.len() {
            l.end + 1
        } else {
            self.b.len()
        };
        self.line += 1;
        self.cur = None;
    }

    fn pos(&self, l: Line, p: usize) -> Pos {
        Pos {
            line: self.line,
            column: p - (l.start - l.indent) + 1,
        }
    }

    fn hand_on(&mut self, sink: &mut dyn Sink, next: Option<(usize, Node)>) -> R<()> {
        if let Some((index, node)) = self.pending.take() {
            sink.item(1, index, node).map_err(Stop::Sink)?;
            self.delivered = index;
        }
        self.pending = next;
        Ok(())
    }

    /// The document: a top-level map whose `items` sequence is handed on item by item.
    fn document(&mut self, sink: &mut dyn Sink) -> R<()> {
        let Some(first) = self.current()? else {
            return Err(Stop::Bail);
        };
        if first.indent != 0 {
            return Err(Stop::Bail);
        }
        let at = self.pos(first, first.start);
        let mut top = DocumentMap::new();
        while let Some(l) = self.current()? {
            if l.indent != 0 {
                return Err(Stop::Bail);
            }
            let (key, after) = self.key(l, l.start, true)?.ok_or(Stop::Bail)?;
            let key = key.ok_or(Stop::Bail)?;
            if top.streams(&key) && self.is_sequence(l, after)? {
                top.streamed(self.streamed(l, after, sink)?);
            } else {
                let mode = top.want.key(&key).map_or(Mode::Skip, Mode::Build);
                let v = self.value(l, after, 0, 1, mode)?;
                if let Mode::Build(_) = mode {
                    top.want.read(&key, &v);
                }
                top.keep(key, v);
            }
        }
        self.hand_on(sink, None)?;
        top.end(1, at, sink).map_err(Stop::Sink)
    }

    /// Whether the value after a key's `:` (at `after` on line `l`) is a sequence.
    fn is_sequence(&mut self, l: Line, after: usize) -> R<bool> {
        if after < l.end {
            return Ok(&self.b[after..l.end] == b" []");
        }
        let key_indent = l.indent;
        self.advance(l);
        let next = self.current()?;
        // Not consumed: the caller reads the value from here.
        self.retreat(l);
        Ok(next.is_some_and(|n| n.indent >= key_indent && self.is_entry(n, n.start)))
    }

    /// Back to line `l` (after a look at the next one).
    fn retreat(&mut self, l: Line) {
        self.i = l.start - l.indent;
        self.line -= 1;
        self.cur = Some(Some(l));
    }

    /// Whether a sequence entry (`- `) starts at `p`.
    fn is_entry(&self, l: Line, p: usize) -> bool {
        self.b[p] == b'-' && (p + 1 == l.end || self.b[p + 1] == b' ')
    }

    /// The top-level `items`, item by item; how many.
    fn streamed(&mut self, l: Line, after: usize, sink: &mut dyn Sink) -> R<usize> {
        if after < l.end {
            // `items: []`
            self.advance(l);
            return Ok(0);
        }
        let key_indent = l.indent;
        self.advance(l);
        let Some(first) = self.current()? else {
            return Err(Stop::Bail);
        };
        let indent = first.indent;
        if indent < key_indent {
            return Err(Stop::Bail);
        }
        let mut n = 0;
        while let Some(l) = self.current()? {
            if l.indent != indent || !self.is_entry(l, l.start) {
                break;
            }
            let item = self.entry_item(l, 2, Mode::Build(Want::Object))?;
            n += 1;
            self.hand_on(sink, Some((n, item)))?;
        }
        self.after_sequence(indent, key_indent)?;
        Ok(n)
    }

    /// After a block sequence at `indent` under a key at `key_indent`: what follows must end
    /// it (a line less indented, or, for an indentless one, a key at the same indentation).
    fn after_sequence(&mut self, indent: usize, key_indent: usize) -> R<()> {
        match self.current()? {
            Some(n) if n.indent > indent => Err(Stop::Bail),
            Some(n) if n.indent == indent && indent != key_indent => Err(Stop::Bail),
            _ => Ok(()),
        }
    }

    /// The value after a key's `:` at `after` on line `l` (the key indented `key_indent`).
    fn value(
        &mut self,
        l: Line,
        after: usize,
        key_indent: usize,
        depth: usize,
        mode: Mode,
    ) -> R<Node> {
        if after < l.end {
            // `key: value` on one line.
            let p = after + 1;
            if self.b[p] == b' ' {
                // Two spaces: fine for YAML, not written by kubectl.
                return Err(Stop::Bail);
            }
            if self.key(l, p, false)?.is_some() || self.is_entry(l, p) {
                return Err(Stop::Bail);
            }
            let node = self.inline(l, p, depth, mode)?;
            self.advance(l);
            return Ok(node);
        }
        self.advance(l);
        let Some(n) = self.current()? else {
            return Err(Stop::Bail);
        };
        if n.indent > key_indent {
            if self.is_entry(n, n.start) {
                self.sequence(n.indent, key_indent, depth, mode, false)
            } else {
                self.map(n.indent, depth, mode)
            }
        } else if n.indent == key_indent && self.is_entry(n, n.start) {
            self.sequence(n.indent, key_indent, depth, mode, true)
        } else {
            // `key:` with nothing: a null, placed where the general parser places it.
            Err(Stop::Bail)
        }
    }

    /// A block sequence whose entries are at `indent` (the current line is the first);
    /// `indentless` when it is at its key's indentation (kubectl's style), so that it starts
    /// where its first item does rather than at its first `-`.
    fn sequence(
        &mut self,
        indent: usize,
        key_indent: usize,
        depth: usize,
        mode: Mode,
        indentless: bool,
    ) -> R<Node> {
        if depth >= MAX_NESTING {
            return Err(Stop::Bail);
        }
        let Some(first) = self.current()? else {
            return Err(Stop::Bail);
        };
        let dash = self.pos(first, first.start);
        let inner = match mode {
            Mode::Build(w) => Mode::Build(w.items()),
            Mode::Skip => Mode::Skip,
        };
        let mut items = Vec::new();
        let mut at = None;
        while let Some(l) = self.current()? {
            if l.indent != indent || !self.is_entry(l, l.start) {
                break;
            }
            let item = self.entry_item(l, depth + 1, inner)?;
            at.get_or_insert(item.at);
            if let Mode::Build(_) = mode {
                items.push(item);
            }
        }
        self.after_sequence(indent, key_indent)?;
        let at = if indentless {
            at.ok_or(Stop::Bail)?
        } else {
            dash
        };
        Ok(Node {
            at,
            value: match mode {
                Mode::Build(_) => Value::Seq(items),
                Mode::Skip => Value::Skipped,
            },
        })
    }

    /// The item of the entry (`- …`) on line `l`.
    fn entry_item(&mut self, l: Line, depth: usize, mode: Mode) -> R<Node> {
        let p = l.start + 2;
        if p >= l.end || self.b[p] == b' ' {
            return Err(Stop::Bail);
        }
        let column = p - (l.start - l.indent);
        if self.is_entry(l, p) {
            // `- - x`: a sequence in a sequence, its entries at the inner `-`.
            let inner = Line {
                indent: column,
                start: p,
                end: l.end,
            };
            self.cur = Some(Some(inner));
            return self.sequence(column, l.indent, depth, mode, false);
        }
        if self.key(l, p, false)?.is_some() {
            // `- key: value`: a map whose keys are at the first key's column.
            let inner = Line {
                indent: column,
                start: p,
                end: l.end,
            };
            self.cur = Some(Some(inner));
            return self.map(column, depth, mode);
        }
        let node = self.inline(l, p, depth, mode)?;
        self.advance(l);
        Ok(node)
    }

    /// A block map whose keys are at `indent` (the current line is the first).
    fn map(&mut self, indent: usize, depth: usize, mode: Mode) -> R<Node> {
        if depth >= MAX_NESTING {
            return Err(Stop::Bail);
        }
        let Some(first) = self.current()? else {
            return Err(Stop::Bail);
        };
        let at = self.pos(first, first.start);
        let mut want = match mode {
            Mode::Build(w) => Some(MapWant::new(w)),
            Mode::Skip => None,
        };
        let mut entries = Vec::new();
        while let Some(l) = self.current()? {
            if l.indent < indent {
                break;
            }
            if l.indent > indent || self.is_entry(l, l.start) {
                return Err(Stop::Bail);
            }
            let (key, after) = self.key(l, l.start, want.is_some())?.ok_or(Stop::Bail)?;
            match (&mut want, key) {
                (Some(want), Some(key)) => {
                    let m = want.key(&key).map_or(Mode::Skip, Mode::Build);
                    let v = self.value(l, after, indent, depth + 1, m)?;
                    if let Mode::Build(_) = m {
                        want.read(&key, &v);
                    }
                    entries.push((key, v));
                }
                _ => {
                    self.value(l, after, indent, depth + 1, Mode::Skip)?;
                }
            }
        }
        Ok(Node {
            at,
            value: match mode {
                Mode::Build(_) => Value::Map(entries),
                Mode::Skip => Value::Skipped,
            },
        })
    }

    /// A value that ends its line: a scalar, `{}` or `[]`, starting at `p`.
    fn inline(&mut self, l: Line, p: usize, depth: usize, mode: Mode) -> R<Node> {
        let at = self.pos(l, p);
        let rest = &self.b[p..l.end];
        let build = matches!(mode, Mode::Build(_));
        let value = match rest[0] {
            b'{' | b'[' => {
                if depth >= MAX_NESTING || !(rest == b"{}" || rest == b"[]") {
                    return Err(Stop::Bail);
                }
                match (build, rest[0]) {
                    (false, _) => Value::Skipped,
                    (true, b'{') => Value::Map(Vec::new()),
                    (true, _) => Value::Seq(Vec::new()),
                }
            }
            b'"' | b'\'' => {
                let (text, end) = self.quoted(p, l.end, build)?;
                if end != l.end {
                    return Err(Stop::Bail);
                }
                match text {
                    Some(text) => Value::Scalar { text, plain: false },
                    None => Value::Skipped,
                }
            }
            _ => {
                if !plain_start(rest) || rest.windows(2).any(|w| w == b" #") {
                    return Err(Stop::Bail);
                }
                if build {
                    Value::Scalar {
                        text: ascii(rest),
                        plain: true,
                    }
                } else {
                    Value::Skipped
                }
            }
        };
        Ok(Node { at, value })
    }

    /// A map key at `p` on line `l` followed by `:` and a space or the end of the line: its
    /// text (when `build`) and where the `:` ends; `None` when no key starts there.
    #[allow(clippy::type_complexity)]
    fn key(&self, l: Line, p: usize, build: bool) -> R<Option<(Option<String>, usize)>> {
        let b = self.b;
        let colon_ends =
            |q: usize| q < l.end && b[q] == b':' && (q + 1 == l.end || b[q + 1] == b' ');
        match b[p] {
            b'"' | b'\'' => {
                let (text, end) = self.quoted(p, l.end, build)?;
                if colon_ends(end) {
                    Ok(Some((text, end + 1)))
                } else {
                    Ok(None)
                }
            }
            _ => {
                let mut q = p;
                loop {
                    match b[q..l.end].iter().position(|&c| c == b':') {
                        None => return Ok(None),
                        Some(at) if colon_ends(q + at) => {
                            q += at;
                            break;
                        }
                        Some(at) => q += at + 1,
                    }
                }
                let key = &b[p..q];
                if !plain_start(key)
                    || key.ends_with(b" ")
                    || key == b"<<"
                    || key.len() > 1000
                    || key.windows(2).any(|w| w == b" #")
                {
                    return Err(Stop::Bail);
                }
                Ok(Some((build.then(|| ascii(key)), q + 1)))
            }
        }
    }

    /// A quoted scalar on one line from its quote at `p`: its text (when `build`) and where
    /// it ends (past the closing quote).
    fn quoted(&self, p: usize, end: usize, build: bool) -> R<(Option<String>, usize)> {
        let b = self.b;
        let quote = b[p];
        let mut out = build.then(String::new);
        let mut run = p + 1;
        let mut q = p + 1;
        let push = |out: &mut Option<String>, s: &[u8]| {
            if let Some(o) = out {
                o.push_str(&ascii(s));
            }
        };
        loop {
            if q >= end {
                return Err(Stop::Bail);
            }
            let c = b[q];
            if c == quote {
                if quote == b'\'' && q + 1 < end && b[q + 1] == b'\'' {
                    push(&mut out, &b[run..=q]);
                    q += 2;
                    run = q;
                    continue;
                }
                push(&mut out, &b[run..q]);
                return Ok((out, q + 1));
            }
            if quote == b'"' && c == b'\\' {
                push(&mut out, &b[run..q]);
                let escaped = match b.get(q + 1) {
                    Some(b'"') => '"',
                    Some(b'\\') => '\\',
                    Some(b'/') => '/',
                    Some(b' ') => ' ',
                    Some(b'n') => '\n',
                    Some(b't') => '\t',
                    Some(b'r') => '\r',
                    Some(b'b') => '\u{8}',
                    Some(b'f') => '\u{c}',
                    Some(b'0') => '\0',
                    Some(b'a') => '\u{7}',
                    Some(b'v') => '\u{b}',
                    Some(b'e') => '\u{1b}',
                    _ => return Err(Stop::Bail),
                };
                if let Some(o) = &mut out {
                    o.push(escaped);
                }
                q += 2;
                run = q;
                continue;
            }
            q += 1;
        }
    }
}

/// Whether a plain scalar may start with the text's first character (and read as this
/// reader reads it): not an indicator, except `-` before a non-space (`-1`).
fn plain_start(text: &[u8]) -> bool {
    match text.first() {
        None => false,
        Some(b'-') => text.get(1).is_some_and(|&c| c != b' '),
        Some(c) => !b"?:,[]{}#&*!|>'\"%@`".contains(c),
    }
}

/// Text this reader has checked to be printable ASCII.
fn ascii(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first index from `i` of a byte outside printable ASCII (a newline among them), or the
/// length: eight bytes at a time.
fn printable_run(b: &[u8], i: usize) -> usize {
    let alarm = |w: u64| {
        let del = w ^ (ONES * 0x7f);
        // Below 0x20, 0x80 and above, or 0x7f.
        (w.wrapping_sub(ONES * 0x20) & !w) | w | (del.wrapping_sub(ONES) & !del)
    };
    run_end(b, i, alarm, |c| (0x20..0x7f).contains(&c))
}
