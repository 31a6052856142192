//! Monte Carlo games through the engine (guarantee 1): the simulator plays
//! in the lanes of `engine::lanes` ([`run_chunks_lanes`]: eight chunks side
//! by side on a thread, one word of each a step), whose property tests prove
//! that they end every ticket as `engine::sim::play_weakest_first` does, the
//! engine's second path, which the engine's property tests prove gives the
//! same events, draws and results as `Game::apply` (the server's path) for
//! every draw sequence; [`play_ticket_apply`] plays through `Game::apply`
//! itself, and the tests below check that every path gives the same counts,
//! chunk by chunk.
//!
//! Reproducible whatever the number of threads: the games are cut into
//! fixed chunks of [`CHUNK`] games, chunk `i` draws from ChaCha8 stream `i`
//! of the seed, and threads take chunks in any order; counts are sums, so
//! the total does not depend on who played which chunk.

use crate::odds::FinalOutcome;
use engine::{
    Action, BLOCK, Discard, FastSource, Game, LANES, Lanes, MAX_TICKETS_PER_BLOCK, Phase, PrizeSchedule, finish_ticket,
    transpose,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Games per chunk: each chunk has its own random stream.
pub const CHUNK: u64 = 1 << 16;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub games: u64,
    pub seed: u64,
    /// Worker threads (at least 1).
    pub threads: usize,
}

/// Counts of final outcomes, in [`FinalOutcome::ALL`] order, and of games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounts {
    pub outcomes: [u64; 5],
    /// Games played, Extra games included.
    pub rounds: u64,
    /// Tickets simulated.
    pub tickets: u64,
}

impl SimCounts {
    fn add(&mut self, o: &SimCounts) {
        for (a, b) in self.outcomes.iter_mut().zip(o.outcomes) {
            *a += b;
        }
        self.rounds += o.rounds;
        self.tickets += o.tickets;
    }
    pub fn count(&self, o: FinalOutcome) -> u64 {
        self.outcomes[o.index()]
    }
}

/// The 32-byte ChaCha key of a simulation seed.
fn key(seed: u64) -> [u8; 32] {
    Sha256::new().chain_update(b"as-capone simulate v1\0").chain_update(seed.to_le_bytes()).finalize().into()
}

/// Plays one ticket to its end with the player's weakest card first (the
/// strategy does not matter, tests/math/odds.rs shows it), on the engine's
/// simulation path: the tricks of the deciding game and its number.
#[inline]
fn play_ticket(src: &mut FastSource) -> (u8, u32) {
    let (result, game) = engine::play_weakest_first(PrizeSchedule::NONE, src, &mut Discard);
    (result.tricks, game)
}

/// [`play_ticket`] through `Game::apply`, the server's path: the same
/// draws, the same answer, slower.
#[inline]
fn play_ticket_apply(src: &mut FastSource) -> (u8, u32) {
    let mut g = Game::new(PrizeSchedule::NONE);
    loop {
        let action = match g.phase() {
            Phase::Play => Action::play(g.hand().lowest().expect("a card is left in play")),
            Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw => Action::Draw,
            Phase::Finished => break,
        };
        g.apply(action, src, &mut Discard).expect("the simulator plays allowed actions");
    }
    (g.result().expect("finished").tricks, g.game_number())
}

/// Plays `games` tickets of chunk `chunk`.
pub fn run_chunk(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, play_ticket)
}

/// [`run_chunk`] one trick a lookup (`sim::play_weakest_first_single`), for
/// the benchmark that compares the engine's paths (feature `bench`).
#[cfg(feature = "bench")]
pub fn run_chunk_single(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, |src| {
        let (result, game) = engine::play_weakest_first_single(PrizeSchedule::NONE, src, &mut Discard);
        (result.tricks, game)
    })
}

/// [`run_chunk_single`] with ties selected without a branch (`sim::play_weakest_first_branchless`).
#[cfg(feature = "bench")]
pub fn run_chunk_branchless(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, |src| {
        let (result, game) = engine::play_weakest_first_branchless(PrizeSchedule::NONE, src, &mut Discard);
        (result.tricks, game)
    })
}

