//! The simulator's lane path: several independent word streams (the
//! simulator's chunks) played side by side, one word of each stream a
//! step, as a branch-free state machine.
//!
//! Why: the pair path ([`crate::sim`]) plays one ticket at a time, and what
//! is left of its cost is the game's own random branches (a tie, an Extra
//! duel and its outcome: about 2.7 mispredictions a ticket) and the
//! dependent chain from one trick's lookup to the next. Different chunks of
//! a simulation are independent streams whose counts are summed, so one
//! thread can play [`LANES`] of them at once: a step takes one word of each
//! lane's stream, and every lane's state moves by selects, never by a
//! branch. A tie, a rejected word, a deck draw or an Extra duel is then data,
//! not a branch, and the chain of one lane is hidden behind the others'.
//! One step of the eight lanes is one pass of 256-bit vector instructions
//! (AVX2 intrinsics, detected at run time; without AVX2, [`step`] lane by
//! lane), about 80 instructions for eight words.
//!
//! It is a third path through the rules of art. 3.2, so it must agree with
//! [`Game::apply`](crate::Game::apply): [`step`] takes exactly one word and
//! ends a ticket exactly where the pair path does, with the same result and
//! game number, for every word sequence. The property tests of
//! `tests/engine/sim.rs` hold it to the pair path (itself held to `Game::apply`),
//! ticket by ticket, on scripted words steered to ties, repeated
//! tie-breaks, rejected words and Extra duels, and on a million ChaCha
//! tickets; the vector block is tested against the scalar steps lane by
//! lane, and the simulator's counts against `Game::apply` chunk by chunk.
//!
//! The state of a lane, five 32-bit words: As Capone's cards left, in
//! increasing order, one a nibble from the low end (so his i-th card is a
//! shift, and playing it two masks); the trick (the player's card value:
//! with the weakest card first, the player's card at trick `k` is `k`; 8
//! during the Extra duel); the next word's bound, which says what it draws
//! (his card, the first or the second card of a deck draw); the tricks won;
//! and the deck draw's first card. Game numbers are not state: a block
//! counts the Extra games begun.

use crate::fast::Words16;

/// Lanes of a block: eight 32-bit lanes, one 256-bit vector a field.
pub const LANES: usize = 8;
/// Steps of a block: 256 bytes of ChaCha8 a lane, four of its blocks.
pub const BLOCK: usize = crate::fast::MAX_WINDOW;
/// A ticket takes at least eight words (a word a trick), so a lane ends at
/// most this many tickets in a block (one begun before it, then one every
/// eight words): a lane with more tickets left than this cannot overrun its
/// chunk in a block.
pub const MAX_TICKETS_PER_BLOCK: u64 = 1 + (BLOCK as u64 - 1) / 8;

/// As Capone's eight cards, in increasing order, one a nibble.
const FULL: u32 = 0x7654_3210;

/// The bound of a deck draw's first word (the player's card, below 16) and
/// of its second (As Capone's, below 15). A trick's bound is his cards
/// left, 1 to 8, so the bound alone says what a word draws.
const DECK_A: u32 = 16;
const DECK_B: u32 = 15;

/// `REJECT[m % 16]` is `65536 mod m` for every bound `m` of the game (1 to
/// 8, 15 and 16): a word whose product by `m` has a low half below it is
/// rejected ([`accept16`](crate::fast::accept16)). Sixteen bytes, one
/// `vpshufb` table.
const REJECT: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut m = 1;
    while m <= 16 {
        if m <= 8 || m >= 15 {
            t[m % 16] = ((1 << 16) % m) as u8;
        }
        m += 1;
    }
    t
};

/// One lane between two words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    /// As Capone's cards left, in increasing order, one a nibble from the
    /// low end; the nibbles above the last are never read.
    pub cards: u32,
    /// The trick being played, 0 to 7, which is also the player's card; 8
    /// while deck draws decide an Extra duel (so a deck draw with a trick
    /// of 8 is the Extra duel's, any other a tie-break's).
    pub trick: u32,
    /// The next word's bound, which says what it draws: As Capone's card
    /// (his cards left, 1 to 8), the player's deck card (`DECK_A`) or As
    /// Capone's (`DECK_B`).
    pub bound: u32,
    /// Tricks the player took in this game.
    pub won: u32,
    /// The rank of the player's deck card, doubled (its card number with
    /// the low bit cleared), while As Capone's is drawn.
    pub deck: u32,
}

