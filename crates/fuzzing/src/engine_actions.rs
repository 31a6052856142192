//! `engine_actions`: one ticket played through [`engine::Game::apply`] with
//! the player's actions and the draws both chosen by the input.
//!
//! The input is read as: one byte choosing the prize schedule, then pairs of
//! bytes, the first of each pair choosing an action and the second feeding
//! the draw source (so that a mutation of one byte changes one action or
//! one draw). An action byte `b`:
//! - `b < 0x80`: a move the rules allow now: the `(b % n)`-th card of the
//!   hand in phase `play`, the deck otherwise;
//! - `0x80..0xC0`: the card `b & 7`, whatever the phase (out of turn, a card
//!   not in hand, a card during a tie-break, after the end);
//! - `0xC0..`: a click on the deck, whatever the phase.
//!
//! A draw byte answers one `below(m)` call with `byte % m`, so the input
//! can force ties, repeated ties and Extra games. When the input runs out
//! the ticket is played to its end with allowed moves and ChaCha8 draws
//! seeded from the input.
//!
//! What must hold (docs/rules.md, the engine's guarantees):
//! - nothing panics (the engine's `debug_assert`s included, when built with
//!   debug assertions);
//! - [`Game::check`] and [`Game::apply`] agree on every action;
//! - a refused action changes nothing: the state (compared as a value and
//!   as its JSON), no event, no draw asked of the source;
//! - an allowed action takes exactly one draw, numbered `draws()`, adds one
//!   to `seq`, asks `below(m)` only with `m` the cards As Capone holds (1 to
//!   8), or 16 then 15 for a deck draw;
//! - tricks won and lost stay within 0..=8 and add up with the cards in hand
//!   and a pending tie to eight; both sides hold as many cards;
//! - every state reached serializes and reads back equal (the stored-state
//!   check accepts every reachable state);
//! - the events agree with the rules: a trick's outcome is the comparison of
//!   its cards, As Capone's card was in his hand, a tie is followed by a
//!   deck draw, a game is eight tricks, `game_over` with `extra_draw` only on
//!   exactly four tricks, an Extra game only after an Extra duel (or its
//!   tie-break) won, a ticket decided with the last game's tricks only
//!   (art. 3.2.5.5) and the schedule's prize for them, nothing under five;
//! - the ticket ends within a bounded number of actions once draws are fair;
//! - replaying the accepted actions on the same draws gives the same events
//!   and the same state ([`Game::replay`]).

use engine::{
    Action, ActionError, DeckFor, DrawSource, Event, FastSource, Game, Hand, Next, Outcome, Phase, PrizeSchedule, Rank,
};

/// Actions tried at most (refused ones included): far more than a fair
/// ticket needs (about 19 on average); reaching it is a failure.
const MAX_STEPS: usize = 100_000;

/// A draw source answering from the input's bytes, then from ChaCha8; it
/// keeps every call to check the engine against the draw contract.
struct ByteSource<'a> {
    bytes: &'a [u8],
    next: usize,
    fallback: FastSource,
    /// Every `start_draw(n)` then `below(m) -> v` call, in order.
    tape: Vec<Call>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Start(u64),
    Below(u32, u32),
}

impl<'a> ByteSource<'a> {
    fn new(bytes: &'a [u8], seed: u64) -> ByteSource<'a> {
        ByteSource { bytes, next: 0, fallback: FastSource::from_u64(seed, 0), tape: Vec::new() }
    }
}

impl DrawSource for ByteSource<'_> {
    fn start_draw(&mut self, n: u64) {
        self.tape.push(Call::Start(n));
    }
    fn below(&mut self, m: u32) -> u32 {
        assert!(m >= 1, "below(0) asked");
        let v = match self.bytes.get(self.next) {
            Some(&b) => {
                self.next += 1;
                u32::from(b) % m
            }
            None => self.fallback.next_u32() % m,
        };
        self.tape.push(Call::Below(m, v));
        v
    }
}

