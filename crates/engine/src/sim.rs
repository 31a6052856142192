//! The simulator's engine path: a whole ticket played with the
//! simulation's strategy (the player's weakest card first) straight on
//! bitmasks and tables, for a stream of 16-bit words drawn with
//! [`FastSource`](crate::FastSource)'s rule.
//!
//! It is a second path through the rules of art. 3.2, so it must agree
//! with [`Game::apply`](crate::Game::apply) exactly: it reports the same
//! [`Event`]s, takes the same words in the same order and ends with the
//! same result and game number, for every word sequence. The property
//! tests of `tests/engine/sim.rs` hold the two together (scripted words steered
//! towards every rare path: rejected words, ties, repeated tie-breaks,
//! Extra duels), and the simulator's golden counts pin the outcome.
//!
//! How it is fast: with the weakest card first, the player's card at trick
//! `k` is the value `k`, and As Capone's hand alone is the state. Tricks
//! are played in pairs: one lookup in `PAIR` from his hand's row and the
//! two draws gives the row of his new hand and both outcomes, so the
//! dependent chain is one L1 load per two tricks. A game's words are read
//! from a window of the stream taken once per game, without a refill check
//! per word; a tie on a pair's second trick takes a branch that reads the
//! deck draw's two words from the same window. A tie on the first trick (the
//! second trick's word is then further on), a rejected word or a tie again
//! at the deck leave the pair to the single-trick path (`TRICK`, one lookup
//! a trick), whose own rare cases replay the trick word by word. Settling
//! ties without a branch was measured slower, one trick at a time and in
//! pairs: each trick's word then waits for the previous lookup
//! (BENCHMARKS.md).

use crate::card::{DECK_SIZE, DeckCard, Hand, Rank};
use crate::fast::{Words16, below16};
use crate::game::{DeckFor, Event, EventSink, GameResult, Next, Outcome};
use crate::prize::PrizeSchedule;

/// Outcome codes in the tables, for the player.
const LOST: u8 = 0;
const WON: u8 = 1;
const TIE: u8 = 2;

/// `TRICK[hand][i]`: As Capone holds `hand` and plays its i-th card (from
/// 7 up), the player plays his weakest card, the value `8 - |hand|`.
/// Bits 0-7: As Capone's new hand; 8-10: his card; 11-12: the outcome.
static TRICK: [[u16; 8]; 256] = {
    let mut t = [[0u16; 8]; 256];
    let mut hand = 0usize;
    while hand < 256 {
        let player = 8 - (hand as u8).count_ones();
        let mut i = 0;
        let mut b = 0;
        while b < 8 {
            if hand & (1 << b) != 0 {
                let outcome = if player > b {
                    WON
                } else if player < b {
                    LOST
                } else {
                    TIE
                };
                t[hand][i] = ((hand & !(1 << b)) as u16) | (b as u16) << 8 | (outcome as u16) << 11;
                i += 1;
            }
            b += 1;
        }
        hand += 1;
    }
    t
};

/// Tricks played in pairs: a pair starts with As Capone holding `M` cards
/// (`M` = 8, 6, 4, 2). The rows of [`PAIR`] for the hands of `M` cards
/// begin at `PAIR_STAGE[(8 - M) / 2]`, one row a hand in increasing order of
/// its bits, `M * (M - 1)` entries a row.
const PAIR_STAGE: [usize; 5] = [0, 56, 56 + 28 * 30, 56 + 28 * 30 + 70 * 12, 56 + 28 * 30 + 70 * 12 + 28 * 2];
/// Entries of [`PAIR`]: 1 792 (7 KiB).
const PAIR_LEN: usize = PAIR_STAGE[4];

