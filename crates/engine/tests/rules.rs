//! One test (at least) per article of the regulation's 3.2, each named after
//! it. Draws are scripted: a test says which cards As Capone and the deck
//! deal, and the helpers turn that into the uniform integers the engine asks
//! for, through the same indexing rules as the fair stream (CONTRACT.md).

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

#[test]
fn art_3_2_1_1_and_3_2_1_2_eight_hearts_against_eight_spades() {
    let g = Game::new(PRIZES);
    assert_eq!(g.hand(), Hand::FULL);
    assert_eq!(g.hand().iter().collect::<Vec<_>>(), Rank::ALL);
    assert_eq!(g.capone_cards_left(), 8);
    assert_eq!(g.capone_hand(), Hand::FULL);
    assert_eq!(g.phase(), Phase::Play);
    assert_eq!(g.game_number(), 1);
    assert_eq!((g.tricks_won(), g.tricks_lost(), g.seq(), g.draws()), (0, 0, 0, 0));
    assert_eq!(g.result(), None);
}

#[test]
fn art_3_2_1_3_the_higher_card_wins_the_trick() {
    let mut g = Game::new(PRIZES);
    assert_eq!(play(&mut g, Ace, King), vec![trick(Ace, King, Outcome::Won)]);
    assert_eq!(play(&mut g, Seven, Eight), vec![trick(Seven, Eight, Outcome::Lost)]);
    assert_eq!(play(&mut g, Ten, Nine), vec![trick(Ten, Nine, Outcome::Won)]);
    assert_eq!(play(&mut g, Jack, Queen), vec![trick(Jack, Queen, Outcome::Lost)]);
    assert_eq!((g.tricks_won(), g.tricks_lost()), (2, 2));
}

#[test]
fn art_3_2_2_capone_draws_uniformly_among_his_remaining_cards_sorted_from_seven() {
    let mut g = Game::new(PRIZES);
    let mut asked = Vec::new();
    // Whatever the player picks, As Capone's draw asks for a uniform integer
    // below his number of cards, and the answer indexes them from 7 up.
    for (k, card) in [Ace, Seven, Queen, Nine, King, Eight, Ten, Jack].into_iter().enumerate() {
        let left: Vec<Rank> = g.capone_hand().iter().collect();
        let idx = (k * 3) % left.len();
        let mut s = Script { values: [idx as u32].into(), ..Default::default() };
        let mut ev = Vec::new();
        g.apply(Action::play(card), &mut s, &mut ev).unwrap();
        asked.extend(s.asked);
        match ev[0] {
            Event::Trick { capone, .. } => assert_eq!(capone, left[idx]),
            other => panic!("expected a trick, got {other:?}"),
        }
        assert!(!g.capone_hand().contains(left[idx]), "the drawn card leaves his hand");
        if g.phase() != Phase::Play && !g.is_finished() {
            break;
        }
    }
    assert_eq!(asked[..3], [8, 7, 6], "one draw per trick, below the cards he holds");
}

#[test]
fn art_3_2_2_the_draw_does_not_depend_on_the_players_card() {
    // Same script, different player cards: As Capone plays the same cards.
    let script = [3u32, 0, 5, 1, 0, 2, 1, 0];
    let capone_cards = |order: [Rank; 8]| {
        let mut g = Game::new(PRIZES);
        let mut out = Vec::new();
        let mut s = Script { values: script.into(), ..Default::default() };
        for c in order {
            if g.phase() != Phase::Play {
                break;
            }
            let mut ev = Vec::new();
            g.apply(Action::play(c), &mut s, &mut ev).unwrap();
            for e in ev {
                if let Event::Trick { capone, .. } = e {
                    out.push(capone);
                }
            }
        }
        out
    };
    let a = capone_cards([Seven, Eight, Nine, Ten, Jack, Queen, King, Ace]);
    let b = capone_cards([Ace, King, Queen, Jack, Ten, Nine, Eight, Seven]);
    let n = a.len().min(b.len());
    assert!(n >= 1);
    assert_eq!(a[..n], b[..n]);
}

