//! What CI runs of the fuzz targets (docs/fuzzing.md), on the stable
//! toolchain and in seconds: (a) every committed input of
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` through the
//! target's harness, and (b) a few thousand pseudo-random inputs per target
//! from proptest, biased towards the shapes each harness reads.

use as_capone_fuzzing::TARGETS;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted.
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

fn replay(kind: &str, target: &str) -> usize {
    let run = TARGETS.iter().find(|(name, _)| *name == target).expect("a target").1;
    let files = inputs(kind, target);
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(
            outcome.is_ok(),
            "{target}: {} fails (replay it with cargo fuzz run {target} {})",
            f.display(),
            f.display()
        );
    }
    files.len()
}

fn corpus(target: &str) {
    let n = replay("corpus", target);
    assert!(n >= 10, "fuzz/corpus/{target}/ holds {n} seed inputs: the seed corpus is committed");
    replay("regressions", target);
}

#[test]
fn corpus_engine_actions() {
    corpus("engine_actions");
}
#[test]
fn corpus_prize_table() {
    corpus("prize_table");
}
#[test]
fn corpus_record_verify() {
    corpus("record_verify");
}
#[test]
fn corpus_codes() {
    corpus("codes");
}
#[test]
fn corpus_http_bodies() {
    corpus("http_bodies");
}

/// Runs `target` on `cases` inputs drawn from `strategy`, with a fixed seed
/// so that a CI failure reproduces.
fn random<S: Strategy<Value = Vec<u8>>>(target: fn(&[u8]), cases: u32, strategy: S) {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&strategy, |data| {
            target(&data);
            Ok(())
        })
        .unwrap();
}

/// Some committed corpus inputs with random bytes spliced in: the shapes
/// the harness reads, slightly wrong.
fn near_corpus(target: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = inputs("corpus", target).iter().map(|f| std::fs::read(f).unwrap()).collect();
    let seeds = if seeds.is_empty() { vec![Vec::new()] } else { seeds };
    (0..seeds.len(), any::<usize>(), proptest::collection::vec(any::<u8>(), 0..8), 0usize..4).prop_map(
        move |(i, at, bytes, cut)| {
            let mut s = seeds[i].clone();
            let at = if s.is_empty() { 0 } else { at % s.len() };
            let end = (at + cut).min(s.len());
            s.splice(at..end, bytes);
            s
        },
    )
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

#[test]
fn random_engine_actions() {
    random(as_capone_fuzzing::engine_actions, 3000, bytes(200));
    random(as_capone_fuzzing::engine_actions, 1000, near_corpus("engine_actions"));
}

#[test]
fn random_prize_table() {
    random(as_capone_fuzzing::prize_table, 2000, near_corpus("prize_table"));
    random(as_capone_fuzzing::prize_table, 1000, bytes(64));
}

#[test]
fn random_record_verify() {
    random(as_capone_fuzzing::record_verify, 2000, bytes(40));
    random(as_capone_fuzzing::record_verify, 500, near_corpus("record_verify"));
}

#[test]
fn random_codes() {
    random(as_capone_fuzzing::codes, 3000, bytes(32));
    random(as_capone_fuzzing::codes, 2000, near_corpus("codes"));
}

#[test]
fn random_http_bodies() {
    random(as_capone_fuzzing::http_bodies, 300, near_corpus("http_bodies"));
    random(as_capone_fuzzing::http_bodies, 200, bytes(48));
}
