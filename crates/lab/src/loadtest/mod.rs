//! `as-capone loadtest`: our own load generator. Registers players, buys
//! tickets and plays real games to the end over HTTP, then reports actions
//! per second and latency percentiles. It stops by itself: after `--games`
//! games or `--max-seconds`, whichever comes first. Point it only at a
//! server of yours (a loopback address here).
//!
//! It shares the machine with the server it measures, so it is kept cheap:
//! each player holds one HTTP/1.1 keep-alive connection of its own
//! (`hyper`'s connection API: no pool, no URL parsing per request) and
//! reads from each answer only the fields it plays with, borrowed from the
//! answer's bytes (BENCHMARKS.md, "Game server": its CPU per action).
//!
//! Besides the whole run it reports a **steady window**: from the moment
//! every player has registered until the game budget runs out. Before it,
//! players register (not game requests); after it, the players still in a
//! game finish it while the others have stopped, so the load falls. The
//! window's rate is the one the server really carried, and its latencies
//! are those of requests sent at that load (with many paced players the
//! whole run's rate understates it and its percentiles are diluted by the
//! falling tail: BENCHMARKS.md).
//!
//! With `--wallet operator` (`loadtest/operator_mode.rs`) the players' money is a
//! reference operator's, started in this process: each player is launched
//! (a signed launch, then `POST /api/launch`) instead of registered, every
//! wallet call is delayed a fixed time, and the report adds the wallet's
//! own latency, each purchase split around its debit, and the operator's
//! ledger checked against the purchases and prizes the players saw.
//!
//! `run.rs` goes from the arguments (`args.rs`) to the report; each
//! `player.rs` plays over its own connection (`conn.rs`), paced
//! (`pace.rs`), counting into its tally (`tally.rs`), with what the run's
//! players share in `shared.rs`; `latency.rs` turns latencies into
//! percentiles; `operator_mode.rs`, `shadow.rs` and `wallet_report.rs` are
//! the wallet's side.

mod args;
mod conn;
mod latency;
mod operator_mode;
mod pace;
mod player;
mod run;
mod shadow;
mod shared;
mod tally;
mod wallet_report;

pub use args::LoadtestArgs;
pub use run::run;
