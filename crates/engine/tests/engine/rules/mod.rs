//! One test (at least) per article of the regulation's 3.2, each named after
//! it, one file per part of the rules (`docs/rules.md`). Draws are scripted:
//! a test says which cards As Capone and the deck deal, and the helpers
//! below turn that into the uniform integers the engine asks for, through
//! the same indexing rules as the fair stream (`docs/fairness.md`).

mod cards_and_tricks;
mod extra_duel;
mod stored_state;
mod ties;

use Rank::*;
use as_capone_engine::{
    Action, ActionError, DeckFor, DrawSource, Event, Game, GameResult, Hand, Next, Outcome, Phase, PrizeSchedule, Rank,
};
use std::collections::VecDeque;

const PRIZES: PrizeSchedule = PrizeSchedule::new([300, 1000, 10_000, 1_000_000]);

/// A draw source that answers from a script, checking every bound asked.
#[derive(Default)]
struct Script {
    values: VecDeque<u32>,
    asked: Vec<u32>,
    started: Vec<u64>,
}

impl DrawSource for Script {
    fn start_draw(&mut self, n: u64) {
        self.started.push(n);
    }
    fn below(&mut self, m: u32) -> u32 {
        self.asked.push(m);
        let v = self.values.pop_front().expect("the script ran out of draws");
        assert!(v < m, "scripted value {v} is not below {m}");
        v
    }
}

/// Plays `card` with As Capone answering `capone`.
fn play(g: &mut Game, card: Rank, capone: Rank) -> Vec<Event> {
    let idx = g.capone_hand().iter().position(|r| r == capone).expect("As Capone holds that card");
    let mut s = Script { values: [idx as u32].into(), ..Default::default() };
    let mut ev = Vec::new();
    g.apply(Action::play(card), &mut s, &mut ev).expect("the card can be played");
    assert!(s.values.is_empty());
    assert_reads_back(g);
    ev
}

/// The deck indices (a < 16, b < 15) that deal `player` and `capone`.
fn deck_values(player: Rank, capone: Rank) -> [u32; 2] {
    let a = 2 * player.index() as u32;
    // The second card of a value when the first is the player's.
    let c = if capone == player { a + 1 } else { 2 * capone.index() as u32 };
    let b = if c > a { c - 1 } else { c };
    [a, b]
}

/// Clicks the deck, which deals `player` to the player and `capone` to As Capone.
fn draw(g: &mut Game, player: Rank, capone: Rank) -> Vec<Event> {
    let mut s = Script { values: deck_values(player, capone).into(), ..Default::default() };
    let mut ev = Vec::new();
    g.apply(Action::Draw, &mut s, &mut ev).expect("a deck draw is due");
    assert!(s.values.is_empty());
    assert_reads_back(g);
    ev
}

/// Every state these tests reach is one the rules reach: stored and read
/// back, it is the same game.
fn assert_reads_back(g: &Game) {
    let json = serde_json::to_string(g).unwrap();
    let back: Game =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("a reachable state was refused: {e}: {json}"));
    assert_eq!(&back, g);
}

/// Plays a whole game of eight tricks winning exactly `wins`, without ties
/// where possible; ties (needed for 0 and 8 wins: a 7 never beats a card, an
/// Ace never loses) are settled by deck draws in the direction needed.
fn play_game_winning(g: &mut Game, wins: u8) -> Vec<Event> {
    let mut ev = Vec::new();
    let (pairs, mut tie_wins) = pairing(wins);
    for (p, c) in pairs {
        ev.extend(play(g, p, c));
        if p == c {
            let won = tie_wins > 0;
            tie_wins = tie_wins.saturating_sub(1);
            ev.extend(if won { draw(g, Ace, King) } else { draw(g, Seven, Eight) });
        }
    }
    ev
}

/// Eight (player, As Capone) pairs, the fewest ties first, such that the
/// player wins exactly `wins` tricks when the returned number of ties are
/// won at the deck and the others lost.
fn pairing(wins: u8) -> (Vec<(Rank, Rank)>, u8) {
    for allowed_ties in 0..=8usize {
        let mut perm: Vec<u8> = (0..8).collect();
        loop {
            let ties = perm.iter().enumerate().filter(|(i, c)| *i as u8 == **c).count();
            let won = perm.iter().enumerate().filter(|(i, c)| (*i as u8) > **c).count();
            if ties == allowed_ties && won <= wins as usize && won + ties >= wins as usize {
                let pairs = perm.iter().enumerate().map(|(i, c)| (Rank::ALL[i], Rank::ALL[*c as usize])).collect();
                return (pairs, wins - won as u8);
            }
            if !next_permutation(&mut perm) {
                break;
            }
        }
    }
    unreachable!("the identity pairing (eight ties) reaches every count")
}

fn next_permutation(v: &mut [u8]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else { return false };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap();
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

fn trick(player: Rank, capone: Rank, outcome: Outcome) -> Event {
    Event::Trick { player, capone, outcome }
}

/// A first game of four tricks won: the Extra duel is due.
fn reach_extra_duel() -> Game {
    let mut g = Game::new(PRIZES);
    play_game_winning(&mut g, 4);
    assert_eq!(g.phase(), Phase::ExtraDraw);
    g
}
