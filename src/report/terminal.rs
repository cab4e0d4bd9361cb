//! Text that reaches a terminal: names and values come from the user's files, and a name
//! holding an escape sequence must not recolour, retitle or clear the user's terminal. Every
//! table and every diagnostic goes through here; JSON, CSV and TOML carry names exactly, in
//! their own escapes.

use std::borrow::Cow;

/// A quoted value (between backticks) longer than this many characters is cut in a message.
const MAX_QUOTE_CHARS: usize = 80;
/// Characters kept from the start and from the end of a cut quote.
const QUOTE_HEAD: usize = 40;
const QUOTE_TAIL: usize = 20;

/// Whether `c` would be interpreted by a terminal rather than drawn: C0 controls other than a
/// line break or a tab, DEL, C1 controls (U+009B is a one-byte CSI on some terminals), and
/// the bidirectional overrides and isolates, which reorder what follows them.
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `text` with every control character written as a Rust escape (`\u{1b}`); borrowed when
/// there is none, as for nearly every table.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_control(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A one-line message as a diagnostic draws it: control characters escaped, and every value
/// it quotes between backticks cut to its first and last characters when it is long (a 70 KB
/// key is named, not printed).
pub fn quoted(message: &str) -> String {
    let escaped = escape_controls(message);
    let mut out = String::with_capacity(escaped.len().min(4096));
    let mut rest: &str = &escaped;
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else {
            rest = after;
            break;
        };
        let quote = &after[..close];
        let n = quote.chars().count();
        if n > MAX_QUOTE_CHARS {
            out.extend(quote.chars().take(QUOTE_HEAD));
            out.push('…');
            out.extend(quote.chars().skip(n - QUOTE_TAIL));
            out.push_str(&format!("` ({n} characters)"));
        } else {
            out.push_str(quote);
            out.push('`');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_written_out_and_plain_text_is_borrowed() {
        assert_eq!(escape_controls("b\u{1b}[31mRED\n"), "b\\u{1b}[31mRED\n");
        assert_eq!(escape_controls("a\u{9b}b\u{202e}c"), "a\\u{9b}b\\u{202e}c");
        assert!(matches!(escape_controls("plain\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_long_quote_is_cut_and_counted() {
        let long = "x".repeat(70_000);
        let message = quoted(&format!("unknown field `{long}`, expected `numa`"));
        assert!(message.len() < 200, "{message}");
        assert!(message.contains("(70000 characters)"), "{message}");
        assert!(message.ends_with("expected `numa`"), "{message}");
        assert_eq!(quoted("an `odd quote"), "an `odd quote");
    }
}
