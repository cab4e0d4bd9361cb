//! Located spec issues as miette diagnostics (file, line, column, labelled snippet, help).
//!
//! Drawing costs what the snippet costs, not what the file costs: a file's line starts are
//! indexed once, each snippet is cut from the lines around its span (a window of a long
//! line), at most [`MAX_ISSUES_DRAWN`] issues of a file are drawn and the rest counted, and
//! what a message quotes is cut and stripped of control characters.

use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use crate::report::terminal;
use crate::spec::{InvalidSpec, Issue, SourceFile};

/// Bytes of context drawn as they are; above, the snippet is a window of the offending line.
const LONG_CONTEXT: usize = 4096;

/// Characters shown on either side of a span in a window of a long line.
const WINDOW_CHARS: usize = 60;

/// Issues of one file drawn in full; the others are counted in one line. A file with 20,000
/// undefined references is one mistake repeated, and its first hundred say which.
pub const MAX_ISSUES_DRAWN: usize = 100;

/// One issue with the source it points into.
#[derive(Debug)]
pub struct SpecDiagnostic {
    issue: Issue,
    source: Excerpted,
}

impl SpecDiagnostic {
    /// A diagnostic of `issue` pointing into `file`. Indexes the file: to draw several issues
    /// of one file, [`render_invalid`] indexes it once.
    pub fn new(issue: Issue, file: &SourceFile) -> Self {
        Self::indexed(issue, &Excerpted::new(file))
    }

    fn indexed(issue: Issue, source: &Excerpted) -> Self {
        let issue = Issue {
            message: terminal::quoted(&issue.message),
            label: terminal::quoted(&issue.label),
            help: issue.help.as_deref().map(terminal::quoted),
            ..issue
        };
        SpecDiagnostic {
            issue,
            source: source.clone(),
        }
    }
}

/// A named source, its lines indexed, whose long lines are shown as a window around the
/// span: a one-line JSON export of a gigabyte is one line, and drawing it whole (or
/// underlining at a column past 65,535, which the renderer cannot format) helps nobody.
#[derive(Debug, Clone)]
struct Excerpted {
    inner: Arc<Lines>,
}

#[derive(Debug)]
struct Lines {
    name: String,
    text: Arc<str>,
    /// Where each line starts, counting line breaks as miette does (`\n`, `\r\n`, a lone `\r`).
    starts: Vec<usize>,
    /// Where each line's text ends (its break, or the end of the file).
    ends: Vec<usize>,
}

impl Excerpted {
    fn new(file: &SourceFile) -> Self {
        let text = file.text.clone();
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut ends = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    ends.push(i);
                    starts.push(i + 1);
                }
                b'\r' => {
                    ends.push(i);
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        ends.push(bytes.len());
        Excerpted {
            inner: Arc::new(Lines {
                name: file.name.clone(),
                text,
                starts,
                ends,
            }),
        }
    }

    fn text(&self) -> &str {
        &self.inner.text
    }

    /// The line (0-based) holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.inner
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// The byte bounds of the text of line `line`.
    fn bounds(&self, line: usize) -> (usize, usize) {
        (self.inner.starts[line], self.inner.ends[line])
    }

    /// The span of a label as drawn: on a long line, at most [`WINDOW_CHARS`] characters.
    fn drawn(&self, start: usize, len: usize) -> (usize, usize) {
        let text = self.text();
        let start = floor_boundary(text, start.min(text.len()));
        let (line_start, line_end) = self.bounds(self.line_of(start));
        if line_end - line_start <= LONG_CONTEXT {
            return (start, len);
        }
        // A span may start on the line break itself (the `\n` of a `\r\n`), past the text.
        let from = start.min(line_end);
        let end = chars_forward(text, from, WINDOW_CHARS, line_end).min(start + len);
        (start, end.max(start) - start)
    }

