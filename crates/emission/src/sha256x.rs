//! SHA-256 of several independent messages at once, written by hand: the
//! one primitive of this crate that is not a library's, kept small and
//! pinned by its tests against the `sha2` crate.
//!
//! **Why.** A block is about 2.1 million SHA-256 compressions whatever the
//! code does (its bytes are fixed by the contract). With the CPU's SHA
//! extensions one compression is 32 `sha256rnds2` instructions, each
//! waiting for the previous one: one message at a time is bound by that
//! instruction's latency, not by how many the core can issue. Here `N`
//! messages (the leaves of `N` tickets, `N` nodes of one tree level...) go
//! through the rounds together, their instructions interleaved, so the
//! core works on `N` independent chains. On the project's AMD EPYC (Zen 3)
//! four lanes do a compression in about half the time of one stream
//! (BENCHMARKS.md has the figures).
//!
//! **What it computes.** Exactly FIPS 180-4 SHA-256: [`compress`] is the
//! standard compression function applied to each lane's state and block,
//! and the tests' `digest` pads each message as the standard does. When the CPU has
//! no SHA extensions (or is not x86-64), every lane goes through the
//! `sha2` crate's `compress256` instead: the same digests, one at a time.
//!
//! **Safety.** Most of the crate's `unsafe` code is here (the rest is one
//! `set_len` in `block` and one `madvise` hint in `pages`): calling the
//! `#[target_feature]` function after `accelerated()` said the CPU has the
//! features, and unaligned 16-byte loads and stores inside arrays whose
//! size the types fix.
//!
//! **Public as a namespace**, unlike the crate's other modules: [`IV`] and
//! [`compress`] are FIPS 180-4's names, which say what they are only under
//! this module's. The block benchmark measures [`compress`] against the
//! `sha2` crate with them.

use sha2::digest::generic_array::GenericArray;

/// SHA-256's initial state (FIPS 180-4, 5.3.3).
pub const IV: [u32; 8] =
    [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// The longest message [`digest`] takes: four blocks with their padding.
#[cfg(test)]
const MAX_MESSAGE: usize = 4 * 64 - 9;

/// Whether this CPU runs the interleaved SHA-extension code (x86-64 with
/// SHA, SSSE3 and SSE4.1); otherwise the `sha2` crate does every lane.
fn accelerated() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sha")
            && std::arch::is_x86_feature_detected!("sse2")
            && std::arch::is_x86_feature_detected!("ssse3")
            && std::arch::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Runs the compression function over `blocks[j]` (in order) into
/// `states[j]`, for each lane `j`. Panics unless every lane has the same
/// number of blocks.
pub fn compress<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) {
    compress_with(states, blocks, accelerated());
}

/// [`compress`], through the SHA extensions only when `accelerated` (the
/// tests run both ways).
fn compress_with<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N], accelerated: bool) {
    let count = blocks.first().map_or(0, |b| b.len());
    assert!(blocks.iter().all(|b| b.len() == count), "every lane has the same number of blocks");
    #[cfg(target_arch = "x86_64")]
    if accelerated {
        // SAFETY: `accelerated` is only true when `accelerated()` found
        // every feature `shani::compress` is compiled for on this CPU.
        unsafe { shani::compress(states, blocks, count) };
        return;
    }
    for (state, blocks) in states.iter_mut().zip(blocks) {
        for block in blocks {
            sha2::compress256(state, std::slice::from_ref(GenericArray::from_slice(block)));
        }
    }
}

/// The blocks of `message` padded as FIPS 180-4 (5.1.1) pads it, and
/// how many there are.
#[cfg(test)]
fn pad(message: &[u8]) -> ([[u8; 64]; 4], usize) {
    assert!(message.len() <= MAX_MESSAGE, "at most {MAX_MESSAGE} bytes");
    let mut blocks = [[0u8; 64]; 4];
    blocks.as_flattened_mut()[..message.len()].copy_from_slice(message);
    let count = pad_in_place(blocks.as_flattened_mut(), message.len());
    (blocks, count)
}

/// Pads the message of `len` bytes at the start of `buf`, whose bytes
/// after it are zeros, and returns the number of 64-byte blocks.
pub(crate) fn pad_in_place(buf: &mut [u8], len: usize) -> usize {
    let count = (len + 9).div_ceil(64);
    buf[len] = 0x80;
    buf[64 * count - 8..64 * count].copy_from_slice(&(8 * len as u64).to_be_bytes());
    count
}