impl Lane {
    /// A ticket's start: nothing drawn.
    pub const START: Lane = Lane { cards: FULL, trick: 0, bound: 8, won: 0, deck: 0 };

    /// Between two tickets: [`Lane::START`] but for the last deck draw's
    /// player card, which nothing reads before the next deck draw sets it.
    /// (No word is ever rejected at a game's first trick, a bound of 8, so a
    /// lane in this state has taken no word of its next ticket.)
    pub fn at_start(&self) -> bool {
        Lane { deck: 0, ..*self } == Lane::START
    }
}

impl Default for Lane {
    fn default() -> Lane {
        Lane::START
    }
}

/// What a step did besides moving the state: `finished` is 1 when the word
/// ended a ticket, whose result is then `tricks` (0 to 8, tricks of the
/// deciding game); `extra_game` is 1 when it won an Extra duel (a new game
/// of the same ticket). A ticket's game number is 1 and its Extra games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    pub finished: u32,
    pub tricks: u32,
    pub extra_game: u32,
}

/// One word of a lane's stream, drawn with
/// [`FastSource`](crate::FastSource)'s rule, as the pair path and
/// `Game::apply` draw it, the player's weakest card first: the new state,
/// and whether a ticket ended or an Extra game began. Written with selects
/// only, and line for line as the vector code of [`Lanes::run_block`]
/// computes it.
///
/// Two facts make it short. A trick and a deck draw's second card end the
/// same way: the player takes it when the drawn value is below his own,
/// and ties when it equals it (a trick: As Capone's card against the
/// player's, the trick number; a deck draw: `b` below 15 against the
/// player's card `a`'s rank doubled, since As Capone's card `b + (b >= a)`
/// is of a lower rank exactly when `b < a & !1`, and of the same rank
/// exactly when `b == a & !1`). And after an eighth trick the tricks won
/// are the ticket's result whether it ends there or after a lost Extra
/// duel (they are then 4).
#[inline(always)]
pub fn step(s: Lane, w: u16) -> (Lane, Ended) {
    let x = u32::from(w) * s.bound;
    let v = x >> 16;
    let ok = (x & 0xFFFF) >= u32::from(REJECT[(s.bound % 16) as usize]);
    let in_trick = s.bound <= 8;
    let deck_a = s.bound == DECK_A;
    let deck_b = s.bound == DECK_B;

    // A trick: As Capone plays his v-th card (v < bound <= 8).
    let sh = (v << 2) & 28;
    let card = (s.cards >> sh) & 15;
    let high = u32::MAX << sh;
    let cards_after = (s.cards & !high) | ((s.cards >> 4) & high);

    // Who takes the trick or the deck draw.
    let drawn = if in_trick { card } else { v };
    let theirs = if in_trick { s.trick } else { s.deck };
    let lt = drawn < theirs;
    let tie = drawn == theirs;

    // A trick or a deck draw's second card drawn, and not a tie: a trick
    // taken, or the Extra duel decided.
    let taken = ok & !deck_a;
    let decided = taken & !tie;
    let duel = deck_b & (s.trick == 8);
    let trick_done = decided & !duel;
    let duel_decided = decided & duel;
    let won = s.won + u32::from(trick_done & lt);
    let trick = s.trick + u32::from(trick_done);
    // art. 3.2.3: the game ends with its eighth trick; four tricks go to
    // the Extra duel (3.2.3.4), any other count ends the ticket.
    let game_end = trick_done & (trick == 8);
    let four = won == 4;
    let extra_duel = game_end & four;
    let ends_game = game_end & !four;
    // art. 3.2.5.3, 3.2.5.4: the Extra duel won, an Extra game; lost, the
    // ticket ends with its four tricks.
    let extra_game = duel_decided & lt;
    let finished = ends_game | (duel_decided & !lt);
    let new_game = ends_game | duel_decided;
    // A tie (of a trick or of a deck draw) and the Extra duel draw from the
    // deck; its first card is followed by its second.
    let to_deck = (taken & tie) | extra_duel;
    let trick = if new_game { 0 } else { trick };
    let bound = if to_deck {
        DECK_A
    } else if deck_a {
        DECK_B
    } else if trick_done | new_game {
        8 - trick
    } else {
        s.bound
    };
    let next = Lane {
        cards: if new_game {
            FULL
        } else if ok & in_trick {
            cards_after
        } else {
            s.cards
        },
        trick,
        bound,
        won: if new_game { 0 } else { won },
        deck: if deck_a { v & 14 } else { s.deck },
    };
    let ended = Ended { finished: u32::from(finished), tricks: won, extra_game: u32::from(extra_game) };
    (next, ended)
}

