//! The fair draw stream of `docs/contract.md` (Fairness), written by hand so that it
//! is pinned by golden vectors and can be audited line by line.
//!
//! Draw number `n` reads, for `c = 0, 1, 2, ...`, the blocks
//! `HMAC-SHA256(key = server_seed, message = "{client_seed}:{serial}:{n}:{c}")`,
//! each giving eight big-endian `u32`s used in order; every draw starts its
//! own stream at `c = 0`. Scaling is [`uniform_below`].

use crate::draw::{DrawSource, uniform_below};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// `hex(SHA-256(server_seed))`: the commitment shown at purchase (guarantee 6).
pub fn commitment(server_seed: &[u8; 32]) -> String {
    hex::encode(Sha256::digest(server_seed))
}

/// The draw source of a ticket that is played for real.
#[derive(Clone)]
pub struct FairStream {
    mac: HmacSha256,
    client_seed: String,
    serial: String,
    n: u64,
    c: u64,
    words: [u32; 8],
    used: usize,
}

impl FairStream {
    pub fn new(server_seed: &[u8; 32], client_seed: &str, serial: &str) -> FairStream {
        FairStream {
            mac: HmacSha256::new_from_slice(server_seed).expect("HMAC takes keys of any length"),
            client_seed: client_seed.to_string(),
            serial: serial.to_string(),
            n: 0,
            c: 0,
            words: [0; 8],
            used: 8,
        }
    }

    /// The 32-byte HMAC block `c` of draw `n`.
    pub fn block(&self, n: u64, c: u64) -> [u8; 32] {
        let mut mac = self.mac.clone();
        mac.update(format!("{}:{}:{}:{}", self.client_seed, self.serial, n, c).as_bytes());
        mac.finalize().into_bytes().into()
    }

    fn next_u32(&mut self) -> u32 {
        if self.used == 8 {
            let block = self.block(self.n, self.c);
            self.c += 1;
            for (w, chunk) in self.words.iter_mut().zip(block.chunks_exact(4)) {
                *w = u32::from_be_bytes(chunk.try_into().expect("4 bytes"));
            }
            self.used = 0;
        }
        let w = self.words[self.used];
        self.used += 1;
        w
    }
}

impl DrawSource for FairStream {
    fn start_draw(&mut self, n: u64) {
        self.n = n;
        self.c = 0;
        self.used = 8;
    }

    fn below(&mut self, m: u32) -> u32 {
        uniform_below(m, || self.next_u32())
    }
}

impl std::fmt::Debug for FairStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key: the server seed is a secret until the end.
        f.debug_struct("FairStream")
            .field("client_seed", &self.client_seed)
            .field("serial", &self.serial)
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> [u8; 32] {
        let mut s = [0u8; 32];
        for (i, b) in s.iter_mut().enumerate() {
            *b = i as u8;
        }
        s
    }

    #[test]
    fn commitment_is_sha256_of_the_seed_golden() {
        assert_eq!(commitment(&[0u8; 32]), "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
    }

    #[test]
    fn hmac_block_matches_an_independent_hmac_computation() {
        // HMAC-SHA256 written out from its definition (RFC 2104) with plain
        // SHA-256, so the stream does not just agree with itself.
        let key = seed();
        let msg = b"client:ASC-001-000001-000042-7:3:0";
        let mut ipad = [0x36u8; 64];
        let mut opad = [0x5cu8; 64];
        for i in 0..32 {
            ipad[i] ^= key[i];
            opad[i] ^= key[i];
        }
        let inner = Sha256::new().chain_update(ipad).chain_update(msg).finalize();
        let outer: [u8; 32] = Sha256::new().chain_update(opad).chain_update(inner).finalize().into();
        let s = FairStream::new(&key, "client", "ASC-001-000001-000042-7");
        assert_eq!(s.block(3, 0), outer);
    }

    /// Golden vectors: these numbers are the contract. If this test fails the
    /// fairness algorithm changed and every published record would break.
    #[test]
    fn golden_vectors_of_the_fair_stream() {
        let mut s = FairStream::new(&seed(), "player-seed", "ASC-001-000001-000042-7");
        assert_eq!(hex::encode(s.block(0, 0)), GOLDEN_BLOCK_0_0, "HMAC block of draw 0, counter 0");
        let mut out = Vec::new();
        for n in 0..6 {
            s.start_draw(n);
            out.push(s.below(8 - n as u32));
        }
        s.start_draw(6);
        out.push(s.below(16));
        out.push(s.below(15));
        assert_eq!(out, GOLDEN_DRAWS);
    }

    #[test]
    fn each_draw_starts_its_own_stream() {
        let mut a = FairStream::new(&seed(), "x", "S");
        let mut b = FairStream::new(&seed(), "x", "S");
        a.start_draw(5);
        let first: Vec<u32> = (0..20).map(|_| a.below(1 << 31)).collect();
        // b reads other draws first, then draw 5 from its beginning.
        b.start_draw(4);
        for _ in 0..13 {
            b.below(7);
        }
        b.start_draw(5);
        let second: Vec<u32> = (0..20).map(|_| b.below(1 << 31)).collect();
        assert_eq!(first, second, "draw 5 reads the same words whatever came before");
    }

    #[test]
    fn words_are_big_endian_and_used_in_order_across_blocks() {
        let s0 = FairStream::new(&seed(), "c", "S");
        let mut s = s0.clone();
        s.start_draw(2);
        let mut expect = Vec::new();
        for c in 0..2 {
            let b = s0.block(2, c);
            for ch in b.chunks_exact(4) {
                expect.push(u32::from_be_bytes(ch.try_into().unwrap()));
            }
        }
        // m = 2^31 never rejects (2^32 mod 2^31 = 0): below returns x mod 2^31.
        let got: Vec<u32> = (0..16).map(|_| s.below(1 << 31)).collect();
        let want: Vec<u32> = expect.iter().map(|x| x % (1 << 31)).collect();
        assert_eq!(got, want);
    }

    // Computed independently with Python's hmac and hashlib modules.
    const GOLDEN_BLOCK_0_0: &str = "293438d1380e8e9e372848a1a7d5c4aaa7ba358f30837f968168623d9e894ad9";
    const GOLDEN_DRAWS: [u32; 8] = [1, 2, 3, 1, 2, 2, 15, 7];
}
