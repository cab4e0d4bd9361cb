//! The summary `coplan import` prints on stderr: what it read, mapped, defaulted, rounded and
//! dropped, the fields it ignored (the most frequent first), and its warnings.

use std::collections::BTreeMap;

use crate::import::summary::ImportSummary;

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
    section(&mut out, "honoured (affects scheduling)", &s.honoured);
    for (what, who) in &s.not_modelled {
        const SHOWN: usize = 5;
        let shown: Vec<&str> = who.iter().take(SHOWN).map(String::as_str).collect();
        let more = who.len().saturating_sub(SHOWN);
        out.push_str(&format!(
            "warning: not modelled, affects scheduling: {what}: {} object(s): {}{}\n",
            who.len(),
            shown.join(", "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        ));
    }
    section(&mut out, "read", &s.read);
    section(&mut out, "mapped", &s.mapped);
    section(&mut out, "defaulted", &s.defaulted);
    section(&mut out, "rounded", &s.rounded);
    section(&mut out, "dropped", &s.dropped);
    if !s.ignored_fields.is_empty() {
        // Noise (images, managedFields, …): a count here, every path in `--format json`.
        let total: u64 = s.ignored_fields.values().sum();
        out.push_str(&format!(
            "ignored fields: {total} in {} paths (listed by `--format json`)\n",
            s.ignored_fields.len()
        ));
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
