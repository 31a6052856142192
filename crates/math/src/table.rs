//! Prize tables (art. 3.1): the list of prize schedules of a block and the
//! number of tickets per block that carry each one, in `docs/contract.md`'s TOML
//! format (or the same shape in JSON, for the admin API).
//!
//! The official table is published in the notice of each emission and is
//! missing from our copy of the regulation, so the software loads it from a
//! file and refuses anything that breaks a rule ("parse, don't validate": a
//! [`PrizeTable`] that exists is valid). The rules, each with its error:
//!
//! 1. only the keys `game`, `code`, `price_cents`, `block_size` and
//!    `schedule` at the top, `tickets` and `prizes_cents` in a row
//!    ([`TableError::UnknownKey`], [`TableError::MissingKey`]);
//! 2. the game name is not empty and has no control characters ([`TableError::Game`]);
//! 3. the game code ("code jeu", art. 1) is 2 to 6 uppercase letters or
//!    digits starting with a letter: it is printed in every serial ([`TableError::Code`]);
//! 4. the price is a positive whole number of cents ([`TableError::Price`]);
//! 5. the block size is a positive whole number of tickets ([`TableError::BlockSize`]);
//! 6. there is at least one schedule row ([`TableError::Empty`]);
//! 7. every row has at least one ticket ([`TableError::Tickets`], [`TableError::ZeroTickets`]);
//! 8. prizes are keyed by 5, 6, 7 or 8 tricks only (art. 3.2.3.3, [`TableError::UnknownTricks`]);
//!    each of the four must be there (rule 13);
//! 9. every amount is a whole number of cents, zero or more: floats,
//!    negatives and strings are refused by value, not by a type error
//!    ([`TableError::Amount`]);
//! 10. no two rows carry the same prizes ([`TableError::Duplicate`]);
//! 11. the counts add up to the block size (art. 3.1, [`TableError::Counts`]);
//! 12. the largest sum of one row's prizes times the block size, and the
//!     price times the block size, fit in 64 bits, so that sums of money
//!     over a block never overflow ([`TableError::Overflow`]);
//! 13. every row pays a prize above zero for each of 5, 6, 7 and 8 tricks
//!     (art. 3.1, 3.2.3.3: from five tricks the game is won and wins the
//!     prize of its count): a zero is refused ([`TableError::ZeroPrize`]),
//!     and so is a missing count ([`TableError::MissingPrize`]), which is
//!     not "no prize" (`docs/contract.md`, Emissions);
//! 14. more tricks never pay less: in each row the prizes for 5, 6, 7 and 8
//!     tricks never fall (art. 3.2.3.3; equal prizes are allowed,
//!     [`TableError::Decreasing`]).
//!
//! Errors name the row ("schedule row 3 (line 17)", rows counted from 1 in
//! file order), the rule broken and, for the regulation's rules, the article.
//!
//! Art. 2's price (300 cents) and block size (300 000 tickets) are not
//! refused here: tests and demos use small blocks. [`PrizeTable::regulation_deviations`]
//! lists where a table departs from them, for `serve` and the admin API to
//! refuse unless configured otherwise, and for `odds` and `emit` to warn.
//!
//! [`PrizeTable::digest`] is the hex SHA-256 of [`PrizeTable::canonical`], a
//! documented text form independent of the input's format, order, spacing
//! and comments: it is what manifests and notices quote.

use engine::PrizeSchedule;
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// A validated prize table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrizeTable {
    /// The game's name, as printed on tickets ("As Capone").
    pub game: String,
    /// The game code ("code jeu", art. 1): 2 to 6 uppercase letters or
    /// digits, starting with a letter.
    pub code: String,
    /// Price of one ticket in cents (art. 2: 300).
    pub price_cents: u64,
    /// Tickets per block (art. 2: 300 000).
    pub block_size: u32,
    /// The schedules in file order; their `tickets` add up to `block_size`.
    #[serde(rename = "schedule")]
    pub schedules: Vec<ScheduleRow>,
}

/// One row: `tickets` per block carry the schedule `prizes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScheduleRow {
    pub tickets: u32,
    #[serde(rename = "prizes_cents")]
    pub prizes: PrizeSchedule,
}