/// Plays words of `w` from the lane's state `s` to the end of its ticket,
/// leaving `s` at a ticket's start ([`Lane::at_start`]): the ticket's
/// tricks, and the Extra games won on the way. From `Lane::START`, a whole
/// ticket, the words the pair path would take, and its game number less 1.
pub fn finish_ticket<W: Words16 + ?Sized>(s: &mut Lane, w: &mut W) -> (u8, u32) {
    let mut extra = 0;
    loop {
        let (next, e) = step(*s, w.take_u16());
        *s = next;
        extra += e.extra_game;
        if e.finished == 1 {
            return (e.tricks as u8, extra);
        }
    }
}

/// What the lanes did in a block, one 32-bit word a lane of 5-bit fields
/// (a block ends at most [`MAX_TICKETS_PER_BLOCK`] tickets, 16, and begins
/// at most as many Extra games, since a game takes eight words: no field
/// overflows): tickets ended (bit 0), tickets won with 5, 6, 7 and 8 tricks
/// (bits 5, 10, 15, 20), Extra games begun (bit 25).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCounts(pub [u32; LANES]);

const TICKETS: u32 = 0;
const EXTRA_GAMES: u32 = 25;
const _: () = assert!(MAX_TICKETS_PER_BLOCK < 32 && BLOCK / 8 < 32);

impl BlockCounts {
    /// Lane `i`'s tickets ended.
    pub fn tickets(&self, i: usize) -> u32 {
        (self.0[i] >> TICKETS) & 31
    }

    /// Lane `i`'s tickets won with `t` tricks (5 to 8).
    pub fn wins_with(&self, i: usize, t: u32) -> u32 {
        debug_assert!((5..=8).contains(&t));
        (self.0[i] >> (5 * (t - 4))) & 31
    }

    /// Lane `i`'s Extra games begun.
    pub fn extra_games(&self, i: usize) -> u32 {
        (self.0[i] >> EXTRA_GAMES) & 31
    }

    /// Counts a step of lane `i`.
    #[inline(always)]
    fn add(&mut self, i: usize, e: Ended) {
        let win = if e.tricks >= 5 { 1 << (5 * (e.tricks - 4)) } else { 0 };
        self.0[i] += e.finished * ((1 << TICKETS) | win) + (e.extra_game << EXTRA_GAMES);
    }
}

/// The lanes' states, field by field (one vector a field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    cards: [u32; LANES],
    trick: [u32; LANES],
    bound: [u32; LANES],
    won: [u32; LANES],
    deck: [u32; LANES],
}

impl Default for Lanes {
    fn default() -> Lanes {
        let s = Lane::START;
        Lanes {
            cards: [s.cards; LANES],
            trick: [s.trick; LANES],
            bound: [s.bound; LANES],
            won: [s.won; LANES],
            deck: [s.deck; LANES],
        }
    }
}

impl Lanes {
    /// Lane `i`'s state.
    pub fn get(&self, i: usize) -> Lane {
        Lane { cards: self.cards[i], trick: self.trick[i], bound: self.bound[i], won: self.won[i], deck: self.deck[i] }
    }

    /// Sets lane `i`'s state.
    pub fn set(&mut self, i: usize, s: Lane) {
        self.cards[i] = s.cards;
        self.trick[i] = s.trick;
        self.bound[i] = s.bound;
        self.won[i] = s.won;
        self.deck[i] = s.deck;
    }

    /// Plays [`BLOCK`] words of each lane: `words[k][i]` is lane `i`'s
    /// `k`-th word. The same as the scalar `step` (`lanes.rs`) on each lane word by word (tested);
    /// AVX2 vector code when the processor has it, [`Lanes::run_block_scalar`]
    /// otherwise.
    pub fn run_block(&mut self, words: &[[u16; LANES]; BLOCK]) -> BlockCounts {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2, checked just above.
                return unsafe { avx2::run_block(self, words) };
            }
        }
        self.run_block_scalar(words)
    }

    /// [`Lanes::run_block`] with the scalar `step` lane by lane: the fallback, and
    /// the reference the vector code is tested against.
    pub fn run_block_scalar(&mut self, words: &[[u16; LANES]; BLOCK]) -> BlockCounts {
        let mut counts = BlockCounts::default();
        for i in 0..LANES {
            let mut s = self.get(i);
            for row in words {
                let (next, e) = step(s, row[i]);
                s = next;
                counts.add(i, e);
            }
            self.set(i, s);
        }
        counts
    }
}