/// Replays a tape, checking that the same calls come in the same order.
struct TapeSource<'t> {
    tape: &'t [Call],
    at: usize,
}

impl DrawSource for TapeSource<'_> {
    fn start_draw(&mut self, n: u64) {
        assert_eq!(self.tape.get(self.at), Some(&Call::Start(n)), "replay: draw {n} starts out of order");
        self.at += 1;
    }
    fn below(&mut self, m: u32) -> u32 {
        match self.tape.get(self.at) {
            Some(&Call::Below(mm, v)) if mm == m => {
                self.at += 1;
                v
            }
            other => panic!("replay asks below({m}) where the game asked {other:?}"),
        }
    }
}

/// The schedules the first byte chooses from: ordinary, none, the largest
/// amounts a `u64` holds, and uneven ones.
fn schedule(b: u8) -> PrizeSchedule {
    match b % 5 {
        0 => PrizeSchedule::new([300, 1000, 10_000, 1_000_000]),
        1 => PrizeSchedule::NONE,
        2 => PrizeSchedule::new([u64::MAX; 4]),
        3 => PrizeSchedule::new([1, u64::MAX - 1, 7, 0]),
        _ => PrizeSchedule::new([u64::from(b), u64::from(b) * 3, 5, 1 << 40]),
    }
}

/// What the harness knows of the game so far, to check each event.
#[derive(Clone, Debug)]
struct Model {
    game: u32,
    /// As Capone's hand before the current action.
    capone: Hand,
    /// The tricks of the current game, in the order events report them.
    tricks_won: u8,
    tricks_lost: u8,
    plays_this_game: u32,
    /// A tie waits for its deck draw (of a trick or of an Extra duel).
    tie_pending: bool,
    /// The last game ended with four tricks and its Extra duel is due.
    extra_due: bool,
    finished: bool,
}

/// What an input did: for choosing seed inputs that reach every part of
/// the rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Games played: 1, or more with Extra games.
    pub games: u32,
    /// Deck draws that settled or repeated a tie.
    pub tie_breaks: u32,
    /// Actions refused.
    pub refused: u32,
    /// The deciding game's tricks.
    pub tricks: u8,
    /// Actions accepted.
    pub actions: usize,
}

/// Runs the harness; panics when an invariant breaks.
pub(crate) fn run(data: &[u8]) {
    engine_actions_summary(data);
}