/// Where in a table a rule was broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The top level of the table (game, code, price, block size).
    Top,
    /// Schedule row `index` (counted from 1, in file order), starting at
    /// `line` of a TOML file when known.
    Row { index: usize, line: Option<usize> },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Top => write!(f, "prize table"),
            Place::Row { index, line: Some(l) } => write!(f, "schedule row {index} (line {l})"),
            Place::Row { index, line: None } => write!(f, "schedule row {index}"),
        }
    }
}

/// Why a prize table was refused. Every message is one line naming the row
/// (when there is one) and the rule broken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("cannot read prize table {path}: {message}")]
    Io { path: String, message: String },
    #[error("prize table is not valid {format}{}: {message}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    Syntax { format: &'static str, line: Option<usize>, message: String },
    #[error("{at}: unknown key {key:?} (allowed: {allowed})")]
    UnknownKey { at: Place, key: String, allowed: &'static str },
    #[error("{at}: missing key {key:?}")]
    MissingKey { at: Place, key: &'static str },
    #[error("{at}: {key} must be {expected}, found {found}")]
    WrongType { at: Place, key: &'static str, expected: &'static str, found: String },
    #[error("prize table: game name must be non-empty text without control characters, found {0:?}")]
    Game(String),
    #[error(
        "prize table: game code {0:?} must be 2 to 6 uppercase letters or digits starting with a letter (it is printed in every serial)"
    )]
    Code(String),
    #[error("prize table: price_cents must be a positive whole number of cents, found {0}")]
    Price(String),
    #[error("prize table: block_size must be a positive whole number of tickets (at most {max}), found {0}", max = u32::MAX)]
    BlockSize(String),
    #[error("prize table: no [[schedule]] row; a block needs at least one prize schedule (art. 3.1)")]
    Empty,
    #[error("{at}: tickets must be a whole number of tickets per block (at most {max}), found {found}", max = u32::MAX)]
    Tickets { at: Place, found: String },
    #[error("{at}: tickets = 0; every row must carry at least one ticket of the block")]
    ZeroTickets { at: Place },
    #[error("{at}: unknown trick count {key:?} in prizes_cents; prizes are for 5, 6, 7 or 8 tricks (art. 3.2.3.3)")]
    UnknownTricks { at: Place, key: String },
    #[error("{at}: the prize for {tricks} tricks must be a whole number of cents, zero or more, found {found}")]
    Amount { at: Place, tricks: String, found: String },
    #[error("{at}: same prizes as {first}; each prize schedule must appear on one row only")]
    Duplicate { at: Place, first: Place },
    #[error("prize table: the rows' tickets add up to {sum}, not block_size = {block_size} (art. 3.1)")]
    Counts { sum: u64, block_size: u32 },
    #[error("{at}: {what} overflows 64 bits of cents")]
    Overflow { at: Place, what: String },
    #[error(
        "{at}: no prize for {tricks} tricks in prizes_cents; every count of 5 to 8 tricks wins a prize above zero (art. 3.1, 3.2.3.3): a missing count is refused, it no longer means no prize"
    )]
    MissingPrize { at: Place, tricks: u8 },
    #[error(
        "{at}: the prize for {tricks} tricks is 0; every count of 5 to 8 tricks wins a prize above zero (art. 3.1, 3.2.3.3)"
    )]
    ZeroPrize { at: Place, tricks: u8 },
    #[error(
        "{at}: the prize for {more} tricks ({more_cents} cents) is less than the prize for {fewer} tricks ({fewer_cents} cents); more tricks never pay less (art. 3.2.3.3)"
    )]
    Decreasing { at: Place, fewer: u8, fewer_cents: u64, more: u8, more_cents: u64 },
}

/// The ticket price art. 2 sets: 3 €.
pub const REGULATION_PRICE_CENTS: u64 = 300;
/// The block size art. 2 sets: 300 000 tickets.
pub const REGULATION_BLOCK_SIZE: u32 = 300_000;

