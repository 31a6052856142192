//! The order of a block's tickets: our own Fisher-Yates shuffle over a
//! ChaCha20 stream, written by hand because it must be pinned (guarantee 5):
//! a `rand` upgrade that changed its `shuffle` would otherwise silently
//! change which paper ticket carries which prizes.
//!
//! The algorithm, exactly (Durstenfeld's version of Fisher-Yates):
//!
//! 1. Lay out the table's rows in table order, each repeated as many times
//!    as it has tickets: `[0, 0, ..., 0, 1, 1, ..., 1, 2, ...]` (row indices
//!    from 0), `n` = the block size entries.
//! 2. For `i = n - 1` down to `1`: draw `j` uniform in `0..=i` with
//!    [`engine::uniform_below`]`(i + 1)` (take the next `u32`, reject it
//!    while `x >= 2^32 - (2^32 mod (i + 1))`, return `x mod (i + 1)`), and
//!    swap entries `i` and `j`.
//! 3. Entry `k` is the row of the ticket sold at position `k + 1`.
//!
//! The `u32`s are the words of the ChaCha20 keystream (20 rounds, the
//! original 64-bit counter and 64-bit nonce layout, nonce 0, counter from 0),
//! each word read little-endian, in order, as `rand_chacha` 0.9's
//! `ChaCha20Rng::next_u32` gives them; the key is the block's
//! [`Purpose::Shuffle`](crate::seed::Purpose) key. A test pins that stream to
//! the published ChaCha20 keystream, and golden vectors pin the shuffle.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

/// The ChaCha20 word stream of a derived key.
pub(crate) fn stream(key: [u8; 32]) -> ChaCha20Rng {
    ChaCha20Rng::from_seed(key)
}

/// Shuffles `slots` in place with the algorithm of the module doc.
fn fisher_yates<T>(slots: &mut [T], rng: &mut impl RngCore) {
    for i in (1..slots.len()).rev() {
        let j = engine::uniform_below((i + 1) as u32, || rng.next_u32()) as usize;
        slots.swap(i, j);
    }
}

/// The rows of a block in sale order: step 1 then step 2 of the module doc.
pub(crate) fn shuffled_rows(counts: &[u32], key: [u8; 32]) -> Vec<u32> {
    let n: usize = counts.iter().map(|&c| c as usize).sum();
    let mut rows = Vec::with_capacity(n);
    for (row, &count) in counts.iter().enumerate() {
        rows.extend(std::iter::repeat_n(row as u32, count as usize));
    }
    fisher_yates(&mut rows, &mut stream(key));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_chacha20_keystream_read_little_endian() {
        // ChaCha20 of the all-zero key and nonce, block 0 (the test vector of
        // draft-agl-tls-chacha20poly1305 and of RFC 7539 section 2.3's
        // reference): 76 b8 e0 ad a0 f1 3d 90 ...
        let mut rng = stream([0; 32]);
        let words: Vec<u32> = (0..4).map(|_| rng.next_u32()).collect();
        assert_eq!(words, [0xade0_b876, 0x903d_f1a0, 0xe56a_5d40, 0x28bd_8653]);
        // Word 16 is the first of block 1 (counter 1): 9f 07 e7 be ...
        let mut rng = stream([0; 32]);
        for _ in 0..16 {
            rng.next_u32();
        }
        assert_eq!(rng.next_u32(), 0xbee7_079f);
    }

    #[test]
    fn fisher_yates_swaps_exactly_as_documented() {
        // A word source we control: with words 0, 0, 0 every j is 0, so the
        // swaps are (3,0), (2,0), (1,0): [a,b,c,d] -> [d,b,c,a] -> [c,b,d,a] -> [b,c,d,a].
        struct Zeros;
        impl RngCore for Zeros {
            fn next_u32(&mut self) -> u32 {
                0
            }
            fn next_u64(&mut self) -> u64 {
                0
            }
            fn fill_bytes(&mut self, d: &mut [u8]) {
                d.fill(0)
            }
        }
        let mut v = ['a', 'b', 'c', 'd'];
        fisher_yates(&mut v, &mut Zeros);
        assert_eq!(v, ['b', 'c', 'd', 'a']);
    }

    #[test]
    fn the_shuffle_is_a_permutation_of_the_counts() {
        let rows = shuffled_rows(&[5, 0, 3, 1], [9; 32]);
        let mut sorted = rows.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 0, 0, 0, 0, 2, 2, 2, 3]);
        assert_ne!(rows, sorted, "this seed does move things");
    }

    #[test]
    fn every_order_of_three_is_reachable_and_roughly_equally_likely() {
        // 6 orders of [0,1,2] over 6000 keys: each near 1000.
        let mut hist = std::collections::HashMap::new();
        for k in 0..6000u32 {
            let mut key = [0u8; 32];
            key[..4].copy_from_slice(&k.to_le_bytes());
            *hist.entry(shuffled_rows(&[1, 1, 1], key)).or_insert(0u32) += 1;
        }
        assert_eq!(hist.len(), 6);
        for (order, n) in hist {
            assert!((850..1150).contains(&n), "{order:?} came {n} times of 6000");
        }
    }
}