/// Fields of a [`PAIR`] entry: bits 0-10, the row of As Capone's new hand
/// (its next pair's; 0 after the last pair); bit 11, the first trick is a
/// tie; bit 12, the second is; bit 13, the player took the first; 16-23,
/// As Capone's new hand; 24-26 and 27-29, his two cards; 30-31, the
/// tricks the player took outright (a tie counts for nothing here).
const PAIR_TIE0: u32 = 1 << 11;
const PAIR_TIE1: u32 = 1 << 12;
const PAIR_WON0: u32 = 1 << 13;
const PAIR_HAND: u32 = 16;
const PAIR_CARDS: u32 = 24;
const PAIR_WON: u32 = 30;
/// The row field.
const PAIR_ROW_MASK: u32 = 0x7FF;
const _: () = assert!(PAIR_LEN <= PAIR_ROW_MASK as usize + 1);

/// `PAIR_ROW[hand]`: where the row of `hand` begins in [`PAIR`], for a hand
/// of 8, 6, 4 or 2 cards (0 otherwise).
static PAIR_ROW: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut seen = [0usize; 9];
    let mut hand = 0usize;
    while hand < 256 {
        let m = (hand as u8).count_ones() as usize;
        if m > 0 && m.is_multiple_of(2) {
            t[hand] = (PAIR_STAGE[(8 - m) / 2] + seen[m] * m * (m - 1)) as u16;
            seen[m] += 1;
        }
        hand += 1;
    }
    t
};

/// `PAIR[row + i * (M - 1) + j]`: As Capone holds the `M` cards of `row`'s
/// hand and plays its i-th card, then the j-th of the `M - 1` left; the
/// player plays his two weakest, the values `8 - M` and `9 - M`. Fields:
/// [`PAIR_TIE0`] and the others. The table is padded so that any row field
/// plus any `i * (M - 1) + j` is in bounds: no bounds check on the path.
static PAIR: [u32; PAIR_ROW_MASK as usize + 1 + 56] = {
    let mut t = [0u32; PAIR_ROW_MASK as usize + 1 + 56];
    let mut hand = 0usize;
    while hand < 256 {
        let m = (hand as u8).count_ones() as usize;
        if m > 0 && m.is_multiple_of(2) {
            let row = PAIR_ROW[hand] as usize;
            let mut i = 0;
            while i < m {
                let first = TRICK[hand][i];
                let after = (first & 0xFF) as usize;
                let mut j = 0;
                while j < m - 1 {
                    let second = TRICK[after][j];
                    let new = (second & 0xFF) as u32;
                    let (o0, o1) = ((first >> 11) as u8, (second >> 11) as u8);
                    let won = (o0 == WON) as u32 + (o1 == WON) as u32;
                    t[row + i * (m - 1) + j] = PAIR_ROW[new as usize] as u32
                        | if o0 == TIE { PAIR_TIE0 } else { 0 }
                        | if o1 == TIE { PAIR_TIE1 } else { 0 }
                        | if o0 == WON { PAIR_WON0 } else { 0 }
                        | new << PAIR_HAND
                        | (((first >> 8) & 7) as u32) << PAIR_CARDS
                        | (((second >> 8) & 7) as u32) << (PAIR_CARDS + 3)
                        | won << PAIR_WON;
                    j += 1;
                }
                i += 1;
            }
        }
        hand += 1;
    }
    t
};

/// The outcomes of a pair's two tricks, from its [`PAIR`] entry.
#[inline(always)]
fn pair_codes(e: u32) -> (u8, u8) {
    let won0 = u32::from(e & PAIR_WON0 != 0);
    let o0 = if e & PAIR_TIE0 != 0 { TIE } else { won0 as u8 };
    let o1 = if e & PAIR_TIE1 != 0 { TIE } else { ((e >> PAIR_WON) - won0) as u8 };
    (o0, o1)
}

/// `DECK[a][b]`: the outcome of a deck draw whose two draws are `a`
/// (below 16) and `b` (below 15, before skipping the player's card).
static DECK: [[u8; 16]; 16] = {
    let mut t = [[0u8; 16]; 16];
    let mut a = 0;
    while a < 16 {
        let mut b = 0;
        while b < 15 {
            let c = if b >= a { b + 1 } else { b };
            let (p, q) = (a / 2, c / 2);
            t[a][b] = if p > q {
                WON
            } else if p < q {
                LOST
            } else {
                TIE
            };
            b += 1;
        }
        a += 1;
    }
    t
};

