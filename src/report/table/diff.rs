//! `coplan diff`: per planner and metric, A's and B's means, B − A, the 95 % confidence
//! interval of the paired per-seed differences and a verdict.

use std::fmt::Write;

use super::grid::aligned;
use crate::sim::diff::{DiffReport, DiffRow, DiffSide, Verdict, seed_ranges};

/// What each verdict reads as in the table.
fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoChange => "~",
        Verdict::Increased => "increased",
        Verdict::Decreased => "decreased",
        Verdict::NoCi => "n/a",
    }
}

/// Decimals showing four significant digits of the row's larger mean, so that a hit rate and
/// an objective in the thousands both read well, and B − A and its interval line up with them.
fn decimals(row: &DiffRow) -> usize {
    let scale = row
        .a_mean
        .into_iter()
        .chain(row.b_mean)
        .map(f64::abs)
        .fold(0.0, f64::max);
    if scale > 0.0 && scale.is_finite() {
        (3 - scale.log10().floor() as i64).clamp(0, 6) as usize
    } else {
        4
    }
}

/// Text without the sign of a value that rounds to zero (rounding noise like −1e-17).
fn unsigned_zero(text: String) -> String {
    let digits = text.trim_start_matches(['-', '+']);
    if digits.chars().all(|c| c == '0' || c == '.') {
        digits.to_string()
    } else {
        text
    }
}

fn plain(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| unsigned_zero(format!("{x:.digits$}")))
}

fn signed(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| unsigned_zero(format!("{x:+.digits$}")))
}

fn side(label: &str, s: &DiffSide) -> String {
    let mut text = format!("{label} = {} (cluster `{}`", s.file, s.cluster);
    if let Some(w) = &s.workload {
        let _ = write!(text, ", workload `{w}`");
    }
    if let Some(c) = s.cycles {
        let _ = write!(text, ", {c} cycles per seed");
    }
    text.push(')');
    text
}

/// The comparison as a table between a header (files, seeds, notes) and a footer saying how
/// to read the interval.
pub fn diff(r: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "diff of two {} simulations", r.workload_kind);
    let _ = writeln!(out, "  {}", side("A", &r.a));
    let _ = writeln!(out, "  {}", side("B", &r.b));
    let _ = writeln!(
        out,
        "  {} seeds paired: {}",
        r.seeds.len(),
        seed_ranges(&r.seeds)
    );
    for note in &r.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            let d = decimals(row);
            let ci = match (row.ci95_low, row.ci95_high) {
                (Some(lo), Some(hi)) => {
                    format!("[{}, {}]", signed(Some(lo), d), signed(Some(hi), d))
                }
                _ => "-".into(),
            };
            vec![
                row.planner.clone(),
                row.metric.clone(),
                row.better.map_or("-", |b| b.as_str()).to_string(),
                plain(row.a_mean, d),
                plain(row.b_mean, d),
                signed(row.diff, d),
                row.n.to_string(),
                ci,
                verdict(row.verdict).to_string(),
            ]
        })
        .collect();
    out.push_str(&aligned(
        &[
            "planner",
            "metric",
            "better",
            "A",
            "B",
            "B − A",
            "n",
            "95% CI of paired B − A",
            "verdict",
        ],
        &rows,
        &[false, false, false, true, true, true, true, true, false],
    ));
    out.push_str(
        "\nA, B: means over seeds. 95% CI: mean of the per-seed differences d = B − A over the n\n\
         seeds with a value in both ± t(0.975, n − 1) · sd(d) / √n. better / worse: the interval\n\
         excludes 0 on the side the `better` column prefers; ~: it contains 0 (no change beyond\n\
         noise); increased / decreased: it excludes 0 for a metric without a better side;\n\
         n/a: fewer than 2 paired seeds, no interval.\n",
    );
    if !r.fail_on_regression.is_empty() {
        let _ = writeln!(
            out,
            "\n--fail-on-regression {}: {}",
            r.fail_on_regression.join(","),
            if r.regressions.is_empty() {
                "no regression beyond noise".to_string()
            } else {
                format!("{} regression(s)", r.regressions.len())
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: Option<f64>, b: Option<f64>) -> DiffRow {
        DiffRow {
            planner: "p".into(),
            metric: "m".into(),
            better: None,
            a_mean: a,
            b_mean: b,
            diff: None,
            n: 0,
            paired_mean: None,
            ci95_low: None,
            ci95_high: None,
            verdict: Verdict::NoCi,
        }
    }

    #[test]
    fn four_significant_digits_of_the_larger_mean() {
        assert_eq!(decimals(&row(Some(0.9), Some(0.85))), 4);
        assert_eq!(decimals(&row(Some(1.0), None)), 3);
        assert_eq!(decimals(&row(Some(150.0), Some(-20.0))), 1);
        assert_eq!(decimals(&row(Some(25126.65), Some(1.0))), 0);
        assert_eq!(decimals(&row(Some(0.0), Some(0.0))), 4);
        assert_eq!(decimals(&row(None, None)), 4);
        assert_eq!(signed(Some(-1e-17), 4), "0.0000");
        assert_eq!(signed(Some(0.03), 4), "+0.0300");
        assert_eq!(plain(Some(-0.00001), 2), "0.00");
    }
}
