//! [`Record`]: the public record of a ticket (docs/contract.md Fairness), and
//! [`verify`], the check anyone can run on it (guarantee 6). The server
//! builds records from the rows it stored; `as-capone verify` and the tests
//! check them with the same code.
//!
//! A record verifies when:
//! 1. its `leaf` holds the record's serial (whose digits name the record's
//!    emission, block and position), position, prizes and commitment;
//! 2. the leaf's hash climbs its `proof` to its `root`, and that root is the
//!    one published for the block, when the published root is given
//!    ([`Published`]: `as-capone verify --manifest` or `--root`);
//! 3. `commitment == hex(SHA-256(server_seed))`;
//! 4. replaying its actions through the engine (guarantee 1, 2) with
//!    `FairStream(server_seed, client_seed, serial)` accepts every action
//!    with `seq` 0, 1, 2, ... and produces exactly the recorded draws;
//! 5. the replayed ticket is finished with exactly the recorded result.
//!
//! So the prizes cannot have been changed after the block was published,
//! nor the server seed chosen after the player's (it is committed in the
//! root, which was published before the sale).

use emission::{Hash, Leaf, MerkleProof, Serial};
use engine::{Action, Event, FairStream, Game, GameResult, PrizeSchedule, Rank};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use utoipa::ToSchema;

/// One action of the record: `{"seq", "action", "card"?}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordAction {
    pub seq: u64,
    #[serde(flatten)]
    pub action: Action,
}

/// The two kinds of random draw (docs/rules.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrawKind {
    /// As Capone's card, uniform over his remaining hand (art. 3.2.2).
    Capone,
    /// A deck draw: two different cards of the 16 (art. 3.2.4.2, 3.2.5.2).
    Deck,
}

impl DrawKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DrawKind::Capone => "capone",
            DrawKind::Deck => "deck",
        }
    }
    pub fn parse(s: &str) -> Option<DrawKind> {
        match s {
            "capone" => Some(DrawKind::Capone),
            "deck" => Some(DrawKind::Deck),
            _ => None,
        }
    }
}

/// Random draw number `n`: `{"n", "kind", "player"?, "capone"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RecordDraw {
    pub n: u64,
    pub kind: DrawKind,
    /// The player's card of a deck draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub player: Option<Rank>,
    /// As Capone's card: `7` `8` `9` `10` `J` `Q` `K` `A`.
    #[schema(value_type = String)]
    pub capone: Rank,
}

/// The public record of one ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Record {
    pub serial: String,
    /// The player's seed, given with the first action; `null` before it.
    pub client_seed: Option<String>,
    pub commitment: String,
    /// Hex; `null` until the ticket is finished.
    pub server_seed: Option<String>,
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    /// `{"seq", "action": "play", "card"}` or `{"seq", "action": "draw"}`, in order.
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<RecordAction>,
    pub draws: Vec<RecordDraw>,
    #[schema(schema_with = result_schema)]
    pub result: Option<GameResult>,
    /// The emission's number, the block's and the ticket's position (from 1).
    pub emission: u32,
    pub block: u32,
    pub position: u32,
    /// The fields of the ticket's Merkle leaf (docs/fairness.md).
    pub leaf: RecordLeaf,
    /// The leaf's inclusion proof, from the leaf up: `"L<64 hex>"` when the
    /// sibling is on the left, `"R<64 hex>"` when on the right.
    pub proof: Vec<String>,
    /// Hex Merkle root of the block, as published.
    pub root: String,
}

/// The OpenAPI schema of [`Record::result`]: `null`, or the engine's
/// [`GameResult`] (`{"tricks", "prize_cents"}`), whose shape the API's
/// document names `ResultView` (a ticket's view has the same result; the
/// server's unit test `the_record_result_is_a_result_view` holds the two
/// together). The engine links no OpenAPI generator, so the record names
/// the schema rather than deriving it.
fn result_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .item(utoipa::openapi::Ref::from_schema_name("ResultView"))
        .build()
        .into()
}