/// Where a valid table departs from art. 2. Such a table is fine for tests
/// and demos; `serve` and the admin API refuse it unless their configuration
/// allows a non-regulation table, and `odds` and `emit` print a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deviation {
    /// `price_cents` is not [`REGULATION_PRICE_CENTS`].
    Price { price_cents: u64 },
    /// `block_size` is not [`REGULATION_BLOCK_SIZE`].
    BlockSize { block_size: u32 },
}

impl fmt::Display for Deviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Deviation::Price { price_cents } => write!(
                f,
                "the ticket price is {price_cents} cents, not the {REGULATION_PRICE_CENTS} cents (3 €) that art. 2 sets"
            ),
            Deviation::BlockSize { block_size } => write!(
                f,
                "a block holds {} tickets, not the {} that art. 2 sets",
                grouped(u64::from(*block_size)),
                grouped(u64::from(REGULATION_BLOCK_SIZE))
            ),
        }
    }
}

/// `n` with its digits in groups of three, as the regulation writes numbers ("300 000").
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(' ');
        }
        s.push(c);
    }
    s
}

/// The keys allowed at the top of a table.
const TOP_KEYS: &str = "game, code, price_cents, block_size, schedule";
/// The keys allowed in a schedule row.
const ROW_KEYS: &str = "tickets, prizes_cents";

impl PrizeTable {
    /// Parses and validates a table in `docs/contract.md`'s TOML format.
    pub fn parse_toml(src: &str) -> Result<PrizeTable, TableError> {
        let doc: toml::Table = toml::from_str(src).map_err(|e| TableError::Syntax {
            format: "TOML",
            line: e.span().map(|s| line_of(src, s.start)),
            message: e.message().trim().replace('\n', "; "),
        })?;
        let raw = Raw::from_toml(toml::Value::Table(doc));
        validate(&raw, &row_lines(src))
    }

    /// Parses and validates the same shape in JSON:
    /// `{"game", "code", "price_cents", "block_size", "schedule": [{"tickets", "prizes_cents": {"5": ..}}]}`.
    pub fn from_json(src: &str) -> Result<PrizeTable, TableError> {
        let raw: Raw = serde_json::from_str(src).map_err(|e| TableError::Syntax {
            format: "JSON",
            line: Some(e.line()),
            message: e.to_string().replace('\n', "; "),
        })?;
        validate(&raw, &[])
    }

    /// Reads a TOML table from a file (JSON when the name ends in `.json`).
    pub fn load(path: impl AsRef<Path>) -> Result<PrizeTable, TableError> {
        let path = path.as_ref();
        let src = std::fs::read_to_string(path)
            .map_err(|e| TableError::Io { path: path.display().to_string(), message: e.to_string() })?;
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            PrizeTable::from_json(&src)
        } else {
            PrizeTable::parse_toml(&src)
        }
    }

    /// The illustrative table of `examples/prize-table.toml` (not the
    /// official one, which each emission's notice publishes).
    pub fn example() -> PrizeTable {
        PrizeTable::parse_toml(EXAMPLE_TOML).expect("the example table is valid")
    }

    /// The table as TOML, in the format [`PrizeTable::parse_toml`] reads
    /// back to an equal table (every trick count written out).
    pub fn to_toml(&self) -> String {
        let mut s = format!(
            "game = {}\ncode = {}\nprice_cents = {}\nblock_size = {}\n",
            toml::Value::String(self.game.clone()),
            toml::Value::String(self.code.clone()),
            self.price_cents,
            self.block_size
        );
        for row in &self.schedules {
            let [p5, p6, p7, p8] = row.prizes.cents();
            s += &format!(
                "\n[[schedule]]\ntickets = {}\nprizes_cents = {{ 5 = {p5}, 6 = {p6}, 7 = {p7}, 8 = {p8} }}\n",
                row.tickets
            );
        }
        s
    }

    /// The canonical text that [`PrizeTable::digest`] hashes. Version 1,
    /// ASCII lines each ending in `\n`:
    ///
    /// ```text
    /// as-capone prize table v1
    /// game "As Capone"            (the name as a JSON string)
    /// code ASC
    /// price_cents 300
    /// block_size 300000
    /// schedule 228000 300 1000 10000 1000000
    /// ```
    ///
    /// with one `schedule` line per row in table order: tickets, then the
    /// prizes for 5, 6, 7 and 8 tricks, in decimal without leading zeros.
    /// Comments, spacing, key order and TOML-or-JSON make no difference.
    pub fn canonical(&self) -> String {
        let mut s = format!(
            "as-capone prize table v1\ngame {}\ncode {}\nprice_cents {}\nblock_size {}\n",
            serde_json::Value::String(self.game.clone()),
            self.code,
            self.price_cents,
            self.block_size
        );
        for row in &self.schedules {
            let [p5, p6, p7, p8] = row.prizes.cents();
            s += &format!("schedule {} {p5} {p6} {p7} {p8}\n", row.tickets);
        }
        s
    }

    /// Hex SHA-256 of [`PrizeTable::canonical`]: the table's stable identity.
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.canonical().as_bytes()))
    }

    /// Tickets per block for each row, in table order.
    pub fn counts(&self) -> Vec<u32> {
        self.schedules.iter().map(|r| r.tickets).collect()
    }

    /// Where the table departs from art. 2 (price, then block size); empty
    /// for a regulation table. Each one displays as a sentence citing art. 2.
    pub fn regulation_deviations(&self) -> Vec<Deviation> {
        let mut out = Vec::new();
        if self.price_cents != REGULATION_PRICE_CENTS {
            out.push(Deviation::Price { price_cents: self.price_cents });
        }
        if self.block_size != REGULATION_BLOCK_SIZE {
            out.push(Deviation::BlockSize { block_size: self.block_size });
        }
        out
    }

    /// True when the price and block size are art. 2's.
    pub fn is_regulation(&self) -> bool {
        self.regulation_deviations().is_empty()
    }
}