/// The digest of a final state: its words big-endian.
pub(crate) fn output(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// `SHA-256(messages[j])` for each lane `j`. Panics unless the messages
/// pad to the same number of blocks (their lengths are within the same
/// 64-byte step, counting the 9 bytes of padding) or one is longer than
/// [`MAX_MESSAGE`]. The reference the tests pin [`compress`] with.
#[cfg(test)]
fn digest<const N: usize>(messages: [&[u8]; N]) -> [[u8; 32]; N] {
    let padded = messages.map(pad);
    let mut states = [IV; N];
    compress(&mut states, std::array::from_fn(|j| &padded[j].0[..padded[j].1]));
    states.map(|s| output(&s))
}

#[cfg(target_arch = "x86_64")]
mod shani {
    use std::arch::x86_64::*;

    /// The round constants of FIPS 180-4 (4.2.2), four per 128-bit load.
    static K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    /// `blocks[j][..count]` into `states[j]`, the `N` lanes' instructions
    /// interleaved round by round. The rounds are those of the `sha2`
    /// crate's SHA-NI backend (and Intel's reference code): the state held
    /// as `ABEF` and `CDGH`, two rounds per `sha256rnds2`, the message
    /// schedule four words at a time with `sha256msg1`/`sha256msg2`.
    ///
    /// # Safety
    /// The CPU must have SHA, SSE2, SSSE3 and SSE4.1 ([`super::accelerated`]),
    /// and every `blocks[j]` must hold at least `count` blocks.
    // Lanes and blocks are indexed (`[j]`, `[b]`) so that the lane loops,
    // of constant length, unroll into straight interleaved code.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub(super) unsafe fn compress<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N], count: usize) {
        // Byte order: the message words are big-endian.
        let bswap = _mm_set_epi64x(0x0C0D_0E0F_0809_0A0Bu64 as i64, 0x0405_0607_0001_0203u64 as i64);
        let mut abef = [_mm_setzero_si128(); N];
        let mut cdgh = [_mm_setzero_si128(); N];
        for j in 0..N {
            let p = states[j].as_ptr().cast::<__m128i>();
            // SAFETY: a `[u32; 8]` is 32 bytes: two unaligned 16-byte loads.
            let (dcba, efgh) = unsafe { (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1))) };
            let cdab = _mm_shuffle_epi32(dcba, 0xB1);
            let efgh = _mm_shuffle_epi32(efgh, 0x1B);
            abef[j] = _mm_alignr_epi8(cdab, efgh, 8);
            cdgh[j] = _mm_blend_epi16(efgh, cdab, 0xF0);
        }
        // Four rounds of every lane with the message words `$w` (the
        // schedule's four words of rounds `4 $i ..`).
        macro_rules! rounds4 {
            ($w:ident, $i:expr) => {{
                // SAFETY: `$i < 16`, so bytes `16 $i .. 16 $i + 16` of the 256 of `K`.
                let k = unsafe { _mm_loadu_si128(K.as_ptr().add(4 * $i).cast::<__m128i>()) };
                for j in 0..N {
                    let t1 = _mm_add_epi32($w[j], k);
                    cdgh[j] = _mm_sha256rnds2_epu32(cdgh[j], abef[j], t1);
                    abef[j] = _mm_sha256rnds2_epu32(abef[j], cdgh[j], _mm_shuffle_epi32(t1, 0x0E));
                }
            }};
        }
        // `$w4` = the next four schedule words from the sixteen before
        // them (`$w0` oldest), then their four rounds.
        macro_rules! schedule_rounds4 {
            ($w0:ident, $w1:ident, $w2:ident, $w3:ident, $w4:ident, $i:expr) => {{
                for j in 0..N {
                    let t = _mm_add_epi32(_mm_sha256msg1_epu32($w0[j], $w1[j]), _mm_alignr_epi8($w3[j], $w2[j], 4));
                    $w4[j] = _mm_sha256msg2_epu32(t, $w3[j]);
                }
                rounds4!($w4, $i);
            }};
        }
        for b in 0..count {
            let saved = (abef, cdgh);
            // The block's sixteen words, big-endian, four per register.
            let mut w = [[_mm_setzero_si128(); N]; 4];
            for j in 0..N {
                let p = blocks[j][b].as_ptr().cast::<__m128i>();
                for (q, w) in w.iter_mut().enumerate() {
                    // SAFETY: `b < count` and `blocks[j]` holds `count`
                    // blocks of 64 bytes: four unaligned 16-byte loads.
                    w[j] = _mm_shuffle_epi8(unsafe { _mm_loadu_si128(p.add(q)) }, bswap);
                }
            }
            let [mut w0, mut w1, mut w2, mut w3] = w;
            let mut w4 = [_mm_setzero_si128(); N];
            // Unrolled as in the `sha2` crate, the five registers taking turns.
            rounds4!(w0, 0);
            rounds4!(w1, 1);
            rounds4!(w2, 2);
            rounds4!(w3, 3);
            schedule_rounds4!(w0, w1, w2, w3, w4, 4);
            schedule_rounds4!(w1, w2, w3, w4, w0, 5);
            schedule_rounds4!(w2, w3, w4, w0, w1, 6);
            schedule_rounds4!(w3, w4, w0, w1, w2, 7);
            schedule_rounds4!(w4, w0, w1, w2, w3, 8);
            schedule_rounds4!(w0, w1, w2, w3, w4, 9);
            schedule_rounds4!(w1, w2, w3, w4, w0, 10);
            schedule_rounds4!(w2, w3, w4, w0, w1, 11);
            schedule_rounds4!(w3, w4, w0, w1, w2, 12);
            schedule_rounds4!(w4, w0, w1, w2, w3, 13);
            schedule_rounds4!(w0, w1, w2, w3, w4, 14);
            schedule_rounds4!(w1, w2, w3, w4, w0, 15);
            for j in 0..N {
                abef[j] = _mm_add_epi32(abef[j], saved.0[j]);
                cdgh[j] = _mm_add_epi32(cdgh[j], saved.1[j]);
            }
        }
        for j in 0..N {
            let feba = _mm_shuffle_epi32(abef[j], 0x1B);
            let dchg = _mm_shuffle_epi32(cdgh[j], 0xB1);
            let dcba = _mm_blend_epi16(feba, dchg, 0xF0);
            let hgef = _mm_alignr_epi8(dchg, feba, 8);
            let p = states[j].as_mut_ptr().cast::<__m128i>();
            // SAFETY: a `[u32; 8]` is 32 bytes: two unaligned 16-byte stores.
            unsafe {
                _mm_storeu_si128(p, dcba);
                _mm_storeu_si128(p.add(1), hgef);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    fn sha2(m: &[u8]) -> [u8; 32] {
        Sha256::digest(m).into()
    }

    #[test]
    fn the_standards_examples() {
        // FIPS 180-4's examples ("abc", and the two-block message), and the empty message.
        let two = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let [abc, long] = digest([b"abc".as_slice(), b"abc"]);
        assert_eq!(abc, long);
        assert_eq!(hex::encode(abc), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex::encode(digest([two.as_slice()])[0]),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex::encode(digest::<1>([b""])[0]),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn every_length_and_lane_count_matches_sha2() {
        for len in 0..=MAX_MESSAGE {
            let m: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let other: Vec<u8> = m.iter().map(|b| b ^ 0x5a).collect();
            assert_eq!(digest([m.as_slice()]), [sha2(&m)], "{len} bytes");
            assert_eq!(digest([m.as_slice(), &other]), [sha2(&m), sha2(&other)], "{len} bytes");
            assert_eq!(digest([m.as_slice(), &other, &m, &other]), [sha2(&m), sha2(&other), sha2(&m), sha2(&other)]);
        }
    }

    #[test]
    #[should_panic(expected = "same number of blocks")]
    fn lanes_of_different_block_counts_are_refused() {
        digest([b"short".as_slice(), &[0; 60]]);
    }

    /// Messages of the lengths a block hashes: play codes (16 bytes),
    /// server seeds (32), nodes (65), leaves (0x00 and 124 to 132 bytes).
    fn lengths() -> impl Strategy<Value = usize> {
        prop_oneof![Just(16usize), Just(32), Just(65), 125usize..=133, 0..=MAX_MESSAGE]
    }

    proptest! {
        #[test]
        fn random_messages_match_sha2(len in lengths(), seed in any::<[u8; 32]>()) {
            let lane = |j: u8| -> Vec<u8> { (0..len).map(|i| seed[i % 32] ^ (i / 32) as u8 ^ j.wrapping_mul(151)).collect() };
            let (a, b, c, d) = (lane(0), lane(1), lane(2), lane(3));
            prop_assert_eq!(digest([a.as_slice(), &b, &c, &d]), [sha2(&a), sha2(&b), sha2(&c), sha2(&d)]);
            prop_assert_eq!(digest([a.as_slice(), &b]), [sha2(&a), sha2(&b)]);
            prop_assert_eq!(digest([c.as_slice()]), [sha2(&c)]);
        }

        #[test]
        fn chained_blocks_from_any_state_match_sha2(state in any::<[u32; 8]>(), blocks in any::<[[u8; 64]; 3]>()) {
            let mut one = state;
            for b in &blocks {
                sha2::compress256(&mut one, std::slice::from_ref(GenericArray::from_slice(b)));
            }
            for accelerated in [accelerated(), false] {
                let mut lanes = [state, IV, state, IV];
                compress_with(&mut lanes, [&blocks[..], &blocks[..], &blocks[..], &blocks[..]], accelerated);
                prop_assert_eq!(lanes[0], one);
                prop_assert_eq!(lanes[2], one);
                prop_assert_eq!(lanes[1], lanes[3]);
            }
        }
    }
}
