//! Tickets played through the real engine (`Game::apply`, guarantee 1) with
//! every random draw recorded on its way from the draw source to the game.
//!
//! The runner is generic over a [`DrawFactory`]: the fair HMAC stream, the
//! simulation's ChaCha8 stream and, in the tests, a deliberately biased
//! source all go through the same code. Games are cut into chunks of
//! [`CHUNK`] tickets; chunk `i` has its own draw source and its own stream of
//! schedule rows, so threads can take chunks in any order. Every figure
//! gathered is an integer count or sum, so the totals are the same whatever
//! the number of threads.

use engine::{Action, DrawSource, Event, EventSink, FairStream, FastSource, Game, Phase};
use math::{FinalOutcome, PrizeTable};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Tickets per chunk.
pub const CHUNK: u64 = 1 << 16;
/// Draw numbers within a ticket are grouped as 0, 1, ..., 22 and "23 or more".
pub const DRAW_BUCKETS: usize = 24;
/// Largest bound a draw of the game asks for: a deck draw's first card, of 16.
const MAX_M: usize = 16;

/// Makes the draw source of each chunk, and prepares it for each ticket.
pub trait DrawFactory: Sync {
    type Source: DrawSource;
    /// The source for chunk `chunk` (tickets `chunk * CHUNK ..`).
    fn chunk(&self, chunk: u64) -> Self::Source;
    /// Called before ticket number `ticket` (counted over the whole run) is played.
    fn begin_ticket(&self, source: &mut Self::Source, ticket: u64);
}

/// 32 bytes for a labelled purpose of the run's seed.
pub fn key(seed: u64, label: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"as-capone certify v1\0")
        .chain_update(label.as_bytes())
        .chain_update(b"\0")
        .chain_update(seed.to_le_bytes())
        .finalize()
        .into()
}

/// The simulation stream: [`FastSource`] (ChaCha8), stream `chunk` of the
/// run's key, read across the chunk's tickets as the simulator reads it.
pub struct SimFactory {
    key: [u8; 32],
}

impl SimFactory {
    pub fn new(seed: u64) -> SimFactory {
        SimFactory { key: key(seed, "sim") }
    }
}

impl DrawFactory for SimFactory {
    type Source = FastSource;
    fn chunk(&self, chunk: u64) -> FastSource {
        FastSource::new(self.key, chunk)
    }
    fn begin_ticket(&self, _source: &mut FastSource, _ticket: u64) {}
}

/// The fair stream of played tickets ([`FairStream`], docs/contract.md, "Fairness"):
/// each ticket its own server seed, `SHA-256(key || ticket)`, a fixed client
/// seed and a serial naming the ticket, exactly as the server builds it.
pub struct FairFactory {
    key: [u8; 32],
}

/// The client seed of the fair stream's tickets.
pub const FAIR_CLIENT_SEED: &str = "certify";

impl FairFactory {
    pub fn new(seed: u64) -> FairFactory {
        FairFactory { key: key(seed, "fair") }
    }
    fn server_seed(&self, ticket: u64) -> [u8; 32] {
        Sha256::new().chain_update(self.key).chain_update(ticket.to_le_bytes()).finalize().into()
    }
}

impl DrawFactory for FairFactory {
    type Source = FairStream;
    fn chunk(&self, chunk: u64) -> FairStream {
        FairStream::new(&self.server_seed(chunk * CHUNK), FAIR_CLIENT_SEED, "CRT-0")
    }
    fn begin_ticket(&self, source: &mut FairStream, ticket: u64) {
        *source = FairStream::new(&self.server_seed(ticket), FAIR_CLIENT_SEED, &format!("CRT-{ticket}"));
    }
}