/// [`run_chunk`] through `Game::apply` (`play_ticket_apply`).
pub fn run_chunk_apply(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, play_ticket_apply)
}

#[inline(always)]
fn run_chunk_with(seed: u64, chunk: u64, games: u64, play: impl Fn(&mut FastSource) -> (u8, u32)) -> SimCounts {
    let mut src = FastSource::new(key(seed), chunk);
    // Counted by tricks (0 to 8) in registers-friendly locals, folded into
    // outcomes at the end.
    let mut by_tricks = [0u64; 9];
    let mut rounds = 0u64;
    for _ in 0..games {
        let (tricks, r) = play(&mut src);
        by_tricks[usize::from(tricks.min(8))] += 1;
        rounds += u64::from(r);
    }
    let mut c = SimCounts { rounds, tickets: games, ..SimCounts::default() };
    for (t, n) in by_tricks.iter().enumerate() {
        c.outcomes[FinalOutcome::of_tricks(t as u8).index()] += n;
    }
    c
}

/// A chunk in a lane: its stream, the tickets it has left to start or
/// finish, and its counts so far.
struct Slot {
    chunk: u64,
    left: u64,
    rng: ChaCha8Rng,
    counts: SimCounts,
}

impl Slot {
    fn count(&mut self, tricks: u8, game: u32) {
        self.counts.outcomes[FinalOutcome::of_tricks(tricks.min(8)).index()] += 1;
        self.counts.rounds += u64::from(game);
        self.counts.tickets += 1;
    }
}

/// Plays chunks in the lanes of `engine::lanes`: up to `max_lanes` (at
/// most [`LANES`]) chunks at once on this thread, each on its own stream,
/// one word of each a step. `take` gives the next chunk to play and its
/// tickets (`None`: no more); `done` receives each chunk's counts, which
/// are exactly [`run_chunk`]'s (tested chunk by chunk).
///
/// A chunk stays in its lane while it has more tickets left than a block
/// can end ([`MAX_TICKETS_PER_BLOCK`]); then its lane's ticket in progress
/// is finished word by word with the same steps, and its last tickets are
/// played on the pair path from the same stream, and the lane takes the
/// next chunk. A lane without a chunk plays words nobody reads, and its
/// counts are dropped.
fn run_chunks_lanes(
    seed: u64,
    max_lanes: usize,
    take: &mut dyn FnMut() -> Option<(u64, u64)>,
    done: &mut dyn FnMut(u64, SimCounts),
) {
    let key = key(seed);
    let max_lanes = max_lanes.clamp(1, LANES);
    let mut slots: [Option<Slot>; LANES] = Default::default();
    let mut lanes = Lanes::default();
    let mut blocks = [[0u8; 2 * BLOCK]; LANES];
    let mut words = [[0u16; LANES]; BLOCK];
    loop {
        for (i, slot) in slots.iter_mut().enumerate().take(max_lanes) {
            loop {
                match slot {
                    Some(s) if s.left > MAX_TICKETS_PER_BLOCK => break,
                    Some(s) => {
                        // The rest of the chunk's stream, word by word.
                        let mut src = FastSource::from_chacha(s.rng.clone());
                        let mut lane = lanes.get(i);
                        if !lane.at_start() {
                            // Its Extra games so far were counted in the
                            // blocks: only those it wins now and its first.
                            let (tricks, extra) = finish_ticket(&mut lane, &mut src);
                            s.count(tricks, 1 + extra);
                            s.left -= 1;
                        }
                        for _ in 0..s.left {
                            let (tricks, game) = play_ticket(&mut src);
                            s.count(tricks, game);
                        }
                        done(s.chunk, s.counts);
                        *slot = None;
                    }
                    None => match take() {
                        Some((chunk, games)) => {
                            // The chunk's stream, as `FastSource::new(key, chunk)` reads it.
                            let mut rng = ChaCha8Rng::from_seed(key);
                            rng.set_stream(chunk);
                            *slot = Some(Slot { chunk, left: games, rng, counts: SimCounts::default() });
                            lanes.set(i, engine::Lane::START);
                        }
                        None => break,
                    },
                }
            }
        }
        if slots.iter().all(Option::is_none) {
            return;
        }
        for (slot, block) in slots.iter_mut().zip(blocks.iter_mut()) {
            if let Some(s) = slot {
                s.rng.fill_bytes(block);
            }
        }
        transpose(&blocks, &mut words);
        let block = lanes.run_block(&words);
        for (i, slot) in slots.iter_mut().enumerate() {
            if let Some(s) = slot {
                let tickets = u64::from(block.tickets(i));
                let mut won = 0;
                for t in 5..=8u8 {
                    let n = u64::from(block.wins_with(i, u32::from(t)));
                    s.counts.outcomes[FinalOutcome::of_tricks(t).index()] += n;
                    won += n;
                }
                s.counts.outcomes[FinalOutcome::Lose.index()] += tickets - won;
                // A ticket's games: its first, and each Extra game begun.
                s.counts.rounds += tickets + u64::from(block.extra_games(i));
                s.counts.tickets += tickets;
                s.left -= tickets;
            }
        }
    }
}

