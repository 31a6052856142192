//! The raw output of the game's two draw sources as 32-bit words, for
//! outside test suites (`dieharder -a -g 200`, TestU01, PractRand): what
//! `as-capone rng-stream --source fair|sim [--seed HEX] [--bytes N]` writes
//! on stdout, and what the certification report's dieharder appendix reads
//! the verdicts of ([`certify::DIEHARDER_COMMAND`]).
//!
//! - `fair`: the fair stream of docs/contract.md ("Fairness") exactly as a played
//!   ticket reads it: for draws `n = 0, 1, 2, ...` the first HMAC block of
//!   each draw, `HMAC-SHA256(server_seed, "{client_seed}:{serial}:{n}:0")`,
//!   its eight big-endian words in order (a draw rarely needs a second
//!   block: only after a rejection, less than once in 2^28 draws). The
//!   server seed is `--seed` (32 bytes of hex); the client seed and serial
//!   are fixed, printed on stderr.
//! - `sim`: the simulator's ChaCha8 source ([`engine::FastSource`]) seeded
//!   from `--seed` (a `u64` in hex), its 32-bit words as the engine reads
//!   them.
//!
//! Words are written little-endian, the byte order `dieharder -g 200`
//! (stdin_input_raw) reads on this machine.

use clap::ValueEnum;
use engine::FastSource;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Which draw source a stream reads.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Source {
    /// The fair HMAC-SHA256 stream of played tickets.
    Fair,
    /// The simulator's ChaCha8 stream.
    Sim,
}

/// The fixed client seed and serial of the `fair` stream.
pub const CLIENT_SEED: &str = "rng-stream";
/// The fixed serial of the `fair` stream.
pub const SERIAL: &str = "000-0000000-000";

/// A generator of 32-byte chunks of either stream.
pub enum Stream {
    /// The fair stream: the keyed HMAC and the next draw number.
    Fair {
        /// HMAC-SHA256 keyed with the server seed.
        mac: Hmac<Sha256>,
        /// The next draw number.
        n: u64,
    },
    /// The simulator's source.
    Sim(Box<FastSource>),
}

impl Stream {
    /// The stream of `source` from `--seed`'s text (a fixed seed when absent).
    pub fn new(source: Source, seed: Option<&str>) -> anyhow::Result<Stream> {
        Ok(match source {
            Source::Fair => {
                let hex_seed = seed.unwrap_or("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
                let key: [u8; 32] = hex::decode(hex_seed)
                    .ok()
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| anyhow::anyhow!("--seed for fair: 64 hex digits (a 32-byte server seed)"))?;
                Stream::Fair { mac: Hmac::new_from_slice(&key).expect("any key length"), n: 0 }
            }
            Source::Sim => {
                let s = seed.unwrap_or("2a");
                let v = u64::from_str_radix(s.trim_start_matches("0x"), 16)
                    .map_err(|_| anyhow::anyhow!("--seed for sim: a u64 in hex"))?;
                Stream::Sim(Box::new(FastSource::from_u64(v, 0)))
            }
        })
    }

    /// The next 32 bytes: eight words, each little-endian.
    pub fn next_chunk(&mut self, out: &mut [u8; 32]) {
        match self {
            Stream::Fair { mac, n } => {
                let mut m = mac.clone();
                m.update(format!("{CLIENT_SEED}:{SERIAL}:{n}:0").as_bytes());
                let block = m.finalize().into_bytes();
                *n += 1;
                for (o, w) in out.chunks_exact_mut(4).zip(block.chunks_exact(4)) {
                    let word = u32::from_be_bytes(w.try_into().expect("4 bytes"));
                    o.copy_from_slice(&word.to_le_bytes());
                }
            }
            Stream::Sim(src) => {
                for o in out.chunks_exact_mut(4) {
                    o.copy_from_slice(&src.next_u32().to_le_bytes());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{DrawSource, FairStream};

    /// The fair stream is the engine's own: its words are the ones a played
    /// ticket's draws read (the first word of draw n is what `below` takes).
    #[test]
    fn fair_stream_is_the_engines_first_block_of_each_draw() {
        let seed = [7u8; 32];
        let mut s = Stream::new(Source::Fair, Some(&hex::encode(seed))).unwrap();
        let fair = FairStream::new(&seed, CLIENT_SEED, SERIAL);
        for n in 0..3u64 {
            let mut chunk = [0u8; 32];
            s.next_chunk(&mut chunk);
            let block = fair.block(n, 0);
            for (o, b) in chunk.chunks_exact(4).zip(block.chunks_exact(4)) {
                assert_eq!(u32::from_le_bytes(o.try_into().unwrap()), u32::from_be_bytes(b.try_into().unwrap()));
            }
            // And a draw of 2^31 (never rejected) reads the first word: the stream is what games use.
            let mut src = FairStream::new(&seed, CLIENT_SEED, SERIAL);
            src.start_draw(n);
            let first = u32::from_le_bytes(chunk[..4].try_into().unwrap());
            assert_eq!(src.below(1 << 31), first % (1 << 31));
        }
    }

    #[test]
    fn sim_stream_is_the_simulators_source() {
        let mut s = Stream::new(Source::Sim, Some("2a")).unwrap();
        let mut src = FastSource::from_u64(0x2a, 0);
        let mut chunk = [0u8; 32];
        s.next_chunk(&mut chunk);
        for o in chunk.chunks_exact(4) {
            assert_eq!(u32::from_le_bytes(o.try_into().unwrap()), src.next_u32());
        }
    }

    #[test]
    fn bad_seeds_are_refused() {
        assert!(Stream::new(Source::Fair, Some("abcd")).is_err());
        assert!(Stream::new(Source::Sim, Some("xyz")).is_err());
    }
}