/// Tables deserialize through the same validation as [`PrizeTable::from_json`],
/// so a server can take one straight from a request body.
impl<'de> Deserialize<'de> for PrizeTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PrizeTable, D::Error> {
        let raw = Raw::deserialize(d)?;
        validate(&raw, &[]).map_err(serde::de::Error::custom)
    }
}

const EXAMPLE_TOML: &str = include_str!("../../../examples/prize-table.toml");

/// The 1-based line of byte `offset` in `src`.
fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The line where each `[[schedule]]` row starts, when TOML gives its span.
fn row_lines(src: &str) -> Vec<Option<usize>> {
    #[derive(Deserialize)]
    struct Spans {
        #[serde(default)]
        schedule: Vec<toml::Spanned<toml::Value>>,
    }
    match toml::from_str::<Spans>(src) {
        Ok(s) => s.schedule.iter().map(|r| Some(line_of(src, r.span().start))).collect(),
        Err(_) => Vec::new(),
    }
}

/// A parsed value of either format, before validation: enough to say what
/// was found when it is refused.
enum Raw {
    Int(i128),
    /// A number that is not an integer, as written.
    Float(String),
    Str(String),
    Array(Vec<Raw>),
    Table(Vec<(String, Raw)>),
    /// Anything else (boolean, date, null), described.
    Other(String),
}

