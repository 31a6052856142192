//! What the API tests and the browser tests share: the test-only server
//! seed, the play money of a new player and a small prize table.

/// The test-only server seed: every ticket's draws are known in advance.
pub const SEED: [u8; 32] = [0x5a; 32];
pub const START: i64 = 10_000;

/// A small table: blocks of 100 tickets so that a test database starts in
/// milliseconds (the real table's blocks hold 300 000). Art. 2 sets blocks
/// of 300 000: a server takes this table only when its configuration has
/// `allow_non_regulation_table = true`. Every count of 5 to 8 tricks pays,
/// and never less for more tricks (art. 3.1, 3.2.3.3).
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
