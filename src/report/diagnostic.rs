//! Located spec issues as miette diagnostics (file, line, column, labelled snippet, help).

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};

use crate::spec::{InvalidSpec, Issue};

/// One issue with the source it points into.
#[derive(Debug)]
pub struct SpecDiagnostic {
    issue: Issue,
    source: NamedSource<String>,
}

impl SpecDiagnostic {
    /// A diagnostic of `issue` pointing into `text`, the TOML source read from `file_name`.
    pub fn new(issue: Issue, file_name: &str, text: &str) -> Self {
        SpecDiagnostic {
            issue,
            source: NamedSource::new(file_name, text.to_string()).with_language("TOML"),
        }
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
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(self.issue.label.clone()),
            span.start,
            span.end - span.start,
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
