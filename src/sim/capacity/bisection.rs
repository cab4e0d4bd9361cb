//! The bisection over sizes, written against an `Oracle` rather than the simulator, so that
//! its answers (found, bracket, not reached) are tested on plain curves in milliseconds.

use super::error::CapacityError;
use super::report::{ProbeStatus, Verdict};

/// What the bisection asks of the sizes: where planner `p` stands at a size (simulating it
/// when needed), and the sizes already known for free.
pub(super) trait Oracle {
    fn status(&mut self, p: usize, size: u32) -> Result<ProbeStatus, CapacityError>;
    fn known(&self, p: usize) -> Vec<(u32, ProbeStatus)>;
}

/// The smallest size in `lo..=hi` at which `test` holds, assuming it holds from some size on;
/// `None` when it does not hold at `hi`.
fn smallest(
    oracle: &mut impl Oracle,
    p: usize,
    (lo, hi): (u32, u32),
    test: fn(ProbeStatus) -> bool,
) -> Result<Option<u32>, CapacityError> {
    if lo > hi || !test(oracle.status(p, hi)?) {
        return Ok(None);
    }
    // Sizes already simulated narrow the range for free.
    let known: Vec<(u32, ProbeStatus)> = oracle
        .known(p)
        .into_iter()
        .filter(|(s, _)| (lo..=hi).contains(s))
        .collect();
    let mut at = known
        .iter()
        .filter(|(_, status)| test(*status))
        .map(|(s, _)| *s)
        .min()
        .unwrap_or(hi);
    let mut below = known
        .iter()
        .filter(|(s, status)| !test(*status) && *s < at)
        .map(|(s, _)| *s)
        .max();
    loop {
        let floor = below.map_or(lo, |b| b + 1);
        if floor >= at {
            return Ok(Some(at));
        }
        let mid = floor + (at - floor) / 2;
        if test(oracle.status(p, mid)?) {
            at = mid;
        } else {
            below = Some(mid);
        }
    }
}

/// A planner's verdict, answer and bracket.
type Answer = (Verdict, Option<f64>, Option<[f64; 2]>);

