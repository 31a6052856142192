//! Art. 3.2.5 and 3.1: the Extra duel, Extra games, the deciding game's
//! tricks and one prize at most a ticket.

use super::*;

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
