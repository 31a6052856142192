//! A stored game read back: the fields of a [`Game`](super::Game) as saved, checked
//! against what the rules can reach before they become a game.
//!
//! The server keeps games in progress as JSON; a tampered or corrupt one
//! must be refused when it is read, with the rule it breaks in words an
//! operator can act on, not discovered later in the middle of a trick.

use super::event::GameResult;
use super::phase::Phase;
use crate::card::{Hand, Rank};
use crate::prize::PrizeSchedule;
use serde::Deserialize;
use std::cmp::Ordering;

/// The fields of a [`Game`](super::Game) as stored, before they are checked.
///
/// What every state [`Game::apply`](super::Game::apply) can reach satisfies; reading a stored
/// game checks it, in this order, and the first rule broken is the error,
/// in words an operator can act on:
/// - the game number starts at 1, both sides hold as many cards (each
///   trick takes one from each, art. 3.2.3.1);
/// - a tied trick exactly in phase `tie_break`, of two cards of the same
///   value (art. 3.2.4.1), out of both hands;
/// - the tricks won, lost and tied and the cards in hand make eight
///   (art. 3.2.3.2);
/// - phase `play` with a card in hand; `extra_draw` and
///   `extra_tie_break` with none and exactly four tricks won (art.
///   3.2.3.4); `finished` with none, and a result exactly when finished
///   that is the deciding game's tricks (art. 3.2.5.5) and the schedule's
///   prize for them (art. 3.2.3.3, 3.2.3.5);
/// - the tricks won can come from the cards each side has played
///   (art. 3.2.3.1, ties settled either way by art. 3.2.4.3);
/// - every action takes exactly one random draw (a card of As Capone,
///   art. 3.2.2, or a deck draw, art. 3.2.4.2, 3.2.5.2), so `seq` equals
///   `draws`, and `draws` is at least what the state needs: nine for each
///   earlier game (eight tricks and the Extra duel that led on), one per
///   card played in this game, one tie-break per tie it must have had,
///   and the Extra duel's draw once it was drawn.
#[derive(Deserialize)]
pub struct GameState {
    pub(super) prizes: PrizeSchedule,
    pub(super) phase: Phase,
    pub(super) game: u32,
    pub(super) hand: Hand,
    pub(super) capone: Hand,
    pub(super) tied: Option<(Rank, Rank)>,
    pub(super) tricks_won: u8,
    pub(super) tricks_lost: u8,
    pub(super) draws: u64,
    pub(super) seq: u64,
    pub(super) result: Option<GameResult>,
}

impl GameState {
    /// Checks the rules listed on [`GameState`], in that order.
    pub(super) fn check(&self) -> Result<(), String> {
        self.check_cards()?;
        self.check_phase()?;
        self.check_draws()
    }

    /// The game number, both hands and the tied trick.
    fn check_cards(&self) -> Result<(), String> {
        let phase = self.phase.stored_name();
        let cards = self.hand.len();
        if self.game == 0 {
            return Err("game number 0: the first game is game 1".into());
        }
        if cards != self.capone.len() {
            return Err(format!(
                "the player holds {} and As Capone {}: each trick takes one card from each side (art. 3.2.3.1)",
                count_cards(cards),
                count_cards(self.capone.len())
            ));
        }

        // art. 3.2.4.1: a tied trick is two cards of the same value, played,
        // and waits in phase tie_break for its deck draw.
        match (self.phase, self.tied) {
            (Phase::TieBreak, None) => return Err("phase tie_break without its tied trick".into()),
            (Phase::TieBreak, Some(_)) | (_, None) => {}
            (_, Some(_)) => {
                return Err(format!(
                    "a tied trick in phase {phase}: a tied trick waits for its tie-break in phase tie_break \
                     (art. 3.2.4.2)"
                ));
            }
        }
        if let Some((player, capone)) = self.tied {
            if player != capone {
                return Err(format!(
                    "a tie of two different values, {player} and {capone}: a tie is two cards of the same value \
                     (art. 3.2.4.1)"
                ));
            }
            if self.hand.contains(player) {
                return Err(format!("the tied card {player} is still in the player's hand: it was played"));
            }
            if self.capone.contains(capone) {
                return Err(format!("the tied card {capone} is still in As Capone's hand: it was played"));
            }
        }
        Ok(())
    }