/// `65536 mod m`: a 16-bit word whose product by `m` has a low half below
/// this is rejected ([`accept16`](crate::fast::accept16)).
const fn reject_below(m: u32) -> u32 {
    (1 << 16) % m
}

/// The outcome for the player of his card against As Capone's.
#[inline(always)]
fn outcome(code: u8) -> Outcome {
    match code {
        WON => Outcome::Won,
        LOST => Outcome::Lost,
        _ => Outcome::Tie,
    }
}

/// A deck draw word by word (art. 3.2.4.2, 3.2.5.2): two different cards
/// of the 16, as `Game` draws them.
#[inline]
fn deck_draw<W: Words16 + ?Sized, E: EventSink + ?Sized>(w: &mut W, for_: DeckFor, events: &mut E) -> u8 {
    let a = below16(w, DECK_SIZE);
    let b = below16(w, DECK_SIZE - 1);
    let code = DECK[a as usize][b as usize];
    let c = if b >= a { b + 1 } else { b };
    let player = DeckCard::new(a as u8).expect("a < 16").rank();
    let capone = DeckCard::new(c as u8).expect("c < 16").rank();
    events.push(Event::Deck { player, capone, outcome: outcome(code), for_ });
    code
}

/// One trick word by word, its tie-breaks included: the rare path.
/// Returns As Capone's new hand and 1 if the player took the trick.
#[cold]
#[inline(never)]
fn trick_slow<W: Words16 + ?Sized, E: EventSink + ?Sized>(w: &mut W, hand: u8, events: &mut E) -> (u8, u32) {
    let m = Hand::from_bits(hand).len();
    let i = below16(w, m);
    let e = TRICK[hand as usize][i as usize];
    let player = Rank::from_index_wrapping(8 - m as u8);
    let capone = Rank::from_index_wrapping((e >> 8) as u8);
    let code = (e >> 11) as u8;
    events.push(Event::Trick { player, capone, outcome: outcome(code) });
    let mut won = u32::from(code == WON);
    if code == TIE {
        // art. 3.2.4.3, 3.2.4.4: deck draws until one is not a tie.
        loop {
            match deck_draw(w, DeckFor::TieBreak, events) {
                TIE => continue,
                c => {
                    won = u32::from(c == WON);
                    break;
                }
            }
        }
    }
    (e as u8, won)
}

/// Trick `8 - M` of a game on the window `win` from word `p`: the common
/// path, or `None` when a word is rejected or the tie-break ties again.
/// With [`BRANCHLESS`], a tie's deck draw is computed for every trick and
/// selected without a branch; without, a tie takes a branch.
#[inline(always)]
fn trick_fast<const M: u32, const MODE: u8, E: EventSink + ?Sized>(
    win: &[u16; WINDOW],
    p: usize,
    hand: u8,
    events: &mut E,
) -> Option<(u8, u32, usize)> {
    let x = u32::from(win[p]) * M;
    if (x & 0xFFFF) < reject_below(M) {
        return None;
    }
    let e = TRICK[hand as usize][(x >> 16) as usize & 7];
    let code = (e >> 11) as u8;
    let tie = code == TIE;
    if MODE != BRANCHLESS && !tie {
        let player = Rank::from_index_wrapping(8 - M as u8);
        let capone = Rank::from_index_wrapping((e >> 8) as u8);
        events.push(Event::Trick { player, capone, outcome: outcome(code) });
        return Some((e as u8, u32::from(code == WON), p + 1));
    }
    // The deck draw a tie takes: the player's card below 16 (a power of
    // two: never rejected), As Capone's below 15.
    let a = u32::from(win[p + 1]) >> 12;
    let y = u32::from(win[p + 2]) * (DECK_SIZE - 1);
    let b = y >> 16;
    let deck = DECK[a as usize & 15][b as usize & 15];
    if tie && (deck == TIE || (y & 0xFFFF) < reject_below(DECK_SIZE - 1)) {
        return None;
    }
    let player = Rank::from_index_wrapping(8 - M as u8);
    let capone = Rank::from_index_wrapping((e >> 8) as u8);
    events.push(Event::Trick { player, capone, outcome: outcome(code) });
    if tie {
        let c = if b >= a { b + 1 } else { b };
        let (pd, cd) = (DeckCard::new(a as u8).expect("a < 16").rank(), DeckCard::new(c as u8).expect("c < 16").rank());
        events.push(Event::Deck { player: pd, capone: cd, outcome: outcome(deck), for_: DeckFor::TieBreak });
    }
    let won = if tie { deck } else { code };
    Some((e as u8, u32::from(won == WON), p + 1 + 2 * usize::from(tie)))
}

