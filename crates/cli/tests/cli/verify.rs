//! `as-capone verify FILE` on records (guarantee 6): a record of a finished
//! game verifies; a changed draw, seed or result makes it fail with a
//! non-zero exit. Records come from `record::play_offline` (the
//! server's own record builder and engine) and from a game played over
//! HTTP against the real server.

use emission::{Emission, EmissionSeed, EmissionWriter};
use engine::Rank;
use record::{Record, play_offline};
use std::path::Path;
use std::process::Command;

fn verify_file(path: &Path) -> (bool, String) {
    verify_with(path, &[])
}

fn verify_with(path: &Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone")).arg("verify").arg(path).args(extra).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn write(dir: &Path, name: &str, r: &Record) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(r).unwrap()).unwrap();
    p
}

const SMALL: &str = include_str!("../../../math/tests/small-table.toml");

fn emission() -> Emission {
    let mut seed = [0u8; 32];
    for (i, b) in seed.iter_mut().enumerate() {
        *b = (i * 7) as u8;
    }
    Emission::new(4, math::PrizeTable::parse_toml(SMALL).unwrap(), EmissionSeed::from_bytes(seed)).unwrap()
}

fn record() -> Record {
    play_offline(&emission(), 2, 7, "alice", |g| g.hand().lowest().unwrap())
}

