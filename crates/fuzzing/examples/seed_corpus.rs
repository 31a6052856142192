//! Writes the seed corpus of every fuzz target into `fuzz/corpus/<target>/`
//! (docs/fuzzing.md): a few dozen meaningful inputs each, named for what
//! they are. Run from anywhere: `cargo run -p as-capone-fuzzing --example
//! seed_corpus`. It only adds or overwrites its own named files.

use as_capone_fuzzing::{Summary, engine_actions_summary, reference_records};
use std::path::{Path, PathBuf};

fn dir(target: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(target: &str, name: &str, data: &[u8]) {
    std::fs::write(dir(target).join(name), data).unwrap();
}

/// xorshift64*: the generator's own randomness, fixed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize, valid_actions: bool) -> Vec<u8> {
        (0..n)
            .map(|i| {
                let b = self.next() as u8;
                if valid_actions && i % 2 == 1 { b & 0x7f } else { b }
            })
            .collect()
    }
}

/// What a seed input must do.
type Want = fn(&Summary) -> bool;

fn engine_actions() {
    let t = "engine_actions";
    write(t, "empty", b"");
    write(t, "schedule-only", &[2]);
    write(t, "all-allowed-moves", &[0; 64]);
    write(t, "all-draw-clicks", &[0xff; 64]);
    write(t, "all-cards-raw", &(0..64).map(|i| 0x80 | (i as u8 & 7)).collect::<Vec<_>>());
    // Every trick a tie (card k against As Capone's lowest, the same),
    // every tie-break won (the deck's 16th card against its 1st) or lost.
    for (name, deck, tricks) in [("tricks-8-all-ties-won", [15u8, 0], 8), ("tricks-0-all-ties-lost", [0, 14], 0)] {
        let mut acts = Vec::new();
        let mut draws = Vec::new();
        for k in 0..8u8 {
            acts.extend([0x80 | k, 0xc0]);
            draws.extend([0, deck[0], deck[1]]);
        }
        acts.resize(draws.len(), 0);
        let mut data = vec![0u8];
        for (a, d) in acts.iter().zip(&draws) {
            data.extend([*a, *d]);
        }
        assert_eq!(engine_actions_summary(&data).tricks, tricks, "{name}");
        write(t, name, &data);
    }
    // Inputs found by a seeded search, one per kind of ticket.
    let kinds: Vec<(&str, Want)> = vec![
        ("tricks-1", |s| s.tricks == 1),
        ("tricks-2", |s| s.tricks == 2),
        ("tricks-3", |s| s.tricks == 3),
        ("tricks-4-extra-duel-lost", |s| s.tricks == 4),
        ("tricks-5", |s| s.tricks == 5),
        ("tricks-6", |s| s.tricks == 6),
        ("tricks-7", |s| s.tricks == 7),
        ("one-extra-game", |s| s.games == 2),
        ("two-extra-games", |s| s.games == 3),
        ("three-extra-games", |s| s.games >= 4),
        ("a-tie", |s| s.tie_breaks == 1),
        ("ties-repeated", |s| s.tie_breaks >= 3),
        ("many-refused", |s| s.refused >= 20 && s.games >= 2),
        ("long-ticket", |s| s.actions >= 40),
    ];
    let mut rng = Rng(0x5eed_0001);
    for (name, want) in &kinds {
        let found = (0..200_000).find_map(|_| {
            let len = 16 + (rng.next() % 120) as usize;
            let valid = !rng.next().is_multiple_of(4);
            let data = rng.bytes(len, valid);
            want(&engine_actions_summary(&data)).then_some(data)
        });
        match found {
            Some(data) => write(t, name, &data),
            None => eprintln!("engine_actions: no input found for {name}"),
        }
    }
    for s in 0..5u8 {
        let mut data = rng.bytes(80, true);
        data[0] = s;
        write(t, &format!("schedule-{s}"), &data);
    }
}