/// Tricks `8 - M` and `9 - M` of a game on the window `win` from word `p`,
/// As Capone's hand being `PAIR`'s row `row`: one lookup for both. The
/// common path, or `None` (no event pushed) when a word is rejected, the
/// first trick ties (the second trick's word is then further on), or the
/// second trick's tie-break is rejected or ties again: the caller then
/// plays the two tricks one at a time. Returns the entry, the tricks won
/// and the next word.
#[inline(always)]
fn pair_fast<const M: u32, E: EventSink + ?Sized>(
    win: &[u16; WINDOW],
    p: usize,
    row: u32,
    events: &mut E,
) -> Option<(u32, u32, usize)> {
    let x0 = u32::from(win[p]) * M;
    let x1 = u32::from(win[p + 1]) * (M - 1);
    let (i, j) = (x0 >> 16, x1 >> 16);
    let e = PAIR[(row & PAIR_ROW_MASK) as usize + (i * (M - 1) + j) as usize];
    // One branch for the three rare cases (about one pair in eight).
    if ((x0 & 0xFFFF) < reject_below(M)) | ((x1 & 0xFFFF) < reject_below(M - 1)) | (e & PAIR_TIE0 != 0) {
        return None;
    }
    let mut won = e >> PAIR_WON;
    let mut q = p + 2;
    let (mut a, mut b, mut deck) = (0, 0, LOST);
    if e & PAIR_TIE1 != 0 {
        // The second trick's deck draw, as in `trick_fast`.
        a = u32::from(win[p + 2]) >> 12;
        let y = u32::from(win[p + 3]) * (DECK_SIZE - 1);
        b = y >> 16;
        deck = DECK[a as usize & 15][b as usize & 15];
        if deck == TIE || (y & 0xFFFF) < reject_below(DECK_SIZE - 1) {
            return None;
        }
        won += u32::from(deck == WON);
        q += 2;
    }
    let (o0, o1) = pair_codes(e);
    let c0 = Rank::from_index_wrapping((e >> PAIR_CARDS) as u8 & 7);
    let c1 = Rank::from_index_wrapping((e >> (PAIR_CARDS + 3)) as u8 & 7);
    events.push(Event::Trick { player: Rank::from_index_wrapping(8 - M as u8), capone: c0, outcome: outcome(o0) });
    events.push(Event::Trick { player: Rank::from_index_wrapping(9 - M as u8), capone: c1, outcome: outcome(o1) });
    if o1 == TIE {
        let c = if b >= a { b + 1 } else { b };
        let (pd, cd) = (DeckCard::new(a as u8).expect("a < 16").rank(), DeckCard::new(c as u8).expect("c < 16").rank());
        events.push(Event::Deck { player: pd, capone: cd, outcome: outcome(deck), for_: DeckFor::TieBreak });
    }
    Some((e, won, q))
}

/// Words a game's eight tricks read on the common path: one each, and two
/// more for a tie's deck draw.
const WINDOW: usize = 24;

/// How a game's tricks are played: [`PAIRS`] (the simulator's), or one
/// trick a lookup with a branch on ties (`SINGLE`) or without
/// ([`BRANCHLESS`]), kept for the benchmarks that compare them (feature
/// `bench`).
const PAIRS: u8 = 0;
#[cfg(feature = "bench")]
const SINGLE: u8 = 1;
const BRANCHLESS: u8 = 2;