/// Everything counted over a run (or a chunk of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acc {
    pub tickets: u64,
    /// Games played, Extra games included.
    pub games: u64,
    /// Games by tricks won, 0 to 8 (art. 3.2.3).
    pub per_round: [u64; 9],
    /// Tickets by final outcome, in [`FinalOutcome::ALL`] order.
    pub finals: [u64; 5],
    /// Sum of the prizes paid, in cents.
    pub prize_cents: u128,
    /// Prizes summed per checkpoint segment (segment `s`: tickets `s * step ..`).
    pub segments: Vec<u128>,
    /// As Capone's draws: `capone[m][v]`, the index `v` drawn among `m` cards left.
    pub capone: [[u64; 8]; 9],
    /// The same by draw number within the ticket (bucketed, [`DRAW_BUCKETS`]).
    pub capone_by_draw: Box<[[[u64; 8]; 9]; DRAW_BUCKETS]>,
    /// Deck draws: `deck[a][b]`, the first card of 16 and the second of the 15 others (raw).
    pub deck: [[u64; 15]; 16],
    /// Serial correlation: sums of `a_prev * a_next` by `(m_prev, m_next)`,
    /// where `a = 2v - (m - 1)` centres a draw of `m` outcomes.
    pub serial: [[i64; MAX_M + 1]; MAX_M + 1],
    /// Pairs of consecutive draws counted in `serial`.
    pub serial_pairs: u64,
    /// Runs: draws classed high or low (the middle value of an odd `m` left out).
    pub runs_draws: u64,
    /// Consecutive classed draws of different classes.
    pub runs_changes: u64,
}

impl Acc {
    pub fn new(segments: usize) -> Acc {
        Acc {
            tickets: 0,
            games: 0,
            per_round: [0; 9],
            finals: [0; 5],
            prize_cents: 0,
            segments: vec![0; segments],
            capone: [[0; 8]; 9],
            capone_by_draw: Box::new([[[0; 8]; 9]; DRAW_BUCKETS]),
            deck: [[0; 15]; 16],
            serial: [[0; MAX_M + 1]; MAX_M + 1],
            serial_pairs: 0,
            runs_draws: 0,
            runs_changes: 0,
        }
    }

    pub fn add(&mut self, o: &Acc) {
        self.tickets += o.tickets;
        self.games += o.games;
        add_all(&mut self.per_round, &o.per_round);
        add_all(&mut self.finals, &o.finals);
        self.prize_cents += o.prize_cents;
        for (a, b) in self.segments.iter_mut().zip(&o.segments) {
            *a += b;
        }
        for (a, b) in self.capone.iter_mut().zip(&o.capone) {
            add_all(a, b);
        }
        for (a, b) in self.capone_by_draw.iter_mut().zip(o.capone_by_draw.iter()) {
            for (x, y) in a.iter_mut().zip(b) {
                add_all(x, y);
            }
        }
        for (a, b) in self.deck.iter_mut().zip(&o.deck) {
            add_all(a, b);
        }
        for (a, b) in self.serial.iter_mut().zip(&o.serial) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self.serial_pairs += o.serial_pairs;
        self.runs_draws += o.runs_draws;
        self.runs_changes += o.runs_changes;
    }
}

fn add_all<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The chain of draws within a chunk, for the serial and runs statistics.
#[derive(Default)]
struct Chain {
    /// Draw number of the current draw (from `start_draw`).
    n: u64,
    /// A deck draw's first card, waiting for its second.
    deck_first: Option<u32>,
    /// The previous draw's `(m, a)`.
    prev: Option<(u32, i64)>,
    /// The previous classed draw's class (true: high).
    prev_class: Option<bool>,
}

/// The recording adapter: passes every call to the source and counts what
/// it answered. The game asks for As Capone's card with `below(m)`, `m` his
/// cards left (art. 3.2.2), and for a deck draw with `below(16)` then
/// `below(15)` (art. 3.2.4.2; `Game::deck_draw`).
struct Recorder<'a, S> {
    inner: &'a mut S,
    acc: &'a mut Acc,
    chain: &'a mut Chain,
}