/// Fairness, 1 and 3: a record is proven to its block's published root,
/// read from `emit`'s manifest or a server's `GET /api/emissions`, or given;
/// a changed prize, position, proof node or root is refused with a line
/// that says which.
#[test]
fn fairness_a_record_is_checked_against_the_published_root() {
    let dir = tempfile::tempdir().unwrap();
    let good = record();
    let file = write(dir.path(), "good.json", &good);
    // emit's manifest of the same emission.
    let out = dir.path().join("emission");
    let e = emission();
    let mut w = EmissionWriter::create(&out, &e, false).unwrap();
    for b in 1..=2 {
        w.write_block(&e.generate_block(b).unwrap()).unwrap();
    }
    w.finish().unwrap();
    let manifest = out.join("manifest.json");
    let (ok, text) = verify_with(&file, &["--manifest", manifest.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(text.contains("is the one published in") && text.contains("block 2"), "{text}");
    // A server's list of emissions, saved to a file.
    let list = serde_json::json!({"emissions": [{"emission": 4, "blocks": [{"block": 2, "root": good.root}]}]});
    let listed = dir.path().join("emissions.json");
    std::fs::write(&listed, list.to_string()).unwrap();
    let (ok, text) = verify_with(&file, &["--manifest", listed.to_str().unwrap()]);
    assert!(ok, "{text}");
    let (ok, text) = verify_with(&file, &["--root", &good.root]);
    assert!(ok, "{text}");
    // Without a published root: valid, with a note saying what was not compared.
    let (ok, text) = verify_file(&file);
    assert!(ok && text.contains("not compared with a published one"), "{text}");

    let refused = |name: &str, bad: &Record, args: &[&str], says: &str| {
        let (ok, text) = verify_with(&write(dir.path(), name, bad), args);
        assert!(!ok, "{name}: {text}");
        assert!(text.contains(says), "{name}: expected {says:?} in {text}");
    };
    let root_args = ["--root", good.root.as_str()];
    let mut bad = good.clone();
    bad.prizes_cents = engine::PrizeSchedule::new([300, 1000, 10_000, 9_000_000]);
    refused("prizes.json", &bad, &root_args, "the leaf's prizes");
    bad.leaf.prizes_cents = bad.prizes_cents;
    refused("leaf-prizes.json", &bad, &root_args, "does not lead from the ticket's leaf");
    let mut bad = good.clone();
    bad.position = 8;
    bad.leaf.position = 8;
    refused("position.json", &bad, &root_args, "position");
    let mut bad = good.clone();
    let node = bad.proof[1].clone();
    bad.proof[1] = format!("{}{}", &node[..10], if &node[10..11] == "0" { "1" } else { "0" }) + &node[11..];
    refused("proof.json", &bad, &root_args, "inclusion proof does not lead");
    let mut bad = good.clone();
    bad.root = "ab".repeat(32);
    refused("root.json", &bad, &["--manifest", manifest.to_str().unwrap()], "is not the root");
    // The record's own root, but another published one.
    refused("other-root.json", &good, &["--root", &"cd".repeat(32)], "is not the root");
}

#[test]
fn guarantee_6_a_finished_record_verifies_and_any_change_fails() {
    let dir = tempfile::tempdir().unwrap();
    let good = record();
    let (ok, text) = verify_file(&write(dir.path(), "good.json", &good));
    assert!(ok, "{text}");
    assert!(text.contains("VALID"), "{text}");

    let mut bad = good.clone();
    bad.draws[2].capone = if bad.draws[2].capone == Rank::Ace { Rank::Seven } else { Rank::Ace };
    let (ok, text) = verify_file(&write(dir.path(), "draw.json", &bad));
    assert!(!ok, "{text}");
    assert!(text.contains("MISMATCH") && text.contains("draw 2"), "{text}");

    let mut bad = good.clone();
    let mut s = bad.server_seed.clone().unwrap().into_bytes();
    s[10] = if s[10] == b'a' { b'b' } else { b'a' };
    bad.server_seed = Some(String::from_utf8(s).unwrap());
    let (ok, text) = verify_file(&write(dir.path(), "seed.json", &bad));
    assert!(!ok, "{text}");
    assert!(text.contains("commitment"), "{text}");

    let mut bad = good.clone();
    bad.result.as_mut().unwrap().prize_cents += 100;
    let (ok, text) = verify_file(&write(dir.path(), "result.json", &bad));
    assert!(!ok, "{text}");

    let mut bad = good.clone();
    bad.server_seed = None;
    let (ok, text) = verify_file(&write(dir.path(), "unfinished.json", &bad));
    assert!(!ok, "{text}");
    assert!(text.contains("not revealed"), "{text}");

    std::fs::write(dir.path().join("junk.json"), "{\"hello\": 1}").unwrap();
    let (ok, text) = verify_file(&dir.path().join("junk.json"));
    assert!(!ok);
    assert!(text.contains("not a ticket record"), "{text}");
}

/// Every single change to a draw, to the seed or to the result is caught:
/// each draw's every card replaced by every other value, each hex digit of
/// the seed replaced by every other digit, the result's tricks and prize
/// changed; and so is a change of the serial or the client seed (they key
/// every draw).
#[test]
fn guarantee_6_every_single_change_of_a_draw_the_seed_or_the_result_fails() {
    use record::verify;
    let good = record();
    assert!(verify(&good).is_valid());
    let mut checked = 0;
    for i in 0..good.draws.len() {
        for r in Rank::ALL {
            if r != good.draws[i].capone {
                let mut bad = good.clone();
                bad.draws[i].capone = r;
                assert!(!verify(&bad).is_valid(), "draw {i}: capone {r}");
                checked += 1;
            }
            if let Some(p) = good.draws[i].player.filter(|p| *p != r) {
                let mut bad = good.clone();
                bad.draws[i].player = Some(r);
                assert!(!verify(&bad).is_valid(), "draw {i}: player {r} instead of {p}");
                checked += 1;
            }
        }
        let mut bad = good.clone();
        bad.draws[i].n += 1;
        assert!(!verify(&bad).is_valid(), "draw {i}: n");
    }
    let seed = good.server_seed.clone().unwrap();
    for pos in 0..seed.len() {
        for c in "0123456789abcdef".chars().filter(|c| *c != seed.as_bytes()[pos] as char) {
            let mut s = seed.clone().into_bytes();
            s[pos] = c as u8;
            let mut bad = good.clone();
            bad.server_seed = Some(String::from_utf8(s).unwrap());
            assert!(!verify(&bad).is_valid(), "seed digit {pos} -> {c}");
            checked += 1;
        }
    }
    let r = good.result.unwrap();
    for tricks in (0..=8).filter(|t| *t != r.tricks) {
        let mut bad = good.clone();
        bad.result.as_mut().unwrap().tricks = tricks;
        assert!(!verify(&bad).is_valid(), "result tricks {tricks}");
    }
    for prize in [0, 1, r.prize_cents + 1, 1_000_000] {
        if prize != r.prize_cents {
            let mut bad = good.clone();
            bad.result.as_mut().unwrap().prize_cents = prize;
            assert!(!verify(&bad).is_valid(), "prize {prize}");
        }
    }
    let mut bad = good.clone();
    bad.draws.pop();
    assert!(!verify(&bad).is_valid(), "a draw left out");
    let mut bad = good.clone();
    bad.serial.push('0');
    assert!(!verify(&bad).is_valid(), "another serial");
    let mut bad = good.clone();
    bad.client_seed = Some("bob".into());
    assert!(!verify(&bad).is_valid(), "another client seed");
    assert!(checked > 64 * 15);
}