#[test]
fn art_3_2_3_2_every_card_must_be_played_and_only_once() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Ace, Seven);
    let before = g.clone();
    let mut s = Script::default();
    let mut ev = Vec::new();
    assert_eq!(g.apply(Action::play(Ace), &mut s, &mut ev), Err(ActionError::CardNotInHand(Ace)));
    assert_eq!(g, before, "a refused action changes nothing");
    assert!(ev.is_empty() && s.asked.is_empty(), "and draws nothing");
    // The game is not over before the eighth card.
    for (p, c) in [(King, Eight), (Queen, Nine), (Jack, Ten), (Ten, Jack), (Nine, Queen), (Eight, King)] {
        play(&mut g, p, c);
        assert_eq!(g.phase(), Phase::Play);
    }
    let ev = play(&mut g, Seven, Ace);
    assert_eq!(ev[1], Event::GameOver { tricks: 4, next: Next::ExtraDraw });
    assert!(g.hand().is_empty());
}

#[test]
fn art_3_2_3_3_five_to_eight_tricks_win_the_prize_for_that_count() {
    for wins in 5..=8u8 {
        let mut g = Game::new(PRIZES);
        let ev = play_game_winning(&mut g, wins);
        let n = ev.len();
        assert_eq!(ev[n - 2], Event::GameOver { tricks: wins, next: Next::Finished });
        let prize = PRIZES.for_tricks(wins);
        assert_eq!(ev[n - 1], Event::Finished { tricks: wins, prize_cents: prize });
        assert_eq!(g.result(), Some(GameResult { tricks: wins, prize_cents: prize }));
        assert_eq!(g.phase(), Phase::Finished);
        assert_eq!((g.tricks_won(), g.tricks_lost()), (wins, 8 - wins));
    }
    assert_eq!(PRIZES.for_tricks(8), 1_000_000);
}

#[test]
fn art_3_2_3_4_exactly_four_tricks_lead_to_the_extra_duel() {
    let mut g = Game::new(PRIZES);
    let ev = play_game_winning(&mut g, 4);
    assert_eq!(ev.last(), Some(&Event::GameOver { tricks: 4, next: Next::ExtraDraw }));
    assert_eq!(g.phase(), Phase::ExtraDraw);
    assert_eq!(g.phase().name(), "extra_draw");
    assert_eq!(g.result(), None);
    // In the Extra duel the player clicks the deck: a card is refused.
    let before = g.clone();
    let mut ev = Vec::new();
    let r = g.apply(Action::play(Ace), &mut Script::default(), &mut ev);
    assert_eq!(r, Err(ActionError::DrawExpected));
    assert_eq!(g, before);
}

#[test]
fn art_3_2_3_5_three_or_fewer_tricks_lose() {
    for wins in 0..=3u8 {
        let mut g = Game::new(PRIZES);
        let ev = play_game_winning(&mut g, wins);
        let n = ev.len();
        assert_eq!(ev[n - 2], Event::GameOver { tricks: wins, next: Next::Finished });
        assert_eq!(ev[n - 1], Event::Finished { tricks: wins, prize_cents: 0 });
        assert_eq!(g.result(), Some(GameResult { tricks: wins, prize_cents: 0 }));
        let mut e = Vec::new();
        assert_eq!(g.apply(Action::Draw, &mut Script::default(), &mut e), Err(ActionError::Finished));
        assert_eq!(g.apply(Action::play(Ace), &mut Script::default(), &mut e), Err(ActionError::Finished));
    }
}

#[test]
fn art_3_2_4_1_equal_values_are_a_tie_settled_by_an_extra_trick() {
    let mut g = Game::new(PRIZES);
    let ev = play(&mut g, Queen, Queen);
    assert_eq!(ev, vec![trick(Queen, Queen, Outcome::Tie)]);
    assert_eq!(g.phase().name(), "tie_break");
    assert_eq!(g.tied_trick(), Some((Queen, Queen)));
    assert_eq!((g.tricks_won(), g.tricks_lost()), (0, 0), "the tied trick is not counted yet");
    // During a tie-break, a card is refused.
    let before = g.clone();
    let r = g.apply(Action::play(Ace), &mut Script::default(), &mut Vec::new());
    assert_eq!(r, Err(ActionError::DrawExpected));
    assert_eq!(g, before);
}

