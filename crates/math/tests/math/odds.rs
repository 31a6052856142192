//! The exact odds checked by a second, independent method: a walk through the
//! engine's own state machine over every draw outcome, with exact weights,
//! under several player strategies (the player's choice cannot change the
//! odds, `docs/rules.md` "What follows from the rules").

use as_capone_math::{FinalOutcome, Odds, fraction::ratio};
use engine::{Action, DrawSource, Event, Game, Phase, PrizeSchedule, Rank};
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::collections::HashMap;

/// A source that answers a fixed list of values (one branch of the walk).
struct Fixed(Vec<u32>, usize);

impl DrawSource for Fixed {
    fn start_draw(&mut self, _n: u64) {}
    fn below(&mut self, m: u32) -> u32 {
        let v = self.0[self.1];
        assert!(v < m);
        self.1 += 1;
        v
    }
}

type Strategy = fn(&Game) -> Rank;

/// Where a branch of the walk stops.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Stop {
    /// The first game is over with this many tricks (per-round walk).
    GameOver(u8),
    /// The ticket is decided.
    Final(FinalOutcome),
    /// A new Extra game starts: the walk is back at its start.
    Restart,
}

/// What identifies a state for the walk (not the counters of draws, actions
/// or games, which do not change what can happen next).
type Key = (Phase, u8, u8, Option<(Rank, Rank)>, u8, u8);

fn key(g: &Game) -> Key {
    (g.phase(), g.hand().bits(), g.capone_hand().bits(), g.tied_trick(), g.tricks_won(), g.tricks_lost())
}

struct Walk {
    strategy: Strategy,
    stop_at_game_over: bool,
    memo: HashMap<Key, HashMap<Stop, BigRational>>,
}

impl Walk {
    /// The exact distribution of where the ticket stops from `g`.
    fn from(&mut self, g: &Game) -> HashMap<Stop, BigRational> {
        if let Some(d) = self.memo.get(&key(g)) {
            return d.clone();
        }
        // Every outcome of the next action's draws, each with its weight.
        let (action, branches): (Action, Vec<(Vec<u32>, BigRational)>) = match g.phase() {
            Phase::Play => {
                let m = g.capone_cards_left();
                let card = (self.strategy)(g);
                (Action::play(card), (0..m).map(|i| (vec![i], ratio(1, m))).collect())
            }
            _ => {
                (Action::Draw, (0..16u32).flat_map(|a| (0..15u32).map(move |b| (vec![a, b], ratio(1, 240)))).collect())
            }
        };
        let mut dist: HashMap<Stop, BigRational> = HashMap::new();
        let mut self_loop = BigRational::zero();
        for (values, w) in branches {
            let mut next = g.clone();
            let mut events = Vec::new();
            next.apply(action, &mut Fixed(values, 0), &mut events).expect("the walk plays allowed actions");
            let stop = events.iter().find_map(|e| match *e {
                Event::GameOver { tricks, .. } if self.stop_at_game_over => Some(Stop::GameOver(tricks)),
                Event::ExtraGame { .. } => Some(Stop::Restart),
                Event::Finished { tricks, .. } => Some(Stop::Final(FinalOutcome::of_tricks(tricks))),
                _ => None,
            });
            match stop {
                Some(s) => *dist.entry(s).or_insert_with(BigRational::zero) += w,
                None if key(&next) == key(g) => self_loop += w, // a repeated tie (art. 3.2.4.4)
                None => {
                    for (s, p) in self.from(&next) {
                        *dist.entry(s).or_insert_with(BigRational::zero) += &w * p;
                    }
                }
            }
        }
        // v = rest + self_loop * v  =>  v = rest / (1 - self_loop)
        let scale = BigRational::one() - self_loop;
        for p in dist.values_mut() {
            *p /= &scale;
        }
        self.memo.insert(key(g), dist.clone());
        dist
    }
}

fn walk(strategy: Strategy) -> ([BigRational; 9], [BigRational; 5]) {
    let start = Game::new(PrizeSchedule::NONE);
    let mut w = Walk { strategy, stop_at_game_over: true, memo: HashMap::new() };
    let per_game = w.from(&start);
    let per_round = std::array::from_fn(|k| per_game.get(&Stop::GameOver(k as u8)).cloned().unwrap_or_default());
    let mut w = Walk { strategy, stop_at_game_over: false, memo: HashMap::new() };
    let d = w.from(&start);
    let restart = d.get(&Stop::Restart).cloned().unwrap_or_default();
    let fin = FinalOutcome::ALL
        .map(|o| d.get(&Stop::Final(o)).cloned().unwrap_or_default() / (BigRational::one() - &restart));
    (per_round, fin)
}

fn lowest_first(g: &Game) -> Rank {
    g.hand().lowest().unwrap()
}
fn highest_first(g: &Game) -> Rank {
    g.hand().highest().unwrap()
}
/// Adapts to what As Capone has left (cards already played are seen by the
/// player) and to the score: beat his strongest card if possible with the
/// cheapest card that does, else throw away the weakest card.
fn adaptive(g: &Game) -> Rank {
    let his_best = g.capone_hand().highest().unwrap();
    if g.tricks_won() >= 2 {
        return g.hand().iter().nth(g.hand().len() as usize / 2).unwrap();
    }
    g.hand().iter().find(|r| *r > his_best).unwrap_or_else(|| g.hand().lowest().unwrap())
}

#[test]
fn enumeration_agrees_with_a_walk_through_the_engine() {
    let odds = Odds::exact();
    let (per_round, fin) = walk(lowest_first);
    assert_eq!(per_round, odds.per_round);
    assert_eq!(fin, odds.final_chances());
    let extra = &odds.per_round[4] * ratio(1, 2);
    assert_eq!(odds.extra_per_round, extra);
}

#[test]
fn the_players_strategy_cannot_change_the_odds() {
    let base = walk(lowest_first);
    assert_eq!(walk(highest_first), base);
    assert_eq!(walk(adaptive), base);
}

#[test]
fn hand_derived_values() {
    let o = Odds::exact();
    // Eight tricks: As Capone's cards must never beat the player's, which
    // only the identity order does (a tie everywhere), and then all eight
    // ties are won at the deck: 1/8! * (1/2)^8.
    assert_eq!(o.per_round[8], ratio(1, 40320 * 256));
    // No trick at all: the same by symmetry.
    assert_eq!(o.per_round[0], ratio(1, 40320 * 256));
    // Symmetry between the player and As Capone: k and 8 - k are equally likely.
    for k in 0..=8 {
        assert_eq!(o.per_round[k], o.per_round[8 - k]);
    }
    // Hence exactly four tricks is the middle, and the Extra duel is won half the time.
    assert_eq!(o.deck_duel_win, ratio(1, 2));
    // P(5+) in one round = (1 - P(4)) / 2 by symmetry.
    let five_plus: BigRational = o.per_round[5..].iter().sum();
    assert_eq!(five_plus, (BigRational::one() - &o.per_round[4]) / BigRational::from_integer(2.into()));
    // Finals: per round, divided by the chance of no Extra game.
    for k in 5..=8usize {
        assert_eq!(o.final_tricks[k - 5], &o.per_round[k] / (BigRational::one() - &o.extra_per_round));
    }
}
