//! JSON exports (`kubectl … -o json`, JSON Lines, concatenated objects) read one object at
//! a time: each top-level value is a document, and the items of a document's top-level
//! `items` array are handed on one by one as they are parsed, so that a List of any length
//! is never held as a whole. Every value keeps its line and column (counted in characters,
//! incrementally, so that a one-line file of a gigabyte costs no more than an indented one).

use super::error::ImportError;
use super::k8s_objects::{MapWant, Want};
use super::limits::MAX_NESTING;
use super::tree::{Node, Pos, Sink, Value};

/// Reads every document of the JSON text of the `file`-th input into `sink`.
pub fn read(file: usize, text: &str, sink: &mut dyn Sink) -> Result<(), ImportError> {
    let mut p = Parser {
        file,
        text,
        bytes: text.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
        cache: (0, 0),
    };
    // A byte-order mark is not part of the text.
    if text.starts_with('\u{feff}') {
        p.i = 3;
        p.line_start = 3;
        p.cache = (3, 0);
    }
    let mut document = 0;
    loop {
        p.skip_ws();
        if p.i >= p.bytes.len() {
            return Ok(());
        }
        document += 1;
        let at = p.pos();
        match p.bytes[p.i] {
            b'{' => p.streamed_object(document, at, sink)?,
            b'[' => {
                let node = p.value(0, Want::Whole)?;
                sink.document(document, node, None)?;
            }
            _ => {
                return Err(p.error(
                    at,
                    "expected `{` to start an object".into(),
                    "one JSON object per document: `kubectl get … -o json`, JSON Lines or objects one after another",
                ));
            }
        }
    }
}

struct Parser<'a> {
    file: usize,
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    line: usize,
    /// Byte offset of the current line's start.
    line_start: usize,
    /// (byte offset, characters from the line start to it): where the last column was counted.
    cache: (usize, usize),
}