#[test]
fn art_3_2_4_2_a_deck_draw_deals_two_different_cards_of_sixteen() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Nine, Nine);
    let mut s = Script { values: [15, 0].into(), ..Default::default() };
    let mut ev = Vec::new();
    g.apply(Action::Draw, &mut s, &mut ev).unwrap();
    assert_eq!(s.asked, [16, 15], "player's card among 16, As Capone's among the 15 others");
    assert_eq!(s.started, [1], "a deck draw of two cards is one draw");
    // a = 15 (the second Ace), b = 0 (the first 7).
    assert_eq!(ev[0], Event::Deck { player: Ace, capone: Seven, outcome: Outcome::Won, for_: DeckFor::TieBreak });
    // b >= a is shifted by one: a = 3 (second 8), b = 3 -> index 4 (first 9).
    let mut g = Game::new(PRIZES);
    play(&mut g, Nine, Nine);
    let mut s = Script { values: [3, 3].into(), ..Default::default() };
    let mut ev = Vec::new();
    g.apply(Action::Draw, &mut s, &mut ev).unwrap();
    assert_eq!(ev[0], Event::Deck { player: Eight, capone: Nine, outcome: Outcome::Lost, for_: DeckFor::TieBreak });
}

#[test]
fn art_3_2_4_3_the_tie_break_winner_takes_the_trick() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Ten, Ten);
    draw(&mut g, King, Seven);
    assert_eq!((g.tricks_won(), g.tricks_lost(), g.phase()), (1, 0, Phase::Play));
    assert_eq!(g.tied_trick(), None);
    play(&mut g, Jack, Jack);
    draw(&mut g, Eight, Ace);
    assert_eq!((g.tricks_won(), g.tricks_lost(), g.phase()), (1, 1, Phase::Play));
    // Outside a tie-break or Extra duel the deck cannot be clicked.
    let before = g.clone();
    let r = g.apply(Action::Draw, &mut Script::default(), &mut Vec::new());
    assert_eq!(r, Err(ActionError::CardExpected));
    assert_eq!(g, before);
}

#[test]
fn art_3_2_4_4_repeated_ties_repeat_the_deck_draw() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Seven, Seven);
    for value in [Ace, Eight, Ace] {
        let ev = draw(&mut g, value, value);
        assert_eq!(
            ev,
            vec![Event::Deck { player: value, capone: value, outcome: Outcome::Tie, for_: DeckFor::TieBreak }]
        );
        assert_eq!(g.phase().name(), "tie_break");
        assert_eq!((g.tricks_won(), g.tricks_lost()), (0, 0));
    }
    draw(&mut g, Queen, Jack);
    assert_eq!((g.tricks_won(), g.tricks_lost()), (1, 0));
    assert_eq!(g.draws(), 5, "one trick draw and four deck draws");
}

#[test]
fn art_3_2_4_a_tie_on_the_last_trick_ends_the_game_after_its_tie_break() {
    let mut g = Game::new(PRIZES);
    // Seven tricks: 4 won, 3 lost, then a tie on the eighth.
    for (p, c) in [(Ace, King), (King, Queen), (Queen, Jack), (Jack, Ten), (Eight, Ace), (Nine, Seven), (Ten, Eight)] {
        play(&mut g, p, c);
    }
    // Pairings above: A>K, K>Q, Q>J, J>10 won; 8<A lost; 9>7 won; 10>8 won. 6 won, 1 lost.
    assert_eq!((g.tricks_won(), g.tricks_lost()), (6, 1));
    let ev = play(&mut g, Seven, Nine);
    assert_eq!(ev.len(), 3);
    assert_eq!(g.result(), Some(GameResult { tricks: 6, prize_cents: 1000 }));

    let mut g = Game::new(PRIZES);
    for (p, c) in [(Ace, King), (King, Queen), (Queen, Jack), (Jack, Ten), (Eight, Ace), (Seven, Eight), (Ten, Nine)] {
        play(&mut g, p, c);
    }
    assert_eq!((g.tricks_won(), g.tricks_lost()), (5, 2));
    let ev = play(&mut g, Nine, Seven);
    assert_eq!(ev[0], trick(Nine, Seven, Outcome::Won));
    assert_eq!(g.result().unwrap().tricks, 6);

    let mut g = Game::new(PRIZES);
    for (p, c) in [(Ace, King), (King, Queen), (Queen, Jack), (Jack, Ten), (Eight, Ace), (Seven, Eight), (Ten, Seven)] {
        play(&mut g, p, c);
    }
    assert_eq!((g.tricks_won(), g.tricks_lost()), (5, 2));
    assert_eq!(play(&mut g, Nine, Nine), vec![trick(Nine, Nine, Outcome::Tie)]);
    assert_eq!(g.phase().name(), "tie_break");
    let ev = draw(&mut g, Seven, Eight);
    assert_eq!(ev[1], Event::GameOver { tricks: 5, next: Next::Finished });
    assert_eq!(ev[2], Event::Finished { tricks: 5, prize_cents: 300 });
}

