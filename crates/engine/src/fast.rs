//! A fast draw source for simulation: ChaCha8 with unbiased multiply-shift
//! scaling (Lemire's method). Golden vectors pin its output, so a change in
//! `rand_chacha` cannot silently change a simulation's counts.

use crate::draw::DrawSource;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// ChaCha8 seeded from 32 bytes, on a chosen stream.
///
/// It reads ChaCha's output 256 bytes at a time into its own buffer of
/// 16-bit words (the byte stream's order, little-endian pairs) and hands
/// them out one at a time ([`FastSource::next_u16`]) or as a window read
/// ahead ([`Words16::window`]): the simulator asks for about thirteen words
/// per ticket, tens of millions of times a second, and its fast path reads a
/// whole game's words from one window without a refill check per word.
#[derive(Clone, Debug)]
pub struct FastSource {
    rng: ChaCha8Rng,
    /// ChaCha's bytes as they come, written there by ChaCha itself: word
    /// `k` is the little-endian pair `buf[2k], buf[2k + 1]`.
    buf: [u8; 2 * CAP],
    /// The next word is word `pos`; words `pos..end` are unread.
    pos: usize,
    end: usize,
}

/// Words per refill: 256 bytes, four ChaCha blocks.
const BLOCK: usize = 128;
/// The buffer holds a refill and what was left of the previous one.
const CAP: usize = 2 * BLOCK;
/// The largest window [`Words16::window`] can give.
pub const MAX_WINDOW: usize = BLOCK;

/// A stream of 16-bit words that can be read ahead: the draws of
/// [`FastSource`] (and of a test's scripted stream), whatever reads them.
pub trait Words16 {
    /// The next `N` words (`N` at most [`MAX_WINDOW`]), without taking them.
    fn window<const N: usize>(&mut self) -> [u16; N];
    /// Takes `n` words (at most the last window's length).
    fn consume(&mut self, n: usize);
    /// Takes the next word.
    #[inline(always)]
    fn take_u16(&mut self) -> u16 {
        let [x] = self.window::<1>();
        self.consume(1);
        x
    }
}

/// [`FastSource`]'s draw below `m` (at most 256): words are taken until
/// one is accepted by [`accept16`]. Any [`Words16`] stream drawn with this
/// rule gives the draws `FastSource` would give on the same words.
#[inline(always)]
pub fn below16<W: Words16 + ?Sized>(w: &mut W, m: u32) -> u32 {
    debug_assert!((1..=SMALL).contains(&m));
    loop {
        if let Some(v) = accept16(w.take_u16(), m) {
            return v;
        }
    }
}

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

    /// A source reading `rng`'s stream from where it stands (at a 32-bit
    /// word boundary): the simulator's lanes read a chunk's words straight
    /// from ChaCha, 256 bytes at a time, and hand the rest of its stream to
    /// a `FastSource` for the chunk's last tickets.
    pub fn from_chacha(rng: ChaCha8Rng) -> FastSource {
        FastSource::with(rng)
    }

    fn with(rng: ChaCha8Rng) -> FastSource {
        FastSource { rng, buf: [0; 2 * CAP], pos: 0, end: 0 }
    }

    /// Moves the unread words to the front and has ChaCha write the next
    /// 256 bytes of the stream straight after them (no copy into words:
    /// words are read from the bytes where they lie).
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        self.buf.copy_within(2 * self.pos..2 * self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        self.rng.fill_bytes(&mut self.buf[2 * self.end..2 * (self.end + BLOCK)]);
        self.end += BLOCK;
    }

    /// Word `k` of the buffer.
    #[inline(always)]
    fn word(&self, k: usize) -> u16 {
        let k = k % CAP;
        u16::from_le_bytes([self.buf[2 * k], self.buf[2 * k + 1]])
    }

    /// The next 16 bits of the stream.
    #[inline(always)]
    pub fn next_u16(&mut self) -> u16 {
        if self.pos == self.end {
            self.refill();
        }
        let x = self.word(self.pos);
        self.pos += 1;
        x
    }

    /// The next 32 bits of the stream (two 16-bit pieces, low first).
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        let low = u32::from(self.next_u16());
        low | u32::from(self.next_u16()) << 16
    }
}

impl Words16 for FastSource {
    #[inline(always)]
    fn window<const N: usize>(&mut self) -> [u16; N] {
        const { assert!(N <= MAX_WINDOW) };
        if self.end - self.pos < N {
            self.refill();
        }
        let mut words = [0u16; N];
        for (w, b) in words.iter_mut().zip(self.buf[2 * self.pos..2 * (self.pos + N)].chunks_exact(2)) {
            *w = u16::from_le_bytes([b[0], b[1]]);
        }
        words
    }

    #[inline(always)]
    fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
    }

    #[inline(always)]
    fn take_u16(&mut self) -> u16 {
        self.next_u16()
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
            return below16(self, m);
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
pub const SMALL: u32 = 256;

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

    /// Windows read ahead and take the same words, in the same order, as
    /// word-by-word reading, across refills.
    #[test]
    fn windows_read_the_same_stream() {
        let mut a = FastSource::new([9; 32], 5);
        let mut b = FastSource::new([9; 32], 5);
        let mut k = 0usize;
        for round in 0..2000 {
            let take = round % 24;
            let w: [u16; 24] = b.window::<24>();
            for (j, &x) in w.iter().enumerate().take(take) {
                assert_eq!(x, a.next_u16(), "round {round}, word {j}");
            }
            b.consume(take);
            k += take;
            if round % 7 == 0 {
                assert_eq!(b.take_u16(), a.next_u16());
                k += 1;
            }
        }
        assert!(k > 4 * BLOCK);
        assert_eq!(a.next_u32(), b.next_u32());
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