/// Lays out the lanes' next [`BLOCK`] words for [`Lanes::run_block`]:
/// `out[k][i]` is word `k` of lane `i`, the little-endian pair of bytes
/// `blocks[i][2k], blocks[i][2k + 1]` (each lane's bytes as its stream
/// gives them, as [`FastSource`](crate::FastSource) reads its words). Eight by eight words at a time with vector unpacks (a transpose
/// of 16-bit words) when the processor has AVX2, element by element
/// otherwise.
pub fn transpose(blocks: &[[u8; 2 * BLOCK]; LANES], out: &mut [[u16; LANES]; BLOCK]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            return unsafe { avx2::transpose(blocks, out) };
        }
    }
    transpose_scalar(blocks, out);
}

/// [`transpose`] element by element: the fallback without AVX2.
fn transpose_scalar(blocks: &[[u8; 2 * BLOCK]; LANES], out: &mut [[u16; LANES]; BLOCK]) {
    for (k, row) in out.iter_mut().enumerate() {
        for (i, x) in row.iter_mut().enumerate() {
            *x = u16::from_le_bytes([blocks[i][2 * k], blocks[i][2 * k + 1]]);
        }
    }
}

/// [`step`] on eight lanes at once with AVX2, operation for operation:
/// conditions are masks of all ones or zeros, selects are blends.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BLOCK, BlockCounts, DECK_A, DECK_B, EXTRA_GAMES, FULL, LANES, Lanes, REJECT};
    use std::arch::x86_64::*;

    /// Eight lanes of a field.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(a: &[u32; LANES]) -> __m256i {
        // SAFETY: `a` is 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(a.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(a: &mut [u32; LANES], v: __m256i) {
        // SAFETY: `a` is 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) }
    }

    /// A step's eight words, zero-extended to 32 bits.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn words(row: &[u16; LANES]) -> __m256i {
        // SAFETY: `row` is 16 readable bytes; the load is unaligned.
        _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(row.as_ptr().cast()) })
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(x: u32) -> __m256i {
        _mm256_set1_epi32(x as i32)
    }

    /// Playing [`BLOCK`] steps of the eight lanes, the state held in
    /// registers; see [`super::step`] for what each line computes.
    #[target_feature(enable = "avx2")]
    pub(super) fn run_block(l: &mut Lanes, rows: &[[u16; LANES]; BLOCK]) -> BlockCounts {
        let (mut cards, mut trick, mut bound) = (load(&l.cards), load(&l.trick), load(&l.bound));
        let (mut won, mut deck) = (load(&l.won), load(&l.deck));
        let mut counts = _mm256_setzero_si256();
        let reject = {
            let mut t = [0u32; LANES];
            for (k, x) in t.iter_mut().enumerate() {
                let b = 4 * (k % 4);
                *x = u32::from_le_bytes([REJECT[b], REJECT[b + 1], REJECT[b + 2], REJECT[b + 3]]);
            }
            load(&t)
        };
        for row in rows {
            let ones = _mm256_cmpeq_epi32(bound, bound);
            let w = words(row);
            let x = _mm256_mullo_epi32(w, bound);
            let v = _mm256_srli_epi32::<16>(x);
            let low = _mm256_blend_epi16::<0xAA>(x, _mm256_setzero_si256());
            // The rejection zone: the bound's low byte indexes the table,
            // the other three bytes (bit 7 set) read zeros.
            let r = _mm256_shuffle_epi8(reject, _mm256_or_si256(bound, splat(0x8080_8000)));
            let rejected = _mm256_cmpgt_epi32(r, low);
            let in_trick = _mm256_cmpgt_epi32(splat(9), bound);
            let deck_a = _mm256_cmpeq_epi32(bound, splat(DECK_A));
            let deck_b = _mm256_cmpeq_epi32(bound, splat(DECK_B));

            let sh = _mm256_and_si256(_mm256_slli_epi32::<2>(v), splat(28));
            let card = _mm256_and_si256(_mm256_srlv_epi32(cards, sh), splat(15));
            let high = _mm256_sllv_epi32(ones, sh);
            let cards_after = _mm256_or_si256(
                _mm256_andnot_si256(high, cards),
                _mm256_and_si256(_mm256_srli_epi32::<4>(cards), high),
            );

            let drawn = _mm256_blendv_epi8(v, card, in_trick);
            let theirs = _mm256_blendv_epi8(deck, trick, in_trick);
            let lt = _mm256_cmpgt_epi32(theirs, drawn);
            let tie = _mm256_cmpeq_epi32(drawn, theirs);

            // Masks of what did not happen: `not_taken` = !taken,
            // `not_decided` = !decided.
            let not_taken = _mm256_or_si256(rejected, deck_a);
            let not_decided = _mm256_or_si256(not_taken, tie);
            let duel = _mm256_and_si256(deck_b, _mm256_cmpeq_epi32(trick, splat(8)));
            let trick_done = _mm256_andnot_si256(_mm256_or_si256(not_decided, duel), ones);
            let duel_decided = _mm256_andnot_si256(not_decided, duel);
            won = _mm256_sub_epi32(won, _mm256_and_si256(trick_done, lt));
            trick = _mm256_sub_epi32(trick, trick_done);
            let game_end = _mm256_and_si256(trick_done, _mm256_cmpeq_epi32(trick, splat(8)));
            let four = _mm256_cmpeq_epi32(won, splat(4));
            let extra_duel = _mm256_and_si256(game_end, four);
            let ends_game = _mm256_andnot_si256(four, game_end);
            let extra_game = _mm256_and_si256(duel_decided, lt);
            let finished = _mm256_or_si256(ends_game, _mm256_andnot_si256(lt, duel_decided));
            let new_game = _mm256_or_si256(ends_game, duel_decided);
            let to_deck = _mm256_or_si256(_mm256_andnot_si256(not_taken, tie), extra_duel);

            // The counts: a ticket at bit 0 (minus a mask of ones adds 1),
            // a win with t tricks at bit 5 (t - 4) (a shift by 32 or more
            // gives 0: no win below 5), an Extra game at bit 25.
            let five_won = _mm256_add_epi32(_mm256_slli_epi32::<2>(won), won);
            let win = _mm256_sllv_epi32(splat(1 << 5), _mm256_sub_epi32(five_won, splat(25)));
            counts = _mm256_sub_epi32(counts, finished);
            counts = _mm256_add_epi32(counts, _mm256_and_si256(finished, win));
            counts = _mm256_add_epi32(counts, _mm256_and_si256(extra_game, splat(1 << EXTRA_GAMES)));

            trick = _mm256_andnot_si256(new_game, trick);
            won = _mm256_andnot_si256(new_game, won);
            let advanced = _mm256_or_si256(trick_done, new_game);
            bound = _mm256_blendv_epi8(bound, _mm256_sub_epi32(splat(8), trick), advanced);
            bound = _mm256_blendv_epi8(bound, splat(DECK_B), deck_a);
            bound = _mm256_blendv_epi8(bound, splat(DECK_A), to_deck);
            let played = _mm256_andnot_si256(rejected, in_trick);
            cards = _mm256_blendv_epi8(cards, cards_after, played);
            cards = _mm256_blendv_epi8(cards, splat(FULL), new_game);
            deck = _mm256_blendv_epi8(deck, _mm256_and_si256(v, splat(14)), deck_a);
        }
        store(&mut l.cards, cards);
        store(&mut l.trick, trick);
        store(&mut l.bound, bound);
        store(&mut l.won, won);
        store(&mut l.deck, deck);
        let mut out = BlockCounts::default();
        store(&mut out.0, counts);
        out
    }

    /// [`super::transpose`]: eight words of each lane at a time, three
    /// rounds of unpacks (16-bit, 32-bit, then 64-bit pairs).
    #[target_feature(enable = "avx2")]
    pub(super) fn transpose(blocks: &[[u8; 2 * BLOCK]; LANES], out: &mut [[u16; LANES]; BLOCK]) {
        for (t, rows) in out.chunks_exact_mut(8).enumerate() {
            // SAFETY: each load reads 16 bytes, words 8t..8t + 8 of a lane's
            // block of BLOCK (a multiple of 8) words; x86 is little-endian,
            // so the bytes are the words.
            let r: [__m128i; 8] =
                std::array::from_fn(|i| unsafe { _mm_loadu_si128(blocks[i][16 * t..].as_ptr().cast()) });
            // Three rounds of unpacks: 16-bit, 32-bit, then 64-bit pairs.
            let a = [
                _mm_unpacklo_epi16(r[0], r[1]),
                _mm_unpackhi_epi16(r[0], r[1]),
                _mm_unpacklo_epi16(r[2], r[3]),
                _mm_unpackhi_epi16(r[2], r[3]),
                _mm_unpacklo_epi16(r[4], r[5]),
                _mm_unpackhi_epi16(r[4], r[5]),
                _mm_unpacklo_epi16(r[6], r[7]),
                _mm_unpackhi_epi16(r[6], r[7]),
            ];
            let b = [
                _mm_unpacklo_epi32(a[0], a[2]),
                _mm_unpackhi_epi32(a[0], a[2]),
                _mm_unpacklo_epi32(a[1], a[3]),
                _mm_unpackhi_epi32(a[1], a[3]),
                _mm_unpacklo_epi32(a[4], a[6]),
                _mm_unpackhi_epi32(a[4], a[6]),
                _mm_unpacklo_epi32(a[5], a[7]),
                _mm_unpackhi_epi32(a[5], a[7]),
            ];
            let c = [
                _mm_unpacklo_epi64(b[0], b[4]),
                _mm_unpackhi_epi64(b[0], b[4]),
                _mm_unpacklo_epi64(b[1], b[5]),
                _mm_unpackhi_epi64(b[1], b[5]),
                _mm_unpacklo_epi64(b[2], b[6]),
                _mm_unpackhi_epi64(b[2], b[6]),
                _mm_unpacklo_epi64(b[3], b[7]),
                _mm_unpackhi_epi64(b[3], b[7]),
            ];
            for (row, v) in rows.iter_mut().zip(c) {
                // SAFETY: a row is 8 words, 16 writable bytes.
                unsafe { _mm_storeu_si128(row.as_mut_ptr().cast(), v) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast::FastSource;

    #[test]
    fn transpose_lays_out_each_lane_in_a_column() {
        let mut blocks = [[0u8; 2 * BLOCK]; LANES];
        for (i, b) in blocks.iter_mut().enumerate() {
            for (k, x) in b.chunks_exact_mut(2).enumerate() {
                x.copy_from_slice(&((i * 1000 + k) as u16).to_le_bytes());
            }
        }
        for f in [transpose, transpose_scalar] {
            let mut out = [[0u16; LANES]; BLOCK];
            f(&blocks, &mut out);
            for (k, row) in out.iter().enumerate() {
                for (i, &x) in row.iter().enumerate() {
                    assert_eq!(x, (i * 1000 + k) as u16, "word {k} of lane {i}");
                }
            }
        }
    }

    /// The block (vector code where the processor has it, and the scalar
    /// fallback) equals the lanes' steps one by one, state and counts, on
    /// ChaCha words and on words drawn from a small set that steers to
    /// ties, rejections and Extra duels.
    #[test]
    fn a_block_is_the_lanes_steps() {
        let mut src = FastSource::from_u64(5, 0);
        let steer = [0u16, 1, 2, 3, 0x0800, 0x1000, 0x2000, 0x4000, 0x8000, 0x9249, 0xFFFF, 0x2492];
        let mut lanes = Lanes::default();
        let mut lanes_scalar = Lanes::default();
        let mut scalar = [Lane::START; LANES];
        for round in 0..400 {
            let mut words = [[0u16; LANES]; BLOCK];
            for row in words.iter_mut() {
                for x in row.iter_mut() {
                    let r = src.next_u16();
                    *x = if round % 2 == 0 { r } else { steer[usize::from(r) % steer.len()] | (r & 0x0400) };
                }
            }
            let counts = lanes.run_block(&words);
            assert_eq!(lanes_scalar.run_block_scalar(&words), counts, "round {round}");
            assert_eq!(lanes_scalar, lanes, "round {round}");
            let mut want = BlockCounts::default();
            for (i, s) in scalar.iter_mut().enumerate() {
                for row in &words {
                    let (n, e) = step(*s, row[i]);
                    *s = n;
                    if e.finished == 1 {
                        want.0[i] += 1;
                        if e.tricks >= 5 {
                            want.0[i] += 1 << (5 * (e.tricks - 4));
                        }
                    }
                    want.0[i] += e.extra_game << 25;
                }
                assert_eq!(lanes.get(i), *s, "round {round}, lane {i}");
            }
            assert_eq!(counts, want, "round {round}");
        }
    }
}