fn reach_extra_duel() -> Game {
    let mut g = Game::new(PRIZES);
    play_game_winning(&mut g, 4);
    assert_eq!(g.phase(), Phase::ExtraDraw);
    g
}

#[test]
fn art_3_2_5_3_extra_duel_won_opens_an_extra_game_with_eight_new_cards() {
    let mut g = reach_extra_duel();
    let ev = draw(&mut g, King, Queen);
    assert_eq!(
        ev,
        vec![
            Event::Deck { player: King, capone: Queen, outcome: Outcome::Won, for_: DeckFor::Extra },
            Event::ExtraGame { game: 2 },
        ]
    );
    // art. 3.2.5.4: eight new cards, the same schedule.
    assert_eq!(g.game_number(), 2);
    assert_eq!(g.hand(), Hand::FULL);
    assert_eq!(g.capone_cards_left(), 8);
    assert_eq!(g.prizes(), PRIZES);
    // art. 3.2.5.5: the earlier tricks and the duel count for nothing.
    assert_eq!((g.tricks_won(), g.tricks_lost()), (0, 0));
    assert_eq!(g.phase(), Phase::Play);
}

#[test]
fn art_3_2_5_3_extra_duel_lost_loses_the_ticket() {
    let mut g = reach_extra_duel();
    let ev = draw(&mut g, Eight, Jack);
    assert_eq!(
        ev,
        vec![
            Event::Deck { player: Eight, capone: Jack, outcome: Outcome::Lost, for_: DeckFor::Extra },
            Event::Finished { tricks: 4, prize_cents: 0 },
        ]
    );
    assert_eq!(g.result(), Some(GameResult { tricks: 4, prize_cents: 0 }));
}

#[test]
fn art_3_2_5_3_extra_duel_won_through_a_tie() {
    let mut g = reach_extra_duel();
    let ev = draw(&mut g, Ten, Ten);
    assert_eq!(ev, vec![Event::Deck { player: Ten, capone: Ten, outcome: Outcome::Tie, for_: DeckFor::Extra }]);
    assert_eq!(g.phase().name(), "tie_break");
    assert_eq!(g.tied_trick(), None, "this tie is the Extra duel's, not a trick's");
    // art. 3.2.4.4 through 3.2.5.3: a new tie, then the player wins.
    draw(&mut g, Ace, Ace);
    let ev = draw(&mut g, Ace, Seven);
    assert_eq!(
        ev,
        vec![
            Event::Deck { player: Ace, capone: Seven, outcome: Outcome::Won, for_: DeckFor::TieBreak },
            Event::ExtraGame { game: 2 },
        ]
    );
    assert_eq!(g.game_number(), 2);
}

#[test]
fn art_3_2_5_3_extra_duel_lost_through_a_tie() {
    let mut g = reach_extra_duel();
    draw(&mut g, Seven, Seven);
    let ev = draw(&mut g, Seven, Eight);
    assert_eq!(ev[1], Event::Finished { tricks: 4, prize_cents: 0 });
    assert!(g.is_finished());
    assert_eq!(g.game_number(), 1);
}