/// One game of eight tricks (art. 3.2.3), its ties settled: the tricks won.
// The last trick's rare path refreshes a window nobody reads.
#[allow(unused_assignments)]
#[inline(always)]
fn eight_tricks<const MODE: u8, W: Words16 + ?Sized, E: EventSink + ?Sized>(w: &mut W, events: &mut E) -> u32 {
    let mut hand = 0xFFu8;
    // The last pair's entry, whose fields give As Capone's hand: read only
    // when a pair takes the rare path.
    let mut last = 0xFFu32 << PAIR_HAND;
    let mut row = 0u32;
    let mut won = 0u32;
    let mut win = w.window::<WINDOW>();
    let mut p = 0usize;
    macro_rules! trick {
        ($m:literal) => {
            match trick_fast::<$m, MODE, E>(&win, p, hand, events) {
                Some((h, t, q)) => {
                    hand = h;
                    won += t;
                    p = q;
                }
                None => {
                    w.consume(p);
                    let (h, t) = trick_slow(w, hand, events);
                    hand = h;
                    won += t;
                    win = w.window::<WINDOW>();
                    p = 0;
                }
            }
        };
    }
    macro_rules! pair {
        ($m:literal, $m1:literal) => {
            match pair_fast::<$m, E>(&win, p, row, events) {
                Some((e, t, q)) => {
                    row = e;
                    last = e;
                    won += t;
                    p = q;
                }
                None => {
                    hand = (last >> PAIR_HAND) as u8;
                    trick!($m);
                    trick!($m1);
                    row = u32::from(PAIR_ROW[usize::from(hand)]);
                    last = u32::from(hand) << PAIR_HAND;
                }
            }
        };
    }
    if MODE == PAIRS {
        pair!(8, 7);
        pair!(6, 5);
        pair!(4, 3);
        pair!(2, 1);
    } else {
        trick!(8);
        trick!(7);
        trick!(6);
        trick!(5);
        trick!(4);
        trick!(3);
        trick!(2);
        trick!(1);
    }
    debug_assert!(MODE == PAIRS || hand == 0);
    w.consume(p);
    won
}

/// Plays a whole ticket, Extra games included, the player's weakest card
/// first, as [`Game::apply`](crate::Game::apply) would with the same
/// actions and a source drawing `w`'s words with
/// [`below16`]: the same events, words, result and game number (the last
/// game's, 1 without an Extra game). Tricks are played two at a time
/// (one lookup in `PAIR` for both).
#[inline]
pub fn play_weakest_first<W: Words16 + ?Sized, E: EventSink + ?Sized>(
    prizes: PrizeSchedule,
    w: &mut W,
    events: &mut E,
) -> (GameResult, u32) {
    play::<PAIRS, W, E>(prizes, w, events)
}

/// [`play_weakest_first`] one trick a lookup, a tie taking a branch: the
/// previous version, kept for the benchmark that compares them (feature
/// `bench`).
#[cfg(feature = "bench")]
#[inline]
pub fn play_weakest_first_single<W: Words16 + ?Sized, E: EventSink + ?Sized>(
    prizes: PrizeSchedule,
    w: &mut W,
    events: &mut E,
) -> (GameResult, u32) {
    play::<SINGLE, W, E>(prizes, w, events)
}

/// [`play_weakest_first_single`] with a tie's deck draw computed for every
/// trick and selected without a branch, instead of a branch on each tie:
/// fewer mispredicted branches, but the next trick's word then waits for
/// this trick's table lookup (a chain of about 15 cycles a trick). Measured
/// slower (BENCHMARKS.md); kept for the benchmark that compares them
/// (feature `bench`).
#[cfg(feature = "bench")]
#[inline]
pub fn play_weakest_first_branchless<W: Words16 + ?Sized, E: EventSink + ?Sized>(
    prizes: PrizeSchedule,
    w: &mut W,
    events: &mut E,
) -> (GameResult, u32) {
    play::<BRANCHLESS, W, E>(prizes, w, events)
}