/// [`run_chunk`] in the lanes: one chunk alone (the other lanes idle), for
/// the tests that compare the paths chunk by chunk.
#[cfg(test)]
fn run_chunk_lanes(seed: u64, chunk: u64, games: u64) -> SimCounts {
    let mut next = Some((chunk, games));
    let mut out = SimCounts::default();
    run_chunks_lanes(seed, 1, &mut || next.take(), &mut |_, c| out = c);
    out
}

/// Plays chunks `0..chunks`, `games` tickets each, in the lanes of one
/// thread: the summed counts (the lane benchmark; feature `bench`).
#[cfg(feature = "bench")]
pub fn run_lanes(seed: u64, chunks: u64, games: u64) -> SimCounts {
    let mut next = 0..chunks;
    let mut total = SimCounts::default();
    run_chunks_lanes(seed, LANES, &mut || next.next().map(|c| (c, games)), &mut |_, c| total.add(&c));
    total
}

/// The simulator's baseline (benches, `profile_sim draws`; feature `bench`): about a
/// ticket's worth of draws from [`FastSource`], without the engine: eight As Capone cards a game, 1.29
/// games a ticket, and 1.5 deck draws of two numbers; a sum of the draws,
/// so that none is optimized away.
#[cfg(feature = "bench")]
pub fn draws_only(tickets: u64) -> u32 {
    use engine::DrawSource;
    let mut src = FastSource::from_u64(1, 0);
    let mut acc = 0u32;
    for t in 0..tickets {
        for m in (1..=8).rev() {
            acc = acc.wrapping_add(src.below(m));
        }
        // 0.29 extra games and 1.5 deck draws per ticket on average.
        if t % 100 < 29 {
            for m in (1..=8).rev() {
                acc = acc.wrapping_add(src.below(m));
            }
        }
        let deck = if t % 2 == 0 { 1 } else { 2 };
        for _ in 0..deck {
            acc = acc.wrapping_add(src.below(16) ^ src.below(15));
        }
    }
    acc
}

/// Runs the simulation; `progress` is called with the number of games done
/// after each chunk (from any thread). Each thread plays chunks in the
/// lanes (`run_chunks_lanes`), taking the next chunk whenever a lane
/// ends one; a thread starts no more lanes than its share of the chunks,
/// so that a short simulation still spreads over every thread.
pub fn simulate(cfg: &SimConfig, progress: &(dyn Fn(u64) + Sync)) -> (SimCounts, Duration) {
    let start = Instant::now();
    let chunks = cfg.games.div_ceil(CHUNK);
    let threads = cfg.threads.max(1);
    let lanes = usize::try_from(chunks.div_ceil(threads as u64)).unwrap_or(LANES).min(LANES);
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let total = Mutex::new(SimCounts::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut mine = SimCounts::default();
                let mut take = || {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    (i < chunks).then(|| (i, CHUNK.min(cfg.games - i * CHUNK)))
                };
                let mut finished = |_chunk, counts: SimCounts| {
                    mine.add(&counts);
                    progress(done.fetch_add(counts.tickets, Ordering::Relaxed) + counts.tickets);
                };
                run_chunks_lanes(cfg.seed, lanes, &mut take, &mut finished);
                total.lock().expect("no thread panicked").add(&mine);
            });
        }
    });
    (total.into_inner().expect("no thread panicked"), start.elapsed())
}