/// The fields of a ticket's Merkle leaf ([`emission::Leaf`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RecordLeaf {
    pub serial: String,
    pub position: u32,
    /// The schedule row of the table, from 0.
    pub row: u32,
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    /// Hex SHA-256 of the play code (16 characters, no dashes).
    pub play_code_sha256: String,
    /// Hex SHA-256 of the server seed.
    pub commitment: String,
}

impl RecordLeaf {
    /// The leaf, when its fields are well formed.
    pub fn leaf(&self) -> Result<Leaf, String> {
        let serial = Serial::parse(&self.serial).map_err(|e| format!("the leaf's serial: {e}"))?;
        let hash32 = |what: &str, h: &str| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(h.trim(), &mut out)
                .map(|_| out)
                .map_err(|_| format!("the leaf's {what} is not 64 hex digits"))
        };
        Ok(Leaf {
            serial,
            position: self.position,
            row: self.row,
            prizes: self.prizes_cents,
            play_code_sha256: hash32("play_code_sha256", &self.play_code_sha256)?,
            commitment: hash32("commitment", &self.commitment)?,
        })
    }
}

/// The root a record must climb to, and where it was published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub root: Hash,
    /// Where it was read, in words (a file, `GET /api/emissions`, ...).
    pub source: String,
}

/// The draws an action took, numbered from `first_n`: each trick draws As
/// Capone's card, each deck event is one draw of two cards.
pub fn draws_of(events: &[Event], first_n: u64) -> Vec<RecordDraw> {
    let mut n = first_n;
    let mut out = Vec::new();
    for e in events {
        let d = match *e {
            Event::Trick { capone, .. } => RecordDraw { n, kind: DrawKind::Capone, player: None, capone },
            Event::Deck { player, capone, .. } => RecordDraw { n, kind: DrawKind::Deck, player: Some(player), capone },
            _ => continue,
        };
        out.push(d);
        n += 1;
    }
    out
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub serial: String,
    /// Every check made, in order, as human sentences.
    pub passed: Vec<String>,
    /// Every mismatch found; empty when the record is valid.
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.passed {
            writeln!(f, "ok: {p}")?;
        }
        for p in &self.problems {
            writeln!(f, "MISMATCH: {p}")?;
        }
        if self.is_valid() {
            write!(
                f,
                "VALID: ticket {} was played fairly: its prizes and server seed are the ones committed in its \
                 block's root, and every draw and the result follow from them",
                self.serial
            )
        } else {
            write!(f, "INVALID: ticket {}: {} problem(s) found", self.serial, self.problems.len())
        }
    }
}

/// Parses a hex server seed of exactly 32 bytes.
pub fn parse_seed(hex_seed: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(hex_seed.trim()).ok()?;
    bytes.try_into().ok()
}

/// Checks a record (see the module's doc) against its own root. Never
/// panics on bad input.
pub fn verify(record: &Record) -> Verdict {
    verify_against(record, None)
}