#[test]
fn art_3_2_5_4_an_extra_game_that_reaches_four_tricks_gives_another_extra_duel() {
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    let ev = play_game_winning(&mut g, 4);
    assert_eq!(ev.last(), Some(&Event::GameOver { tricks: 4, next: Next::ExtraDraw }));
    assert_eq!(g.phase(), Phase::ExtraDraw);
    draw(&mut g, Queen, Seven);
    assert_eq!(g.game_number(), 3);
    let ev = play_game_winning(&mut g, 7);
    assert_eq!(ev.last(), Some(&Event::Finished { tricks: 7, prize_cents: 10_000 }));
}

#[test]
fn art_3_2_5_5_only_the_last_games_tricks_decide_the_prize() {
    // Extra game with 5 tricks: the prize for 5, not for 4 + 1 or 9.
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    play_game_winning(&mut g, 5);
    assert_eq!(g.result(), Some(GameResult { tricks: 5, prize_cents: 300 }));
    // Extra game with 2 tricks: lost, whatever the first game gave.
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    let ev = play_game_winning(&mut g, 2);
    assert_eq!(ev.last(), Some(&Event::Finished { tricks: 2, prize_cents: 0 }));
    assert_eq!(g.result(), Some(GameResult { tricks: 2, prize_cents: 0 }));
}

#[test]
fn art_3_1_one_prize_at_most_per_ticket() {
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    let ev = play_game_winning(&mut g, 8);
    let finished: Vec<_> = ev.iter().filter(|e| matches!(e, Event::Finished { .. })).collect();
    assert_eq!(finished, vec![&Event::Finished { tricks: 8, prize_cents: 1_000_000 }]);
}

#[test]
fn draws_are_numbered_over_the_whole_ticket() {
    let mut g = Game::new(PRIZES);
    let mut started = Vec::new();
    let script = [(Seven, Seven), (Eight, Nine), (Nine, Eight), (Ten, Ten)];
    for (p, c) in script {
        let idx = g.capone_hand().iter().position(|r| r == c).unwrap() as u32;
        let mut s = Script { values: [idx].into(), ..Default::default() };
        g.apply(Action::play(p), &mut s, &mut Vec::new()).unwrap();
        started.extend(s.started);
        if g.phase() != Phase::Play {
            let mut s = Script { values: deck_values(Ace, Seven).into(), ..Default::default() };
            g.apply(Action::Draw, &mut s, &mut Vec::new()).unwrap();
            started.extend(s.started);
        }
    }
    assert_eq!(started, [0, 1, 2, 3, 4, 5]);
    assert_eq!(g.draws(), 6);
    assert_eq!(g.seq(), 6);
}

#[test]
fn the_state_serializes_and_play_continues_identically() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    let json = serde_json::to_string(&g).unwrap();
    let mut back: Game = serde_json::from_str(&json).unwrap();
    assert_eq!(back, g);
    let a = draw(&mut g, Ace, Seven);
    let b = draw(&mut back, Ace, Seven);
    assert_eq!(a, b);
    assert_eq!(g, back);
}

/// `g` stored, edited by `edit` and read back: refused, with an error that
/// says `why`.
#[track_caller]
fn assert_refused(g: &Game, edit: impl FnOnce(&mut serde_json::Value), why: &str) {
    let mut v = serde_json::to_value(g).unwrap();
    edit(&mut v);
    let stored = v.to_string();
    // As the server reads it: from the stored text.
    match serde_json::from_str::<Game>(&stored) {
        Ok(_) => panic!("a state the rules cannot reach was accepted: {stored}"),
        Err(e) => assert!(e.to_string().contains(why), "refused for {:?}, not for {why:?}: {stored}", e.to_string()),
    }
}

/// A game of seven tricks, four won and three lost: the player keeps the
/// Ace, As Capone the Queen.
fn seven_tricks_four_won() -> Game {
    let mut g = Game::new(PRIZES);
    for (p, c) in [(Eight, Seven), (Nine, Eight), (Ten, Nine), (Jack, Ten), (Seven, Jack), (Queen, King), (King, Ace)] {
        play(&mut g, p, c);
    }
    assert_eq!((g.tricks_won(), g.tricks_lost(), g.hand().len()), (4, 3, 1));
    g
}

