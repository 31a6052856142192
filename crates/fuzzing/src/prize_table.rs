//! `prize_table`: [`math::PrizeTable`] parsing of arbitrary text, as TOML
//! ([`PrizeTable::parse_toml`]) and as JSON ([`PrizeTable::from_json`] and
//! the `Deserialize` impl the admin API uses).
//!
//! What must hold:
//! - nothing panics, whatever the text: every refusal is a [`TableError`]
//!   whose message is one line;
//! - the JSON parser and the `Deserialize` impl agree (same table, or both
//!   refuse);
//! - a table that parses obeys every rule of `math::table` (the rules are
//!   re-checked here independently): non-empty game name without control
//!   characters, a valid game code, positive price and block size, counts
//!   adding up to the block size, every prize above zero and never falling,
//!   no duplicate row, no overflow of a block's money;
//! - it round-trips: [`PrizeTable::to_toml`] and its JSON serialization
//!   read back to an equal table with the same digest.
//!
//! The payout figures of a table (`math::Payout`, exact rationals) take
//! far longer than parsing, so they are left out of the loop.

use math::{PrizeTable, TableError};
use std::collections::HashSet;

/// Runs the harness; panics when an invariant breaks.
pub(crate) fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let toml = PrizeTable::parse_toml(&text);
    let json = PrizeTable::from_json(&text);
    let de = serde_json::from_str::<PrizeTable>(&text);
    match (&json, &de) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "from_json and Deserialize read different tables"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("from_json and Deserialize disagree: {a:?} / {b:?}"),
    }
    for r in [&toml, &json] {
        match r {
            Ok(t) => check_table(t),
            Err(e) => check_error(e),
        }
    }
}

fn check_error(e: &TableError) {
    let msg = e.to_string();
    assert!(!msg.is_empty());
    assert!(!msg.contains('\n'), "an error message is one line: {msg:?}");
}

fn check_table(t: &PrizeTable) {
    // The rules, re-checked.
    assert!(!t.game.trim().is_empty() && !t.game.chars().any(char::is_control), "game {:?}", t.game);
    let code = t.code.as_bytes();
    assert!(
        (2..=6).contains(&code.len())
            && code[0].is_ascii_uppercase()
            && code.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "code {:?}",
        t.code
    );
    assert!(t.price_cents > 0 && t.block_size > 0);
    assert!(!t.schedules.is_empty());
    let sum: u64 = t.schedules.iter().map(|r| u64::from(r.tickets)).sum();
    assert_eq!(sum, u64::from(t.block_size), "the counts add up to the block size");
    assert!(t.price_cents.checked_mul(u64::from(t.block_size)).is_some());
    let mut seen = HashSet::new();
    for row in &t.schedules {
        assert!(row.tickets > 0);
        let c = row.prizes.cents();
        assert!(c.iter().all(|&p| p > 0), "every count of 5 to 8 tricks pays: {c:?}");
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "more tricks never pay less: {c:?}");
        let total = c.iter().try_fold(0u64, |a, &p| a.checked_add(p));
        assert!(total.and_then(|s| s.checked_mul(u64::from(t.block_size))).is_some(), "overflow let through");
        assert!(seen.insert(c), "duplicate row {c:?}");
        for tricks in 0..=4 {
            assert_eq!(row.prizes.for_tricks(tricks), 0);
        }
    }

    // Round trips through both formats.
    let toml = t.to_toml();
    let back = PrizeTable::parse_toml(&toml).unwrap_or_else(|e| panic!("to_toml is refused: {e}\n{toml}"));
    assert_eq!(&back, t, "TOML round trip");
    let json = serde_json::to_string(t).expect("a table serializes");
    let back = PrizeTable::from_json(&json).unwrap_or_else(|e| panic!("its JSON is refused: {e}\n{json}"));
    assert_eq!(&back, t, "JSON round trip");
    assert_eq!(back.digest(), t.digest());
    assert_eq!(back.canonical(), t.canonical());
    assert_eq!(t.digest().len(), 64);
    let _ = t.regulation_deviations().iter().map(ToString::to_string).count();
}