impl<S: DrawSource> DrawSource for Recorder<'_, S> {
    #[inline]
    fn start_draw(&mut self, n: u64) {
        self.chain.n = n;
        self.inner.start_draw(n);
    }

    #[inline]
    fn below(&mut self, m: u32) -> u32 {
        let v = self.inner.below(m);
        let acc = &mut *self.acc;
        let chain = &mut *self.chain;
        match m {
            16 => chain.deck_first = Some(v),
            15 => {
                let a = chain.deck_first.take().expect("a deck draw asks for 16 then 15");
                acc.deck[a as usize][v as usize] += 1;
            }
            1..=8 => {
                acc.capone[m as usize][v as usize] += 1;
                let bucket = (chain.n as usize).min(DRAW_BUCKETS - 1);
                acc.capone_by_draw[bucket][m as usize][v as usize] += 1;
            }
            _ => panic!("the game asked for a draw below {m}"),
        }
        if m >= 2 {
            let a = 2 * i64::from(v) - (i64::from(m) - 1);
            if let Some((pm, pa)) = chain.prev {
                acc.serial[pm as usize][m as usize] += pa * a;
                acc.serial_pairs += 1;
            }
            chain.prev = Some((m, a));
            if a != 0 {
                let high = a > 0;
                if let Some(p) = chain.prev_class {
                    acc.runs_changes += u64::from(p != high);
                }
                acc.runs_draws += 1;
                chain.prev_class = Some(high);
            }
        }
        v
    }
}

/// Counts the games of a ticket by tricks won.
struct Rounds<'a>(&'a mut [u64; 9]);