/// Checks a record (see the module's doc), its root against the published
/// one when given. Never panics on bad input.
pub fn verify_against(record: &Record, published: Option<&Published>) -> Verdict {
    let mut v = Verdict { serial: record.serial.clone(), passed: Vec::new(), problems: Vec::new() };
    check_inclusion(record, published, &mut v);
    let Some(seed_hex) = &record.server_seed else {
        v.problems
            .push("the server seed is not revealed yet: the ticket is not finished, nothing can be checked".into());
        return v;
    };
    let Some(seed) = parse_seed(seed_hex) else {
        v.problems.push("server_seed is not 64 hexadecimal digits".into());
        return v;
    };
    let computed = hex::encode(Sha256::digest(seed));
    if computed == record.commitment.trim().to_ascii_lowercase() {
        v.passed.push(format!("commitment {} = SHA-256(server_seed)", record.commitment));
    } else {
        v.problems.push(format!("commitment {} does not match SHA-256(server_seed) = {computed}", record.commitment));
    }

    for (i, a) in record.actions.iter().enumerate() {
        if a.seq != i as u64 {
            v.problems.push(format!("action number {i} has seq {}, expected {i}", a.seq));
        }
    }
    let actions: Vec<Action> = record.actions.iter().map(|a| a.action).collect();
    let Some(client_seed) = &record.client_seed else {
        v.problems.push("the record has no client seed: the ticket was never played".into());
        return v;
    };
    let mut stream = FairStream::new(&seed, client_seed, &record.serial);
    let mut game = Game::new(record.prizes_cents);
    let mut events = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        if let Err(e) = game.apply(*a, &mut stream, &mut events) {
            v.problems.push(format!("action seq {i} ({a:?}) is refused by the rules: {e}"));
            return v;
        }
    }
    v.passed.push(format!("{} actions replayed through the engine", actions.len()));

    let replayed = draws_of(&events, 0);
    if replayed.len() != record.draws.len() {
        v.problems.push(format!("the record lists {} draws, the replay takes {}", record.draws.len(), replayed.len()));
    }
    let mut draw_mismatch = false;
    for (want, got) in replayed.iter().zip(&record.draws) {
        if want != got {
            draw_mismatch = true;
            v.problems.push(format!("draw {}: recorded {}, the seed gives {}", want.n, describe(got), describe(want)));
        }
    }
    if !draw_mismatch && replayed.len() == record.draws.len() {
        v.passed.push(format!("all {} draws follow from the seeds", replayed.len()));
    }

    match (game.result(), record.result) {
        (None, _) => v.problems.push("the replayed ticket is not finished".into()),
        (Some(r), Some(rec)) if r == rec => {
            v.passed.push(format!("result: {} tricks in the deciding game, prize {} cents", r.tricks, r.prize_cents))
        }
        (Some(r), rec) => v.problems.push(format!(
            "recorded result {rec:?} differs from the replayed result {} tricks, prize {} cents",
            r.tricks, r.prize_cents
        )),
    }
    v
}

/// Checks 1 and 2 of the module's doc.
fn check_inclusion(record: &Record, published: Option<&Published>, v: &mut Verdict) {
    let leaf = match record.leaf.leaf() {
        Ok(l) => l,
        Err(e) => {
            v.problems.push(e);
            return;
        }
    };
    let mut agree = true;
    let mut differ = |what: &str, leaf_value: String, record_value: String| {
        if leaf_value != record_value {
            agree = false;
            v.problems.push(format!("the leaf's {what} {leaf_value} is not the record's {record_value}"));
        }
    };
    differ("serial", leaf.serial.to_string(), record.serial.trim().to_string());
    differ("position", leaf.position.to_string(), record.position.to_string());
    differ("prizes", format!("{:?}", leaf.prizes.cents()), format!("{:?}", record.prizes_cents.cents()));
    differ("commitment", hex::encode(leaf.commitment), record.commitment.trim().to_ascii_lowercase());
    let s = leaf.serial;
    differ(
        "serial's emission, block and position",
        format!("{}/{}/{}", s.emission(), s.block(), s.position()),
        format!("{}/{}/{}", record.emission, record.block, record.position),
    );
    if agree {
        v.passed.push(format!(
            "the Merkle leaf holds this ticket: serial {}, emission {}, block {}, position {}, its prizes and its \
             commitment",
            record.serial, record.emission, record.block, record.position
        ));
    }
    let mut root = [0u8; 32];
    if hex::decode_to_slice(record.root.trim(), &mut root).is_err() {
        v.problems.push("the record's root is not 64 hex digits".into());
        return;
    }
    let proof = match MerkleProof::parse(&record.proof.join(".")) {
        Ok(p) => p,
        Err(e) => {
            v.problems.push(format!("the inclusion proof: {e}"));
            return;
        }
    };
    if proof.verify(&leaf.hash(), &root) {
        v.passed.push(format!(
            "the leaf's inclusion proof ({} steps) leads to the block's root {}",
            proof.steps.len(),
            record.root.trim()
        ));
    } else {
        v.problems.push(format!(
            "the inclusion proof does not lead from the ticket's leaf to the root {}: the leaf or the proof was changed",
            record.root.trim()
        ));
    }
    match published {
        Some(p) if p.root == root => {
            v.passed.push(format!("the root {} is the one published in {}", hex::encode(root), p.source))
        }
        Some(p) => v.problems.push(format!(
            "the record's root {} is not the root {} published in {}",
            hex::encode(root),
            hex::encode(p.root),
            p.source
        )),
        None => v.passed.push(
            "note: the root was not compared with a published one (as-capone verify --manifest FILE or --root HEX)"
                .into(),
        ),
    }
}