#[inline(always)]
fn play<const MODE: u8, W: Words16 + ?Sized, E: EventSink + ?Sized>(
    prizes: PrizeSchedule,
    w: &mut W,
    events: &mut E,
) -> (GameResult, u32) {
    let mut game = 1u32;
    loop {
        let tricks = eight_tricks::<MODE, W, E>(w, events) as u8;
        if tricks != 4 {
            // art. 3.2.3.3 (five or more win), 3.2.3.5 (three or fewer lose).
            events.push(Event::GameOver { tricks, next: Next::Finished });
            return (finish(prizes, tricks, events), game);
        }
        // art. 3.2.3.4, 3.2.5.2: the Extra duel; 3.2.5.3: a tie goes to a
        // tie-break whose winner decides.
        events.push(Event::GameOver { tricks, next: Next::ExtraDraw });
        let mut code = deck_draw(w, DeckFor::Extra, events);
        while code == TIE {
            code = deck_draw(w, DeckFor::TieBreak, events);
        }
        if code == LOST {
            return (finish(prizes, 4, events), game);
        }
        // art. 3.2.5.4: an Extra game, eight new cards each.
        game += 1;
        events.push(Event::ExtraGame { game });
    }
}

#[inline(always)]
fn finish<E: EventSink + ?Sized>(prizes: PrizeSchedule, tricks: u8, events: &mut E) -> GameResult {
    let prize_cents = prizes.for_tricks(tricks);
    events.push(Event::Finished { tricks, prize_cents });
    GameResult { tricks, prize_cents }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trick table agrees with `Hand`'s own selection and removal.
    #[test]
    fn trick_table_agrees_with_hand() {
        for bits in 1..=255u8 {
            let h = Hand::from_bits(bits);
            let player = Rank::from_index_wrapping(8 - h.len() as u8);
            for i in 0..h.len() {
                let e = TRICK[bits as usize][i as usize];
                assert_eq!(e as u8, h.without_nth(i).bits());
                let capone = h.nth(i);
                assert_eq!((e >> 8) as u8 & 7, capone.index());
                let want = match player.cmp(&capone) {
                    std::cmp::Ordering::Greater => WON,
                    std::cmp::Ordering::Less => LOST,
                    std::cmp::Ordering::Equal => TIE,
                };
                assert_eq!((e >> 11) as u8, want);
            }
        }
    }

    /// Every pair entry is two lookups of the trick table, and the rows of
    /// the hands of a stage tile the table without overlap.
    #[test]
    fn pair_table_agrees_with_the_trick_table() {
        let mut rows = Vec::new();
        for bits in 1..=255u8 {
            let m = bits.count_ones() as usize;
            if !m.is_multiple_of(2) {
                continue;
            }
            let row = usize::from(PAIR_ROW[usize::from(bits)]);
            rows.push((row, m * (m - 1)));
            for i in 0..m {
                let first = TRICK[usize::from(bits)][i];
                for j in 0..m - 1 {
                    let second = TRICK[usize::from(first as u8)][j];
                    let e = PAIR[row + i * (m - 1) + j];
                    let new = second as u8;
                    assert_eq!((e >> PAIR_HAND) as u8, new);
                    assert_eq!(e & PAIR_ROW_MASK, u32::from(PAIR_ROW[usize::from(new)]));
                    assert_eq!((e >> PAIR_CARDS) & 7, u32::from(first >> 8) & 7);
                    assert_eq!((e >> (PAIR_CARDS + 3)) & 7, u32::from(second >> 8) & 7);
                    let (o0, o1) = ((first >> 11) as u8, (second >> 11) as u8);
                    assert_eq!(pair_codes(e), (o0, o1));
                    assert_eq!(e >> PAIR_WON, u32::from(o0 == WON) + u32::from(o1 == WON));
                }
            }
        }
        rows.sort();
        let mut next = 0;
        for (row, len) in rows {
            assert_eq!(row, next);
            next += len;
        }
        assert_eq!(next, PAIR_LEN);
        assert!(PAIR[PAIR_LEN..].iter().all(|&e| e == 0));
    }
}