#[test]
fn a_stored_state_the_rules_cannot_reach_is_refused() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    assert_refused(
        &g,
        |v| v["capone"] = serde_json::json!(["7", "8", "9", "10", "J", "K", "A", "Q"]),
        "the player holds 7 cards and As Capone 8 cards",
    );
    assert_refused(&g, |v| v["game"] = 0.into(), "game number 0");
    assert_refused(
        &g,
        |v| v["result"] = serde_json::json!({"tricks": 8, "prize_cents": 1_000_000}),
        "a result in phase tie_break",
    );
    let mut v = serde_json::to_value(&g).unwrap();
    v["phase"] = "finished".into();
    v["tied"] = serde_json::Value::Null;
    let finished_early = serde_json::from_value::<Game>(v).unwrap_err().to_string();
    assert!(
        finished_early.contains("tricks won 0, lost 0 and 7 cards in hand make 7 tricks, not eight"),
        "{finished_early}"
    );
    let finished = {
        let mut g = Game::new(PRIZES);
        play_game_winning(&mut g, 5);
        g
    };
    assert_refused(&finished, |v| v["result"] = serde_json::Value::Null, "phase finished without a result");
}

#[test]
fn art_3_2_3_2_a_game_is_eight_tricks_of_every_card_once() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    // A trick won from nowhere.
    assert_refused(
        &g,
        |v| v["tricks_won"] = 1.into(),
        "tricks won 1, lost 0, one tied and 7 cards in hand make 9 tricks",
    );
    // A card come back to the hand.
    assert_refused(
        &g,
        |v| {
            v["hand"] = serde_json::json!(["7", "8", "9", "10", "J", "K", "A", "Q"]);
            v["capone"] = serde_json::json!(["7", "8", "9", "10", "J", "K", "A", "Q"]);
        },
        "the tied card Q is still in the player's hand",
    );
}

#[test]
fn art_3_2_3_3_to_3_2_3_5_phase_play_with_no_card_in_hand_is_refused() {
    // Eight tricks, four won: the Extra duel is due, not another card.
    let g = reach_extra_duel();
    assert_refused(&g, |v| v["phase"] = "play".into(), "phase play with no card in hand");
    // Eight tricks, five won: the ticket is decided.
    let mut g = Game::new(PRIZES);
    play_game_winning(&mut g, 5);
    assert_refused(
        &g,
        |v| {
            v["phase"] = "play".into();
            v["result"] = serde_json::Value::Null;
        },
        "phase play with no card in hand",
    );
}

#[test]
fn art_3_2_4_a_tie_break_of_the_last_trick_has_no_card_in_hand_and_reads_back() {
    // Reachable: the tie-break of the eighth trick, both hands empty.
    let mut g = Game::new(PRIZES);
    for (p, c) in [(Eight, Seven), (Nine, Eight), (Ten, Nine), (Jack, Ten), (Queen, Jack), (King, Queen), (Seven, King)]
    {
        play(&mut g, p, c);
    }
    play(&mut g, Ace, Ace);
    assert_eq!((g.phase(), g.hand(), g.capone_cards_left()), (Phase::TieBreak, Hand::EMPTY, 0));
    assert_reads_back(&g);
}

#[test]
fn art_3_2_3_4_and_3_2_5_2_an_extra_duel_with_cards_in_hand_is_refused() {
    let g = seven_tricks_four_won();
    assert_refused(&g, |v| v["phase"] = "extra_draw".into(), "phase extra_draw with 1 card in hand");
    assert_refused(&g, |v| v["phase"] = "extra_tie_break".into(), "phase extra_tie_break with 1 card in hand");
    // Without four tricks won.
    let g = reach_extra_duel();
    assert_refused(
        &g,
        |v| {
            v["tricks_won"] = 5.into();
            v["tricks_lost"] = 3.into();
        },
        "phase extra_draw with 5 tricks won",
    );
    let mut g = reach_extra_duel();
    draw(&mut g, Ten, Ten);
    assert_eq!(g.phase(), Phase::ExtraTieBreak);
    assert_refused(
        &g,
        |v| {
            v["tricks_won"] = 3.into();
            v["tricks_lost"] = 5.into();
        },
        "phase extra_tie_break with 3 tricks won",
    );
}

