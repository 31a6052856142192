//! The browser game (`web/`) in a real headless Chromium, driven from
//! `cargo test` through chromedriver's W3C WebDriver protocol.
//!
//! Every test starts the real server on port 0 with a fresh SQLite database
//! and the test-only fixed server seed (`ServerSeeds::InsecureFixedForTests`),
//! and a Chromium session of its own: started for it, or under nextest
//! one kept by its slot from an earlier test, cleared (pool.rs). With
//! the seed known and the serial of the first sale known, a test searches
//! client seeds with the engine (`FairStream` + `Game`) for a game with a
//! tie, an Extra duel, a prize..., buys, types that seed over the one the
//! page drew before the first card, and then clicks through the game,
//! checking each card the page shows against the engine's events.
//!
//! Chromium missing: the tests print a loud "skipped" and pass, unless
//! `AS_CAPONE_REQUIRE_BROWSER` is set (CI), where they fail.
//! Screenshots of the main screens go to `target/browser-artifacts/`.

/// The browser tests run four at a time unless told otherwise
/// (`--test-threads`, `RUST_TEST_THREADS`): each mostly waits for its
/// Chromium and its server, so four at once on this project's two cores
/// take two thirds of the time two take (docs/testing.md). libtest reads the
/// variable when the binary starts, so it is set before `main`, from the
/// ELF initializers (what the `ctor` crate does, in three lines).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static FOUR_AT_A_TIME: extern "C" fn() = {
    extern "C" fn four_at_a_time() {
        if std::env::var_os("RUST_TEST_THREADS").is_none() {
            // SAFETY: run before `main`, while this process has one thread.
            unsafe { std::env::set_var("RUST_TEST_THREADS", "4") };
        }
    }
    four_at_a_time
};
// The reference operator (crates/operator): the operator's side in operator_live.rs.
extern crate operator as reference;

mod harness;
mod pool;
mod webdriver;

mod a11y;
mod account;
mod demo;
mod desk;
mod desk_certify;
mod desk_charts;
mod desk_claims;
mod exclusion;
mod experience;
mod extras;
mod game;
mod limits;
mod mobile;
mod operator;
mod operator_live;
mod paper;
mod phone;
mod polish;
mod qr_scan;
mod recovery;
mod responsible;
mod retail;
mod rules;
mod seed;
mod shop_scan;
mod verify;
