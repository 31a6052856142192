//! Property tests: whatever the player does (sensible or not) and whatever
//! the draws, the rules' invariants hold.

use as_capone_engine::{
    Action, Discard, DrawSource, Event, FairStream, FastSource, Game, Next, Phase, PrizeSchedule, Rank,
};
use proptest::prelude::*;

const PRIZES: PrizeSchedule = PrizeSchedule::new([300, 1000, 10_000, 1_000_000]);

/// Plays a ticket to its end. `choices` drive the player: each choice picks
/// an action among all nine (eight cards and the deck), so many are refused;
/// a refused action must change nothing.
fn play_out(seed: u64, choices: &[u8]) -> (Game, Vec<Action>, Vec<Event>) {
    let mut src = FastSource::from_u64(seed, 0);
    let mut g = Game::new(PRIZES);
    let mut applied = Vec::new();
    let mut events = Vec::new();
    let mut i = 0usize;
    while !g.is_finished() {
        let c =
            choices.get(i % choices.len().max(1)).copied().unwrap_or(0).wrapping_add((i / choices.len().max(1)) as u8);
        i += 1;
        let wanted = match c % 9 {
            8 => Action::Draw,
            r => Action::play(Rank::ALL[r as usize]),
        };
        let before = g.clone();
        let n_events = events.len();
        match g.apply(wanted, &mut src, &mut events) {
            Ok(()) => applied.push(wanted),
            Err(e) => {
                assert_eq!(g, before, "refused {wanted:?} ({e}) changed the game");
                assert_eq!(events.len(), n_events, "refused {wanted:?} reported events");
                assert_eq!(g.check(wanted), Err(e));
                // Go on with an allowed action so that the ticket ends.
                let fallback = match g.phase() {
                    Phase::Play => Action::play(g.hand().iter().nth(c as usize % g.hand().len() as usize).unwrap()),
                    _ => Action::Draw,
                };
                g.apply(fallback, &mut src, &mut events).unwrap();
                applied.push(fallback);
            }
        }
        assert!(i < 10_000, "a ticket ends");
    }
    (g, applied, events)
}

/// Draws from a script first (each value reduced below the bound asked),
/// then from a seeded ChaCha8 stream: proptest steers the script towards
/// ties, repeated tie-breaks and Extra games, the stream ends the ticket.
struct Steered {
    script: Vec<u32>,
    next: usize,
    rest: FastSource,
}

impl DrawSource for Steered {
    fn start_draw(&mut self, n: u64) {
        self.rest.start_draw(n)
    }
    fn below(&mut self, m: u32) -> u32 {
        match self.script.get(self.next) {
            Some(v) => {
                self.next += 1;
                v % m
            }
            None => self.rest.below(m),
        }
    }
}