    /// The tricks and cards of the phase, and the result.
    fn check_phase(&self) -> Result<(), String> {
        let phase = self.phase.stored_name();
        let cards = self.hand.len();
        let won = self.tricks_won;
        let lost = self.tricks_lost;

        // art. 3.2.3.2: a game is eight tricks, every card played once.
        let pending = u32::from(self.tied.is_some());
        let total = u32::from(won) + u32::from(lost) + pending + cards;
        if total != 8 {
            let tied = if pending == 1 { ", one tied" } else { "" };
            return Err(format!(
                "tricks won {won}, lost {lost}{tied} and {} in hand make {total} tricks, not eight (art. 3.2.3.2)",
                count_cards(cards)
            ));
        }

        match self.phase {
            Phase::Play if cards == 0 => {
                return Err("phase play with no card in hand: a game whose eight tricks are played is judged \
                            (art. 3.2.3.3 to 3.2.3.5)"
                    .into());
            }
            Phase::ExtraDraw | Phase::ExtraTieBreak if cards > 0 => {
                return Err(format!(
                    "phase {phase} with {} in hand: the Extra duel comes after all eight tricks (art. 3.2.3.4, 3.2.5.2)",
                    count_cards(cards)
                ));
            }
            Phase::ExtraDraw | Phase::ExtraTieBreak if won != 4 => {
                return Err(format!(
                    "phase {phase} with {won} tricks won: only exactly four lead to the Extra duel (art. 3.2.3.4)"
                ));
            }
            Phase::Finished if cards > 0 => {
                return Err(format!(
                    "phase finished with {} in hand: a ticket is decided only after all eight tricks (art. 3.2.3.2)",
                    count_cards(cards)
                ));
            }
            _ => {}
        }
        match (self.phase, self.result) {
            (Phase::Finished, None) => return Err("phase finished without a result".into()),
            (Phase::Finished, Some(r)) => {
                if r.tricks != won {
                    return Err(format!(
                        "a result of {} tricks, but the deciding game has {won} tricks won: only the last game's \
                         tricks count (art. 3.2.5.5)",
                        r.tricks
                    ));
                }
                let due = self.prizes.for_tricks(r.tricks);
                if r.prize_cents != due {
                    return Err(format!(
                        "a result paying {} cents for {} tricks, but the ticket's schedule pays {due} \
                         (art. 3.2.3.3, 3.2.3.5)",
                        r.prize_cents, r.tricks
                    ));
                }
            }
            (_, Some(_)) => return Err(format!("a result in phase {phase}: only a finished ticket has one")),
            (_, None) => {}
        }
        Ok(())
    }

    /// The tricks won against the cards played, and the draw counters.
    fn check_draws(&self) -> Result<(), String> {
        let cards = self.hand.len();
        let won = self.tricks_won;
        let lost = self.tricks_lost;

        // The tricks settled in this game pair the cards each side played
        // (the tied trick's aside); art. 3.2.3.1: the higher card wins,
        // art. 3.2.4.3: a tie goes either way at the deck.
        let mut player_played = Hand::from_bits(!self.hand.bits());
        let mut capone_played = Hand::from_bits(!self.capone.bits());
        if let Some((player, capone)) = self.tied {
            player_played.remove(player);
            capone_played.remove(capone);
        }
        let Some(ties) = fewest_ties(player_played, capone_played, won) else {
            return Err(format!(
                "tricks won {won} and lost {lost} cannot come from the cards played: the player's {} against \
                 As Capone's {} (art. 3.2.3.1)",
                list_cards(player_played),
                list_cards(capone_played)
            ));
        };

        // One draw per action: As Capone's card (art. 3.2.2) or a deck draw
        // (art. 3.2.4.2, 3.2.5.2). Tie-breaks beyond the fewest only add.
        let earlier = 9 * u64::from(self.game - 1);
        let played = u64::from(8 - cards);
        let extra_duel = u64::from(self.phase == Phase::ExtraTieBreak || (self.phase == Phase::Finished && won == 4));
        let least = earlier + played + u64::from(ties) + extra_duel;
        if self.draws < least {
            let ties = match ties {
                0 => String::new(),
                1 => ", a tie".into(),
                n => format!(", {n} ties"),
            };
            let extra_duel = if extra_duel == 1 { " and the Extra duel's draw" } else { "" };
            return Err(format!(
                "draw counter {} too low: game {} with {} played{ties}{extra_duel} takes at least {least} draws \
                 (each earlier game eight tricks and its Extra duel, each trick one, each tie a tie-break; \
                 art. 3.2.3, 3.2.4, 3.2.5)",
                self.draws,
                self.game,
                count_cards(8 - cards)
            ));
        }
        if self.seq != self.draws {
            return Err(format!(
                "action counter (seq) {} differs from the draw counter {}: every action takes exactly one draw",
                self.seq, self.draws
            ));
        }
        Ok(())
    }
}