impl Parser<'_> {
    /// The place of byte `self.i`: columns count characters from the line's start, resumed
    /// from the last place asked for on the same line.
    fn pos(&mut self) -> Pos {
        let (from, chars) = if self.cache.0 >= self.line_start && self.cache.0 <= self.i {
            self.cache
        } else {
            (self.line_start, 0)
        };
        let chars = chars
            + self.bytes[from..self.i]
                .iter()
                .filter(|&&b| (b & 0xC0) != 0x80)
                .count();
        self.cache = (self.i, chars);
        Pos {
            line: self.line,
            column: chars + 1,
        }
    }

    fn error(&self, at: Pos, message: String, help: &str) -> ImportError {
        ImportError::at(self.file, at.line, Some(at.column), message).with("malformed here", help)
    }

    fn error_here(&mut self, message: String) -> ImportError {
        let at = self.pos();
        self.error(
            at,
            message,
            "expected JSON as `kubectl get … -o json` writes it",
        )
    }

    fn skip_ws(&mut self) {
        let b = self.bytes;
        let mut i = self.i;
        while let Some(&c) = b.get(i) {
            match c {
                b' ' => {
                    i += 1;
                    // Indentation comes in runs (kubectl indents by four).
                    while let Some(chunk) = b.get(i..i + 8)
                        && let Ok(bytes) = <[u8; 8]>::try_from(chunk)
                        && u64::from_le_bytes(bytes) == u64::from_le_bytes([b' '; 8])
                    {
                        i += 8;
                    }
                }
                b'\t' | b'\r' => i += 1,
                b'\n' => {
                    i += 1;
                    self.line += 1;
                    self.line_start = i;
                }
                _ => break,
            }
        }
        self.i = i;
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), ImportError> {
        self.skip_ws();
        if self.bytes.get(self.i) == Some(&byte) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error_here(format!("expected {what}, found {}", self.found())))
        }
    }

    fn found(&self) -> String {
        match self.text.get(self.i..).and_then(|s| s.chars().next()) {
            None => "the end of the file".into(),
            Some(c) => format!("`{c}`"),
        }
    }

    /// The top-level object of a document: its `items` array streamed item by item, its
    /// other entries kept.
    fn streamed_object(
        &mut self,
        document: usize,
        at: Pos,
        sink: &mut dyn Sink,
    ) -> Result<(), ImportError> {
        self.i += 1; // `{`
        let mut rest = Vec::new();
        let mut items = None;
        let mut want = MapWant::new(Want::Object);
        self.skip_ws();
        if self.bytes.get(self.i) == Some(&b'}') {
            self.i += 1;
        } else {
            loop {
                self.skip_ws();
                let key = self.key()?;
                self.expect(b':', "`:` after the key")?;
                self.skip_ws();
                if key == "items" && items.is_none() && self.bytes.get(self.i) == Some(&b'[') {
                    items = Some(self.streamed_items(document, sink)?);
                } else {
                    let value = self.entry(1, &mut want, &key)?;
                    rest.push((key, value));
                }
                self.skip_ws();
                match self.bytes.get(self.i) {
                    Some(b',') => self.i += 1,
                    Some(b'}') => {
                        self.i += 1;
                        break;
                    }
                    _ => {
                        return Err(self.error_here(format!(
                            "expected `,` or `}}` after a value, found {}",
                            self.found()
                        )));
                    }
                }
            }
        }
        let node = Node {
            at,
            value: Value::Map(rest),
        };
        sink.document(document, node, items)
    }

    fn streamed_items(
        &mut self,
        document: usize,
        sink: &mut dyn Sink,
    ) -> Result<usize, ImportError> {
        self.i += 1; // `[`
        let mut n = 0;
        self.skip_ws();
        if self.bytes.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(0);
        }
        loop {
            let item = self.value(2, Want::Object)?;
            n += 1;
            sink.item(document, n, item)?;
            self.skip_ws();
            match self.bytes.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(n);
                }
                _ => {
                    return Err(self.error_here(format!(
                        "expected `,` or `]` after an item, found {}",
                        self.found()
                    )));
                }
            }
        }
    }

    fn key(&mut self) -> Result<String, ImportError> {
        if self.bytes.get(self.i) != Some(&b'"') {
            return Err(self.error_here(format!(
                "expected a key in double quotes, found {}",
                self.found()
            )));
        }
        self.string()
    }

    /// The value of map key `key` at nesting `depth`, built as `want` says (skipped when
    /// nothing reads it).
    fn entry(&mut self, depth: usize, want: &mut MapWant, key: &str) -> Result<Node, ImportError> {
        match want.key(key) {
            Some(w) => {
                let v = self.value(depth, w)?;
                want.read(key, &v);
                Ok(v)
            }
            None => self.skipped(depth),
        }
    }

    /// A value nothing reads: checked as [`Self::value`] checks it, not built. Where the quick
    /// check finds anything amiss, the value is read again by [`Self::value`], which says
    /// what and where.
    fn skipped(&mut self, depth: usize) -> Result<Node, ImportError> {
        self.skip_ws();
        let at = self.pos();
        let saved = (self.i, self.line, self.line_start, self.cache);
        if self.skip(depth) {
            return Ok(Node {
                at,
                value: Value::Skipped,
            });
        }
        (self.i, self.line, self.line_start, self.cache) = saved;
        self.value(depth, Want::Whole).map(|n| Node {
            at: n.at,
            value: Value::Skipped,
        })
    }

    /// Skips one value at nesting `depth`; `false` where it is not plainly valid.
    fn skip(&mut self, depth: usize) -> bool {
        self.skip_ws();
        match self.bytes.get(self.i) {
            Some(&open @ (b'{' | b'[')) => {
                if depth >= MAX_NESTING {
                    return false;
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.skip_ws();
                if self.bytes.get(self.i) == Some(&close) {
                    self.i += 1;
                    return true;
                }
                loop {
                    self.skip_ws();
                    if open == b'{' {
                        if self.bytes.get(self.i) != Some(&b'"') || !self.skip_string() {
                            return false;
                        }
                        self.skip_ws();
                        if self.bytes.get(self.i) != Some(&b':') {
                            return false;
                        }
                        self.i += 1;
                    }
                    if !self.skip(depth + 1) {
                        return false;
                    }
                    self.skip_ws();
                    match self.bytes.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(&b) if b == close => {
                            self.i += 1;
                            return true;
                        }
                        _ => return false,
                    }
                }
            }
            Some(b'"') => self.skip_string(),
            Some(b't' | b'f' | b'n') => {
                match ["true", "false", "null"]
                    .into_iter()
                    .find(|w| self.bytes[self.i..].starts_with(w.as_bytes()))
                {
                    Some(w) => {
                        self.i += w.len();
                        true
                    }
                    None => false,
                }
            }
            Some(b'-' | b'0'..=b'9') => match self.number_end() {
                Some(end) => {
                    self.i = end;
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Skips a string from its opening quote; `false` where [`Self::string`] might refuse it.
    fn skip_string(&mut self) -> bool {
        let b = self.bytes;
        let mut i = self.i + 1;
        let hex4 = |i: usize| -> Option<u32> {
            let digits = b.get(i..i + 4)?;
            let digits = std::str::from_utf8(digits).ok()?;
            u32::from_str_radix(digits, 16).ok()
        };
        loop {
            i = plain_run(b, i);
            let Some(&c) = b.get(i) else {
                return false;
            };
            match c {
                b'"' => {
                    self.i = i + 1;
                    return true;
                }
                b'\\' => match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') => {
                        let Some(first) = hex4(i + 2) else {
                            return false;
                        };
                        i += 6;
                        if (0xD800..0xDC00).contains(&first) {
                            if b.get(i..i + 2) != Some(b"\\u") {
                                return false;
                            }
                            match hex4(i + 2) {
                                Some(low) if (0xDC00..0xE000).contains(&low) => i += 6,
                                _ => return false,
                            }
                        } else if (0xDC00..0xE000).contains(&first) {
                            return false;
                        }
                    }
                    _ => return false,
                },
                _ => return false,
            }
        }
    }

    /// One value at nesting `depth` (the document's top level is 0), built as `want` says.
    fn value(&mut self, depth: usize, want: Want) -> Result<Node, ImportError> {
        self.skip_ws();
        let at = self.pos();
        let value = match self.bytes.get(self.i) {
            Some(b'{') => {
                self.nesting(depth, at)?;
                self.i += 1;
                let mut entries = Vec::new();
                let mut want = MapWant::new(want);
                self.skip_ws();
                if self.bytes.get(self.i) == Some(&b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key = self.key()?;
                        self.expect(b':', "`:` after the key")?;
                        let v = self.entry(depth + 1, &mut want, &key)?;
                        entries.push((key, v));
                        self.skip_ws();
                        match self.bytes.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => {
                                return Err(self.error_here(format!(
                                    "expected `,` or `}}` after a value, found {}",
                                    self.found()
                                )));
                            }
                        }
                    }
                }
                Value::Map(entries)
            }
            Some(b'[') => {
                self.nesting(depth, at)?;
                self.i += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.bytes.get(self.i) == Some(&b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1, want.items())?);
                        self.skip_ws();
                        match self.bytes.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => {
                                return Err(self.error_here(format!(
                                    "expected `,` or `]` after a value, found {}",
                                    self.found()
                                )));
                            }
                        }
                    }
                }
                Value::Seq(items)
            }
            Some(b'"') => Value::Scalar {
                text: self.string()?,
                plain: false,
            },
            Some(b't' | b'f' | b'n') => {
                let word = ["true", "false", "null"]
                    .into_iter()
                    .find(|w| self.bytes[self.i..].starts_with(w.as_bytes()));
                match word {
                    Some(w) => {
                        self.i += w.len();
                        Value::Scalar {
                            text: w.to_string(),
                            plain: true,
                        }
                    }
                    None => {
                        return Err(
                            self.error_here(format!("expected a value, found {}", self.found()))
                        );
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => Value::Scalar {
                text: self.number()?,
                plain: true,
            },
            _ => {
                return Err(self.error_here(format!("expected a value, found {}", self.found())));
            }
        };
        Ok(Node { at, value })
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

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
    fn number(&mut self) -> Result<String, ImportError> {
        let start = self.i;
        let Some(end) = self.number_end() else {
            return Err(self.error_here("a malformed number".into()));
        };
        self.i = end;
        Ok(self.text[start..end].to_string())
    }

    /// Where the number at `i` ends; `None` where it is malformed.
    fn number_end(&self) -> Option<usize> {
        let b = self.bytes;
        let mut i = self.i;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |i: &mut usize| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        let whole_from = i;
        let whole = digits(&mut i);
        let mut ok = whole > 0 && !(whole > 1 && b[whole_from] == b'0');
        if ok && b.get(i) == Some(&b'.') {
            i += 1;
            ok = digits(&mut i) > 0;
        }
        if ok && matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            ok = digits(&mut i) > 0;
        }
        ok.then_some(i)
    }

    /// A string from its opening quote, escapes resolved.
    fn string(&mut self) -> Result<String, ImportError> {
        self.i += 1; // `"`
        let start = self.i;
        self.i = plain_run(self.bytes, self.i);
        // The common case: no escape, copied in one piece.
        while let Some(&b) = self.bytes.get(self.i) {
            match b {
                b'"' => {
                    let s = self.text[start..self.i].to_string();
                    self.i += 1;
                    return Ok(s);
                }
                b'\\' => break,
                0..=0x1f => return Err(self.control_character()),
                _ => self.i += 1,
            }
        }
        let mut out = self.text[start..self.i].to_string();
        loop {
            let Some(&b) = self.bytes.get(self.i) else {
                return Err(self.error_here("a string without its closing quote".into()));
            };
            match b {
                b'"' => {
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    let letter = self.bytes.get(self.i + 1).copied();
                    self.i += 2;
                    let escaped = match letter {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode_escape()?,
                        _ => {
                            self.i -= 1;
                            return Err(self.error_here("an unknown escape in a string".into()));
                        }
                    };
                    out.push(escaped);
                }
                0..=0x1f => return Err(self.control_character()),
                _ => {
                    // Copy the run up to the next quote, escape or control character.
                    let from = self.i;
                    self.i = plain_run(self.bytes, self.i);
                    out.push_str(&self.text[from..self.i]);
                    continue;
                }
            }
        }
    }

    fn control_character(&mut self) -> ImportError {
        if self.bytes.get(self.i) == Some(&b'\n') {
            self.error_here("a string without its closing quote on this line".into())
        } else {
            self.error_here("a control character in a string (escape it)".into())
        }
    }

    /// The code point of `\uXXXX` (with its low surrogate when it is a high one); `i` is past
    /// the `u` and ends past the last digit.
    fn unicode_escape(&mut self) -> Result<char, ImportError> {
        let hex4 = |p: &mut Self| -> Result<u32, ImportError> {
            let digits = p.text.get(p.i..p.i + 4).unwrap_or("");
            match u32::from_str_radix(digits, 16) {
                Ok(v) if digits.len() == 4 => {
                    p.i += 4;
                    Ok(v)
                }
                _ => Err(p.error_here("`\\u` needs four hex digits".into())),
            }
        };
        let first = hex4(self)?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !self.bytes[self.i..].starts_with(b"\\u") {
                return Err(self.error_here("a lone surrogate in `\\u` escapes".into()));
            }
            self.i += 2;
            let low = hex4(self)?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.error_here("a lone surrogate in `\\u` escapes".into()));
            }
            0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
        } else {
            first
        };
        char::from_u32(code)
            .ok_or_else(|| self.error_here("a lone surrogate in `\\u` escapes".into()))
    }
}

