//! `as-capone emit` and `as-capone verify-block`, run as the real binary on
//! folders under Cargo's temporary directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

const SMALL: &str = include_str!("../../../math/tests/small-table.toml");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_as-capone"))
}

/// A fresh folder for one test, holding the small table as `table.toml`.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-emit").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("table.toml"), SMALL).unwrap();
    dir
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the binary runs")
}

fn emit(work: &Path, out: &str, extra: &[&str]) -> Output {
    run(bin()
        .args(["emit", "--table"])
        .arg(work.join("table.toml"))
        .args(["--blocks", "2", "--out"])
        .arg(work.join(out))
        .args(extra))
}

fn verify(path: &Path, extra: &[&str]) -> Output {
    run(bin().arg("verify-block").arg(path).args(extra))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn assert_ok(o: &Output) {
    assert!(o.status.success(), "failed: {}{}", text(&o.stdout), text(&o.stderr));
}

/// The single error line, for a run that must fail.
#[track_caller]
fn error_line(o: &Output) -> String {
    assert!(!o.status.success(), "succeeded but should fail: {}", text(&o.stdout));
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one clear line: {err}");
    assert!(lines[0].starts_with("as-capone: error: "), "{err}");
    lines[0].to_string()
}

/// Every file under `root`, by path relative to it, with its bytes.
fn all_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn emit_then_verify_block_succeeds_and_the_same_seed_gives_the_same_bytes() {
    let w = workdir("roundtrip");
    let args = ["--seed", SEED, "--print", "3", "--base-url", "https://jeu.example/"];
    let o = emit(&w, "a", &args);
    assert_ok(&o);
    // The small table's 10-ticket blocks are not art. 2's: said on stderr, and the emission is made.
    assert_eq!(
        text(&o.stderr).trim_end(),
        format!(
            "WARNING: prize table {} is not a regulation table: a block holds 10 tickets, not the 300 000 that art. 2 sets",
            w.join("table.toml").display()
        )
    );
    assert_ok(&emit(&w, "b", &args));
    let a = all_files(&w.join("a"));
    let names: Vec<String> = a.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "block-0001.csv",
            "block-0002.csv",
            "manifest.json",
            "print/ticket-0001.svg",
            "print/ticket-0002.svg",
            "print/ticket-0003.svg"
        ]
    );
    assert_eq!(a, all_files(&w.join("b")), "same seed, same bytes");
    let svg = text(&std::fs::read(w.join("a/print/ticket-0001.svg")).unwrap());
    assert!(svg.contains("https://jeu.example/play?code="), "{svg}");

    let csv = text(&std::fs::read(w.join("a/block-0001.csv")).unwrap());
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("position,serial,play_code,row,prize_5,prize_6,prize_7,prize_8,commitment"));
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&first[..2], ["1", "ASC-001-00001-000001-10"], "golden serial");
    assert_eq!(csv.lines().count(), 11);

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("a/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["code"], "ASC");
    assert_eq!(manifest["blocks"][0]["counts"], serde_json::json!([7, 3]));
    // Golden: crates/emission/tests/golden.py computes it independently (small table, seed 00..1f, block 1).
    assert_eq!(
        manifest["blocks"][0]["merkle_root"],
        "c445866a2f046f8078a66cec82d4e2f65e12514097734c4ac1c33c056c8a9614"
    );
    assert_eq!(manifest["table"]["schedule"][1]["prizes_cents"]["8"], 2_500_000);

    let o = verify(&w.join("a"), &[]);
    assert_ok(&o);
    assert!(text(&o.stdout).starts_with("ok: 2 block(s), 20 tickets"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("public checks only"));
    let o = verify(&w.join("a"), &["--seed", SEED]);
    assert_ok(&o);
    assert!(text(&o.stdout).contains("identical byte for byte"));
    // One block, named by its file.
    let o = verify(&w.join("a/block-0002.csv"), &[]);
    assert_ok(&o);
    assert!(text(&o.stdout).starts_with("ok: 1 block(s), 10 tickets"));
}

#[test]
fn without_a_seed_the_secret_is_saved_and_regeneration_is_checked() {
    let w = workdir("os-seed");
    let o = emit(&w, "out", &["--proofs"]);
    assert_ok(&o);
    assert!(text(&o.stderr).contains("secret.json"), "the operator is told where the seed is");
    let secret: serde_json::Value = serde_json::from_slice(&std::fs::read(w.join("out/secret.json")).unwrap()).unwrap();
    assert_eq!(secret["seed"].as_str().unwrap().len(), 64);
    let manifest = text(&std::fs::read(w.join("out/manifest.json")).unwrap());
    assert!(!manifest.contains(secret["seed"].as_str().unwrap()), "the seed stays out of the public manifest");
    let o = verify(&w.join("out"), &[]);
    assert_ok(&o);
    assert!(text(&o.stdout).contains("proofs, Merkle roots"));
    assert!(text(&o.stdout).contains("identical byte for byte"));
    // A second emission from the OS differs.
    assert_ok(&emit(&w, "again", &[]));
    assert_ne!(
        std::fs::read(w.join("out/block-0001.csv")).unwrap(),
        std::fs::read(w.join("again/block-0001.csv")).unwrap()
    );
}

/// Sets byte `at` of `file` to `byte`, runs verify-block on `out`, which
/// must fail, and puts the file back; returns the error line.
fn tampered(out: &Path, file: &Path, at: usize, byte: u8) -> String {
    let original = std::fs::read(file).unwrap();
    let mut changed = original.clone();
    changed[at] = byte;
    std::fs::write(file, &changed).unwrap();
    let line = error_line(&verify(out, &[]));
    std::fs::write(file, &original).unwrap();
    line
}

#[test]
fn a_flipped_byte_in_a_block_file_or_the_manifest_fails_loudly() {
    let w = workdir("tamper");
    assert_ok(&emit(&w, "out", &["--seed", SEED]));
    let out = w.join("out");
    let csv = out.join("block-0002.csv");
    let original = std::fs::read(&csv).unwrap();

    // The last digit of line 3's prize for 8 tricks (before its commitment) changed: named with the
    // block, file and line.
    let end_of_line_3 = original.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(2).unwrap().0;
    let digit = end_of_line_3 - 66;
    assert_eq!(original[digit + 1], b',');
    let line = tampered(&out, &csv, digit, if original[digit] == b'0' { b'1' } else { b'0' });
    assert!(line.starts_with("as-capone: error: block 2 (block-0002.csv line 3): prizes "), "{line}");
    // Every seventh byte flipped in turn: never accepted.
    for i in (0..original.len()).step_by(7) {
        let line = tampered(&out, &csv, i, original[i] ^ 0x01);
        assert!(line.contains("block 2 (block-0002.csv"), "byte {i}: {line}");
    }
    assert_ok(&verify(&out, &[]));

    let manifest = out.join("manifest.json");
    let original = std::fs::read(&manifest).unwrap();
    let root_at = text(&original).find("\"merkle_root\": \"").unwrap() + 16;
    let line = tampered(&out, &manifest, root_at, if original[root_at] == b'a' { b'b' } else { b'a' });
    assert!(line.contains("block 1 (block-0001.csv): merkle root of the tickets is"), "{line}");
    for i in (0..original.len()).step_by(13) {
        tampered(&out, &manifest, i, original[i] ^ 0x01);
    }
    assert_ok(&verify(&out, &[]));

    // A wrong seed: the regenerated blocks differ.
    let wrong = format!("f{}", &SEED[1..]);
    let line = error_line(&verify(&out, &["--seed", &wrong]));
    assert!(line.contains("the seed gives merkle root"), "{line}");
}

#[test]
fn bad_input_gets_one_clear_line_and_writes_nothing() {
    let w = workdir("refusals");
    std::fs::write(w.join("bad.toml"), SMALL.replace("5 = 600", "5 = 6.5")).unwrap();
    let o =
        run(bin().args(["emit", "--blocks", "1", "--table"]).arg(w.join("bad.toml")).arg("--out").arg(w.join("o1")));
    let line = error_line(&o);
    assert!(
        line.ends_with(
            "schedule row 2 (line 11): the prize for 5 tricks must be a whole number of cents, zero or more, found 6.5"
        ),
        "{line}"
    );
    assert!(!w.join("o1").exists());

    let line = error_line(&emit(&w, "o2", &["--seed", "abc"]));
    assert!(line.contains("--seed") && line.contains("64 hex digits"), "{line}");
    let line = error_line(&emit(&w, "o3", &["--emission", "1000"]));
    assert!(line.contains("emission number 1000"), "{line}");
    let line = error_line(&run(bin()
        .args(["emit", "--blocks", "0", "--table"])
        .arg(w.join("table.toml"))
        .arg("--out")
        .arg(w.join("o4"))));
    assert!(line.contains("--blocks must be 1 to 99999"), "{line}");

    assert_ok(&emit(&w, "o5", &["--seed", SEED]));
    let line = error_line(&emit(&w, "o5", &["--seed", SEED]));
    assert!(line.contains("is not empty"), "{line}");

    let line = error_line(&verify(&w.join("nowhere"), &[]));
    assert!(line.contains("manifest.json") && line.contains("cannot read"), "{line}");
    let line = error_line(&verify(&w.join("o5"), &["--block", "3"]));
    assert!(line.contains("has no block 3"), "{line}");
}