/// Runs the harness and says what the input did; panics when an invariant
/// breaks.
pub fn engine_actions_summary(data: &[u8]) -> Summary {
    let (first, rest) = data.split_first().map(|(f, r)| (*f, r)).unwrap_or((0, &[]));
    let prizes = schedule(first);
    let actions: Vec<u8> = rest.iter().step_by(2).copied().collect();
    let draw_bytes: Vec<u8> = rest.iter().skip(1).step_by(2).copied().collect();
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));

    let mut source = ByteSource::new(&draw_bytes, seed);
    let mut game = Game::new(prizes);
    let mut events: Vec<Event> = Vec::new();
    let mut accepted: Vec<Action> = Vec::new();
    let mut model = Model {
        game: 1,
        capone: Hand::FULL,
        tricks_won: 0,
        tricks_lost: 0,
        plays_this_game: 0,
        tie_pending: false,
        extra_due: false,
        finished: false,
    };
    let mut steps = 0usize;
    let mut next_action = actions.iter().copied();
    let mut tried_after_end = 0;
    let mut refused = 0;

    loop {
        // After the ticket is decided, the input's remaining actions are
        // still tried (each must be refused), then the harness stops.
        let byte = match next_action.next() {
            Some(b) => Some(b),
            None if game.is_finished() => break,
            None => None,
        };
        if game.is_finished() {
            tried_after_end += 1;
            if tried_after_end > 64 {
                break;
            }
        }
        steps += 1;
        assert!(steps <= MAX_STEPS, "the ticket is not decided after {MAX_STEPS} actions: {game:?}");
        let action = choose(&game, byte);

        let before = game.clone();
        let before_json = serde_json::to_string(&game).expect("a game serializes");
        let tape_len = source.tape.len();
        let events_len = events.len();
        let checked = game.check(action);
        let applied = game.apply(action, &mut source, &mut events);
        assert_eq!(checked, applied, "check and apply disagree on {action:?} in {before:?}");

        match applied {
            Err(e) => {
                refused += 1;
                assert_eq!(game, before, "refused {action:?} ({e}) changed the game");
                assert_eq!(serde_json::to_string(&game).unwrap(), before_json, "refused {action:?} changed the JSON");
                assert_eq!(events.len(), events_len, "refused {action:?} reported events");
                assert_eq!(source.tape.len(), tape_len, "refused {action:?} took draws");
                check_refusal(&before, action, e);
            }
            Ok(()) => {
                accepted.push(action);
                assert!(!before.is_finished(), "{action:?} accepted after the end");
                assert_eq!(game.seq(), before.seq() + 1, "seq");
                assert_eq!(game.draws(), before.draws() + 1, "one draw per action");
                check_tape(&source.tape[tape_len..], before.draws(), &before, action);
                check_events(&mut model, &before, &game, action, &events[events_len..]);
            }
        }
        check_state(&game);
    }

    assert!(game.is_finished(), "the ticket must be decided");
    let result = game.result().expect("a finished ticket has a result");
    assert_eq!(result.tricks, game.tricks_won(), "art. 3.2.5.5: the last game's tricks decide");
    assert_eq!(result.prize_cents, prizes.for_tricks(result.tricks));
    if result.tricks < 5 {
        assert_eq!(result.prize_cents, 0, "art. 3.2.3.5: no prize under five tricks");
    }
    assert!(model.finished);
    assert_eq!(
        events.iter().filter(|e| matches!(e, Event::Finished { .. })).count(),
        1,
        "one finished event per ticket"
    );

    // Determinism: the accepted actions on the same draws give the same
    // events and state, both from the tape and from the same bytes.
    let mut tape = TapeSource { tape: &source.tape, at: 0 };
    let (replayed, replayed_events) =
        Game::replay(prizes, &accepted, &mut tape).expect("the replay accepts every action");
    assert_eq!(tape.at, source.tape.len(), "the replay takes every draw");
    assert_eq!(replayed, game, "replay: same state");
    assert_eq!(replayed_events, events, "replay: same events");
    let mut again = ByteSource::new(&draw_bytes, seed);
    let (replayed, replayed_events) =
        Game::replay(prizes, &accepted, &mut again).expect("the replay accepts every action");
    assert_eq!(replayed, game);
    assert_eq!(replayed_events, events);
    assert_eq!(again.tape, source.tape);

    Summary {
        games: game.game_number(),
        tie_breaks: events.iter().filter(|e| matches!(e, Event::Deck { for_: DeckFor::TieBreak, .. })).count() as u32,
        refused,
        tricks: result.tricks,
        actions: accepted.len(),
    }
}

/// The action for byte `b` (module doc); `None`: an allowed move.
fn choose(game: &Game, b: Option<u8>) -> Action {
    let b = b.unwrap_or(0);
    if b >= 0xC0 {
        return Action::Draw;
    }
    if b >= 0x80 {
        return Action::play(Rank::from_index_wrapping(b));
    }
    if game.phase() == Phase::Play {
        let hand: Vec<Rank> = game.hand().iter().collect();
        Action::play(hand[usize::from(b) % hand.len()])
    } else {
        Action::Draw
    }
}

/// A refusal names the right reason for the phase.
fn check_refusal(before: &Game, action: Action, e: ActionError) {
    let expected = match (before.phase(), action) {
        (Phase::Finished, _) => ActionError::Finished,
        (Phase::Play, Action::Play { card }) => {
            assert!(!before.hand().contains(card), "a card in hand refused");
            ActionError::CardNotInHand(card)
        }
        (Phase::Play, Action::Draw) => ActionError::CardExpected,
        (_, Action::Play { .. }) => ActionError::DrawExpected,
        (_, Action::Draw) => panic!("a due deck draw refused: {e}"),
    };
    assert_eq!(e, expected);
}

