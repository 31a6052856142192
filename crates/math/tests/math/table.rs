//! Prize tables (art. 3.1): one test per validation rule of `math::table`,
//! plus the example table, the digest and the round trips.

use as_capone_math::{Deviation, Place, PrizeTable, REGULATION_BLOCK_SIZE, REGULATION_PRICE_CENTS, TableError};
use engine::PrizeSchedule;

/// A small valid table; tests break one thing at a time.
const SMALL: &str = include_str!("../small-table.toml");

fn refused(src: &str) -> TableError {
    match PrizeTable::parse_toml(src) {
        Ok(t) => panic!("table accepted but should be refused: {t:?}"),
        Err(e) => e,
    }
}

fn row(index: usize, line: usize) -> Place {
    Place::Row { index, line: Some(line) }
}

#[test]
fn the_small_table_is_valid() {
    let t = PrizeTable::parse_toml(SMALL).unwrap();
    assert_eq!(t.block_size, 10);
    assert_eq!(t.counts(), vec![7, 3]);
    // Equal prizes for 5 and 6 tricks are allowed: more tricks pay no less (art. 3.2.3.3).
    assert_eq!(t.schedules[1].prizes, PrizeSchedule::new([600, 600, 700, 2_500_000]));
}

#[test]
fn the_example_table_is_the_illustrative_one() {
    let t = PrizeTable::example();
    assert_eq!((t.game.as_str(), t.code.as_str()), ("As Capone", "ASC"));
    assert_eq!((t.price_cents, t.block_size), (300, 300_000));
    assert_eq!(t.counts(), vec![228_000, 57_000, 13_000, 1_800, 200]);
    let prizes: Vec<[u64; 4]> = t.schedules.iter().map(|r| r.prizes.cents()).collect();
    assert_eq!(
        prizes,
        vec![
            [300, 1_000, 10_000, 1_000_000],
            [600, 2_000, 20_000, 2_500_000],
            [1_000, 5_000, 50_000, 5_000_000],
            [3_000, 15_000, 200_000, 10_000_000],
            [10_000, 100_000, 1_000_000, 25_000_000],
        ]
    );
    let file =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/prize-table.toml")).unwrap();
    assert!(file.contains("ILLUSTRATIVE"), "the example is labelled as illustrative");
    assert_eq!(PrizeTable::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/prize-table.toml")).unwrap(), t);
}

#[test]
fn rule_11_counts_must_add_up_to_the_block_size() {
    let e = refused(&SMALL.replace("tickets = 3", "tickets = 4"));
    assert_eq!(e, TableError::Counts { sum: 11, block_size: 10 });
    assert!(e.to_string().contains("add up to 11, not block_size = 10"), "{e}");
}

#[test]
fn rule_9_negative_amounts_are_refused_by_value() {
    let e = refused(&SMALL.replace("5 = 600", "5 = -600"));
    assert_eq!(e, TableError::Amount { at: row(2, 11), tricks: "5".into(), found: "-600".into() });
    assert_eq!(
        e.to_string(),
        "schedule row 2 (line 11): the prize for 5 tricks must be a whole number of cents, zero or more, found -600"
    );
}

#[test]
fn rule_9_fractional_amounts_are_refused_by_value() {
    let e = refused(&SMALL.replace("6 = 1000", "6 = 10.5"));
    assert_eq!(e, TableError::Amount { at: row(1, 7), tricks: "6".into(), found: "10.5".into() });
    // Even a float with nothing after the point: cents are written as integers.
    let e = refused(&SMALL.replace("6 = 1000", "6 = 1000.0"));
    assert!(matches!(e, TableError::Amount { .. }), "{e}");
    let e = refused(&SMALL.replace("6 = 1000", "6 = \"1000\""));
    assert!(e.to_string().contains("found the string \"1000\""), "{e}");
}

#[test]
fn rule_8_unknown_trick_counts_are_refused() {
    for key in ["4", "9", "0", "05", "five"] {
        let e = refused(&SMALL.replace("8 = 2500000", &format!("{key} = 2500000")));
        assert_eq!(e, TableError::UnknownTricks { at: row(2, 11), key: key.into() }, "{key}");
    }
}

#[test]
fn rule_6_an_empty_table_is_refused() {
    let head: String = SMALL.lines().take(5).collect::<Vec<_>>().join("\n");
    assert_eq!(refused(&format!("{head}\nschedule = []\n")), TableError::Empty);
    // No schedule key at all is a missing key.
    assert_eq!(refused(&head), TableError::MissingKey { at: Place::Top, key: "schedule" });
}

#[test]
fn rule_10_duplicate_schedules_are_refused() {
    // Same prizes, written in another order.
    let src =
        SMALL.replace("{ 5 = 600, 6 = 600, 7 = 700, 8 = 2500000 }", "{ 8 = 1000000, 7 = 10000, 6 = 1000, 5 = 300 }");
    let e = refused(&src);
    assert_eq!(e, TableError::Duplicate { at: row(2, 11), first: row(1, 7) });
    assert_eq!(
        e.to_string(),
        "schedule row 2 (line 11): same prizes as schedule row 1 (line 7); each prize schedule must appear on one row only"
    );
    // Through JSON too, with the row's keys in another order.
    let json = serde_json::to_string(&PrizeTable::parse_toml(SMALL).unwrap())
        .unwrap()
        .replace(r#"{"5":600,"6":600,"7":700,"8":2500000}"#, r#"{"8":1000000,"5":300,"7":10000,"6":1000}"#);
    let e = PrizeTable::from_json(&json).unwrap_err();
    assert_eq!(
        e,
        TableError::Duplicate { at: Place::Row { index: 2, line: None }, first: Place::Row { index: 1, line: None } }
    );
}

#[test]
fn rule_4_price_must_be_positive() {
    for bad in ["0", "-300", "2.5", "\"300\""] {
        let e = refused(&SMALL.replace("price_cents = 300", &format!("price_cents = {bad}")));
        assert!(matches!(e, TableError::Price(_)), "{bad}: {e}");
        assert!(e.to_string().contains("price_cents must be a positive whole number of cents"), "{e}");
    }
}

#[test]
fn rule_7_a_row_without_tickets_is_refused() {
    let src = SMALL.replace("tickets = 3", "tickets = 0").replace("block_size = 10", "block_size = 7");
    let e = refused(&src);
    assert_eq!(e, TableError::ZeroTickets { at: row(2, 11) });
    assert!(e.to_string().starts_with("schedule row 2 (line 11): tickets = 0"), "{e}");
    let e = refused(&SMALL.replace("tickets = 3", "tickets = -3"));
    assert_eq!(e, TableError::Tickets { at: row(2, 11), found: "-3".into() });
}

#[test]
fn rule_5_block_size_zero_is_refused() {
    let e = refused(&SMALL.replace("block_size = 10", "block_size = 0"));
    assert_eq!(e, TableError::BlockSize("0".into()));
    let e = refused(&SMALL.replace("block_size = 10", "block_size = 4294967296"));
    assert_eq!(e, TableError::BlockSize("4294967296".into()));
}

#[test]
fn rule_3_game_code_is_short_uppercase_alphanumerics() {
    for bad in ["", "A", "asc", "AS-C", "TOOLONG", "1AB", "ÀSC", "AS C"] {
        let e = refused(&SMALL.replace("code = \"ASC\"", &format!("code = {bad:?}")));
        assert_eq!(e, TableError::Code(bad.into()), "{bad}");
    }
    for good in ["AS", "ASC", "AC2026"] {
        let t = PrizeTable::parse_toml(&SMALL.replace("code = \"ASC\"", &format!("code = {good:?}"))).unwrap();
        assert_eq!(t.code, good);
    }
}

#[test]
fn rule_2_game_name_is_printable_text() {
    for bad in ["", "   ", "As\nCapone"] {
        let e = refused(&SMALL.replace("game = \"As Capone\"", &format!("game = {bad:?}")));
        assert_eq!(e, TableError::Game(bad.into()), "{bad:?}");
    }
}

#[test]
fn rule_1_unknown_keys_are_refused() {
    let e = refused(&SMALL.replace("block_size = 10", "block_size = 10\nblocks = 3"));
    assert!(matches!(&e, TableError::UnknownKey { at: Place::Top, key, .. } if key == "blocks"), "{e}");
    let e = refused(&SMALL.replace("tickets = 3", "tickets = 3\nticket = 3"));
    assert!(matches!(&e, TableError::UnknownKey { at, key, .. } if key == "ticket" && *at == row(2, 11)), "{e}");
    assert!(e.to_string().starts_with("schedule row 2 (line 11): unknown key \"ticket\""), "{e}");
    let e = refused(&SMALL.replace("tickets = 3\n", ""));
    assert_eq!(e, TableError::MissingKey { at: row(2, 11), key: "tickets" });
}

#[test]
fn rule_12_sums_that_overflow_u64_are_refused() {
    // 2 * 10^18 cents per ticket is representable, but not over 10 tickets.
    let e = refused(&SMALL.replace("8 = 2500000", "8 = 2000000000000000000"));
    // (TOML integers stop at i64::MAX: larger ones are a syntax error.)
    assert!(matches!(e, TableError::Overflow { at, .. } if at == row(2, 11)), "{e}");
    // A row whose own prizes overflow when added (4 × i64::MAX > u64::MAX).
    let m = i64::MAX;
    let e =
        refused(&SMALL.replace(
            "{ 5 = 600, 6 = 600, 7 = 700, 8 = 2500000 }",
            &format!("{{ 5 = {m}, 6 = {m}, 7 = {m}, 8 = {m} }}"),
        ));
    assert!(matches!(e, TableError::Overflow { at, .. } if at == row(2, 11)), "{e}");
    // The price over a block.
    let e = refused(&SMALL.replace("price_cents = 300", "price_cents = 2000000000000000000"));
    assert!(matches!(e, TableError::Overflow { at: Place::Top, .. }), "{e}");
    // The largest sum that fits is accepted: (u64::MAX / 10) * 10 fits.
    // Row 2's other prizes add up to 1 900.
    let max = u64::MAX / 10;
    let ok = SMALL.replace("8 = 2500000", &format!("8 = {}", max - 1_900));
    assert_eq!(PrizeTable::parse_toml(&ok).unwrap().schedules[1].prizes.cents().iter().sum::<u64>(), max);
    let over = SMALL.replace("8 = 2500000", &format!("8 = {}", max - 1_899));
    assert!(matches!(refused(&over), TableError::Overflow { at, .. } if at == row(2, 11)));
}

#[test]
fn syntax_errors_name_the_line() {
    let e = refused(&SMALL.replace("tickets = 3", "tickets = = 3"));
    assert!(matches!(e, TableError::Syntax { format: "TOML", line: Some(12), .. }), "{e:?}");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
}

#[test]
fn json_has_the_same_shape_and_the_same_rules() {
    let t = PrizeTable::parse_toml(SMALL).unwrap();
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(
        json,
        r#"{"game":"As Capone","code":"ASC","price_cents":300,"block_size":10,"schedule":[{"tickets":7,"prizes_cents":{"5":300,"6":1000,"7":10000,"8":1000000}},{"tickets":3,"prizes_cents":{"5":600,"6":600,"7":700,"8":2500000}}]}"#
    );
    assert_eq!(PrizeTable::from_json(&json).unwrap(), t);
    assert_eq!(serde_json::from_str::<PrizeTable>(&json).unwrap(), t);
    let bad = json.replace("\"5\":600", "\"5\":6.5");
    let e = PrizeTable::from_json(&bad).unwrap_err();
    assert_eq!(
        e,
        TableError::Amount { at: Place::Row { index: 2, line: None }, tricks: "5".into(), found: "6.5".into() }
    );
    assert!(serde_json::from_str::<PrizeTable>(&json.replace("\"block_size\":10", "\"block_size\":11")).is_err());
}

#[test]
fn json_duplicate_keys_are_refused_not_merged() {
    // {"5":600,"7":600,"7":700,...} would otherwise read as one row or another.
    let json = serde_json::to_string(&PrizeTable::parse_toml(SMALL).unwrap()).unwrap();
    let dup = json.replace("\"6\":600", "\"7\":600");
    let e = PrizeTable::from_json(&dup).unwrap_err();
    assert!(
        matches!(&e, TableError::Syntax { format: "JSON", message, .. } if message.contains("duplicate key \"7\"")),
        "{e}"
    );
    assert!(serde_json::from_str::<PrizeTable>(&dup).is_err());
    let dup_top = json.replacen("{", "{\"code\":\"ASC\",", 1);
    assert!(PrizeTable::from_json(&dup_top).is_err());
}

#[test]
fn to_toml_round_trips() {
    let t = PrizeTable::example();
    assert_eq!(PrizeTable::parse_toml(&t.to_toml()).unwrap(), t);
    let mut odd = PrizeTable::parse_toml(SMALL).unwrap();
    odd.game = "Jeu \"spécial\" \\ 'à' #1".into();
    assert_eq!(PrizeTable::parse_toml(&odd.to_toml()).unwrap(), odd);
}

#[test]
fn the_digest_is_stable_and_independent_of_the_format() {
    let t = PrizeTable::example();
    assert_eq!(
        t.canonical(),
        "as-capone prize table v1\ngame \"As Capone\"\ncode ASC\nprice_cents 300\nblock_size 300000\n\
         schedule 228000 300 1000 10000 1000000\nschedule 57000 600 2000 20000 2500000\n\
         schedule 13000 1000 5000 50000 5000000\nschedule 1800 3000 15000 200000 10000000\n\
         schedule 200 10000 100000 1000000 25000000\n"
    );
    // Golden: `printf '...' | sha256sum` of the text above.
    assert_eq!(t.digest(), "af14f5e8091ddd262ddf1a7a56098a4979dda439cd82e4f544c93ee1cbc125f5");
    let via_json = PrizeTable::from_json(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(via_json.digest(), t.digest());
    // Any change of content changes it.
    let mut other = t.clone();
    other.schedules.swap(0, 1);
    assert_ne!(other.digest(), t.digest());
}

/// Row 2 of the small table with `prizes` in place of its own.
fn with_row_2(prizes: &str) -> String {
    let src = SMALL.replace("{ 5 = 600, 6 = 600, 7 = 700, 8 = 2500000 }", prizes);
    assert_ne!(src, SMALL, "the small table's row 2 was replaced");
    src
}

#[test]
fn rule_13_a_zero_prize_for_5_6_7_or_8_tricks_is_refused() {
    // art. 3.1, 3.2.3.3: from five tricks the game is won and pays the prize of its count.
    for (tricks, prizes) in [
        (5, "{ 5 = 0, 6 = 600, 7 = 700, 8 = 2500000 }"),
        (6, "{ 5 = 600, 6 = 0, 7 = 700, 8 = 2500000 }"),
        (7, "{ 5 = 600, 6 = 600, 7 = 0, 8 = 2500000 }"),
        (8, "{ 5 = 600, 6 = 600, 7 = 700, 8 = 0 }"),
    ] {
        let e = refused(&with_row_2(prizes));
        assert_eq!(e, TableError::ZeroPrize { at: row(2, 11), tricks }, "{prizes}");
        assert_eq!(
            e.to_string(),
            format!(
                "schedule row 2 (line 11): the prize for {tricks} tricks is 0; every count of 5 to 8 tricks wins a prize above zero (art. 3.1, 3.2.3.3)"
            )
        );
    }
    // Row 1 too, by its own line; and in JSON, by its number.
    let e = refused(&SMALL.replace("5 = 300,", "5 = 0,"));
    assert_eq!(e, TableError::ZeroPrize { at: row(1, 7), tricks: 5 });
    let json = serde_json::to_string(&PrizeTable::parse_toml(SMALL).unwrap()).unwrap().replace("\"7\":700", "\"7\":0");
    let e = PrizeTable::from_json(&json).unwrap_err();
    assert_eq!(e, TableError::ZeroPrize { at: Place::Row { index: 2, line: None }, tricks: 7 });
    assert!(e.to_string().starts_with("schedule row 2: the prize for 7 tricks is 0;"), "{e}");
    assert!(serde_json::from_str::<PrizeTable>(&json).unwrap_err().to_string().contains("(art. 3.1, 3.2.3.3)"));
}

#[test]
fn rule_13_a_missing_trick_count_is_refused_not_read_as_no_prize() {
    // A missing trick count is refused, not read as no prize for it
    // (`docs/contract.md`, Emissions; art. 3.1, 3.2.3.3).
    let e = refused(&with_row_2("{ 5 = 600, 8 = 2500000 }"));
    assert_eq!(e, TableError::MissingPrize { at: row(2, 11), tricks: 6 });
    assert_eq!(
        e.to_string(),
        "schedule row 2 (line 11): no prize for 6 tricks in prizes_cents; every count of 5 to 8 tricks wins a prize above zero (art. 3.1, 3.2.3.3): a missing count is refused, it no longer means no prize"
    );
    for (tricks, prizes) in [
        (5, "{ 6 = 600, 7 = 700, 8 = 2500000 }"),
        (7, "{ 5 = 600, 6 = 600, 8 = 2500000 }"),
        (8, "{ 5 = 600, 6 = 600, 7 = 700 }"),
        (5, "{}"),
    ] {
        assert_eq!(refused(&with_row_2(prizes)), TableError::MissingPrize { at: row(2, 11), tricks }, "{prizes}");
    }
    let json = serde_json::to_string(&PrizeTable::parse_toml(SMALL).unwrap()).unwrap().replace("\"8\":2500000", "");
    let json = json.replace(",}", "}");
    let e = PrizeTable::from_json(&json).unwrap_err();
    assert_eq!(e, TableError::MissingPrize { at: Place::Row { index: 2, line: None }, tricks: 8 });
    // A wrong amount is named before a missing count.
    let e = refused(&with_row_2("{ 5 = -1 }"));
    assert!(matches!(e, TableError::Amount { .. }), "{e}");
}

#[test]
fn rule_14_more_tricks_never_pay_less() {
    // art. 3.2.3.3: the first pair that falls is named, with both amounts.
    let e = refused(&with_row_2("{ 5 = 600, 6 = 500, 7 = 700, 8 = 2500000 }"));
    assert_eq!(e, TableError::Decreasing { at: row(2, 11), fewer: 5, fewer_cents: 600, more: 6, more_cents: 500 });
    assert_eq!(
        e.to_string(),
        "schedule row 2 (line 11): the prize for 6 tricks (500 cents) is less than the prize for 5 tricks (600 cents); more tricks never pay less (art. 3.2.3.3)"
    );
    let e = refused(&with_row_2("{ 5 = 600, 6 = 600, 7 = 2500000, 8 = 700 }"));
    assert_eq!(
        e,
        TableError::Decreasing { at: row(2, 11), fewer: 7, fewer_cents: 2_500_000, more: 8, more_cents: 700 }
    );
    let e = refused(&SMALL.replace("7 = 10000", "7 = 999"));
    assert_eq!(e, TableError::Decreasing { at: row(1, 7), fewer: 6, fewer_cents: 1000, more: 7, more_cents: 999 });
    // 599 for 7 tricks is below the 600 of both 5 and 6 tricks: the step that falls, 6 to 7, is named.
    let e = refused(&with_row_2("{ 5 = 600, 6 = 600, 7 = 599, 8 = 2500000 }"));
    assert!(matches!(e, TableError::Decreasing { fewer: 6, more: 7, .. }), "{e}");
    // Equal prizes all along are allowed.
    let flat = PrizeTable::parse_toml(&with_row_2("{ 5 = 700, 6 = 700, 7 = 700, 8 = 700 }")).unwrap();
    assert_eq!(flat.schedules[1].prizes, PrizeSchedule::new([700; 4]));
    // In JSON.
    let json = serde_json::to_string(&PrizeTable::parse_toml(SMALL).unwrap()).unwrap().replace("\"7\":700", "\"7\":70");
    let e = PrizeTable::from_json(&json).unwrap_err();
    assert!(matches!(e, TableError::Decreasing { at: Place::Row { index: 2, line: None }, fewer: 6, more: 7, .. }));
    assert!(serde_json::from_str::<PrizeTable>(&json).unwrap_err().to_string().contains("(art. 3.2.3.3)"));
}

#[test]
fn art_2_deviations_are_listed_not_refused() {
    assert_eq!((REGULATION_PRICE_CENTS, REGULATION_BLOCK_SIZE), (300, 300_000));
    let example = PrizeTable::example();
    assert_eq!(example.regulation_deviations(), vec![]);
    assert!(example.is_regulation());

    let small = PrizeTable::parse_toml(SMALL).unwrap();
    assert_eq!(small.regulation_deviations(), vec![Deviation::BlockSize { block_size: 10 }]);
    assert!(!small.is_regulation());

    let both = PrizeTable::parse_toml(&SMALL.replace("price_cents = 300", "price_cents = 250")).unwrap();
    let found = both.regulation_deviations();
    assert_eq!(found, vec![Deviation::Price { price_cents: 250 }, Deviation::BlockSize { block_size: 10 }]);
    let text: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "the ticket price is 250 cents, not the 300 cents (3 €) that art. 2 sets",
            "a block holds 10 tickets, not the 300 000 that art. 2 sets",
        ]
    );
    // A block larger than art. 2's is a deviation too.
    let mut big = example.clone();
    big.block_size = 1_200_000;
    assert_eq!(
        big.regulation_deviations().iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["a block holds 1 200 000 tickets, not the 300 000 that art. 2 sets"]
    );
}
