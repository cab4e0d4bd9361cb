//! What a fuzz execution showed, and the checks every target shares: a clean input error
//! (the library's typed errors, with a diagnostic located inside the file it names) is a fine
//! outcome; an internal error or a diagnostic pointing outside its file is a finding.

use coplan::session::error::SessionError;
use coplan::session::load::line_error;
use coplan::spec::{self, Expect, InvalidSpec, LoadedSpec, SourceFile, Spec};
use coplan::topology::Cluster;

/// What one execution showed.
pub enum Verdict {
    /// Nothing wrong; the string names the kind of outcome (an error code, `ok`), so that the
    /// driver can keep inputs that reach outcomes it has not seen.
    Fine(String),
    /// Something wrong that did not panic.
    Finding(String),
}

use Verdict::{Finding, Fine};

/// The line that separates the files of a multi-file input.
pub const SEPARATOR: &str = "\n%%\n";

/// The files of a multi-file input.
pub(crate) fn parts(text: &str) -> Vec<&str> {
    text.split(SEPARATOR).collect()
}

pub(crate) fn text_of(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

/// Every issue of a located diagnostic must point inside its file, on character boundaries:
/// the renderer shows the snippet under the span.
pub(crate) fn check_invalid(e: &InvalidSpec) -> Result<String, String> {
    let text = &e.source_file.text;
    let Some(first) = e.issues.first() else {
        return Err(format!("an invalid `{}` with no issue", e.source_file.name));
    };
    for i in &e.issues {
        let s = &i.span;
        if s.start > s.end
            || s.end > text.len()
            || !text.is_char_boundary(s.start)
            || !text.is_char_boundary(s.end)
        {
            return Err(format!(
                "issue `{}` ({}) has span {:?} outside its {}-byte file",
                i.code,
                i.message,
                s,
                text.len()
            ));
        }
        if i.message.is_empty() {
            return Err(format!("issue `{}` has an empty message", i.code));
        }
    }
    Ok(first.code.to_string())
}

/// A session error: invalid input is fine when located correctly; an internal error is a bug.
pub(crate) fn session_verdict(e: &SessionError) -> Verdict {
    match e {
        SessionError::Invalid(list) => {
            let mut code = String::from("invalid");
            for i in list {
                match check_invalid(i) {
                    Ok(c) => code = c,
                    Err(f) => return Finding(f),
                }
            }
            Fine(code)
        }
        SessionError::Input { message, .. } => Fine(format!("input:{}", shape(message))),
        SessionError::Internal(m) => Finding(format!("internal error: {m}")),
        // Nothing asks a fuzz run to stop: a stop it did not ask for is a bug.
        SessionError::Interrupted(m) => Finding(format!("interrupted unasked: {m}")),
        // A requirement the run enforced (none here) is the outcome's verdict, not a fault.
        SessionError::Infeasible(m) => Fine(format!("infeasible:{}", shape(m))),
    }
}

/// A message with its digits dropped: outcomes that differ only in a number are one kind.
pub(crate) fn shape(message: &str) -> String {
    message
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .take(48)
        .collect()
}

pub(crate) fn invalid_verdict(e: &InvalidSpec) -> Verdict {
    match check_invalid(e) {
        Ok(code) => Fine(code),
        Err(f) => Finding(f),
    }
}

/// Cross-file findings resolved against the workload file, as `coplan validate` does.
pub(crate) fn cross_verdict(
    loaded: &LoadedSpec,
    findings: Vec<coplan::spec::source::Finding>,
) -> Option<Verdict> {
    match loaded.check(findings) {
        Ok(()) => None,
        Err(e) => Some(invalid_verdict(&e)),
    }
}

pub(crate) fn load_cluster(name: &str, text: &str) -> Result<Cluster, Verdict> {
    match spec::load(SourceFile::new(name, text), Expect::Cluster) {
        Ok(l) => match &l.spec {
            Spec::Cluster(c) => Ok(Cluster::from_spec(c)),
            _ => Err(Finding("a cluster load returned a workload".into())),
        },
        Err(e) => Err(invalid_verdict(&e)),
    }
}

/// The cluster a single-file workload input is checked against.
pub(crate) const DEFAULT_CLUSTER: &str = "kind = \"cluster\"\nname = \"fuzz\"\n\n[[pool]]\nserver_type = \"gpu-2s4n8g\"\ncount = 2\nname_prefix = \"node-\"\n";

pub(crate) fn located(source: &SourceFile, line: usize, message: &str) -> Verdict {
    session_verdict(&line_error(source, line, message, "help"))
}
