//! The diagnostic targets: invalid files drawn as the binary draws them, bounded in size and
//! time however long their lines or many their errors.

use coplan::colocate::trace::parse_azure;
use coplan::report;
use coplan::session::error::SessionError;
use coplan::session::load::line_error;
use coplan::spec::{self, Expect, InvalidSpec, SourceFile, Spec};
use coplan::topology::state::running_state;

use crate::verdict::Verdict::{self, Finding, Fine};
use crate::verdict::{DEFAULT_CLUSTER, check_invalid, load_cluster, session_verdict, text_of};

/// Bytes a drawn diagnostic may take: a line above 4 KB is drawn as a window of 60 characters
/// each side of the span, so a snippet is at most three lines of 4 KB, each tab drawn four
/// columns wide, and an underline of three-byte box characters under the span's line; plus
/// the message (quotes cut to 80 characters) and the help.
pub(crate) const DRAWN_BYTES_PER_ISSUE: usize = 128 * 1024;

/// Draws every diagnostic of an invalid file and checks the drawing: bounded (at most
/// `MAX_ISSUES_DRAWN` drawn, each in bounded text), counted, and located at the line and
/// column of each drawn issue's span.
pub(crate) fn drawn(e: &InvalidSpec) -> Verdict {
    if let Err(f) = check_invalid(e) {
        return Finding(f);
    }
    let text = report::diagnostic::render_invalid(e, report::diagnostic::Style::Plain);
    let drawn = e.issues.len().min(report::diagnostic::MAX_ISSUES_DRAWN);
    if text.len() > (drawn + 1) * DRAWN_BYTES_PER_ISSUE {
        return Finding(format!(
            "{} issues drew {} bytes, above {} per issue",
            drawn,
            text.len(),
            DRAWN_BYTES_PER_ISSUE
        ));
    }
    let count = format!("{}: {} error", e.source_file.name, e.issues.len());
    if !text.contains(&count) {
        return Finding(format!("the count line `{count}` is missing"));
    }
    let source = &e.source_file.text;
    for issue in e.issues.iter().take(drawn) {
        let at = issue.span.start.min(source.len());
        let before = &source.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        // miette counts a lone `\r` as a line break too; such files are left to its own count.
        if before.contains(&b'\r') {
            continue;
        }
        let location = format!("{}:{line}:{column}]", e.source_file.name);
        if !text.contains(&location) {
            return Finding(format!(
                "issue `{}` at byte {at} is not drawn at {location}",
                issue.code
            ));
        }
    }
    Fine(format!("drawn:{}", e.issues.first().map_or("", |i| i.code)))
}

/// The input's first byte picks the file kind, its second the line to stretch and its third
/// and fourth the length (up to 70,000 columns, past the 65,535 a renderer's column fits in);
/// the stretch is the line's own text repeated, or blanks before its first value.
pub(crate) fn diagnostics_long_lines(input: &[u8]) -> Verdict {
    let [kind, which, hi, lo, rest @ ..] = input else {
        return Fine("short".into());
    };
    let text = text_of(rest);
    let lines: Vec<&str> = text.split('\n').collect();
    let target = usize::from(*which) % lines.len().max(1);
    let width = (usize::from(*hi) << 8 | usize::from(*lo)) * 70_000 / 65_536 + 1;
    let mut out = String::with_capacity(text.len() + width);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if i != target {
            out.push_str(line);
            continue;
        }
        match (kind % 2, line.find('=')) {
            (0, Some(eq)) => {
                out.push_str(&line[..=eq]);
                out.extend(std::iter::repeat_n(' ', width));
                out.push_str(&line[eq + 1..]);
            }
            _ => {
                while out.len() < width && !line.is_empty() {
                    out.push_str(line);
                }
                out.push_str(line);
            }
        }
    }
    let expect = match kind % 4 {
        0 | 1 => Expect::Any,
        2 => Expect::Cluster,
        _ => Expect::Workload,
    };
    if kind % 8 >= 6 {
        // As a data file: an Azure trace row error is drawn from the same renderer.
        let source = SourceFile::new("trace.csv", out.as_str());
        return match parse_azure(&out, 1.0, None) {
            Ok(_) => Fine("trace-ok".into()),
            Err(e) => match line_error(&source, e.line, &e.message, "") {
                SessionError::Invalid(list) => list.first().map_or(Fine("none".into()), drawn),
                other => session_verdict(&other),
            },
        };
    }
    match spec::load(SourceFile::new("long.toml", out), expect) {
        Ok(_) => Fine("ok".into()),
        Err(e) => drawn(&e),
    }
}

/// The input is one entry (a `[[running]]` pod, a `[[preempt]]` list, a `[[workload]]` class,
/// anything) repeated: its first byte sets how many times (1–400, mostly under 40), the rest
/// is the entry, after a workload head that defines one class.
pub(crate) fn diagnostics_many_errors(input: &[u8]) -> Verdict {
    let [times, rest @ ..] = input else {
        return Fine("short".into());
    };
    let times = if times % 4 == 0 {
        usize::from(*times) * 400 / 256 + 1
    } else {
        usize::from(*times) % 40 + 1
    };
    let entry = text_of(rest);
    let mut text = String::from(
        "kind = \"preemption\"\n[[workload]]\nname = \"b\"\npriority = 1\ngpus = 1\ncores = 1\n",
    );
    for _ in 0..times {
        text.push_str(&entry);
        text.push('\n');
    }
    match spec::load(SourceFile::new("many.toml", text), Expect::Workload) {
        Ok(loaded) => match load_cluster("default.toml", DEFAULT_CLUSTER) {
            Ok(cluster) => match &loaded.spec {
                Spec::Preemption(w) => match running_state(&cluster, w) {
                    Ok(_) => Fine("ok".into()),
                    Err(findings) => match loaded.check(findings) {
                        Ok(()) => Fine("ok".into()),
                        Err(e) => drawn(&e),
                    },
                },
                _ => Fine("other-kind".into()),
            },
            Err(v) => v,
        },
        Err(e) => drawn(&e),
    }
}
