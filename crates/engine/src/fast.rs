//! A fast draw source for simulation: ChaCha8 with unbiased multiply-shift
//! scaling (Lemire's method). Golden vectors pin its output, so a change in
//! `rand_chacha` cannot silently change a simulation's counts.

use crate::draw::DrawSource;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// ChaCha8 seeded from 32 bytes, on a chosen stream.
///
/// It reads ChaCha's output 256 bytes at a time into its own buffer of
/// 64-bit words and hands out 16-bit pieces of the current word (low half
/// first: the byte stream's order) from a register, without the per-word
/// bookkeeping of `rand_core`'s block adapter: the simulator asks for about
/// eleven draws per ticket, tens of millions of times a second.
#[derive(Clone, Debug)]
pub struct FastSource {
    rng: ChaCha8Rng,
    words: [u64; WORDS],
    next: usize,
    current: u64,
    halves: u32,
}

const WORDS: usize = 32;

impl FastSource {
    /// A source for `seed`, reading ChaCha stream `stream`: independent
    /// sources for the chunks of a parallel simulation.
    pub fn new(seed: [u8; 32], stream: u64) -> FastSource {
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(stream);
        FastSource::with(rng)
    }

    /// A source from a 64-bit seed (expanded by ChaCha's own seed_from_u64).
    pub fn from_u64(seed: u64, stream: u64) -> FastSource {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        FastSource::with(rng)
    }

    fn with(rng: ChaCha8Rng) -> FastSource {
        FastSource { rng, words: [0; WORDS], next: WORDS, current: 0, halves: 0 }
    }

    #[cold]
    fn refill(&mut self) {
        let mut bytes = [0u8; WORDS * 8];
        self.rng.fill_bytes(&mut bytes);
        for (w, b) in self.words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        self.next = 0;
    }

    /// The next 16 bits of the stream.
    #[inline(always)]
    pub fn next_u16(&mut self) -> u16 {
        if self.halves == 0 {
            if self.next == WORDS {
                self.refill();
            }
            self.current = self.words[self.next % WORDS];
            self.next += 1;
            self.halves = 4;
        }
        let x = self.current as u16;
        self.current >>= 16;
        self.halves -= 1;
        x
    }

    /// The next 32 bits of the stream (two 16-bit pieces, low first).
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        let low = u32::from(self.next_u16());
        low | u32::from(self.next_u16()) << 16
    }
}

impl DrawSource for FastSource {
    #[inline(always)]
    fn start_draw(&mut self, _n: u64) {}

    /// Lemire's nearly divisionless method: exact and unbiased, dividing
    /// only when a word falls in the low, possibly biased zone. Small bounds
    /// (every bound of the game is at most 16) read 16-bit words, halving the
    /// ChaCha output a ticket needs; the rejection zone is then below m/2^16.
    #[inline(always)]
    fn below(&mut self, m: u32) -> u32 {
        assert!(m >= 1, "a uniform draw needs at least one outcome");
        if m <= SMALL {
            loop {
                if let Some(v) = accept16(self.next_u16(), m) {
                    return v;
                }
            }
        }
        loop {
            if let Some(v) = accept32(self.next_u32(), m) {
                return v;
            }
        }
    }
}

/// Lemire's rule on a 16-bit word: `(x * m) >> 16`, unless the low half of
/// the product falls below `2^16 mod m` (the outcomes that would be drawn
/// once too often): then `None`, draw again.
#[inline(always)]
pub fn accept16(x: u16, m: u32) -> Option<u32> {
    let p = u32::from(x) * m;
    let low = p & 0xFFFF;
    // The division happens only for low < m, rarely.
    if low < m && low < ((1u32 << 16) - m) % m { None } else { Some(p >> 16) }
}

/// The same rule on a 32-bit word.
#[inline(always)]
pub fn accept32(x: u32, m: u32) -> Option<u32> {
    let p = u64::from(x) * u64::from(m);
    let low = p as u32;
    if low < m && low < m.wrapping_neg() % m { None } else { Some((p >> 32) as u32) }
}

/// Bounds up to this read 16-bit words.
const SMALL: u32 = 256;

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

    /// Unbiased, exhaustively: over all 2^16 words, every outcome below m is
    /// accepted exactly as often as every other.
    #[test]
    fn sixteen_bit_scaling_is_exactly_uniform() {
        for m in 1..=SMALL {
            let mut count = vec![0u32; m as usize];
            for x in 0..=u16::MAX {
                if let Some(v) = accept16(x, m) {
                    count[v as usize] += 1;
                }
            }
            assert!(count.iter().all(|&c| c == count[0]), "m = {m}");
            assert_eq!(count[0], (1 << 16) / m, "m = {m}: only 2^16 mod m words are rejected");
        }
    }

    /// The 32-bit rule: powers of two never reject; otherwise exactly the
    /// words whose product's low half is below 2^32 mod m are rejected.
    #[test]
    fn thirty_two_bit_scaling_rejects_exactly_the_biased_zone() {
        for x in [0u32, 1, 12345, u32::MAX] {
            for k in 0..32 {
                assert_eq!(accept32(x, 1 << k), Some(((u64::from(x) << k) >> 32) as u32));
            }
        }
        // m = 3: 2^32 mod 3 = 1; the low half of x * 3 is 0 only for x = 0.
        assert_eq!(accept32(0, 3), None);
        assert_eq!(accept32(1, 3), Some(0));
        assert_eq!(accept32(u32::MAX, 3), Some(2));
        // m = 2^31 + 1: 2^32 mod m = 2^31 - 1, a rejection zone of almost half.
        let m = (1u32 << 31) + 1;
        assert_eq!(accept32(1, m), Some(0), "low half m: outside the zone");
        assert_eq!(accept32(2, m), None, "2m = 2^32 + 2: low half 2, inside the zone");
        assert_eq!(accept32(u32::MAX, m), Some(((u64::from(u32::MAX) * u64::from(m)) >> 32) as u32));
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
    const GOLDEN_DRAWS: [u32; 16] = [0, 0, 2, 2, 2, 0, 1, 7, 2, 7, 7, 5, 5, 4, 10, 10];
}