/// The verdict, answer and bracket of planner `p` over `min..=max`.
pub(super) fn answer(
    oracle: &mut impl Oracle,
    p: usize,
    (min, max): (u32, u32),
) -> Result<Answer, CapacityError> {
    // Where the largest size misses the target but a smaller one tried meets it, the metric
    // is not monotone (reported as such): the search continues below the smallest size that
    // met it rather than answer "not reached".
    let max = if ProbeStatus::mean_meets(oracle.status(p, max)?) {
        max
    } else {
        match oracle
            .known(p)
            .into_iter()
            .filter(|(s, st)| (min..=max).contains(s) && st.mean_meets())
            .map(|(s, _)| s)
            .min()
        {
            Some(met) => met,
            None => return Ok((Verdict::NotReached, None, None)),
        }
    };
    let Some(n) = smallest(oracle, p, (min, max), ProbeStatus::mean_meets)? else {
        return Ok((Verdict::NotReached, None, None));
    };
    // Where the seeds cannot tell: the first size whose whole CI holds, and the first size at
    // or above which nothing clearly fails (`None`: everything below `n` does).
    let clear_hold = smallest(oracle, p, (n, max), |s| s == ProbeStatus::Holds)?;
    let not_failing = match n.checked_sub(1).filter(|&below| below >= min) {
        None => None,
        Some(below) => smallest(oracle, p, (min, below), |s| {
            !matches!(s, ProbeStatus::Fails | ProbeStatus::CannotHoldLoad)
        })?,
    };
    let low = not_failing.unwrap_or(n);
    let high = clear_hold.unwrap_or(max);
    Ok(if low == min {
        // Nothing tried below the answer failed, and the search does not go below `min`:
        // the fewest servers may lie lower, so the answer is an upper bound, never "found".
        let bracket = (high > min).then(|| [f64::from(min), f64::from(high)]);
        (Verdict::AtMost, Some(f64::from(high)), bracket)
    } else if clear_hold == Some(n) && low == n {
        (Verdict::Found, Some(f64::from(n)), None)
    } else {
        (
            Verdict::Bracket,
            None,
            Some([f64::from(low), f64::from(high)]),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::test_support::{measured_probe, summary};
    use super::super::{CapacityProbe, Target, classify, parse_target, reversals};
    use super::*;
    use crate::sim::stats::Summary;

    /// A metric curve over sizes, as the seeds would give it.
    struct Curve {
        target: Target,
        points: BTreeMap<u32, Summary>,
        asked: Vec<u32>,
    }

    impl Oracle for Curve {
        fn status(&mut self, _: usize, size: u32) -> Result<ProbeStatus, CapacityError> {
            if !self.asked.contains(&size) {
                self.asked.push(size);
            }
            let s = self
                .points
                .get(&size)
                .ok_or_else(|| CapacityError::Range(format!("size {size} is not on the curve")))?;
            Ok(classify(&self.target, s))
        }

        fn known(&self, _: usize) -> Vec<(u32, ProbeStatus)> {
            self.asked
                .iter()
                .filter_map(|s| Some((*s, classify(&self.target, self.points.get(s)?))))
                .collect()
        }
    }

    fn curve(target: &str, points: &[(u32, f64, f64)]) -> Curve {
        Curve {
            target: parse_target(target).expect("valid"),
            points: points
                .iter()
                .map(|&(size, mean, ci)| (size, summary(mean, ci)))
                .collect(),
            asked: Vec::new(),
        }
    }

    #[test]
    fn bisection_finds_the_fewest_servers_on_a_monotone_curve() {
        // 1..=16 servers; the metric reaches 0.99 (whole CI) at 11, and 10 clearly misses it.
        let points: Vec<(u32, f64, f64)> = (1..=16)
            .map(|n| {
                (
                    n,
                    if n >= 11 {
                        0.995
                    } else {
                        0.5 + 0.04 * f64::from(n)
                    },
                    0.002,
                )
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        let a = answer(&mut c, 0, (1, 16)).expect("answer");
        assert_eq!(a, (Verdict::Found, Some(11.0), None));
        // Bisection, not a scan: at most ⌈log2 16⌉ + 2 sizes.
        assert!(c.asked.len() <= 6, "{:?}", c.asked);
        // Never reached: the verdict says so.
        let low: Vec<(u32, f64, f64)> = (1..=8).map(|n| (n, 0.5, 0.01)).collect();
        let mut c = curve("hit_rate>=0.99", &low);
        assert_eq!(
            answer(&mut c, 0, (1, 8)).expect("answer").0,
            Verdict::NotReached
        );
        // Holds at the smallest size searched: nothing below it was tried, so 3 is a bound
        // the answer may lie under, never "found".
        let high: Vec<(u32, f64, f64)> = (3..=8).map(|n| (n, 1.0, 0.0)).collect();
        let mut c = curve("hit_rate>=0.99", &high);
        assert_eq!(
            answer(&mut c, 0, (3, 8)).expect("answer"),
            (Verdict::AtMost, Some(3.0), None)
        );
    }

    #[test]
    fn a_straddling_ci_gives_the_bracket_not_one_size() {
        // unplaced<=0.5: 5 clearly fails, 6 and 7 straddle (means 0.55 and 0.45, CI 0.2),
        // 8 clearly holds: the seeds cannot tell 6, 7 and 8 apart.
        let points = [
            (4, 3.0, 0.1),
            (5, 1.0, 0.1),
            (6, 0.55, 0.2),
            (7, 0.45, 0.2),
            (8, 0.1, 0.05),
            (9, 0.0, 0.0),
            (10, 0.0, 0.0),
        ];
        let mut c = curve("unplaced<=0.5", &points);
        assert_eq!(
            answer(&mut c, 0, (4, 10)).expect("answer"),
            (Verdict::Bracket, None, Some([6.0, 8.0]))
        );
    }

    #[test]
    fn found_is_never_reported_at_the_smallest_size_searched() {
        // unplaced<=0.5 from 4 on; the search starts at 4: nothing below was tried, so 4 is
        // an upper bound ("at most"), not the fewest servers.
        let points: Vec<(u32, f64, f64)> = (4..=10).map(|n| (n, 0.0, 0.0)).collect();
        let mut c = curve("unplaced<=0.5", &points);
        assert_eq!(
            answer(&mut c, 0, (4, 10)).expect("answer"),
            (Verdict::AtMost, Some(4.0), None)
        );
        // The smallest size straddles, 6 holds: at most 6, and 4–6 cannot be told apart.
        let points = [
            (4, 0.55, 0.2),
            (5, 0.45, 0.2),
            (6, 0.1, 0.05),
            (7, 0.0, 0.0),
            (8, 0.0, 0.0),
        ];
        let mut c = curve("unplaced<=0.5", &points);
        assert_eq!(
            answer(&mut c, 0, (4, 8)).expect("answer"),
            (Verdict::AtMost, Some(6.0), Some([4.0, 6.0]))
        );
        // Once the size below is tried and fails, the same answer is found.
        let points: Vec<(u32, f64, f64)> = (3..=10)
            .map(|n| if n == 3 { (n, 2.0, 0.0) } else { (n, 0.0, 0.0) })
            .collect();
        let mut c = curve("unplaced<=0.5", &points);
        assert_eq!(
            answer(&mut c, 0, (3, 10)).expect("answer"),
            (Verdict::Found, Some(4.0), None)
        );
    }

    #[test]
    fn a_target_met_below_a_largest_size_that_misses_it_is_still_answered() {
        // Met from 5 to 8, missed at 9 and 10 (more servers, worse): today's size (7) met it.
        let points: Vec<(u32, f64, f64)> = (1..=10)
            .map(|n| match n {
                5..=8 => (n, 1.0, 0.0),
                _ => (n, 0.8, 0.01),
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        c.status(0, 7).expect("on the curve");
        assert_eq!(
            answer(&mut c, 0, (1, 10)).expect("answer"),
            (Verdict::Found, Some(5.0), None)
        );
    }

    #[test]
    fn a_non_monotone_curve_is_reported_where_it_turns() {
        // The target holds at 4 and 5, is lost from 6 to 8 and holds again from 9. The search
        // tries today's size (7) and the smallest (4) first: 4 holds, at most 4 servers are
        // needed (nothing below the smallest size searched was tried), and the reversal
        // between 4 and 7 is named.
        let points: Vec<(u32, f64, f64)> = (4..=12)
            .map(|n| match n {
                4 | 5 => (n, 0.995, 0.001),
                6..=8 => (n, 0.90, 0.01),
                _ => (n, 0.999, 0.001),
            })
            .collect();
        let mut c = curve("hit_rate>=0.99", &points);
        c.status(0, 7).expect("on the curve");
        c.status(0, 4).expect("on the curve");
        let a = answer(&mut c, 0, (4, 12)).expect("answer");
        assert_eq!(a, (Verdict::AtMost, Some(4.0), None));
        let probes: Vec<CapacityProbe> = {
            let mut sizes = c.asked.clone();
            sizes.sort_unstable();
            sizes
                .iter()
                .map(|s| measured_probe(&c.target, f64::from(*s), c.points[s].clone()))
                .collect()
        };
        let r = reversals(&c.target, &probes);
        assert!(
            r.iter()
                .any(|r| r.target_lost && r.from <= 6.0 && r.to >= 7.0),
            "asked {:?}: {r:?}",
            c.asked
        );
    }
}
