//! Art. 3.2.4: ties and their deck draws, repeated ties, a tie on the last
//! trick.

use super::*;

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
