//! Located spec issues as miette diagnostics (file, line, column, labelled snippet, help).

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use crate::spec::{InvalidSpec, Issue};

/// Bytes of context drawn as they are; above, the snippet is a window of the offending line.
const LONG_CONTEXT: usize = 4096;

/// Characters shown on either side of a span in a window of a long line.
const WINDOW_CHARS: usize = 60;

/// One issue with the source it points into.
#[derive(Debug)]
pub struct SpecDiagnostic {
    issue: Issue,
    source: Excerpted,
}

impl SpecDiagnostic {
    /// A diagnostic of `issue` pointing into `text`, the source read from `file_name`.
    pub fn new(issue: Issue, file_name: &str, text: &str) -> Self {
        SpecDiagnostic {
            issue,
            source: Excerpted {
                name: file_name.to_string(),
                text: text.to_string(),
            },
        }
    }
}

/// A named source whose long lines are shown as a window around the span: a one-line JSON
/// export of a gigabyte is one line, and drawing it whole (or underlining at a column past
/// 65,535, which the renderer cannot format) helps nobody.
#[derive(Debug)]
struct Excerpted {
    name: String,
    text: String,
}

/// The byte bounds of the line holding byte `offset` of `text`.
fn line_bounds(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_boundary(text, offset.min(text.len()));
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (start, end)
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

impl Excerpted {
    /// The span of a label as drawn: on a long line, at most [`WINDOW_CHARS`] characters.
    fn drawn(&self, start: usize, len: usize) -> (usize, usize) {
        let (line_start, line_end) = line_bounds(&self.text, start);
        if line_end - line_start <= LONG_CONTEXT {
            return (start, len);
        }
        let start = floor_boundary(&self.text, start.min(self.text.len()));
        let end = chars_forward(&self.text, start, WINDOW_CHARS, line_end).min(start + len);
        (start, end - start)
    }
}

impl SourceCode for Excerpted {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let whole = self.text.as_str().read_span(span, before, after)?;
        if whole.data().len() <= LONG_CONTEXT {
            return Ok(Box::new(MietteSpanContents::new_named(
                self.name.clone(),
                whole.data(),
                *whole.span(),
                whole.line(),
                whole.column(),
                whole.line_count(),
            )));
        }
        let text = self.text.as_str();
        let offset = floor_boundary(text, span.offset().min(text.len()));
        let (line_start, line_end) = line_bounds(text, offset);
        let span_end = chars_forward(text, offset, WINDOW_CHARS, line_end)
            .min(offset + span.len())
            .max(offset);
        let (start, end) = if before == 0 && after == 0 {
            (offset, span_end)
        } else {
            (
                chars_back(text, offset, WINDOW_CHARS, line_start),
                chars_forward(text, span_end, WINDOW_CHARS, line_end),
            )
        };
        let line = text.as_bytes()[..line_start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let column = text[line_start..start].chars().count();
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &text.as_bytes()[start..end],
            SourceSpan::from(start..end),
            line,
            column,
            1,
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

/// Renders every issue of an invalid file, then a one-line count.
pub fn render_invalid(invalid: &InvalidSpec, style: Style) -> String {
    let file = &invalid.source_file;
    let mut out = String::new();
    for issue in &invalid.issues {
        let diagnostic = SpecDiagnostic::new(issue.clone(), &file.name, &file.text);
        out.push_str(&render(&diagnostic, style));
        out.push('\n');
    }
    let n = invalid.issues.len();
    out.push_str(&format!(
        "error: {}: {n} {}\n",
        file.name,
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
        f.write_str(&self.message)
    }
}

impl std::error::Error for PlainDiagnostic {}

impl Diagnostic for PlainDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
}
