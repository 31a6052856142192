//! The fixture prize tables and the test-only server seed.
//!
//! Art. 2 of the regulation sets blocks of 300 000 tickets (docs/rules.md):
//! a server takes these small tables only when its configuration has
//! `allow_non_regulation_table = true` (`--allow-non-regulation-table`).
//! In every table here each count of 5 to 8 tricks pays, and never less for
//! more tricks (art. 3.1, 3.2.3.3).

use serde_json::{Value, json};

/// The test-only server seed: every ticket's draws are known in advance
/// (`ServerSeeds::InsecureFixedForTests`).
pub const SEED: [u8; 32] = [0x5a; 32];

/// The play money of a new player on a test server (cents).
pub const START: i64 = 10_000;

/// The small table of the server's tests: blocks of 100 tickets.
pub const TABLE: &str = r#"
game = "As Capone"
code = "TST"
price_cents = 300
block_size = 100

[[schedule]]
tickets = 60
prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }

[[schedule]]
tickets = 40
prizes_cents = { 5 = 500, 6 = 2000, 7 = 20000, 8 = 200000 }
"#;

/// The table of the CLI's crash, scale-out and report tests: blocks of
/// 2 000 tickets, so that a database starts in a moment and many players
/// do not sell it out.
pub const BLOCKS_OF_2000: &str = r#"
game = "As Capone"
code = "TST"
price_cents = 300
block_size = 2000

[[schedule]]
tickets = 1500
prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }

[[schedule]]
tickets = 500
prizes_cents = { 5 = 600, 6 = 3000, 7 = 20000, 8 = 200000 }
"#;

/// The rows of [`BLOCKS_OF_2000`]: (tickets, prizes for 5, 6, 7, 8 tricks).
pub const BLOCKS_OF_2000_ROWS: [(u32, [u64; 4]); 2] =
    [(1500, [300, 1000, 10000, 100000]), (500, [600, 3000, 20000, 200000])];

/// The rows of the blocks of 50 that the emission and paper tests emit
/// through the operator's desk: (tickets, prizes for 5, 6, 7, 8 tricks).
const BLOCKS_OF_50_ROWS: [(u32, [u64; 4]); 2] = [(30, [300, 600, 5000, 50000]), (20, [300, 1500, 5000, 100000])];

/// A table of blocks of 50 tickets (30 and 20 of two rows) with game code `code`.
pub fn blocks_of_50(code: &str) -> String {
    table_toml(code, 300, 50, &BLOCKS_OF_50_ROWS)
}

/// [`blocks_of_50`] as the JSON object the operator's desk also takes.
pub fn blocks_of_50_json(code: &str) -> Value {
    table_json(code, 300, 50, &BLOCKS_OF_50_ROWS)
}

/// A prize table in TOML, laid out as [`TABLE`] is: game "As Capone",
/// `code`, `price_cents`, `block_size`, then one `[[schedule]]` a row
/// (tickets, prizes for 5, 6, 7 and 8 tricks).
pub fn table_toml(code: &str, price_cents: u64, block_size: u32, rows: &[(u32, [u64; 4])]) -> String {
    let mut s =
        format!("\ngame = \"As Capone\"\ncode = \"{code}\"\nprice_cents = {price_cents}\nblock_size = {block_size}\n");
    for (tickets, p) in rows {
        s += &format!(
            "\n[[schedule]]\ntickets = {tickets}\nprizes_cents = {{ 5 = {}, 6 = {}, 7 = {}, 8 = {} }}\n",
            p[0], p[1], p[2], p[3]
        );
    }
    s
}

/// The table of [`table_toml`] as a JSON object.
fn table_json(code: &str, price_cents: u64, block_size: u32, rows: &[(u32, [u64; 4])]) -> Value {
    let schedule: Vec<Value> = rows
        .iter()
        .map(|(tickets, p)| json!({"tickets": tickets, "prizes_cents": {"5": p[0], "6": p[1], "7": p[2], "8": p[3]}}))
        .collect();
    json!({
        "game": "As Capone", "code": code, "price_cents": price_cents, "block_size": block_size,
        "schedule": schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_writes_the_fixture_tables_as_they_are_written() {
        let small = [(60, [300, 1000, 10000, 100000]), (40, [500, 2000, 20000, 200000])];
        assert_eq!(table_toml("TST", 300, 100, &small), TABLE);
        assert_eq!(table_toml("TST", 300, 2000, &BLOCKS_OF_2000_ROWS), BLOCKS_OF_2000);
    }
}
