//! Monte Carlo games through the engine (guarantee 1): the simulator plays
//! with `engine::sim::play_weakest_first`, the engine's second path, which
//! the engine's property tests prove gives the same events, draws and
//! results as `Game::apply` (the server's path) for every draw sequence;
//! [`play_ticket_apply`] plays through `Game::apply` itself, and the tests
//! below check that both give the same counts.
//!
//! Reproducible whatever the number of threads: the games are cut into
//! fixed chunks of [`CHUNK`] games, chunk `i` draws from ChaCha8 stream `i`
//! of the seed, and threads take chunks in any order; counts are sums, so
//! the total does not depend on who played which chunk.

use crate::odds::FinalOutcome;
use engine::{Action, Discard, DrawSource, FastSource, Game, Phase, PrizeSchedule, sim};
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
/// strategy does not matter, tests/odds.rs shows it), on the engine's
/// simulation path: the tricks of the deciding game and its number.
#[inline]
pub fn play_ticket(src: &mut FastSource) -> (u8, u32) {
    let (result, game) = sim::play_weakest_first(PrizeSchedule::NONE, src, &mut Discard);
    (result.tricks, game)
}

/// [`play_ticket`] through `Game::apply`, the server's path: the same
/// draws, the same answer, slower.
#[inline]
pub fn play_ticket_apply(src: &mut FastSource) -> (u8, u32) {
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

/// [`run_chunk`] one trick a lookup (`sim::play_weakest_first_single`).
pub fn run_chunk_single(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, |src| {
        let (result, game) = sim::play_weakest_first_single(PrizeSchedule::NONE, src, &mut Discard);
        (result.tricks, game)
    })
}

/// [`run_chunk_single`] with ties selected without a branch (`sim::play_weakest_first_branchless`).
pub fn run_chunk_branchless(seed: u64, chunk: u64, games: u64) -> SimCounts {
    run_chunk_with(seed, chunk, games, |src| {
        let (result, game) = sim::play_weakest_first_branchless(PrizeSchedule::NONE, src, &mut Discard);
        (result.tricks, game)
    })
}

/// [`run_chunk`] through `Game::apply` ([`play_ticket_apply`]).
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

/// The simulator's baseline (benches, `profile_sim draws`): about a
/// ticket's worth of draws from [`FastSource`], without the engine: eight As Capone cards a game, 1.29
/// games a ticket, and 1.5 deck draws of two numbers; a sum of the draws,
/// so that none is optimized away.
pub fn draws_only(tickets: u64) -> u32 {
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
/// after each chunk (from any thread).
pub fn simulate(cfg: &SimConfig, progress: &(dyn Fn(u64) + Sync)) -> (SimCounts, Duration) {
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
        }
    }

    const GOLDEN: [u64; 5] = [3174, 446, 12, 0, 6368];
}