/// The draw calls of one allowed action: `start_draw(n)` once, then
/// `below(k)` for As Capone's card (k his cards) or `below(16), below(15)`.
fn check_tape(calls: &[Call], n: u64, before: &Game, action: Action) {
    assert_eq!(calls.first(), Some(&Call::Start(n)), "an action starts draw number {n}: {calls:?}");
    let belows: Vec<(u32, u32)> = calls[1..]
        .iter()
        .map(|c| match *c {
            Call::Below(m, v) => (m, v),
            Call::Start(k) => panic!("a second draw {k} in one action"),
        })
        .collect();
    match action {
        Action::Play { .. } => {
            assert_eq!(belows.len(), 1, "a trick draws one card: {calls:?}");
            assert_eq!(belows[0].0, before.capone_cards_left(), "art. 3.2.2: uniform over As Capone's cards");
        }
        Action::Draw => {
            assert_eq!(belows.iter().map(|c| c.0).collect::<Vec<_>>(), [16, 15], "a deck draw: two cards of 16");
        }
    }
    for (m, v) in belows {
        assert!(v < m);
    }
}

/// Invariants of every state.
fn check_state(game: &Game) {
    let won = game.tricks_won();
    let lost = game.tricks_lost();
    assert!(won <= 8 && lost <= 8, "tricks {won}/{lost}");
    let cards = game.hand().len();
    assert_eq!(cards, game.capone_cards_left(), "both sides hold as many cards");
    let pending = u32::from(game.tied_trick().is_some());
    assert_eq!(u32::from(won) + u32::from(lost) + pending + cards, 8, "art. 3.2.3.2: eight tricks a game");
    assert_eq!(game.seq(), game.draws());
    assert!(game.game_number() >= 1);
    match game.phase() {
        Phase::Play => assert!(cards > 0),
        Phase::TieBreak => {
            let (p, c) = game.tied_trick().expect("a tied trick in tie_break");
            assert_eq!(p, c);
        }
        Phase::ExtraDraw | Phase::ExtraTieBreak => assert!(cards == 0 && won == 4, "Extra duel only on four"),
        Phase::Finished => assert!(cards == 0 && game.result().is_some()),
    }
    assert_eq!(game.result().is_some(), game.is_finished());
    let json = serde_json::to_string(game).expect("a game serializes");
    let back: Game =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("a reachable state is refused: {e}: {json}"));
    assert_eq!(&back, game, "JSON round trip");
}

