//! [`Record`]: the public record of a ticket (CONTRACT.md Fairness), and
//! [`verify`], the check anyone can run on it (guarantee 6). The server
//! builds records from the rows it stored; `as-capone verify` and the tests
//! check them with the same code.
//!
//! A record verifies when:
//! 1. `commitment == hex(SHA-256(server_seed))`;
//! 2. replaying its actions through the engine (guarantee 1, 2) with
//!    `FairStream(server_seed, client_seed, serial)` accepts every action
//!    with `seq` 0, 1, 2, ... and produces exactly the recorded draws;
//! 3. the replayed ticket is finished with exactly the recorded result.

use engine::{Action, Event, FairStream, Game, GameResult, PrizeSchedule, Rank};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// One action of the record: `{"seq", "action", "card"?}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordAction {
    pub seq: u64,
    #[serde(flatten)]
    pub action: Action,
}

/// The two kinds of random draw (RULES.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordDraw {
    pub n: u64,
    pub kind: DrawKind,
    /// The player's card of a deck draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<Rank>,
    pub capone: Rank,
}

/// The public record of one ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub serial: String,
    pub client_seed: String,
    pub commitment: String,
    /// Hex; `null` until the ticket is finished.
    pub server_seed: Option<String>,
    pub prizes_cents: PrizeSchedule,
    pub actions: Vec<RecordAction>,
    pub draws: Vec<RecordDraw>,
    pub result: Option<GameResult>,
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
                "VALID: ticket {} was played fairly: every draw and the result follow from the committed seed",
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

/// Checks a record (see the module's doc). Never panics on bad input.
pub fn verify(record: &Record) -> Verdict {
    let mut v = Verdict { serial: record.serial.clone(), passed: Vec::new(), problems: Vec::new() };
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
    let mut stream = FairStream::new(&seed, &record.client_seed, &record.serial);
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

fn describe(d: &RecordDraw) -> String {
    match d.player {
        Some(p) => format!("{} draw player {p} / As Capone {}", d.kind.as_str(), d.capone),
        None => format!("{} draw As Capone {}", d.kind.as_str(), d.capone),
    }
}

/// Plays a whole ticket offline with `choose` picking the player's card:
/// a record as the server would publish it (for tests, examples and the
/// CLI's own tests).
pub fn play_offline(
    server_seed: [u8; 32],
    client_seed: &str,
    serial: &str,
    prizes: PrizeSchedule,
    mut choose: impl FnMut(&Game) -> Rank,
) -> Record {
    let mut stream = FairStream::new(&server_seed, client_seed, serial);
    let mut game = Game::new(prizes);
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
    Record {
        serial: serial.to_string(),
        client_seed: client_seed.to_string(),
        commitment: engine::commitment(&server_seed),
        server_seed: Some(hex::encode(server_seed)),
        prizes_cents: prizes,
        actions,
        draws: draws_of(&events, 0),
        result: game.result(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u8) -> Record {
        let mut seed = [7u8; 32];
        seed[0] = i;
        play_offline(
            seed,
            "client",
            &format!("ASC-001-000001-{i:06}-0"),
            PrizeSchedule::new([300, 1000, 10_000, 1_000_000]),
            |g| g.hand().highest().unwrap(),
        )
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
        bad.client_seed.push('x');
        assert!(!verify(&bad).is_valid());
        let mut bad = r;
        bad.server_seed = None;
        assert!(!verify(&bad).is_valid());
    }
}
