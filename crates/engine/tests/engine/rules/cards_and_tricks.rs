//! Art. 3.2.1 to 3.2.3: the two hands, the cards, As Capone's draw, the
//! tricks and what their count wins.

use super::*;

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