/// The first index from `i` of a byte that ends a run of a string's plain characters (a
/// quote, a backslash or a control character), or the length: eight bytes at a time, as
/// strings (names, managedFields' keys) are most of a file's bytes.
fn plain_run(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    while let Some(chunk) = b.get(i..i + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(bytes);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        // A byte is zero (or below 0x20) where the subtraction borrows into its high bit;
        // never missed, and a false alarm only sends the bytes to the loop below.
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        if found & HIGH != 0 {
            break;
        }
        i += 8;
    }
    while b
        .get(i)
        .is_some_and(|&c| c != b'"' && c != b'\\' && c >= 0x20)
    {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::import::tree::collected::Collect;

    fn collect(text: &str) -> Result<Collect, ImportError> {
        Collect::from(read, text)
    }

    #[test]
    fn lists_stream_their_items_and_keep_the_rest() {
        let c = collect(
            "{\"kind\": \"List\",\n \"items\": [\n  {\"a\": 1},\n  {\"b\": \"x\\ny\\u00e9\"}\n]}\n",
        )
        .expect("valid");
        assert_eq!(c.items.len(), 2);
        assert_eq!(c.items[1].2.at, Pos { line: 4, column: 3 });
        assert_eq!(c.items[1].2.get("b").and_then(Node::as_str), Some("x\nyé"));
        assert_eq!(c.documents.len(), 1);
        assert_eq!(c.documents[0].2, Some(2));
        assert_eq!(
            c.documents[0].1.get("kind").and_then(Node::as_str),
            Some("List")
        );
    }

    #[test]
    fn json_lines_and_concatenated_objects_are_documents() {
        let c = collect("{\"a\":1}\n{\"a\":2}{\"a\":3}\n\n  {\"a\":[1,2.5e3,-0,true,null]}")
            .expect("valid");
        assert_eq!(c.documents.len(), 4);
        assert_eq!(c.documents[2].1.at, Pos { line: 2, column: 8 });
    }

    #[test]
    fn columns_count_characters_on_long_lines() {
        let c = collect("{\"é\": \"ü\", \"x\": {\"y\": 1}}").expect("valid");
        let x = c.documents[0].1.get("x").expect("x");
        assert_eq!(
            x.at,
            Pos {
                line: 1,
                column: 17
            }
        );
    }

    #[test]
    fn malformed_json_is_located() {
        for (text, line, column) in [
            ("{\"a\": }", 1, 7),
            ("{\"a\": 1,\n \"b\" 2}", 2, 6),
            ("{\"a\": \"x", 1, 9),
            ("{\"a\": 01}", 1, 7),
            ("{\"a\": [1 2]}", 1, 10),
            ("5", 1, 1),
            ("{\"a\": 1}\n]", 2, 1),
        ] {
            match collect(text) {
                Err(ImportError::At {
                    line: l, column: c, ..
                }) => assert_eq!((l, c), (line, Some(column)), "{text}"),
                Err(other) => panic!("{text}: {other:?}"),
                Ok(_) => panic!("{text}: accepted"),
            }
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(500), "]".repeat(500));
        match collect(&deep) {
            Err(ImportError::At { message, .. }) => assert!(message.contains("128"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