/// The events of one allowed action agree with the rules and the model.
fn check_events(m: &mut Model, before: &Game, after: &Game, action: Action, events: &[Event]) {
    assert!(!events.is_empty(), "an allowed action reports what happened");
    let mut it = events.iter().peekable();
    match action {
        Action::Play { card } => {
            assert!(!m.tie_pending && !m.extra_due);
            let Some(&Event::Trick { player, capone, outcome }) = it.next() else {
                panic!("a card played reports a trick first: {events:?}")
            };
            assert_eq!(player, card);
            assert!(m.capone.contains(capone), "As Capone's card {capone} was not in his hand {:?}", m.capone);
            m.capone.remove(capone);
            assert_eq!(after.capone_hand(), m.capone);
            assert_eq!(outcome, outcome_of(player, capone), "art. 3.2.3.1");
            m.plays_this_game += 1;
            assert!(m.plays_this_game <= 8);
            match outcome {
                Outcome::Won => m.tricks_won += 1,
                Outcome::Lost => m.tricks_lost += 1,
                Outcome::Tie => m.tie_pending = true,
            }
        }
        Action::Draw => {
            let Some(&Event::Deck { player, capone, outcome, for_ }) = it.next() else {
                panic!("a click on the deck reports a deck draw first: {events:?}")
            };
            assert_eq!(outcome, outcome_of(player, capone), "art. 3.2.4.3");
            if m.tie_pending {
                assert_eq!(for_, DeckFor::TieBreak);
            } else {
                assert!(m.extra_due, "a deck draw with neither a tie nor an Extra duel due");
                assert_eq!(for_, DeckFor::Extra);
            }
            match (outcome, m.extra_due) {
                // art. 3.2.4.4: a new tie, a new deck draw.
                (Outcome::Tie, _) => {
                    m.tie_pending = true;
                    assert!(it.peek().is_none(), "a tie at the deck ends the action");
                }
                (Outcome::Won, false) => {
                    m.tie_pending = false;
                    m.tricks_won += 1;
                }
                (Outcome::Lost, false) => {
                    m.tie_pending = false;
                    m.tricks_lost += 1;
                }
                // art. 3.2.5.3: the Extra duel won, an Extra game.
                (Outcome::Won, true) => {
                    m.tie_pending = false;
                    m.extra_due = false;
                    let Some(&Event::ExtraGame { game }) = it.next() else {
                        panic!("an Extra duel won opens an Extra game: {events:?}")
                    };
                    m.game += 1;
                    assert_eq!(game, m.game, "Extra games are numbered from 2");
                    m.capone = Hand::FULL;
                    m.tricks_won = 0;
                    m.tricks_lost = 0;
                    m.plays_this_game = 0;
                }
                // art. 3.2.5.3: the Extra duel lost, the ticket is lost.
                (Outcome::Lost, true) => {
                    m.tie_pending = false;
                    m.extra_due = false;
                    let Some(&Event::Finished { tricks, prize_cents }) = it.next() else {
                        panic!("an Extra duel lost decides the ticket: {events:?}")
                    };
                    assert_eq!(tricks, 4);
                    assert_eq!(prize_cents, 0, "four tricks pay nothing");
                    m.finished = true;
                }
            }
        }
    }
    // A settled trick that was the eighth: the game is judged.
    if m.tricks_won + m.tricks_lost == 8 && !m.extra_due && !m.finished && !m.tie_pending {
        let Some(&Event::GameOver { tricks, next }) = it.next() else {
            panic!("eight tricks end the game: {events:?}")
        };
        assert_eq!(tricks, m.tricks_won);
        assert_eq!(m.plays_this_game, 8, "art. 3.2.3.2: all eight cards played");
        if tricks == 4 {
            assert_eq!(next, Next::ExtraDraw, "art. 3.2.3.4: exactly four tricks, the Extra duel");
            m.extra_due = true;
        } else {
            assert_eq!(next, Next::Finished, "art. 3.2.3.3, 3.2.3.5");
            let Some(&Event::Finished { tricks: t, prize_cents }) = it.next() else {
                panic!("a game of {tricks} tricks decides the ticket: {events:?}")
            };
            assert_eq!(t, tricks, "art. 3.2.5.5: the last game's tricks");
            assert_eq!(prize_cents, before.prizes().for_tricks(tricks));
            if tricks < 5 {
                assert_eq!(prize_cents, 0);
            }
            m.finished = true;
        }
    }
    assert!(it.next().is_none(), "unexpected events: {events:?}");

    assert_eq!(after.game_number(), m.game);
    assert_eq!(after.is_finished(), m.finished);
    assert_eq!((after.tricks_won(), after.tricks_lost()), (m.tricks_won, m.tricks_lost));
    let expected_phase = if m.finished {
        Phase::Finished
    } else if m.extra_due && m.tie_pending {
        Phase::ExtraTieBreak
    } else if m.extra_due {
        Phase::ExtraDraw
    } else if m.tie_pending {
        Phase::TieBreak
    } else {
        Phase::Play
    };
    assert_eq!(after.phase(), expected_phase, "after {action:?}: {events:?}");
}

fn outcome_of(player: Rank, capone: Rank) -> Outcome {
    match player.cmp(&capone) {
        std::cmp::Ordering::Greater => Outcome::Won,
        std::cmp::Ordering::Less => Outcome::Lost,
        std::cmp::Ordering::Equal => Outcome::Tie,
    }
}