fn prize_table() {
    let t = "prize_table";
    let example = math::PrizeTable::example();
    write(t, "example.toml", include_bytes!("../../../examples/prize-table.toml"));
    write(t, "example-canonical.toml", example.to_toml().as_bytes());
    write(t, "example.json", serde_json::to_string_pretty(&example).unwrap().as_bytes());
    write(t, "example-compact.json", serde_json::to_string(&example).unwrap().as_bytes());
    let small = testkit::TABLE.trim_start();
    write(t, "small.toml", small.as_bytes());
    let cases: &[(&str, &str)] = &[
        ("unknown-key", "extra = 1\n"),
        ("bad-code", "code = \"asc\"\n"),
        ("float-price", "price_cents = 3.5\n"),
        ("negative-block", "block_size = -1\n"),
        ("empty-game", "game = \" \"\n"),
        ("control-game", "game = \"A\\u0007\"\n"),
        ("counts-off", "block_size = 101\n"),
        ("huge-block", "block_size = 4294967296\n"),
    ];
    for (name, line) in cases {
        let key = line.split(' ').next().unwrap();
        let mut text: String =
            small.lines().filter(|l| !l.starts_with(&format!("{key} "))).map(|l| format!("{l}\n")).collect();
        text.insert_str(0, line);
        write(t, &format!("{name}.toml"), text.as_bytes());
    }
    let rows: &[(&str, &str)] = &[
        ("zero-prize", "prizes_cents = { 5 = 0, 6 = 1000, 7 = 10000, 8 = 100000 }"),
        ("missing-prize", "prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000 }"),
        ("decreasing", "prizes_cents = { 5 = 300, 6 = 1000, 7 = 100, 8 = 100000 }"),
        ("tricks-4", "prizes_cents = { 4 = 1, 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }"),
        ("duplicate-row", "prizes_cents = { 5 = 500, 6 = 2000, 7 = 20000, 8 = 200000 }"),
        ("overflow", "prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 18446744073709551615 }"),
        ("string-amount", "prizes_cents = { 5 = \"300\", 6 = 1000, 7 = 10000, 8 = 100000 }"),
    ];
    for (name, row) in rows {
        let text = small.replacen("prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }", row, 1);
        write(t, &format!("{name}.toml"), text.as_bytes());
    }
    write(t, "no-rows.toml", small.split("\n\n").next().unwrap().as_bytes());
    write(t, "zero-tickets.toml", small.replacen("tickets = 60", "tickets = 0", 1).as_bytes());
    write(t, "dup-key.json", br#"{"game":"A","game":"B","code":"TST","price_cents":300,"block_size":1,"schedule":[]}"#);
    write(t, "null.json", b"null");
    write(t, "nested.json", br#"{"schedule":[{"tickets":1,"prizes_cents":{"5":[1],"6":{},"7":null,"8":true}}]}"#);
    write(t, "date.toml", b"game = 1979-05-27T07:32:00Z\n");
    write(t, "bad-syntax.toml", b"[[schedule]\n");
}

fn record_verify() {
    let t = "record_verify";
    let refs = reference_records();
    for (i, r) in refs.iter().enumerate().step_by(5) {
        write(t, &format!("record-{i}.json"), serde_json::to_string(r).unwrap().as_bytes());
    }
    write(t, "record-pretty.json", serde_json::to_string_pretty(&refs[1]).unwrap().as_bytes());
    // One mutation of each field of a real record (record_verify::mutate).
    for field in 0..19u8 {
        write(t, &format!("mutate-field-{field}"), &[3, 0, field, 1, 5, 7, 2, 9, 0, 0, 0, 0]);
    }
    write(t, "mutate-four", &[7, 3, 5, 5, 3, 1, 6, 0, 2, 4, 17, 3, 1, 0, 0]);
}

fn codes() {
    let t = "codes";
    let text = |name: &str, s: &str| {
        let mut data = vec![0u8];
        data.extend_from_slice(s.as_bytes());
        write(t, name, &data);
    };
    text("serial", "ASC-001-00001-000042-81");
    text("serial-compact", "ASC0010000100004281");
    text("serial-lower", " asc-001-00001-000042-81\n");
    text("serial-bad-check", "ASC-001-00001-000042-82");
    text("serial-swapped", "ASC-001-00001-000024-81");
    text("serial-six-letters", "ABCDEF-999-99999-999999-00");
    text("serial-zero-block", "ASC-001-00000-000042-00");
    text("serial-short", "AS-1-1-1-1");
    text("serial-unicode", "ASC-001-0000١-000042-81");
    text("code", "7K3M-Q9ZD-XW4P-2HRT");
    text("code-compact-lower", "7k3mq9zdxw4p2hrt");
    text("code-lookalikes", "O0IL-oil1-0000-0000");
    text("code-u", "7K3M-Q9ZD-XW4P-2HRU");
    text("code-17", "7K3M-Q9ZD-XW4P-2HRTT");
    text("code-spaces", " 7K3M Q9ZD\tXW4P 2HRT ");
    text("game-code", "TST");
    text("empty", "");
    let mut rng = Rng(0xc0de);
    for i in 0..12 {
        let mut data = rng.bytes(24, false);
        data[0] = 1;
        write(t, &format!("typo-{i}"), &data);
    }
}

fn http_bodies() {
    let t = "http_bodies";
    let table = include_str!("../../../examples/prize-table.toml")
        .replace("block_size = 300000", "block_size = 10")
        .replace("tickets = 228000", "tickets = 2")
        .replace("tickets = 57000", "tickets = 2")
        .replace("tickets = 13000", "tickets = 2")
        .replace("tickets = 1800", "tickets = 2")
        .replace("tickets = 200\n", "tickets = 2\n");
    let small_table = serde_json::json!({
        "game": "As Capone", "code": "FZ", "price_cents": 300, "block_size": 3,
        "schedule": [{"tickets": 3, "prizes_cents": {"5": 300, "6": 300, "7": 900, "8": 9000}}]
    });
    let bodies: Vec<(&str, u8, Option<u8>, String)> = vec![
        ("players-empty-object", 0, None, "{}".into()),
        ("players-name", 0, None, r#"{"name":"Zoé"}"#.into()),
        ("players-name-number", 0, None, r#"{"name":5}"#.into()),
        ("players-name-control", 0, None, r#"{"name":"a\u0000b"}"#.into()),
        ("players-unknown-field", 0, None, r#"{"nom":"x"}"#.into()),
        ("players-null", 0, None, "null".into()),
        ("players-no-body", 0, None, String::new()),
        ("players-text-plain", 0xc0, None, "{}".into()),
        ("tickets-buy", 1, None, "{}".into()),
        ("tickets-client-seed", 1, None, r#"{"client_seed":"abc"}"#.into()),
        ("tickets-no-token", 0x21, None, "{}".into()),
        ("tickets-wrong-token", 0x31, None, "{}".into()),
        ("tickets-array", 1, None, "[]".into()),
        ("action-first", 2, Some(0), r#"{"seq":0,"action":"play","card":"A","client_seed":"fuzz"}"#.into()),
        ("action-play-q", 2, Some(0), r#"{"seq":1,"action":"play","card":"Q"}"#.into()),
        ("action-draw", 2, Some(0), r#"{"seq":2,"action":"draw"}"#.into()),
        ("action-big-seq", 2, Some(1), r#"{"seq":18446744073709551616,"action":"draw"}"#.into()),
        ("action-negative-seq", 2, Some(0), r#"{"seq":-1,"action":"play","card":"7"}"#.into()),
        ("action-bad-card", 2, Some(0), r#"{"seq":0,"action":"play","card":"1"}"#.into()),
        ("action-no-action", 2, Some(0), r#"{"seq":0}"#.into()),
        ("action-extra-field", 2, Some(0), r#"{"seq":0,"action":"draw","x":1}"#.into()),
        ("action-other-player", 2, Some(2), r#"{"seq":0,"action":"draw"}"#.into()),
        ("action-unknown-ticket", 2, Some(3), r#"{"seq":0,"action":"draw"}"#.into()),
        ("action-junk-id", 2, Some(7), r#"{"seq":0,"action":"draw"}"#.into()),
        ("action-long-seed", 2, Some(0), format!(r#"{{"seq":0,"action":"draw","client_seed":"{}"}}"#, "x".repeat(65))),
        ("redeem-sold", 3, None, r#"{"code":"$C0"}"#.into()),
        ("redeem-unsold", 3, None, r#"{"code":"$C1"}"#.into()),
        ("redeem-other-player", 0x13, None, r#"{"code":"$C0"}"#.into()),
        ("redeem-anonymous", 0x23, None, r#"{"code":"$C0"}"#.into()),
        ("redeem-wrong", 3, None, r#"{"code":"0000-0000-0000-0000"}"#.into()),
        ("redeem-number", 3, None, r#"{"code":12}"#.into()),
        ("sell", 4, None, r#"{"serial":"$S2"}"#.into()),
        ("sell-sold", 4, None, r#"{"serial":"$S0"}"#.into()),
        ("sell-bad-check", 4, None, r#"{"serial":"TST-002-00001-000001-00"}"#.into()),
        ("sell-other-shop", 0x34, None, r#"{"serial":"$S3"}"#.into()),
        ("validate", 5, None, r#"{"serial":"$S0"}"#.into()),
        ("validate-online-serial", 5, None, r#"{"serial":"TST-001-00001-000001-35"}"#.into()),
        ("pay", 6, None, r#"{"serial":"$S0"}"#.into()),
        ("pay-unsold", 6, None, r#"{"serial":"$S4"}"#.into()),
        ("pay-no-token", 0x26, None, r#"{"serial":"$S0"}"#.into()),
        ("emission-toml", 7, None, serde_json::json!({"table": table, "blocks": 1, "channel": "online"}).to_string()),
        (
            "emission-json",
            7,
            None,
            serde_json::json!({"table": small_table, "blocks": 2, "channel": "paper"}).to_string(),
        ),
        (
            "emission-zero-blocks",
            7,
            None,
            serde_json::json!({"table": small_table, "blocks": 0, "channel": "paper"}).to_string(),
        ),
        (
            "emission-bad-channel",
            7,
            None,
            serde_json::json!({"table": small_table, "blocks": 1, "channel": "x"}).to_string(),
        ),
        ("emission-table-number", 7, None, r#"{"table":5,"blocks":1,"channel":"online"}"#.into()),
        ("emission-no-token", 0x27, None, "{}".into()),
        ("blocks-add", 8, Some(0), r#"{"blocks":1}"#.into()),
        ("blocks-zero", 8, Some(0), r#"{"blocks":0}"#.into()),
        ("blocks-many", 8, Some(1), r#"{"blocks":21}"#.into()),
        ("blocks-unknown-emission", 8, Some(2), r#"{"blocks":1}"#.into()),
        ("blocks-junk-id", 8, Some(4), r#"{"blocks":1}"#.into()),
    ];
    for (name, head, id, body) in bodies {
        let mut data = vec![head];
        data.extend(id);
        data.extend_from_slice(body.as_bytes());
        write(t, name, &data);
    }
}

fn main() {
    engine_actions();
    prize_table();
    record_verify();
    codes();
    http_bodies();
    println!("seed corpus written to {}", dir("").display());
}
