//! The ticket as a whole and as stored: draws numbered over the ticket,
//! a stored game that plays on identically, a stored state the rules
//! cannot reach refused with the article it breaks, and the events' shape.

use super::*;

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
