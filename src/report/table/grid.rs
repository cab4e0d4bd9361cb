//! The text grid every table is drawn on, and the cell formats tables share.

use std::fmt::Write;

use crate::plan::PlanStatus;
use crate::sim::stats::Summary;

/// A number with `digits` decimals; `-` when absent.
pub fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// A share as a percentage with one decimal; `-` when absent.
pub fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.1}%", x * 100.0))
}

/// The status as the tables print it: its JSON name (`heuristic`, `optimal`, `time_limit`, …).
pub fn status(s: PlanStatus) -> &'static str {
    match s {
        PlanStatus::Heuristic => "heuristic",
        PlanStatus::Optimal => "optimal",
        PlanStatus::TimeLimit => "time_limit",
        PlanStatus::GapLimit => "gap_limit",
        PlanStatus::Windowed => "windowed",
        PlanStatus::Skipped => "skipped",
        PlanStatus::NoSolution => "no_solution",
    }
}

/// A gap in percent; `≤` marks an upper bound.
pub fn gap(gap: Option<f64>, is_bound: bool) -> String {
    match gap {
        None => "-".into(),
        Some(g) => format!("{}{:+.1}%", if is_bound { "≤" } else { "" }, g * 100.0),
    }
}

/// `mean ± ci95` of a summary, scaled (100 for percentages) and with a unit; `-` when absent.
pub fn summary_cell(s: Option<&Summary>, scale: f64, unit: &str) -> String {
    let Some(s) = s else { return "-".into() };
    match s.ci95 {
        Some(ci) => format!("{}{unit} ± {}", fixed(s.mean * scale), fixed(ci * scale)),
        None => format!("{}{unit}", fixed(s.mean * scale)),
    }
}

/// Two decimals, without the sign of a value that rounds to zero (rounding noise like −1e-17).
fn fixed(x: f64) -> String {
    let text = format!("{x:.2}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// Renders rows left-aligned, columns padded to their widest cell.
pub fn render_table(header: &[&str], rows: &[Vec<String>]) -> String {
    aligned(header, rows, &[])
}

/// Renders rows with columns padded to their widest cell; `right` marks right-aligned columns.
pub fn aligned(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - c.chars().count();
            if right.get(i).copied().unwrap_or(false) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
            l.push_str("  ");
        }
        l.trim_end().to_string()
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", line(header.to_vec()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
    out
}
