//! The regression gate of `--fail-on-regression`: which metrics may gate a run, and the
//! message that fails it, so that a CI pipeline fails only on a real, directed regression.

use std::collections::BTreeSet;

use super::direction::better;
use super::error::DiffError;
use super::report::{DiffReport, DiffRow};

impl DiffReport {
    /// Why the run fails its regression gate; `None` when it passes.
    pub fn regression_message(&self) -> Option<String> {
        if self.regressions.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .regressions
            .iter()
            .map(|r| {
                format!(
                    "{} {}: B − A = {:+.4}, 95% CI [{:+.4}, {:+.4}]",
                    r.planner, r.metric, r.paired_mean, r.ci95_low, r.ci95_high
                )
            })
            .collect();
        Some(format!(
            "{} regression(s) beyond noise (--fail-on-regression {}): {}",
            self.regressions.len(),
            self.fail_on_regression.join(","),
            list.join("; ")
        ))
    }
}

/// Refuses an empty metric name in `--fail-on-regression` (`''`, `a,,b`), before any file is
/// read: skipped, it would leave the gate open where the user meant it shut.
pub fn check_gate_names(fail_on: &[String]) -> Result<(), DiffError> {
    if fail_on.iter().any(|m| m.trim().is_empty()) {
        return Err(DiffError::EmptyMetric {
            given: fail_on.join(","),
        });
    }
    Ok(())
}

/// The metrics of `--fail-on-regression`, each named, compared and with a better direction;
/// repeated ones kept once.
pub(super) fn gated_metrics(
    fail_on: &[String],
    rows: &[DiffRow],
) -> Result<Vec<String>, DiffError> {
    check_gate_names(fail_on)?;
    let compared: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    let mut gated: Vec<String> = Vec::new();
    for metric in fail_on.iter().map(|m| m.trim()) {
        if !compared.contains(metric) {
            return Err(DiffError::UnknownMetric {
                metric: metric.into(),
                compared: compared.iter().map(|m| m.to_string()).collect(),
            });
        }
        if better(metric).is_none() {
            return Err(DiffError::NoDirection {
                metric: metric.into(),
                gateable: compared
                    .iter()
                    .filter(|m| better(m).is_some())
                    .map(|m| m.to_string())
                    .collect(),
            });
        }
        if !gated.iter().any(|g| g == metric) {
            gated.push(metric.into());
        }
    }
    Ok(gated)
}

#[cfg(test)]
mod tests {
    use super::super::diff;
    use super::super::test_support::{output, some};
    use super::*;

    #[test]
    fn gating_needs_a_compared_metric_with_a_direction() {
        let v = some(&[1.0, 2.0]);
        let a = output(
            "a.json",
            &[1, 2],
            &["p"],
            &[("victims", &v), ("preemptions", &v)],
        );
        let e = diff(&a, &a, &["nope".into()]).expect_err("unknown");
        assert!(
            e.to_string().contains("compare preemptions, victims"),
            "{e}"
        );
        let e = diff(&a, &a, &["preemptions".into()]).expect_err("no direction");
        assert!(matches!(e, DiffError::NoDirection { .. }), "{e}");
        assert!(e.to_string().contains("metrics that can: victims"), "{e}");
        let r = diff(&a, &a, &["victims".into(), "victims".into()]).expect("ok");
        assert_eq!(r.fail_on_regression, ["victims"]);
    }

    #[test]
    fn an_empty_metric_name_is_refused_not_skipped() {
        let v = some(&[1.0, 2.0]);
        let a = output("a.json", &[1, 2], &["p"], &[("victims", &v)]);
        for given in [vec![String::new()], vec![" ".into()]] {
            let e = diff(&a, &a, &given).expect_err("empty");
            assert!(matches!(e, DiffError::EmptyMetric { .. }), "{e}");
            assert!(
                e.to_string()
                    .starts_with("--fail-on-regression was given an empty value"),
                "{e}"
            );
        }
        let given: Vec<String> = vec!["victims".into(), String::new(), "hit_rate".into()];
        let e = diff(&a, &a, &given).expect_err("a,,b");
        assert!(
            e.to_string()
                .starts_with("--fail-on-regression `victims,,hit_rate`: an empty metric name"),
            "{e}"
        );
        assert!(check_gate_names(&["victims".into()]).is_ok());
        assert!(check_gate_names(&[]).is_ok());
    }
}