fn describe(d: &RecordDraw) -> String {
    match d.player {
        Some(p) => format!("{} draw player {p} / As Capone {}", d.kind.as_str(), d.capone),
        None => format!("{} draw As Capone {}", d.kind.as_str(), d.capone),
    }
}

/// Plays ticket `position` of `block` of `emission` offline with `choose`
/// picking the player's card: a record as the server would publish it,
/// with its leaf, proof and root (for tests, examples and the CLI's tests).
pub fn play_offline(
    emission: &emission::Emission,
    block: u32,
    position: u32,
    client_seed: &str,
    mut choose: impl FnMut(&Game) -> Rank,
) -> Record {
    let b = emission.generate_block(block).expect("a block of the emission");
    let ticket = *b.ticket(position).expect("a position of the block");
    let proof = b.proof(position).expect("a position of the block");
    let serial = ticket.serial.to_string();
    let mut stream = FairStream::new(&ticket.server_seed, client_seed, &serial);
    let mut game = Game::new(ticket.prizes);
    let mut actions = Vec::new();
    let mut events = Vec::new();
    while !game.is_finished() {
        let action = match game.phase() {
            engine::Phase::Play => Action::play(choose(&game)),
            _ => Action::Draw,
        };
        actions.push(RecordAction { seq: game.seq(), action });
        game.apply(action, &mut stream, &mut events).expect("the chosen action is allowed");
    }
    let leaf = ticket.leaf();
    Record {
        serial: serial.clone(),
        client_seed: Some(client_seed.to_string()),
        commitment: hex::encode(leaf.commitment),
        server_seed: Some(hex::encode(ticket.server_seed)),
        prizes_cents: ticket.prizes,
        actions,
        draws: draws_of(&events, 0),
        result: game.result(),
        emission: emission.number(),
        block,
        position,
        leaf: RecordLeaf {
            serial,
            position,
            row: leaf.row,
            prizes_cents: leaf.prizes,
            play_code_sha256: hex::encode(leaf.play_code_sha256),
            commitment: hex::encode(leaf.commitment),
        },
        proof: proof_strings(&proof),
        root: hex::encode(b.merkle_root),
    }
}