#[test]
fn art_3_2_3_2_a_finished_ticket_with_cards_in_hand_is_refused() {
    let g = seven_tricks_four_won();
    assert_refused(
        &g,
        |v| {
            v["phase"] = "finished".into();
            v["result"] = serde_json::json!({"tricks": 4, "prize_cents": 0});
        },
        "phase finished with 1 card in hand",
    );
}

#[test]
fn art_3_2_5_5_and_3_2_3_3_a_result_that_disagrees_with_the_tricks_or_the_prize_is_refused() {
    let mut g = Game::new(PRIZES);
    play_game_winning(&mut g, 5);
    assert_eq!(g.result(), Some(GameResult { tricks: 5, prize_cents: 300 }));
    // Not the deciding game's tricks.
    assert_refused(
        &g,
        |v| v["result"] = serde_json::json!({"tricks": 6, "prize_cents": 1000}),
        "a result of 6 tricks, but the deciding game has 5 tricks won",
    );
    // Not the schedule's prize for them.
    assert_refused(
        &g,
        |v| v["result"]["prize_cents"] = 1_000_000.into(),
        "a result paying 1000000 cents for 5 tricks, but the ticket's schedule pays 300",
    );
    assert_refused(&g, |v| v["prizes"]["5"] = 301.into(), "but the ticket's schedule pays 301");
    // art. 3.2.3.5: a lost ticket pays nothing.
    let mut g = reach_extra_duel();
    draw(&mut g, Eight, Jack);
    assert_eq!(g.result(), Some(GameResult { tricks: 4, prize_cents: 0 }));
    assert_refused(
        &g,
        |v| v["result"]["prize_cents"] = 300.into(),
        "a result paying 300 cents for 4 tricks, but the ticket's schedule pays 0",
    );
    // art. 3.2.5.5: an Extra game of two tricks after a first game of four.
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    play_game_winning(&mut g, 2);
    assert_refused(
        &g,
        |v| v["result"]["tricks"] = 4.into(),
        "a result of 4 tricks, but the deciding game has 2 tricks won",
    );
}

#[test]
fn art_3_2_4_1_a_tie_of_two_different_values_is_refused() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    assert_refused(&g, |v| v["tied"] = serde_json::json!(["Q", "K"]), "a tie of two different values, Q and K");
    // The tied card must have left both hands.
    assert_refused(&g, |v| v["tied"] = serde_json::json!(["A", "A"]), "the tied card A is still in the player's hand");
    assert_refused(
        &g,
        |v| v["capone"] = serde_json::json!(["8", "9", "10", "J", "Q", "K", "A"]),
        "the tied card Q is still in As Capone's hand",
    );
    // A tie-break without its tied trick, a tied trick without its tie-break.
    assert_refused(&g, |v| v["tied"] = serde_json::Value::Null, "phase tie_break without its tied trick");
    draw(&mut g, Ace, Seven);
    assert_refused(&g, |v| v["tied"] = serde_json::json!(["Q", "Q"]), "a tied trick in phase play");
}

#[test]
fn art_3_2_3_1_tricks_the_cards_played_cannot_give_are_refused() {
    // A 7 against an Ace is lost whatever happens.
    let mut g = Game::new(PRIZES);
    play(&mut g, Seven, Ace);
    assert_refused(
        &g,
        |v| {
            v["tricks_won"] = 1.into();
            v["tricks_lost"] = 0.into();
        },
        "tricks won 1 and lost 0 cannot come from the cards played: the player's 7 against As Capone's A",
    );
    // An Ace against a 7 is won.
    let mut g = Game::new(PRIZES);
    play(&mut g, Ace, Seven);
    play(&mut g, Eight, Nine);
    assert_refused(
        &g,
        |v| {
            v["tricks_won"] = 0.into();
            v["tricks_lost"] = 2.into();
        },
        "tricks won 0 and lost 2 cannot come from the cards played: the player's 8 A against As Capone's 7 9",
    );
    // Both orders of these two cards give one trick each: reachable with
    // either pairing, so two tricks lost are not.
    let mut g = Game::new(PRIZES);
    play(&mut g, Nine, Eight);
    play(&mut g, Ten, Jack);
    assert_eq!((g.tricks_won(), g.tricks_lost()), (1, 1));
}

