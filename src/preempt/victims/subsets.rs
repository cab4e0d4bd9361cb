//! Victim subsets in the order every search relies on (lexicographic), and how many there
//! are: the budget checks and the enumerations must count alike.

use super::filter::VictimFacts;
use crate::topology::{CoreSet, GpuSet};

/// Subsets of sizes `from..=to` of `n` victims: what the reference tries on a server.
pub(crate) fn subsets_up_to(n: usize, from: usize, to: usize) -> u64 {
    (from..=to.min(n))
        .map(|k| binomial(n, k))
        .fold(0, u64::saturating_add)
}

fn binomial(n: usize, k: usize) -> u64 {
    let k = k.min(n - k) as u64;
    let n = n as u64;
    // acc · (n − i) / (i + 1) stays an integer at every step.
    (0..k)
        .try_fold(1u64, |acc, i| Some(acc.checked_mul(n - i)? / (i + 1)))
        .unwrap_or(u64::MAX)
}

/// Calls `f` with every k-subset of `pods` (lexicographic order) and the union of `base` with
/// the subset's GPUs and cores, built incrementally, until `f` returns false.
pub fn for_each_union(
    pods: &[VictimFacts],
    k: usize,
    base: (GpuSet, CoreSet),
    f: &mut dyn FnMut(&[usize], GpuSet, CoreSet) -> bool,
) {
    fn go(
        pods: &[VictimFacts],
        k: usize,
        start: usize,
        acc: (GpuSet, CoreSet),
        idx: &mut Vec<usize>,
        f: &mut dyn FnMut(&[usize], GpuSet, CoreSet) -> bool,
    ) -> bool {
        if idx.len() == k {
            return f(idx, acc.0, acc.1);
        }
        let remaining = k - idx.len();
        for i in start..=pods.len().saturating_sub(remaining) {
            if i >= pods.len() {
                break;
            }
            idx.push(i);
            let next = (acc.0.or(pods[i].gpus), acc.1.or(pods[i].cores));
            let more = go(pods, k, i + 1, next, idx, f);
            idx.pop();
            if !more {
                return false;
            }
        }
        true
    }
    if k > pods.len() {
        return;
    }
    let mut idx = Vec::with_capacity(k);
    go(pods, k, 0, base, &mut idx, f);
}

/// Calls `f` with every k-subset of `0..n` in lexicographic order until it returns false.
pub fn for_each_subset(n: usize, k: usize, mut f: impl FnMut(&[usize]) -> bool) {
    if k > n {
        return;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        if !f(&idx) {
            return;
        }
        // Advance to the next combination.
        let mut i = k;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            if idx[i] < n - k + i {
                idx[i] += 1;
                for j in i + 1..k {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_subset;

    #[test]
    fn subsets_are_enumerated_once_each() {
        let mut seen = Vec::new();
        for_each_subset(4, 2, |s| {
            seen.push(s.to_vec());
            true
        });
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], vec![0, 1]);
        assert_eq!(seen[5], vec![2, 3]);
        let mut empty = 0;
        for_each_subset(3, 0, |s| {
            assert!(s.is_empty());
            empty += 1;
            true
        });
        assert_eq!(empty, 1);
    }
}