/// A script of draws: small values (deck draws among the low cards, As
/// Capone's lowest cards: ties come often) or any.
fn script() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![prop::collection::vec(0u32..3, 0..120), prop::collection::vec(0u32..16, 0..120)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The checks made when a stored game is read back never refuse a state
    /// the rules reach: every state along a ticket, stored and read back, is
    /// the same game.
    #[test]
    fn every_reachable_state_reads_back_as_itself(
        seed in any::<u64>(),
        script in script(),
        choices in prop::collection::vec(any::<u8>(), 1..40),
    ) {
        let mut src = Steered { script, next: 0, rest: FastSource::from_u64(seed, 0) };
        let mut g = Game::new(PRIZES);
        for i in 0.. {
            let json = serde_json::to_string(&g).unwrap();
            let back: Game = serde_json::from_str(&json)
                .map_err(|e| TestCaseError::fail(format!("reachable state refused: {e}: {json}")))?;
            prop_assert_eq!(&back, &g);
            if g.is_finished() {
                break;
            }
            let a = match g.phase() {
                Phase::Play => {
                    let h = g.hand();
                    Action::play(h.iter().nth(choices[i % choices.len()] as usize % h.len() as usize).unwrap())
                }
                _ => Action::Draw,
            };
            g.apply(a, &mut src, &mut Discard).unwrap();
            prop_assert!(i < 10_000, "a ticket ends");
        }
    }

    #[test]
    fn every_game_has_eight_tricks_and_won_plus_lost_is_eight(seed in any::<u64>(), choices in prop::collection::vec(any::<u8>(), 1..40)) {
        let (g, _, events) = play_out(seed, &choices);
        // Split the events into games at each GameOver.
        let mut tricks_settled = 0u8; // tricks won or lost in the current game
        let mut won = 0u8;
        let mut pending_tie = false;
        let mut games = 0;
        for e in &events {
            match *e {
                Event::Trick { outcome, .. } => {
                    prop_assert!(!pending_tie);
                    match outcome {
                        as_capone_engine::Outcome::Won => { won += 1; tricks_settled += 1 }
                        as_capone_engine::Outcome::Lost => tricks_settled += 1,
                        as_capone_engine::Outcome::Tie => pending_tie = true,
                    }
                }
                Event::Deck { outcome, for_, .. } => {
                    if pending_tie && outcome != as_capone_engine::Outcome::Tie {
                        pending_tie = false;
                        tricks_settled += 1;
                        if outcome == as_capone_engine::Outcome::Won { won += 1 }
                    }
                    let _ = for_;
                }
                Event::GameOver { tricks, next } => {
                    games += 1;
                    prop_assert_eq!(tricks_settled, 8, "a game has exactly eight tricks");
                    prop_assert_eq!(tricks, won);
                    prop_assert_eq!(next == Next::ExtraDraw, tricks == 4);
                    tricks_settled = 0;
                    won = 0;
                }
                Event::ExtraGame { game } => prop_assert_eq!(game, games + 1),
                Event::Finished { .. } => {}
            }
        }
        prop_assert_eq!(g.tricks_won() + g.tricks_lost(), 8);
        prop_assert!(games >= 1);
        prop_assert_eq!(g.game_number(), games);
    }

    #[test]
    fn a_prize_only_with_five_or_more_tricks_of_the_last_game(seed in any::<u64>(), choices in prop::collection::vec(any::<u8>(), 1..40)) {
        let (g, _, events) = play_out(seed, &choices);
        let r = g.result().unwrap();
        let last_game_over = events.iter().rev().find_map(|e| match e {
            Event::GameOver { tricks, .. } => Some(*tricks),
            _ => None,
        }).unwrap();
        prop_assert_eq!(r.tricks, last_game_over);
        prop_assert_eq!(r.tricks, g.tricks_won());
        if r.tricks >= 5 {
            prop_assert_eq!(r.prize_cents, PRIZES.for_tricks(r.tricks));
        } else {
            prop_assert_eq!(r.prize_cents, 0);
        }
        let finished: Vec<_> = events.iter().filter(|e| matches!(e, Event::Finished { .. })).collect();
        prop_assert_eq!(finished.len(), 1);
        prop_assert_eq!(events.last(), Some(&Event::Finished { tricks: r.tricks, prize_cents: r.prize_cents }));
    }

    #[test]
    fn replay_gives_identical_events_and_state(seed in any::<u64>(), choices in prop::collection::vec(any::<u8>(), 1..40)) {
        let (g, actions, events) = play_out(seed, &choices);
        let mut src = FastSource::from_u64(seed, 0);
        let (g2, events2) = Game::replay(PRIZES, &actions, &mut src).unwrap();
        prop_assert_eq!(g2, g);
        prop_assert_eq!(events2, events);
    }

    #[test]
    fn fair_stream_replay_and_resume_from_saved_state(seed in any::<[u8; 32]>(), client in "[a-z0-9]{0,12}", stop in 0usize..40) {
        // Play with the fair stream, save the state in the middle, resume
        // with a fresh stream: the same events as an uninterrupted ticket.
        let mut src = FairStream::new(&seed, &client, "ASC-001-00001-000001-0");
        let mut g = Game::new(PRIZES);
        let mut all = Vec::new();
        let mut actions = Vec::new();
        while !g.is_finished() {
            let a = match g.phase() { Phase::Play => Action::play(g.hand().highest().unwrap()), _ => Action::Draw };
            g.apply(a, &mut src, &mut all).unwrap();
            actions.push(a);
        }
        let mut src2 = FairStream::new(&seed, &client, "ASC-001-00001-000001-0");
        let k = stop.min(actions.len());
        let (partial, mut events) = Game::replay(PRIZES, &actions[..k], &mut src2).unwrap();
        let saved = serde_json::to_string(&partial).unwrap();
        let mut resumed: Game = serde_json::from_str(&saved).unwrap();
        let mut src3 = FairStream::new(&seed, &client, "ASC-001-00001-000001-0");
        for a in &actions[k..] {
            resumed.apply(*a, &mut src3, &mut events).unwrap();
        }
        prop_assert_eq!(resumed, g);
        prop_assert_eq!(events, all);
    }
}
