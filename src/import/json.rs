//! JSON exports (`kubectl … -o json`, JSON Lines, concatenated objects) read one object at
//! a time: each top-level value is a document, and the items of a document's top-level
//! `items` array are handed on one by one as they are parsed, so that a List of any length
//! is never held as a whole. Every value keeps its line and column (counted in characters,
//! incrementally, so that a one-line file of a gigabyte costs no more than an indented one).

mod tokens;

use self::tokens::{number_end, plain_run, string_end};
use super::document::DocumentMap;
use super::error::ImportError;
use super::fields::{MapWant, Want};
use super::limits::{MAX_NESTING, check_nesting};
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
        let mut top = DocumentMap::new();
        self.object_entries(|p, key| {
            p.skip_ws();
            if top.streams(&key) && p.bytes.get(p.i) == Some(&b'[') {
                top.streamed(p.streamed_items(document, sink)?);
            } else {
                let value = p.entry(1, &mut top.want, &key)?;
                top.keep(key, value);
            }
            Ok(())
        })?;
        top.end(document, at, sink)
    }

    fn streamed_items(
        &mut self,
        document: usize,
        sink: &mut dyn Sink,
    ) -> Result<usize, ImportError> {
        let mut n = 0;
        self.array_items("an item", |p| {
            let item = p.value(2, Want::Object)?;
            n += 1;
            sink.item(document, n, item)
        })?;
        Ok(n)
    }

    /// The entries of the object whose `{` is at `i`: each key is handed to `entry`, which
    /// reads its value.
    fn object_entries(
        &mut self,
        mut entry: impl FnMut(&mut Self, String) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        self.i += 1; // `{`
        self.skip_ws();
        if self.bytes.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            let key = self.key()?;
            self.expect(b':', "`:` after the key")?;
            entry(self, key)?;
            if self.closed_after(b'}', "a value")? {
                return Ok(());
            }
        }
    }

    /// The items of the array whose `[` is at `i`, each read by `item`; `what` names an item
    /// in the errors after one.
    fn array_items(
        &mut self,
        what: &str,
        mut item: impl FnMut(&mut Self) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        self.i += 1; // `[`
        self.skip_ws();
        if self.bytes.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            if self.closed_after(b']', what)? {
                return Ok(());
            }
        }
    }

    /// After an entry of a map or an item of a sequence closed by `close`: past a `,` (more
    /// follow, `false`) or past `close` (`true`); anything else is an error naming `what` came
    /// before it.
    fn closed_after(&mut self, close: u8, what: &str) -> Result<bool, ImportError> {
        self.skip_ws();
        match self.bytes.get(self.i) {
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(&b) if b == close => {
                self.i += 1;
                Ok(true)
            }
            _ => Err(self.error_here(format!(
                "expected `,` or `{}` after {what}, found {}",
                char::from(close),
                self.found()
            ))),
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
                        if !self.skip_string() {
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
            Some(b'-' | b'0'..=b'9') => match number_end(self.bytes, self.i) {
                Some(end) => {
                    self.i = end;
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Skips a string at `i`; `false` where there is none or [`Self::string`] might refuse it.
    fn skip_string(&mut self) -> bool {
        match string_end(self.bytes, self.i) {
            Some(end) => {
                self.i = end;
                true
            }
            None => false,
        }
    }

    /// One value at nesting `depth` (the document's top level is 0), built as `want` says.
    fn value(&mut self, depth: usize, want: Want) -> Result<Node, ImportError> {
        self.skip_ws();
        let at = self.pos();
        let value = match self.bytes.get(self.i) {
            Some(b'{') => {
                self.nesting(depth, at)?;
                let mut entries = Vec::new();
                let mut want = MapWant::new(want);
                self.object_entries(|p, key| {
                    let v = p.entry(depth + 1, &mut want, &key)?;
                    entries.push((key, v));
                    Ok(())
                })?;
                Value::Map(entries)
            }
            Some(b'[') => {
                self.nesting(depth, at)?;
                let mut items = Vec::new();
                self.array_items("a value", |p| {
                    items.push(p.value(depth + 1, want.items())?);
                    Ok(())
                })?;
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
        check_nesting(self.file, depth, at)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
    fn number(&mut self) -> Result<String, ImportError> {
        let start = self.i;
        let Some(end) = number_end(self.bytes, self.i) else {
            return Err(self.error_here("a malformed number".into()));
        };
        self.i = end;
        Ok(self.text[start..end].to_string())
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

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