impl EventSink for Rounds<'_> {
    #[inline]
    fn push(&mut self, event: Event) {
        if let Event::GameOver { tricks, .. } = event {
            self.0[usize::from(tricks)] += 1;
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub tickets: u64,
    pub seed: u64,
    pub threads: usize,
    /// Tickets per checkpoint segment of the running return to player.
    pub step: u64,
}

impl RunConfig {
    pub fn segments(&self) -> usize {
        self.tickets.div_ceil(self.step.max(1)) as usize
    }
}

/// The schedule rows of a table as cumulative counts, for drawing a row.
struct Rows {
    ends: Vec<u32>,
}

impl Rows {
    fn new(table: &PrizeTable) -> Rows {
        let mut end = 0;
        Rows {
            ends: table
                .schedules
                .iter()
                .map(|r| {
                    end += r.tickets;
                    end
                })
                .collect(),
        }
    }
    /// The row of position `x` in `0..block_size`.
    fn row(&self, x: u32) -> usize {
        self.ends.partition_point(|&e| e <= x)
    }
}

/// Plays the tickets of chunk `chunk`.
fn run_chunk<F: DrawFactory>(factory: &F, cfg: &RunConfig, table: &PrizeTable, rows: &Rows, chunk: u64) -> Acc {
    let first = chunk * CHUNK;
    let count = CHUNK.min(cfg.tickets - first);
    let mut acc = Acc::new(cfg.segments());
    let mut chain = Chain::default();
    let mut source = factory.chunk(chunk);
    // The schedule of each ticket: a ticket taken at random from a block
    // (row r with chance tickets_r / block_size), from its own stream.
    let mut row_source = FastSource::new(key(cfg.seed, "rows"), chunk);
    for t in first..first + count {
        let row = &table.schedules[rows.row(row_source.below(table.block_size))];
        factory.begin_ticket(&mut source, t);
        let mut rec = Recorder { inner: &mut source, acc: &mut acc, chain: &mut chain };
        let mut game = Game::new(row.prizes);
        let mut rounds = [0u64; 9];
        loop {
            // The player's weakest card first: the strategy cannot change
            // the odds (crates/math/tests/math/odds.rs).
            let action = match game.phase() {
                Phase::Play => Action::play(game.hand().lowest().expect("a card is left in play")),
                Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw => Action::Draw,
                Phase::Finished => break,
            };
            game.apply(action, &mut rec, &mut Rounds(&mut rounds)).expect("the runner plays allowed actions");
        }
        let result = game.result().expect("a finished ticket has a result");
        add_all(&mut acc.per_round, &rounds);
        acc.games += u64::from(game.game_number());
        acc.finals[FinalOutcome::of_tricks(result.tricks).index()] += 1;
        acc.prize_cents += u128::from(result.prize_cents);
        acc.segments[(t / cfg.step.max(1)) as usize] += u128::from(result.prize_cents);
    }
    acc.tickets = count;
    acc
}

/// Plays `cfg.tickets` tickets with draws from `factory`, on `cfg.threads`
/// threads; `progress` is called with each chunk's ticket count when it is done.
pub fn run<F: DrawFactory>(factory: &F, cfg: &RunConfig, table: &PrizeTable, progress: &(dyn Fn(u64) + Sync)) -> Acc {
    run_until(factory, cfg, table, progress, &|| false).expect("a run nobody stops ends")
}

/// [`run`], asking `stop` before each chunk of [`CHUNK`] tickets: once it
/// says true no chunk starts, and the run ends with `None` (the chunks
/// being played finish first, a fraction of a second).
pub fn run_until<F: DrawFactory>(
    factory: &F,
    cfg: &RunConfig,
    table: &PrizeTable,
    progress: &(dyn Fn(u64) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Acc> {
    let rows = Rows::new(table);
    let chunks = cfg.tickets.div_ceil(CHUNK);
    let next = AtomicU64::new(0);
    let stopped = AtomicBool::new(false);
    let total = Mutex::new(Acc::new(cfg.segments()));
    std::thread::scope(|s| {
        for _ in 0..cfg.threads.max(1).min(chunks.max(1) as usize) {
            s.spawn(|| {
                let mut mine = Acc::new(cfg.segments());
                loop {
                    if stopped.load(Ordering::Relaxed) || stop() {
                        stopped.store(true, Ordering::Relaxed);
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= chunks {
                        break;
                    }
                    let acc = run_chunk(factory, cfg, table, &rows, i);
                    progress(acc.tickets);
                    mine.add(&acc);
                }
                total.lock().expect("no thread panicked").add(&mine);
            });
        }
    });
    let total = total.into_inner().expect("no thread panicked");
    (total.tickets == cfg.tickets).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(tickets: u64, threads: usize) -> RunConfig {
        RunConfig { tickets, seed: 11, threads, step: tickets.div_ceil(200) }
    }

    #[test]
    fn counts_do_not_depend_on_the_threads() {
        let table = PrizeTable::example();
        let c = cfg(2 * CHUNK + 999, 1);
        let one = run(&SimFactory::new(11), &c, &table, &|_| {});
        let three = run(&SimFactory::new(11), &RunConfig { threads: 3, ..c.clone() }, &table, &|_| {});
        assert_eq!(one, three);
        assert_eq!(one.tickets, 2 * CHUNK + 999);
        assert_eq!(one.finals.iter().sum::<u64>(), one.tickets);
        assert_eq!(one.per_round.iter().sum::<u64>(), one.games);
        assert_eq!(one.segments.iter().sum::<u128>(), one.prize_cents);
    }

    /// art. 3.2.2 and 3.2.4.2: the recorder sees one draw of As Capone per
    /// trick (eight per game, the last among one card) and two calls per
    /// deck draw.
    #[test]
    fn the_recorder_sees_every_draw_of_the_game() {
        let table = PrizeTable::example();
        let acc = run(&FairFactory::new(3), &cfg(2000, 2), &table, &|_| {});
        for m in 1..=8 {
            assert_eq!(acc.capone[m].iter().sum::<u64>(), acc.games, "one draw among {m} cards per game");
            assert!(acc.capone[m][m..].iter().all(|&c| c == 0), "no index at or above {m}");
        }
        let deck: u64 = acc.deck.iter().flatten().sum();
        // At least one tie-break per tie; games with four tricks add the Extra duel.
        assert!(deck >= acc.games / 2 && deck > 0, "{deck} deck draws for {} games", acc.games);
        let by_draw: u64 = acc.capone_by_draw.iter().flatten().flatten().sum();
        assert_eq!(by_draw, 8 * acc.games);
    }
}