#[test]
fn art_3_2_4_and_3_2_5_a_draw_counter_too_low_for_the_game_is_refused() {
    // art. 3.2.5.4: an Extra game comes after eight tricks and an Extra duel.
    let mut g = reach_extra_duel();
    draw(&mut g, Ace, King);
    assert_eq!((g.game_number(), g.draws(), g.seq()), (2, 9, 9));
    assert_refused(
        &g,
        |v| {
            v["draws"] = 8.into();
            v["seq"] = 8.into();
        },
        "draw counter 8 too low: game 2 with 0 cards played takes at least 9 draws",
    );
    assert_refused(
        &g,
        |v| v["game"] = 3.into(),
        "draw counter 9 too low: game 3 with 0 cards played takes at least 18 draws",
    );
    // art. 3.2.4.2: a settled tie took a tie-break draw (a Queen played
    // against a Queen can only have tied).
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    draw(&mut g, Ace, Seven);
    assert_eq!(g.draws(), 2);
    assert_refused(
        &g,
        |v| {
            v["draws"] = 1.into();
            v["seq"] = 1.into();
        },
        "draw counter 1 too low: game 1 with 1 card played, a tie takes at least 2 draws",
    );
    // Eight tricks won: no card beats As Capone's Ace, so the player's Ace
    // tied it and won at the deck; then no card beats his King but the
    // player's King, and so on: eight ties, eight tie-breaks.
    let mut g = Game::new(PRIZES);
    play_game_winning(&mut g, 8);
    assert_eq!(g.draws(), 16);
    assert_refused(
        &g,
        |v| {
            v["draws"] = 15.into();
            v["seq"] = 15.into();
        },
        "draw counter 15 too low: game 1 with 8 cards played, 8 ties takes at least 16 draws",
    );
    // art. 3.2.5.2: a tied or lost Extra duel took its draw.
    for (p, c, phase) in [(Ten, Ten, Phase::ExtraTieBreak), (Eight, Jack, Phase::Finished)] {
        let mut g = reach_extra_duel();
        draw(&mut g, p, c);
        assert_eq!((g.phase(), g.draws()), (phase, 9));
        assert_refused(
            &g,
            |v| {
                v["draws"] = 8.into();
                v["seq"] = 8.into();
            },
            "draw counter 8 too low: game 1 with 8 cards played and the Extra duel's draw takes at least 9 draws",
        );
    }
}

#[test]
fn every_action_takes_one_draw_so_seq_equals_draws() {
    let mut g = Game::new(PRIZES);
    play(&mut g, Queen, Queen);
    draw(&mut g, Ace, Seven);
    assert_eq!((g.seq(), g.draws()), (2, 2));
    assert_refused(&g, |v| v["seq"] = 3.into(), "action counter (seq) 3 differs from the draw counter 2");
    assert_refused(&g, |v| v["draws"] = 3.into(), "action counter (seq) 2 differs from the draw counter 3");
}

#[test]
fn events_serialize_in_the_contract_shape() {
    let e = Event::Trick { player: Queen, capone: Nine, outcome: Outcome::Won };
    assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"type":"trick","player":"Q","capone":"9","outcome":"won"}"#);
    let e = Event::Deck { player: Queen, capone: Seven, outcome: Outcome::Tie, for_: DeckFor::TieBreak };
    assert_eq!(
        serde_json::to_string(&e).unwrap(),
        r#"{"type":"deck","player":"Q","capone":"7","outcome":"tie","for":"tie_break"}"#
    );
    let e = Event::GameOver { tricks: 4, next: Next::ExtraDraw };
    assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"type":"game_over","tricks":4,"next":"extra_draw"}"#);
    let e = Event::Finished { tricks: 5, prize_cents: 300 };
    assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"type":"finished","tricks":5,"prize_cents":300}"#);
    let a: Action = serde_json::from_str(r#"{"action":"play","card":"Q"}"#).unwrap();
    assert_eq!(a, Action::play(Queen));
    let a: Action = serde_json::from_str(r#"{"action":"draw"}"#).unwrap();
    assert_eq!(a, Action::Draw);
    assert!(serde_json::from_str::<Action>(r#"{"action":"play","card":"X"}"#).is_err());
}
