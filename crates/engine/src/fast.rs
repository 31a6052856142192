//! A fast draw source for simulation: ChaCha8 with unbiased multiply-shift
//! scaling (Lemire's method). Golden vectors pin its output, so a change in
//! `rand_chacha` cannot silently change a simulation's counts.

use crate::draw::DrawSource;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// ChaCha8 seeded from 32 bytes, on a chosen stream.
#[derive(Clone, Debug)]
pub struct FastSource {
    rng: ChaCha8Rng,
}

impl FastSource {
    /// A source for `seed`, reading ChaCha stream `stream`: independent
    /// sources for the chunks of a parallel simulation.
    pub fn new(seed: [u8; 32], stream: u64) -> FastSource {
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(stream);
        FastSource { rng }
    }

    /// A source from a 64-bit seed (expanded by ChaCha's own seed_from_u64).
    pub fn from_u64(seed: u64, stream: u64) -> FastSource {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        FastSource { rng }
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }
}

impl DrawSource for FastSource {
    #[inline(always)]
    fn start_draw(&mut self, _n: u64) {}

    /// Lemire's nearly divisionless method: exact and unbiased, rejecting
    /// the same proportion of words as the modulo method, but dividing only
    /// when a word falls in the low, possibly biased zone.
    #[inline(always)]
    fn below(&mut self, m: u32) -> u32 {
        let mut p = u64::from(self.rng.next_u32()) * u64::from(m);
        let mut low = p as u32;
        if low < m {
            let threshold = m.wrapping_neg() % m;
            while low < threshold {
                p = u64::from(self.rng.next_u32()) * u64::from(m);
                low = p as u32;
            }
        }
        (p >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_vectors_of_the_fast_source() {
        let mut s = FastSource::new([7u8; 32], 3);
        let words: Vec<u32> = (0..4).map(|_| s.next_u32()).collect();
        assert_eq!(words, GOLDEN_WORDS);
        let mut s = FastSource::from_u64(42, 0);
        let draws: Vec<u32> = (1..=16).map(|m| s.below(m)).collect();
        assert_eq!(draws, GOLDEN_DRAWS);
    }

    #[test]
    fn below_is_in_range_and_uses_every_value() {
        let mut s = FastSource::from_u64(1, 0);
        for m in 1..=16 {
            let mut seen = vec![0u32; m as usize];
            for _ in 0..2000 {
                let x = s.below(m);
                assert!(x < m);
                seen[x as usize] += 1;
            }
            assert!(seen.iter().all(|&c| c > 0), "m = {m}: {seen:?}");
        }
    }

    #[test]
    fn streams_differ() {
        let mut a = FastSource::new([1; 32], 0);
        let mut b = FastSource::new([1; 32], 1);
        let xa: Vec<u32> = (0..8).map(|_| a.next_u32()).collect();
        let xb: Vec<u32> = (0..8).map(|_| b.next_u32()).collect();
        assert_ne!(xa, xb);
    }

    const GOLDEN_WORDS: [u32; 4] = [3890519893, 542286129, 4232990754, 1921957754];
    const GOLDEN_DRAWS: [u32; 16] = [0, 1, 0, 3, 3, 2, 2, 5, 6, 2, 7, 1, 4, 4, 2, 12];
}
