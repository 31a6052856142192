//! `as-capone verify FILE` on records (guarantee 6): a record of a finished
//! game verifies; a changed draw, seed or result makes it fail with a
//! non-zero exit. Records come from `server::record::play_offline` (the
//! server's own record builder and engine) and from a game played over
//! HTTP against the real server.

use engine::{PrizeSchedule, Rank};
use server::record::{Record, play_offline};
use std::path::Path;
use std::process::Command;

fn verify_file(path: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone")).arg("verify").arg(path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn write(dir: &Path, name: &str, r: &Record) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(r).unwrap()).unwrap();
    p
}

fn record() -> Record {
    let mut seed = [0u8; 32];
    for (i, b) in seed.iter_mut().enumerate() {
        *b = (i * 7) as u8;
    }
    play_offline(seed, "alice", "ASC-001-00001-000042-81", PrizeSchedule::new([300, 1000, 10_000, 1_000_000]), |g| {
        g.hand().lowest().unwrap()
    })
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
    use server::record::verify;
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
    bad.client_seed = "bob".into();
    assert!(!verify(&bad).is_valid(), "another client seed");
    assert!(checked > 64 * 15);
}
