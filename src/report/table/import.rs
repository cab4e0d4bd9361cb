//! The summary `coplan import` prints on stderr: what it read, mapped, defaulted, rounded and
//! dropped, the fields it ignored (the most frequent first), and its warnings.

use std::collections::BTreeMap;

use crate::import::summary::ImportSummary;

/// How many ignored field paths the text lists (`--format json` has them all).
const IGNORED_SHOWN: usize = 8;

fn section(out: &mut String, title: &str, map: &BTreeMap<String, u64>) {
    if map.is_empty() {
        return;
    }
    out.push_str(&format!("{title}:\n"));
    let width = map.keys().map(|k| k.len()).max().unwrap_or(0);
    for (k, v) in map {
        out.push_str(&format!("  {k:<width$}  {v}\n"));
    }
}

/// The summary as text.
pub fn summary(s: &ImportSummary) -> String {
    let mut out = format!("import {}: {}\n", s.source, s.files.join(", "));
    section(&mut out, "read", &s.read);
    section(&mut out, "mapped", &s.mapped);
    section(&mut out, "defaulted", &s.defaulted);
    section(&mut out, "rounded", &s.rounded);
    section(&mut out, "dropped", &s.dropped);
    if !s.ignored_fields.is_empty() {
        let total: u64 = s.ignored_fields.values().sum();
        out.push_str(&format!(
            "ignored fields (not modelled): {total} in {} paths; most frequent:\n",
            s.ignored_fields.len()
        ));
        let mut by_count: Vec<(&String, &u64)> = s.ignored_fields.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (k, v) in by_count.into_iter().take(IGNORED_SHOWN) {
            out.push_str(&format!("  {k}  {v}\n"));
        }
    }
    for (k, items) in &s.lists {
        const SHOWN: usize = 10;
        let more = items.len().saturating_sub(SHOWN);
        let shown: Vec<&str> = items.iter().take(SHOWN).map(String::as_str).collect();
        out.push_str(&format!(
            "{k}: {}{}\n",
            shown.join(", "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        ));
    }
    for w in &s.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
