//! Fixed-size bit sets for GPUs and cores: the allocator's hot path works on masks.

use std::fmt;

/// A set of small integer ids below `64 · W`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bits<const W: usize>([u64; W]);

impl<const W: usize> Default for Bits<W> {
    fn default() -> Self {
        Self::empty()
    }
}

/// GPUs of one server (at most 64).
pub type GpuSet = Bits<1>;
/// Cores of one server (at most 256).
pub type CoreSet = Bits<4>;

impl<const W: usize> Bits<W> {
    /// Largest id plus one that the set can hold; larger ids are ignored by `insert`.
    pub const CAPACITY: usize = 64 * W;

    /// The set with no id.
    pub const fn empty() -> Self {
        Bits([0; W])
    }

    /// The ids `lo .. hi`.
    pub fn range(lo: usize, hi: usize) -> Self {
        let mut b = Self::empty();
        for i in lo..hi.min(Self::CAPACITY) {
            b.insert(i);
        }
        b
    }

    /// The set of `ids`; ids at or above [`Self::CAPACITY`] are dropped.
    pub fn from_ids(ids: impl IntoIterator<Item = usize>) -> Self {
        let mut b = Self::empty();
        for i in ids {
            b.insert(i);
        }
        b
    }

    /// Adds id `i` (no-op at or above [`Self::CAPACITY`]).
    pub fn insert(&mut self, i: usize) {
        if i < Self::CAPACITY {
            self.0[i / 64] |= 1u64 << (i % 64);
        }
    }

    /// Removes id `i`.
    pub fn remove(&mut self, i: usize) {
        if i < Self::CAPACITY {
            self.0[i / 64] &= !(1u64 << (i % 64));
        }
    }

    /// Whether id `i` is in the set.
    pub fn contains(&self, i: usize) -> bool {
        i < Self::CAPACITY && self.0[i / 64] & (1u64 << (i % 64)) != 0
    }

    /// Number of ids in the set.
    pub fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set has no id.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Intersection.
    pub fn and(self, other: Self) -> Self {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= b;
        }
        out
    }

    /// Union.
    pub fn or(self, other: Self) -> Self {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }

    /// Difference: the ids of `self` not in `other`.
    pub fn minus(self, other: Self) -> Self {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
        out
    }

    /// Whether every id of `self` is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.minus(*other).is_empty()
    }

    /// Whether the two sets share an id.
    pub fn intersects(&self, other: &Self) -> bool {
        !self.and(*other).is_empty()
    }

    /// Ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + bit)
            })
        })
    }

    /// The `n` lowest ids, or `None` when there are fewer.
    pub fn lowest(&self, n: u32) -> Option<Self> {
        if self.len() < n {
            return None;
        }
        Some(Self::from_ids(self.iter().take(n as usize)))
    }

    /// Ids in ascending order.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().map(|i| i as u32).collect()
    }
}

impl<const W: usize> fmt::Debug for Bits<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = CoreSet::range(0, 10);
        let b = CoreSet::from_ids([5, 70, 200]);
        assert_eq!(a.len(), 10);
        assert_eq!(a.and(b).to_vec(), vec![5]);
        assert_eq!(a.or(b).len(), 12);
        assert_eq!(b.minus(a).to_vec(), vec![70, 200]);
        assert!(CoreSet::from_ids([1, 2]).is_subset(&a));
        assert_eq!(b.lowest(2).map(|s| s.to_vec()), Some(vec![5, 70]));
        assert_eq!(b.lowest(4), None);
    }
}
