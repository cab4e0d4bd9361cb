//! Seeded, portable randomness: ChaCha8 with small helpers, so the same seed gives the same
//! choices on every platform.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng as _, SeedableRng};

/// A deterministic random source: ChaCha8 seeded from one `u64`.
pub struct SeededRng(ChaCha8Rng);

impl SeededRng {
    /// The generator of `seed`; equal seeds give equal sequences on every platform.
    pub fn new(seed: u64) -> Self {
        SeededRng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// The next 64 uniformly random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n > 0), without modulo bias.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        let n = n as u64;
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An index drawn with probability proportional to `weights` (some weight > 0).
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().filter(|w| **w > 0.0).sum();
        let mut x = self.unit() * total;
        for (i, &w) in weights.iter().enumerate() {
            if w > 0.0 {
                if x < w {
                    return i;
                }
                x -= w;
            }
        }
        weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
    }

    /// `k` distinct elements of `items`, in random order.
    pub fn sample<T: Copy>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool = items.to_vec();
        let k = k.min(pool.len());
        for i in 0..k {
            let j = i + self.below(pool.len() - i);
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (SeededRng::new(7), SeededRng::new(7));
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut r = SeededRng::new(1);
        for _ in 0..1000 {
            assert!(r.below(5) < 5);
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.sample(&[1, 2, 3], 5).len(), 3);
        assert_eq!(r.weighted(&[0.0, 1.0, 0.0]), 1);
    }
}
