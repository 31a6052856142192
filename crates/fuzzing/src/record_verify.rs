//! `record_verify`: the public record's verifier ([`record::verify`]
//! and [`record::verify_against`]) on arbitrary records and on
//! mutations of real, valid ones.
//!
//! The harness builds real records once: every ticket of a block of a
//! small emission, played offline ([`record::play_offline`]) with
//! two strategies. An input starting with `{` is JSON read as a record;
//! any other input chooses a real record and one to four mutations of its
//! fields (a character set, inserted, deleted or its case flipped, spaces
//! around, a number changed, an action or a draw changed, removed,
//! inserted or swapped, a proof step changed ...).
//!
//! What must hold:
//! - nothing panics, whatever the record (the verifier says it "never
//!   panics on bad input");
//! - `verify_against` with a published root is valid only if `verify` is;
//! - a record found valid is, up to what the verifier documents as the same
//!   record, one of the real ones: the same serial, client seed, prizes,
//!   draws, result, emission, block and position, the same server seed,
//!   commitment, leaf, proof and root as bytes (hex in either case, spaces
//!   around trimmed), and `verify_against` a real root is valid only for
//!   that root's record. The player's actions are not compared: the record
//!   does not bind them beyond what they imply (each action's `seq`, and
//!   the draws and result of their replay), so another order of the
//!   player's cards with the same ties and the same tricks won verifies
//!   too, and is no failure.

use emission::{EmissionSeed, MerkleProof, Serial};
use engine::{Action, GameResult, PrizeSchedule, Rank};
use record::{DrawKind, Published, Record, RecordAction, RecordDraw, parse_seed, play_offline, verify, verify_against};
use std::sync::OnceLock;

/// The harness's table: blocks of 20 tickets.
fn table() -> String {
    testkit::table_toml("ASC", 300, 20, &[(15, [300, 1000, 10000, 1000000]), (5, [600, 2000, 20000, 2500000])])
}

/// The real records: the 20 tickets of block 2 of emission 3, played with
/// the highest card first, then with the lowest.
pub fn reference_records() -> &'static [Record] {
    static REFS: OnceLock<Vec<Record>> = OnceLock::new();
    REFS.get_or_init(|| {
        let table = math::PrizeTable::parse_toml(&table()).expect("the harness's table");
        let e = emission::Emission::new(3, table, EmissionSeed::from_bytes([7; 32])).expect("an emission");
        let mut out = Vec::new();
        for position in 1..=20 {
            out.push(play_offline(&e, 2, position, "client", |g| g.hand().highest().expect("a card")));
        }
        for position in 1..=20 {
            out.push(play_offline(&e, 2, position, "fuzz-seed", |g| g.hand().lowest().expect("a card")));
        }
        out
    })
}

/// Runs the harness; panics when an invariant breaks.
pub(crate) fn run(data: &[u8]) {
    let refs = reference_records();
    if data.first() == Some(&b'{') {
        let Ok(record) = serde_json::from_slice::<Record>(data) else { return };
        let valid = check(&record, None);
        if valid {
            let n = norm(&record);
            assert!(refs.iter().any(|r| norm(r) == n), "a record that is none of the real ones verifies: {record:?}");
        }
        return;
    }
    let mut b = Bytes(data);
    let original = &refs[usize::from(b.byte()) % refs.len()];
    let mut record = original.clone();
    let n = 1 + b.byte() % 4;
    for _ in 0..n {
        mutate(&mut record, &mut b);
    }
    let valid = check(&record, Some(original));
    if valid {
        assert_eq!(norm(&record), norm(original), "a changed record verifies: {record:?}");
    }
}

/// Verifies `record` alone and against the root of `original` (or of
/// the first real record); returns whether it verified alone.
fn check(record: &Record, original: Option<&Record>) -> bool {
    let alone = verify(record);
    let _ = alone.to_string();
    let roots: Vec<&Record> = match original {
        Some(o) => vec![o],
        None => reference_records().iter().take(1).collect(),
    };
    for o in roots {
        let mut root = [0u8; 32];
        hex::decode_to_slice(&o.root, &mut root).expect("a real root");
        let published = Published { root, source: "the fuzz harness".into() };
        let against = verify_against(record, Some(&published));
        let _ = against.to_string();
        if against.is_valid() {
            assert!(alone.is_valid(), "valid against a published root but not alone: {against}");
            // The records of one block share its root: only a mutation of
            // `o` itself must be `o`.
            if original.is_some() {
                assert_eq!(norm(record), norm(o), "a changed record verifies against the real root: {record:?}");
            }
        }
    }
    alone.is_valid()
}