/// A proof as the record writes it: one `"L<hex>"` or `"R<hex>"` per step.
pub fn proof_strings(proof: &MerkleProof) -> Vec<String> {
    let text = proof.to_string();
    if text.is_empty() { Vec::new() } else { text.split('.').map(str::to_string).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = 300\nblock_size = 20\n\
        [[schedule]]\ntickets = 15\nprizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 1000000 }\n\
        [[schedule]]\ntickets = 5\nprizes_cents = { 5 = 600, 6 = 2000, 7 = 20000, 8 = 2500000 }\n";

    fn sample(i: u8) -> Record {
        let table = math::PrizeTable::parse_toml(SMALL).unwrap();
        let e = emission::Emission::new(3, table, emission::EmissionSeed::from_bytes([7; 32])).unwrap();
        play_offline(&e, 2, u32::from(i) + 1, "client", |g| g.hand().highest().unwrap())
    }

    fn root_of(r: &Record) -> Published {
        let mut root = [0u8; 32];
        hex::decode_to_slice(&r.root, &mut root).unwrap();
        Published { root, source: "the test".into() }
    }

    #[test]
    fn fairness_a_record_is_proven_to_its_published_root_and_any_change_to_its_leaf_is_refused() {
        let r = sample(4);
        let published = root_of(&r);
        let v = verify_against(&r, Some(&published));
        assert!(v.is_valid(), "{v}");
        assert!(v.passed.iter().any(|p| p.contains("published in the test")), "{v}");
        let refused = |bad: &Record, why: &str| {
            let v = verify_against(bad, Some(&published));
            assert!(!v.is_valid(), "{why}: {v}");
            v.problems.join("\n")
        };
        // The prizes, in the record and in the leaf: the root no longer agrees.
        let mut bad = r.clone();
        bad.prizes_cents = PrizeSchedule::new([300, 1000, 10_000, 2_000_000]);
        assert!(refused(&bad, "record prizes").contains("the leaf's prizes"));
        bad.leaf.prizes_cents = bad.prizes_cents;
        assert!(refused(&bad, "leaf prizes").contains("does not lead from the ticket's leaf"));
        // The position.
        let mut bad = r.clone();
        bad.position += 1;
        bad.leaf.position += 1;
        assert!(refused(&bad, "position").contains("position"));
        // One node of the proof.
        for i in 0..r.proof.len() {
            let mut bad = r.clone();
            let flipped = if bad.proof[i].ends_with('0') { '1' } else { '0' };
            bad.proof[i].pop();
            bad.proof[i].push(flipped);
            assert!(refused(&bad, "proof node").contains("inclusion proof"));
        }
        let mut bad = r.clone();
        bad.proof.pop();
        refused(&bad, "a step less");
        // The root: it no longer is the published one.
        let mut bad = r.clone();
        bad.root = "00".repeat(32);
        assert!(refused(&bad, "root").contains("is not the root"));
        // Another published root.
        let other = Published { root: [1; 32], source: "elsewhere".into() };
        assert!(!verify_against(&r, Some(&other)).is_valid());
        // Another ticket's seed and commitment.
        let o = sample(5);
        let mut bad = r.clone();
        bad.server_seed = o.server_seed.clone();
        bad.commitment = o.commitment.clone();
        refused(&bad, "another seed");
    }

    #[test]
    fn guarantee_6_offline_records_verify() {
        for i in 0..20 {
            let r = sample(i);
            let v = verify(&r);
            assert!(v.is_valid(), "{v}");
            let json = serde_json::to_string(&r).unwrap();
            let back: Record = serde_json::from_str(&json).unwrap();
            assert_eq!(back, r);
        }
    }

    #[test]
    fn guarantee_6_any_changed_draw_seed_or_result_fails() {
        let r = sample(1);
        for i in 0..r.draws.len() {
            for card in Rank::ALL {
                let mut bad = r.clone();
                if bad.draws[i].capone == card {
                    continue;
                }
                bad.draws[i].capone = card;
                assert!(!verify(&bad).is_valid(), "draw {i} changed to {card}");
            }
            let mut bad = r.clone();
            bad.draws[i].kind = match bad.draws[i].kind {
                DrawKind::Capone => DrawKind::Deck,
                DrawKind::Deck => DrawKind::Capone,
            };
            assert!(!verify(&bad).is_valid());
        }
        let seed = r.server_seed.clone().unwrap();
        for pos in 0..seed.len() {
            let mut bad = r.clone();
            let mut s: Vec<u8> = seed.bytes().collect();
            s[pos] = if s[pos] == b'0' { b'1' } else { b'0' };
            bad.server_seed = Some(String::from_utf8(s).unwrap());
            assert!(!verify(&bad).is_valid(), "seed digit {pos}");
        }
        let mut bad = r.clone();
        let res = bad.result.unwrap();
        bad.result = Some(GameResult { tricks: res.tricks, prize_cents: res.prize_cents + 1 });
        assert!(!verify(&bad).is_valid());
        let mut bad = r.clone();
        bad.result = Some(GameResult { tricks: (res.tricks + 1) % 9, prize_cents: res.prize_cents });
        assert!(!verify(&bad).is_valid());
        let mut bad = r.clone();
        bad.result = None;
        assert!(!verify(&bad).is_valid());
        let mut bad = r.clone();
        bad.draws.pop();
        assert!(!verify(&bad).is_valid());
        let mut bad = r.clone();
        bad.client_seed.as_mut().unwrap().push('x');
        assert!(!verify(&bad).is_valid());
        let mut bad = r;
        bad.server_seed = None;
        assert!(!verify(&bad).is_valid());
    }
}
