//! Reading a size's 95 % CI against the target, and checking the bisection's assumption (more
//! servers never hurt) over every pair of sizes tried: both judge summaries, neither simulates.

use super::report::{CapacityProbe, ProbeStatus, Reversal};
use super::target::{Target, TargetOp};
use crate::sim::stats::Summary;

/// Where a summary stands against the target.
pub fn classify(target: &Target, s: &Summary) -> ProbeStatus {
    let half = s.ci95.unwrap_or(0.0);
    let (worst, best) = match target.op {
        TargetOp::AtLeast => (s.mean - half, s.mean + half),
        TargetOp::AtMost => (s.mean + half, s.mean - half),
    };
    match (
        target.met_by(worst),
        target.met_by(s.mean),
        target.met_by(best),
    ) {
        (true, _, _) => ProbeStatus::Holds,
        (false, true, _) => ProbeStatus::StraddlesAbove,
        (false, false, true) => ProbeStatus::StraddlesBelow,
        (false, false, false) => ProbeStatus::Fails,
    }
}

/// Pairs of sizes (ascending) where more servers gave a worse metric: the target lost, or
/// the two CIs apart in the wrong order.
pub fn reversals(target: &Target, probes: &[CapacityProbe]) -> Vec<Reversal> {
    let mut out = Vec::new();
    for (i, a) in probes.iter().enumerate() {
        for b in &probes[i + 1..] {
            let (Some(ma), Some(mb)) = (&a.metric, &b.metric) else {
                continue;
            };
            let target_lost = a.status.mean_meets() && !b.status.mean_meets();
            let apart = target.improvement(ma.mean, mb.mean)
                > ma.ci95.unwrap_or(0.0) + mb.ci95.unwrap_or(0.0) + 1e-9;
            if target_lost || apart {
                out.push(Reversal {
                    from: a.value,
                    to: b.value,
                    mean_from: ma.mean,
                    mean_to: mb.mean,
                    target_lost,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::parse_target;
    use super::super::test_support::{measured_probe, summary};
    use super::*;

    #[test]
    fn a_size_holds_fails_or_straddles_by_its_whole_interval() {
        let t = parse_target("hit_rate>=0.9").expect("valid");
        assert_eq!(classify(&t, &summary(0.95, 0.01)), ProbeStatus::Holds);
        assert_eq!(
            classify(&t, &summary(0.92, 0.05)),
            ProbeStatus::StraddlesAbove
        );
        assert_eq!(
            classify(&t, &summary(0.88, 0.05)),
            ProbeStatus::StraddlesBelow
        );
        assert_eq!(classify(&t, &summary(0.80, 0.05)), ProbeStatus::Fails);
        let t = parse_target("victims_per_preemption<=2").expect("valid");
        assert_eq!(classify(&t, &summary(1.5, 0.2)), ProbeStatus::Holds);
        assert_eq!(
            classify(&t, &summary(2.1, 0.2)),
            ProbeStatus::StraddlesBelow
        );
        // A mean exactly at the target with no spread holds.
        assert_eq!(classify(&t, &summary(2.0, 0.0)), ProbeStatus::Holds);
    }

    #[test]
    fn reversals_name_where_more_servers_did_worse() {
        let t = parse_target("hit_rate>=0.9").expect("valid");
        let probe = |value: f64, mean: f64| measured_probe(&t, value, summary(mean, 0.01));
        let monotone = [probe(4.0, 0.5), probe(6.0, 0.8), probe(8.0, 0.95)];
        assert!(reversals(&t, &monotone).is_empty());
        let dip = [probe(4.0, 0.5), probe(6.0, 0.95), probe(8.0, 0.7)];
        let r = reversals(&t, &dip);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].from, r[0].to, r[0].target_lost), (6.0, 8.0, true));
    }
}