/// A record as the verifier reads it (module doc); the actions left out.
#[derive(Debug, PartialEq, Eq)]
struct Norm {
    serial: String,
    client_seed: Option<String>,
    commitment: String,
    server_seed: Option<Option<[u8; 32]>>,
    prizes: PrizeSchedule,
    seqs: Vec<u64>,
    draws: Vec<RecordDraw>,
    result: Option<GameResult>,
    place: (u32, u32, u32),
    leaf_serial: Option<Serial>,
    leaf_fields: (u32, u32, PrizeSchedule),
    leaf_play_code: Option<[u8; 32]>,
    leaf_commitment: Option<[u8; 32]>,
    proof: Option<String>,
    root: Option<[u8; 32]>,
}

fn hash32(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(s.trim(), &mut out).ok().map(|_| out)
}

fn norm(r: &Record) -> Norm {
    Norm {
        serial: r.serial.clone(),
        client_seed: r.client_seed.clone(),
        commitment: r.commitment.trim().to_ascii_lowercase(),
        server_seed: r.server_seed.as_deref().map(parse_seed),
        prizes: r.prizes_cents,
        seqs: r.actions.iter().map(|a| a.seq).collect(),
        draws: r.draws.clone(),
        result: r.result,
        place: (r.emission, r.block, r.position),
        leaf_serial: Serial::parse(&r.leaf.serial).ok(),
        leaf_fields: (r.leaf.position, r.leaf.row, r.leaf.prizes_cents),
        leaf_play_code: hash32(&r.leaf.play_code_sha256),
        leaf_commitment: hash32(&r.leaf.commitment),
        proof: MerkleProof::parse(&r.proof.join(".")).ok().map(|p| p.to_string()),
        root: hash32(&r.root),
    }
}

/// A reader of the input, giving zeros when it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u64(&mut self) -> u64 {
        let mut x = [0u8; 8];
        for v in &mut x {
            *v = self.byte();
        }
        u64::from_le_bytes(x)
    }
    fn index(&mut self, len: usize) -> usize {
        if len == 0 { 0 } else { usize::from(self.byte()) % len }
    }
}

fn rank(b: u8) -> Rank {
    Rank::from_index_wrapping(b)
}

/// Characters a mutation writes: hex digits of both cases, signs, spaces,
/// a non-ASCII letter.
const CHARS: [char; 24] = [
    '0', '1', '7', '9', 'a', 'b', 'f', 'A', 'B', 'F', 'g', 'L', 'R', 'S', 'C', '-', '.', ' ', '\t', '\n', 'é', 'x',
    'Z', '5',
];

fn mutate_string(s: &mut String, b: &mut Bytes) {
    let mut chars: Vec<char> = s.chars().collect();
    let op = b.byte() % 8;
    let i = b.index(chars.len());
    let c = CHARS[usize::from(b.byte()) % CHARS.len()];
    match op {
        0 if !chars.is_empty() => chars[i] = c,
        1 => chars.insert(i.min(chars.len()), c),
        2 if !chars.is_empty() => {
            chars.remove(i);
        }
        3 if !chars.is_empty() => {
            chars[i] = if chars[i].is_ascii_lowercase() {
                chars[i].to_ascii_uppercase()
            } else {
                chars[i].to_ascii_lowercase()
            }
        }
        4 => chars.insert(0, ' '),
        5 => chars.push(if c == '\n' { '\n' } else { ' ' }),
        6 => chars.truncate(i),
        _ => {
            if i + 1 < chars.len() {
                chars.swap(i, i + 1)
            }
        }
    }
    *s = chars.into_iter().collect();
}

fn mutate_u64(x: u64, b: &mut Bytes) -> u64 {
    match b.byte() % 4 {
        0 => x.wrapping_add(1),
        1 => x.wrapping_sub(1),
        2 => x ^ (1 << (b.byte() % 64)),
        _ => b.u64(),
    }
}

fn mutate_u32(x: u32, b: &mut Bytes) -> u32 {
    mutate_u64(u64::from(x), b) as u32
}

fn mutate_prizes(p: PrizeSchedule, b: &mut Bytes) -> PrizeSchedule {
    let mut c = p.cents();
    let i = b.index(4);
    c[i] = mutate_u64(c[i], b);
    PrizeSchedule::new(c)
}