/// The fewest ties among tricks that pair the cards `player` played with
/// those `capone` played (as many) and give the player `won` of them, ties
/// going either way; `None` if no pairing gives `won`. Dynamic programming
/// over the subsets of As Capone's cards: at most 256 x 8 x 9 steps.
fn fewest_ties(player: Hand, capone: Hand, won: u8) -> Option<u8> {
    const NONE: u8 = u8::MAX;
    let ps: Vec<Rank> = player.iter().collect();
    let cs: Vec<Rank> = capone.iter().collect();
    let n = cs.len();
    if ps.len() != n || usize::from(won) > n {
        return None;
    }
    // best[mask][w]: the fewest ties pairing the first |mask| cards of the
    // player with As Capone's cards in `mask`, w of the tricks won.
    let mut best = vec![[NONE; 9]; 1 << n];
    best[0][0] = 0;
    for mask in 0..(1usize << n) {
        let i = mask.count_ones() as usize;
        if i == n {
            continue;
        }
        let here = best[mask];
        for (j, &c) in cs.iter().enumerate() {
            if mask & (1 << j) != 0 {
                continue;
            }
            let next = &mut best[mask | (1 << j)];
            // At most i of the first i tricks are won.
            for (w, &t) in here.iter().enumerate().take(i + 1) {
                if t == NONE {
                    continue;
                }
                let mut relax = |w: usize, t: u8| next[w] = next[w].min(t);
                match ps[i].cmp(&c) {
                    Ordering::Greater => relax(w + 1, t),
                    Ordering::Less => relax(w, t),
                    Ordering::Equal => {
                        relax(w + 1, t + 1);
                        relax(w, t + 1);
                    }
                }
            }
        }
    }
    let t = best[(1 << n) - 1][usize::from(won)];
    (t != NONE).then_some(t)
}

/// "1 card", "3 cards".
fn count_cards(n: u32) -> String {
    if n == 1 { "1 card".into() } else { format!("{n} cards") }
}

/// "7 9 Q", or "none".
fn list_cards(h: Hand) -> String {
    if h.is_empty() { "none".into() } else { h.iter().map(Rank::as_str).collect::<Vec<_>>().join(" ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pairing of `ps` (in order) with an ordering of `cs[k..]`: calls `f` with
    /// the tricks the player wins outright and the ties.
    fn pairings(ps: &[Rank], cs: &mut [Rank], k: usize, f: &mut impl FnMut(u8, u8)) {
        if k == cs.len() {
            let won = ps.iter().zip(cs.iter()).filter(|(p, c)| p > c).count() as u8;
            let ties = ps.iter().zip(cs.iter()).filter(|(p, c)| p == c).count() as u8;
            f(won, ties);
            return;
        }
        for j in k..cs.len() {
            cs.swap(k, j);
            pairings(ps, cs, k + 1, f);
            cs.swap(k, j);
        }
    }

    /// art. 3.2.3.1, 3.2.4.3: the dynamic programming that bounds a stored
    /// game's tricks and draws agrees with trying every pairing of the cards
    /// played, for every two sets of as many cards.
    #[test]
    fn fewest_ties_agrees_with_every_pairing() {
        for pb in 0..=255u8 {
            for cb in 0..=255u8 {
                let (player, capone) = (Hand::from_bits(pb), Hand::from_bits(cb));
                if player.len() != capone.len() {
                    continue;
                }
                let ps: Vec<Rank> = player.iter().collect();
                let mut cs: Vec<Rank> = capone.iter().collect();
                let mut fewest = [None::<u8>; 9];
                pairings(&ps, &mut cs, 0, &mut |won, ties| {
                    for w in won..=won + ties {
                        let f = &mut fewest[usize::from(w)];
                        *f = Some(f.map_or(ties, |f| f.min(ties)));
                    }
                });
                for (w, f) in fewest.iter().enumerate() {
                    assert_eq!(fewest_ties(player, capone, w as u8), *f, "{ps:?} against {cs:?}, {w} won");
                }
            }
        }
    }
}
