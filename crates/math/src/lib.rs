//! # as-capone-math: the game's mathematics, for auditors
//!
//! Exact odds as rational numbers (never floats), prize tables and their
//! payout figures, Monte Carlo simulation through the real engine, and the
//! statistics that compare the two. Math never sees a wallet: money here is
//! only the prizes a table promises.
//!
//! ## Layout
//! Every module is private and what other crates use is re-exported here,
//! except [`fraction`], a public namespace (see its doc).
//! - `odds.rs`: [`Odds`], the exact distribution of tricks per game and of a
//!   ticket's final outcome, by enumeration of As Capone's 8! orders.
//! - `table.rs`: [`PrizeTable`], the prize table of art. 3.1 in `docs/contract.md`'s
//!   TOML format, parsed into validated types.
//! - `payout.rs`: [`Payout`], exact expected payout, return to player, hit
//!   rate, variance and a block's risk for a table ([`block_distribution`],
//!   [`risk_of_distribution`]).
//! - `simulate.rs`: [`simulate()`], multi-threaded, reproducible Monte Carlo games.
//! - `stats.rs`: chi-square goodness of fit and its p-value ([`chi_square`],
//!   [`chi_square_p_value`]), and the certification report's tests.
//! - [`fraction`]: helpers to print exact fractions as `"p/q"`.
//!
//! ## Feature `bench`
//! Adds the simulation's paths that only the benchmarks and the profiling
//! example compare with the one [`simulate()`] runs (`run_chunk_single`,
//! `run_chunk_branchless`, `run_lanes`, `simulate_pairs`, `draws_only`); the
//! product never enables it.

pub mod fraction;
mod odds;
mod payout;
mod simulate;
mod stats;
mod table;

pub use odds::{FinalOutcome, Odds};
pub use payout::{
    BlockRisk, FFT_NOISE, LegalBand, Payout, block_distribution, block_distribution_fft, block_distribution_unpruned,
    risk_of_distribution,
};
pub use simulate::{CHUNK, SimConfig, SimCounts, run_chunk, run_chunk_apply, simulate};
#[cfg(feature = "bench")]
pub use simulate::{draws_only, run_chunk_branchless, run_chunk_single, run_lanes, simulate_pairs};
pub use stats::{
    bonferroni, chi_square, chi_square_p_value, count_interval, g_test, normal_quantile, normal_two_sided_p,
    pool_small_categories,
};
pub use table::{
    Deviation, Place, PrizeTable, REGULATION_BLOCK_SIZE, REGULATION_PRICE_CENTS, ScheduleRow, TableError,
    valid_game_code,
};