/// JSON (or any self-describing format) straight into [`Raw`], refusing
/// duplicate keys, which `serde_json::Value` would silently merge: a table
/// must not mean something else than what a reader of the file sees.
impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a prize table value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Raw, E> {
                Ok(Raw::Other(b.to_string()))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Raw, E> {
                Ok(Raw::Int(i.into()))
            }
            fn visit_u64<E>(self, u: u64) -> Result<Raw, E> {
                Ok(Raw::Int(u.into()))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Raw, E> {
                Ok(Raw::Float(format!("{f:?}")))
            }
            fn visit_str<E>(self, s: &str) -> Result<Raw, E> {
                Ok(Raw::Str(s.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Other("null".into()))
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Other("null".into()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Raw>()? {
                    items.push(item);
                }
                Ok(Raw::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut entries: Vec<(String, Raw)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Raw>()? {
                    if entries.iter().any(|(seen, _)| *seen == k) {
                        return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    entries.push((k, v));
                }
                Ok(Raw::Table(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Raw {
    fn from_toml(v: toml::Value) -> Raw {
        match v {
            toml::Value::Integer(i) => Raw::Int(i.into()),
            toml::Value::Float(f) => Raw::Float(format!("{f:?}")),
            toml::Value::String(s) => Raw::Str(s),
            toml::Value::Boolean(b) => Raw::Other(b.to_string()),
            toml::Value::Datetime(d) => Raw::Other(format!("the date {d}")),
            toml::Value::Array(a) => Raw::Array(a.into_iter().map(Raw::from_toml).collect()),
            toml::Value::Table(t) => Raw::Table(t.into_iter().map(|(k, v)| (k, Raw::from_toml(v))).collect()),
        }
    }

    fn describe(&self) -> String {
        match self {
            Raw::Int(i) => i.to_string(),
            Raw::Float(s) => s.clone(),
            Raw::Str(s) => format!("the string {s:?}"),
            Raw::Array(_) => "an array".into(),
            Raw::Table(_) => "a table".into(),
            Raw::Other(s) => s.clone(),
        }
    }

    fn get(&self, key: &str) -> Option<&Raw> {
        match self {
            Raw::Table(t) => t.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The integer if this is one within `lo..=hi`, else `None`.
    fn int_in(&self, lo: i128, hi: i128) -> Option<i128> {
        match self {
            Raw::Int(i) if (lo..=hi).contains(i) => Some(*i),
            _ => None,
        }
    }
}

/// Refuses keys outside `allowed` (rule 1).
fn check_keys(v: &Raw, at: Place, allowed: &'static str) -> Result<(), TableError> {
    if let Raw::Table(t) = v {
        let names: Vec<&str> = allowed.split(", ").collect();
        if let Some((k, _)) = t.iter().find(|(k, _)| !names.contains(&k.as_str())) {
            return Err(TableError::UnknownKey { at, key: k.clone(), allowed });
        }
    }
    Ok(())
}

fn required<'a>(v: &'a Raw, at: Place, key: &'static str) -> Result<&'a Raw, TableError> {
    v.get(key).ok_or(TableError::MissingKey { at, key })
}

/// The whole validation, shared by both formats; `lines[i]` is the line
/// where row `i` starts, when known.
fn validate(doc: &Raw, lines: &[Option<usize>]) -> Result<PrizeTable, TableError> {
    let top = Place::Top;
    if !matches!(doc, Raw::Table(_)) {
        return Err(TableError::WrongType {
            at: top,
            key: "the table",
            expected: "a table of keys",
            found: doc.describe(),
        });
    }
    check_keys(doc, top, TOP_KEYS)?;

    let game = match required(doc, top, "game")? {
        Raw::Str(s) if !s.trim().is_empty() && !s.chars().any(char::is_control) => s.clone(),
        Raw::Str(s) => return Err(TableError::Game(s.clone())),
        other => {
            return Err(TableError::WrongType { at: top, key: "game", expected: "a string", found: other.describe() });
        }
    };

    let code = match required(doc, top, "code")? {
        Raw::Str(s) if valid_game_code(s) => s.clone(),
        Raw::Str(s) => return Err(TableError::Code(s.clone())),
        other => {
            return Err(TableError::WrongType { at: top, key: "code", expected: "a string", found: other.describe() });
        }
    };

    let price = required(doc, top, "price_cents")?;
    let price_cents = price.int_in(1, u64::MAX.into()).ok_or_else(|| TableError::Price(price.describe()))? as u64;

    let bs = required(doc, top, "block_size")?;
    let block_size = bs.int_in(1, u32::MAX.into()).ok_or_else(|| TableError::BlockSize(bs.describe()))? as u32;

    let rows = match required(doc, top, "schedule")? {
        Raw::Array(rows) if rows.is_empty() => return Err(TableError::Empty),
        Raw::Array(rows) => rows,
        other => {
            return Err(TableError::WrongType {
                at: top,
                key: "schedule",
                expected: "an array of [[schedule]] rows",
                found: other.describe(),
            });
        }
    };

    let mut schedules = Vec::with_capacity(rows.len());
    let mut places = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let at = Place::Row { index: i + 1, line: lines.get(i).copied().flatten() };
        schedules.push(parse_row(row, at)?);
        places.push(at);
    }

    // Rule 10: the same prizes on two rows would make "the row of a ticket"
    // ambiguous in every count per schedule.
    let mut seen: HashMap<PrizeSchedule, usize> = HashMap::new();
    for (i, row) in schedules.iter().enumerate() {
        if let Some(&first) = seen.get(&row.prizes) {
            return Err(TableError::Duplicate { at: places[i], first: places[first] });
        }
        seen.insert(row.prizes, i);
    }

    // Rule 11, art. 3.1: the counts of the table are those of a block.
    let sum: u64 = schedules.iter().map(|r| u64::from(r.tickets)).sum();
    if sum != u64::from(block_size) {
        return Err(TableError::Counts { sum, block_size });
    }

    // Rule 12: every sum of money over a block fits in u64.
    if price_cents.checked_mul(block_size.into()).is_none() {
        return Err(TableError::Overflow {
            at: top,
            what: format!("price_cents {price_cents} × block_size {block_size}"),
        });
    }
    for (i, row) in schedules.iter().enumerate() {
        let total = row.prizes.cents().iter().try_fold(0u64, |a, &p| a.checked_add(p));
        if total.and_then(|t| t.checked_mul(block_size.into())).is_none() {
            return Err(TableError::Overflow {
                at: places[i],
                what: format!("the sum of the row's prizes × block_size {block_size}"),
            });
        }
    }

    Ok(PrizeTable { game, code, price_cents, block_size, schedules })
}

fn parse_row(row: &Raw, at: Place) -> Result<ScheduleRow, TableError> {
    if !matches!(row, Raw::Table(_)) {
        return Err(TableError::WrongType { at, key: "row", expected: "a table", found: row.describe() });
    }
    check_keys(row, at, ROW_KEYS)?;
    let t = required(row, at, "tickets")?;
    let tickets = match t.int_in(0, u32::MAX.into()) {
        Some(0) => return Err(TableError::ZeroTickets { at }),
        Some(n) => n as u32,
        None => return Err(TableError::Tickets { at, found: t.describe() }),
    };
    let prizes = match required(row, at, "prizes_cents")? {
        Raw::Table(entries) => entries,
        other => {
            return Err(TableError::WrongType {
                at,
                key: "prizes_cents",
                expected: "a table like { 5 = 300, 6 = 1000, 7 = 10000, 8 = 1000000 }",
                found: other.describe(),
            });
        }
    };
    let mut cents: [Option<u64>; 4] = [None; 4];
    // Check every key first, so an unknown trick count is named even when
    // an amount elsewhere in the row is also wrong.
    for (k, _) in prizes {
        if !matches!(k.as_str(), "5" | "6" | "7" | "8") {
            return Err(TableError::UnknownTricks { at, key: k.clone() });
        }
    }
    for (k, v) in prizes {
        let idx = (k.as_bytes()[0] - b'5') as usize;
        cents[idx] = Some(v.int_in(0, u64::MAX.into()).ok_or_else(|| TableError::Amount {
            at,
            tricks: k.clone(),
            found: v.describe(),
        })? as u64);
    }
    // Rule 13, art. 3.1 and 3.2.3.3: every winning count pays a prize.
    let mut paid = [0u64; 4];
    for (tricks, (slot, c)) in (5u8..).zip(paid.iter_mut().zip(cents)) {
        *slot = match c {
            None => return Err(TableError::MissingPrize { at, tricks }),
            Some(0) => return Err(TableError::ZeroPrize { at, tricks }),
            Some(c) => c,
        };
    }
    // Rule 14, art. 3.2.3.3: more tricks never pay less. Prizes that never
    // fall from one count to the next never fall at all.
    for (fewer, pair) in (5u8..).zip(paid.windows(2)) {
        if pair[1] < pair[0] {
            return Err(TableError::Decreasing {
                at,
                fewer,
                fewer_cents: pair[0],
                more: fewer + 1,
                more_cents: pair[1],
            });
        }
    }
    Ok(ScheduleRow { tickets, prizes: PrizeSchedule::new(paid) })
}

/// Whether `s` is a game code (a table's `code`, rule 3): 2 to 6
/// characters `A-Z 0-9`, the first a letter.
pub fn valid_game_code(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=6).contains(&b.len())
        && b[0].is_ascii_uppercase()
        && b.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}