/// [`simulate`] with one chunk at a time a thread on the pair path
/// ([`run_chunk`]): the previous version, kept for the benchmark (feature
/// `bench`).
#[cfg(feature = "bench")]
pub fn simulate_pairs(cfg: &SimConfig, progress: &(dyn Fn(u64) + Sync)) -> (SimCounts, Duration) {
    let start = Instant::now();
    let chunks = cfg.games.div_ceil(CHUNK);
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let total = Mutex::new(SimCounts::default());
    std::thread::scope(|s| {
        for _ in 0..cfg.threads.max(1) {
            s.spawn(|| {
                let mut mine = SimCounts::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= chunks {
                        break;
                    }
                    let n = CHUNK.min(cfg.games - i * CHUNK);
                    mine.add(&run_chunk(cfg.seed, i, n));
                    progress(done.fetch_add(n, Ordering::Relaxed) + n);
                }
                total.lock().expect("no thread panicked").add(&mine);
            });
        }
    });
    (total.into_inner().expect("no thread panicked"), start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_counts_whatever_the_threads() {
        let games = 3 * CHUNK + 1234;
        let run = |threads| simulate(&SimConfig { games, seed: 7, threads }, &|_| {}).0;
        let one = run(1);
        assert_eq!(simulate_pairs(&SimConfig { games, seed: 7, threads: 2 }, &|_| {}).0, one);
        assert_eq!(one.tickets, games);
        assert_eq!(one.outcomes.iter().sum::<u64>(), games);
        assert_eq!(run(2), one);
        assert_eq!(run(5), one);
        assert_ne!(simulate(&SimConfig { games, seed: 8, threads: 2 }, &|_| {}).0, one);
    }

    /// Golden counts: a dependency upgrade cannot silently change the simulation.
    #[test]
    fn golden_counts() {
        let c = run_chunk(2026, 0, 10_000);
        assert_eq!(c.outcomes, GOLDEN);
    }
    /// The simulation path and `Game::apply` count the same, chunk by
    /// chunk (the engine's property tests prove it draw by draw).
    #[test]
    fn simulation_path_counts_as_game_apply() {
        for (seed, chunk) in [(2026, 0), (1, 3), (7, 1 << 20), (u64::MAX, 12)] {
            let apply = run_chunk_apply(seed, chunk, 20_000);
            assert_eq!(run_chunk(seed, chunk, 20_000), apply, "seed {seed}");
            assert_eq!(run_chunk_single(seed, chunk, 20_000), apply, "seed {seed}");
            assert_eq!(run_chunk_branchless(seed, chunk, 20_000), apply, "seed {seed}");
            assert_eq!(run_chunk_lanes(seed, chunk, 20_000), apply, "seed {seed}");
        }
    }

    /// The lanes count each chunk as `Game::apply` does, whatever lane
    /// plays it and whatever chunks play beside it: full chunks, a partial
    /// last chunk, chunks shorter than a block's tickets, and lanes taking
    /// new chunks as others end.
    #[test]
    fn lanes_count_each_chunk_as_game_apply() {
        let sizes = [CHUNK, 1, 16, 17, 40_000, 18, 3 * CHUNK / 4, 5_000, 2, 1_234, 20_000, 100, 30_000];
        for (seed, max_lanes) in [(1u64, LANES), (2026, 3), (u64::MAX, LANES)] {
            let mut next = sizes.iter().enumerate().map(|(i, &n)| (i as u64 * 7 + 3, n));
            let mut got = Vec::new();
            run_chunks_lanes(seed, max_lanes, &mut || next.next(), &mut |c, counts| got.push((c, counts)));
            assert_eq!(got.len(), sizes.len(), "seed {seed}");
            for (chunk, counts) in got {
                let n = sizes[(chunk as usize - 3) / 7];
                assert_eq!(counts.tickets, n);
                assert_eq!(counts, run_chunk_apply(seed, chunk, n), "seed {seed}, chunk {chunk}");
            }
        }
    }

    const GOLDEN: [u64; 5] = [3174, 446, 12, 0, 6368];
}
