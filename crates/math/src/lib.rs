//! # as-capone-math: the game's mathematics, for auditors
//!
//! Exact odds as rational numbers (never floats), prize tables and their
//! payout figures, Monte Carlo simulation through the real engine, and the
//! statistics that compare the two. Math never sees a wallet: money here is
//! only the prizes a table promises.
//!
//! ## Layout
//! - [`odds`]: [`Odds`], the exact distribution of tricks per game and of a
//!   ticket's final outcome, by enumeration of As Capone's 8! orders.
//! - [`table`]: [`PrizeTable`], the prize table of art. 3.1 in `docs/contract.md`'s
//!   TOML format, parsed into validated types.
//! - [`payout`]: [`Payout`], exact expected payout, return to player, hit
//!   rate, variance and a block's risk for a table.
//! - [`simulate`](mod@simulate): [`simulate()`], multi-threaded, reproducible Monte Carlo games.
//! - [`stats`]: chi-square goodness of fit and its p-value.
//! - [`fraction`]: helpers to print exact fractions as `"p/q"`.
//!
//! ## Feature `bench`
//! Adds the simulation's paths that only the benchmarks and the profiling
//! example compare with the one [`simulate()`] runs (`simulate::run_chunk_single`,
//! `run_chunk_branchless`, `run_lanes`, `simulate_pairs`, `draws_only`); the
//! product never enables it.

pub mod fraction;
pub mod odds;
pub mod payout;
pub mod simulate;
pub mod stats;
pub mod table;

pub use odds::{FinalOutcome, Odds};
pub use payout::Payout;
pub use simulate::{SimConfig, SimCounts, simulate};
pub use table::{PrizeTable, ScheduleRow, TableError};