fn mutate(r: &mut Record, b: &mut Bytes) {
    match b.byte() % 19 {
        0 => mutate_string(&mut r.serial, b),
        1 => match (&mut r.client_seed, b.byte() % 8) {
            (Some(_), 0) => r.client_seed = None,
            (Some(s), _) => mutate_string(s, b),
            (None, _) => r.client_seed = Some("client".into()),
        },
        2 => mutate_string(&mut r.commitment, b),
        3 => match (&mut r.server_seed, b.byte() % 8) {
            (Some(_), 0) => r.server_seed = None,
            (Some(s), _) => mutate_string(s, b),
            (None, _) => r.server_seed = Some("00".repeat(32)),
        },
        4 => r.prizes_cents = mutate_prizes(r.prizes_cents, b),
        5 => {
            let i = b.index(r.actions.len());
            let op = b.byte() % 6;
            let card = rank(b.byte());
            match op {
                0 if i < r.actions.len() => r.actions[i].seq = mutate_u64(r.actions[i].seq, b),
                1 if i < r.actions.len() => r.actions[i].action = Action::play(card),
                2 if i < r.actions.len() => r.actions[i].action = Action::Draw,
                3 if i < r.actions.len() => {
                    r.actions.remove(i);
                }
                4 => {
                    r.actions.insert(i.min(r.actions.len()), RecordAction { seq: i as u64, action: Action::play(card) })
                }
                _ => {
                    // Two actions swapped, their seq kept in place.
                    let j = b.index(r.actions.len());
                    if i < r.actions.len() && j < r.actions.len() {
                        let (a, c) = (r.actions[i].action, r.actions[j].action);
                        r.actions[i].action = c;
                        r.actions[j].action = a;
                    }
                }
            }
        }
        6 => {
            let i = b.index(r.draws.len());
            let op = b.byte() % 7;
            let card = rank(b.byte());
            let has = i < r.draws.len();
            match op {
                0 if has => r.draws[i].n = mutate_u64(r.draws[i].n, b),
                1 if has => {
                    r.draws[i].kind = match r.draws[i].kind {
                        DrawKind::Capone => DrawKind::Deck,
                        DrawKind::Deck => DrawKind::Capone,
                    }
                }
                2 if has => r.draws[i].player = if r.draws[i].player.is_some() { None } else { Some(card) },
                3 if has => r.draws[i].capone = card,
                4 if has => {
                    r.draws.remove(i);
                }
                5 if has => {
                    let d = r.draws[i];
                    r.draws.insert(i, d);
                }
                _ => {
                    let j = b.index(r.draws.len());
                    if has && j < r.draws.len() {
                        r.draws.swap(i, j);
                    }
                }
            }
        }
        7 => {
            let op = b.byte() % 4;
            r.result = match (r.result, op) {
                (_, 0) => None,
                (Some(g), 1) => Some(GameResult { tricks: (g.tricks + 1 + b.byte() % 8) % 9, ..g }),
                (Some(g), 2) => Some(GameResult { prize_cents: mutate_u64(g.prize_cents, b), ..g }),
                _ => Some(GameResult { tricks: b.byte() % 9, prize_cents: mutate_u64(0, b) }),
            }
        }
        8 => r.emission = mutate_u32(r.emission, b),
        9 => r.block = mutate_u32(r.block, b),
        10 => r.position = mutate_u32(r.position, b),
        11 => mutate_string(&mut r.leaf.serial, b),
        12 => r.leaf.position = mutate_u32(r.leaf.position, b),
        13 => r.leaf.row = mutate_u32(r.leaf.row, b),
        14 => r.leaf.prizes_cents = mutate_prizes(r.leaf.prizes_cents, b),
        15 => mutate_string(&mut r.leaf.play_code_sha256, b),
        16 => mutate_string(&mut r.leaf.commitment, b),
        17 => {
            let i = b.index(r.proof.len());
            match b.byte() % 5 {
                0 if i < r.proof.len() => mutate_string(&mut r.proof[i], b),
                1 if i < r.proof.len() => {
                    r.proof.remove(i);
                }
                2 => {
                    let step = r.proof.get(i).cloned().unwrap_or_else(|| format!("L{}", "0".repeat(64)));
                    r.proof.insert(i.min(r.proof.len()), step);
                }
                3 if i + 1 < r.proof.len() => {
                    // Two steps written as one: "L...".."R..." joined by a dot.
                    let next = r.proof.remove(i + 1);
                    r.proof[i] = format!("{}.{next}", r.proof[i]);
                }
                _ => {
                    let j = b.index(r.proof.len());
                    if i < r.proof.len() && j < r.proof.len() {
                        r.proof.swap(i, j);
                    }
                }
            }
        }
        _ => mutate_string(&mut r.root, b),
    }
}
