//! Steering games: the next action of a ticket as the API shows it, and
//! whole games played offline with the engine and the fair stream.
//!
//! A test server runs with the fixed seed [`SEED`]; with it, the client
//! seed and the serial, every draw of a ticket is known before it is
//! played. A test searches card orders ([`search_card_orders`]) or client seeds
//! ([`find_seed`]) for a game with a tie, an Extra duel, a prize..., then
//! plays it over HTTP and checks that the server gives exactly the events
//! the engine predicted.

use crate::fixture::SEED;
use engine::{Action, DrawSource, Event, FairStream, FastSource, Game, Hand, Phase, PrizeSchedule, Rank};
use serde_json::{Value, json};

/// The next action of a ticket as the API shows it (Ticket JSON): its first
/// card while it is played, else a draw.
pub fn next_action(t: &Value) -> Value {
    let seq = t["seq"].as_u64().unwrap();
    if t["phase"] == "play" {
        json!({"seq": seq, "action": "play", "card": t["hand"][0]})
    } else {
        json!({"seq": seq, "action": "draw"})
    }
}

/// The body of action `seq` (without a client seed).
pub fn action_json(seq: u64, a: Action) -> Value {
    match a {
        Action::Play { card } => json!({"seq": seq, "action": "play", "card": card.as_str()}),
        Action::Draw => json!({"seq": seq, "action": "draw"}),
    }
}

/// A ticket foreseen: played offline with the fixed seed before it is
/// played over HTTP, with its client seed, its actions, the events of each
/// action and the finished game.
#[derive(Clone)]
pub struct Foreseen {
    pub client_seed: String,
    pub actions: Vec<Action>,
    pub events: Vec<Vec<Event>>,
    pub game: Game,
}

impl Foreseen {
    /// Every event of the game, in order.
    pub fn all_events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().flatten()
    }

    /// Index of the first action whose events satisfy `f`.
    pub fn first(&self, f: impl Fn(&Event) -> bool) -> Option<usize> {
        self.events.iter().position(|ev| ev.iter().any(&f))
    }

    /// The body of action `seq`: the first one (`seq` 0) carries the client seed.
    pub fn action_body(&self, seq: usize) -> Value {
        let mut body = action_json(seq as u64, self.actions[seq]);
        if seq == 0 {
            body["client_seed"] = json!(self.client_seed);
        }
        body
    }
}

/// Plays ticket `serial` with the fixed seed and `client_seed` to its end,
/// `choose` picking the card of each play from the hand (it is told how
/// many cards were played before).
fn play(
    serial: &str,
    client_seed: &str,
    prizes: PrizeSchedule,
    mut choose: impl FnMut(Hand, usize) -> Rank,
) -> Foreseen {
    let mut stream = FairStream::new(&SEED, client_seed, serial);
    let mut game = Game::new(prizes);
    let (mut actions, mut events) = (Vec::new(), Vec::new());
    let mut played = 0;
    while !game.is_finished() {
        let a = match game.phase() {
            Phase::Play => {
                let card = choose(game.hand(), played);
                played += 1;
                Action::play(card)
            }
            _ => Action::Draw,
        };
        let mut ev = Vec::new();
        game.apply(a, &mut stream, &mut ev).unwrap();
        actions.push(a);
        events.push(ev);
    }
    Foreseen { client_seed: client_seed.to_string(), actions, events, game }
}

/// Tries up to `tries` random card orders (order `k` from
/// `FastSource::from_u64(k, 7)`) on ticket `serial` and returns the first
/// plan whose events satisfy `want`.
pub fn search_card_orders(
    serial: &str,
    client_seed: &str,
    prizes: PrizeSchedule,
    tries: u64,
    want: impl Fn(&Foreseen) -> bool,
) -> Option<Foreseen> {
    (0..tries).find_map(|k| {
        let mut choices = FastSource::from_u64(k, 7);
        let plan = play(serial, client_seed, prizes, |hand, _| hand.nth(choices.below(hand.len())));
        want(&plan).then_some(plan)
    })
}

/// The browser tests' player: the card `3 (n + 1)` of the hand (7 up,
/// wrapping) for its `n`-th play.
fn foresee(serial: &str, client_seed: &str, prizes: PrizeSchedule) -> Foreseen {
    play(serial, client_seed, prizes, |hand, n| hand.nth((((n + 1) * 3) % hand.len() as usize) as u32))
}

/// Searches client seeds `"{prefix}-0"`, `"{prefix}-1"`, ... for a game of
/// `serial` (played as the browser tests' player, card `3 (n + 1)` of the
/// hand for its `n`-th play; the prizes do not change the draws) that
/// satisfies `want`.
pub fn find_seed(serial: &str, prefix: &str, want: impl Fn(&Foreseen) -> bool) -> Foreseen {
    let prizes = PrizeSchedule::new([300, 1000, 10_000, 100_000]);
    for k in 0..200_000 {
        let plan = foresee(serial, &format!("{prefix}-{k}"), prizes);
        if want(&plan) {
            return plan;
        }
    }
    panic!("no client seed gives the wanted game");
}

/// The prize of `ticket` (Ticket JSON) for `tricks`: what the server pays.
pub fn prize_of(ticket: &Value, tricks: u8) -> i64 {
    if tricks < 5 {
        return 0;
    }
    ticket["prizes_cents"][tricks.to_string()].as_i64().unwrap_or(0)
}

/// The cards the middle of the table must show after an action: those of
/// its last trick or deck event.
pub fn shown_after(events: &[Event]) -> Option<(String, String)> {
    events.iter().rev().find_map(|e| match e {
        Event::Trick { player, capone, .. } | Event::Deck { player, capone, .. } => {
            Some((player.as_str().to_string(), capone.as_str().to_string()))
        }
        _ => None,
    })
}