    /// A window of the long line holding the span: the span cut to [`WINDOW_CHARS`]
    /// characters, and as many on either side when context is asked for.
    fn window(
        &self,
        offset: usize,
        len: usize,
        with_context: bool,
    ) -> Box<dyn SpanContents<'_> + '_> {
        let text = self.text();
        let line = self.line_of(offset);
        let (line_start, line_end) = self.bounds(line);
        let offset = offset.clamp(line_start, line_end);
        let span_end = chars_forward(text, offset, WINDOW_CHARS, line_end)
            .min(offset + len)
            .max(offset);
        let (start, end) = if with_context {
            (
                chars_back(text, offset, WINDOW_CHARS, line_start),
                chars_forward(text, span_end, WINDOW_CHARS, line_end),
            )
        } else {
            (offset, span_end)
        };
        // Columns count bytes, as miette's own do.
        Box::new(MietteSpanContents::new_named(
            self.inner.name.clone(),
            &text.as_bytes()[start..end],
            SourceSpan::from(start..end),
            line,
            start - line_start,
            1,
        ))
    }
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte `n` characters before `from`, not before `floor`.
fn chars_back(text: &str, from: usize, n: usize, floor: usize) -> usize {
    text[floor..from]
        .char_indices()
        .rev()
        .take(n)
        .last()
        .map_or(from, |(i, _)| floor + i)
}

/// The byte `n` characters after `from`, not past `ceiling`.
fn chars_forward(text: &str, from: usize, n: usize, ceiling: usize) -> usize {
    text[from..ceiling]
        .char_indices()
        .nth(n)
        .map_or(ceiling, |(i, _)| from + i)
}

impl SourceCode for Excerpted {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text = self.text();
        let offset = floor_boundary(text, span.offset().min(text.len()));
        let end = (span.offset() + span.len()).clamp(offset, text.len());
        let first = self.line_of(offset);
        let (line_start, line_end) = self.bounds(first);
        if line_end - line_start > LONG_CONTEXT {
            return Ok(self.window(offset, end - offset, before > 0 || after > 0));
        }
        // miette reads its snippet from the start of the text; handed only the lines around
        // the span (with one to spare after, where its scan stops), it reads the same snippet
        // at the cost of those lines.
        let last = self.line_of(end.saturating_sub(1).max(offset));
        let from_line = first.saturating_sub(before);
        let to_line = last + after + 1;
        let region_start = self.inner.starts[from_line];
        let region_end = self
            .inner
            .starts
            .get(to_line + 1)
            .copied()
            .unwrap_or(text.len());
        let region = &text[region_start..region_end];
        let local = SourceSpan::new((offset - region_start).into(), end - offset);
        let contents = region.read_span(&local, before, after)?;
        if contents.data().len() > LONG_CONTEXT {
            return Ok(self.window(offset, end - offset, before > 0 || after > 0));
        }
        Ok(Box::new(MietteSpanContents::new_named(
            self.inner.name.clone(),
            contents.data(),
            SourceSpan::new(
                (contents.span().offset() + region_start).into(),
                contents.span().len(),
            ),
            contents.line() + from_line,
            contents.column(),
            contents.line_count() + from_line,
        )))
    }
}

impl fmt::Display for SpecDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.issue.message)
    }
}

impl std::error::Error for SpecDiagnostic {}

impl Diagnostic for SpecDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.issue.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.issue
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = &self.issue.span;
        let (start, len) = self
            .source
            .drawn(span.start, span.end.saturating_sub(span.start));
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(self.issue.label.clone()),
            start,
            len,
        ))))
    }
}

/// How diagnostics are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Unicode, no colour: stable text for pipes, CI logs and snapshots.
    Plain,
    /// Unicode with ANSI colours, for terminals.
    Color,
}

fn handler(style: Style) -> GraphicalReportHandler {
    let theme = match style {
        Style::Plain => GraphicalTheme::unicode_nocolor(),
        Style::Color => GraphicalTheme::unicode(),
    };
    GraphicalReportHandler::new_themed(theme).with_width(100)
}

/// Renders any diagnostic.
pub fn render(diagnostic: &dyn Diagnostic, style: Style) -> String {
    let mut out = String::new();
    if handler(style).render_report(&mut out, diagnostic).is_err() {
        out = format!("error: {diagnostic}\n");
    }
    out
}

/// Renders the issues of an invalid file (the first [`MAX_ISSUES_DRAWN`], then how many more),
/// then a one-line count.
pub fn render_invalid(invalid: &InvalidSpec, style: Style) -> String {
    let file = &invalid.source_file;
    let source = Excerpted::new(file);
    let mut out = String::new();
    for issue in invalid.issues.iter().take(MAX_ISSUES_DRAWN) {
        let diagnostic = SpecDiagnostic::indexed(issue.clone(), &source);
        out.push_str(&render(&diagnostic, style));
        out.push('\n');
    }
    let n = invalid.issues.len();
    let name = terminal::quoted(&file.name);
    if n > MAX_ISSUES_DRAWN {
        out.push_str(&format!(
            "… and {} more errors in {name}, not drawn (the first {MAX_ISSUES_DRAWN} are above)\n",
            n - MAX_ISSUES_DRAWN
        ));
    }
    out.push_str(&format!(
        "error: {name}: {n} {}\n",
        if n == 1 { "error" } else { "errors" }
    ));
    out
}

/// A diagnostic without a source span (unreadable file, bad argument).
#[derive(Debug)]
pub struct PlainDiagnostic {
    /// What went wrong, one line.
    pub message: String,
    /// What the user can do about it, when there is something to say.
    pub help: Option<String>,
    /// The miette diagnostic code, e.g. `coplan::input`.
    pub code: &'static str,
}

impl fmt::Display for PlainDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&terminal::quoted(&self.message))
    }
}

impl std::error::Error for PlainDiagnostic {}

impl Diagnostic for PlainDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_deref()
            .map(|h| Box::new(terminal::quoted(h)) as Box<dyn fmt::Display>)
    }
}
