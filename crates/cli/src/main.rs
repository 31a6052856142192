//! `as-capone`: one binary for players, operators and auditors. Thin clap
//! commands over the crates `engine`, `math`, `emission`, `server` and
//! `lab` (the reliability runs, the load generator and the reports).
//!
//! Layout: one module per command (`odds`, `simulate`, `play`, `emit`, ...);
//! the commands of `lab` are called straight from here.

mod backup;
mod emit;
mod keys;
mod odds;
mod play;
mod rng_stream;
mod serve;
mod simulate;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc rather than glibc's allocator: the server allocates and frees
/// small buffers across threads (a request's task builds what the SQLite
/// writer frees, and the other way round), where glibc's malloc and free
/// were about a tenth of the server's CPU (BENCHMARKS.md, on the
/// allocator). It changes no output; the golden tests pin every output.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--version`: the crate's version and the schema version (its highest
/// migration's number), both from the server crate (docs/upgrading.md).
static VERSION: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{} (schema {})", server::VERSION, server::schema_version()));

#[derive(Parser, Debug)]
#[command(name = "as-capone", version = VERSION.as_str(), about = "As Capone: game server and toolkit for the card-duel instant game")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per run: the size of the largest variant (serve's flags) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Exact odds of the game; with a prize table, its payout figures.
    Odds(odds::OddsArgs),
    /// Monte Carlo tickets through the real engine, checked against the exact odds.
    Simulate(simulate::SimulateArgs),
    /// One ticket in the terminal.
    Play(play::PlayArgs),
    /// Generate ticket blocks and commit them (Merkle roots in manifest.json).
    Emit(emit::EmitArgs),
    /// Re-check an emitted block against its commitment.
    VerifyBlock(emit::VerifyBlockArgs),
    /// The game server and its web page.
    Serve(serve::ServeArgs),
    /// Check a finished ticket's public record (docs/contract.md, "Fairness").
    Verify(verify::VerifyArgs),
    /// The operator's figures of every emission, from the database.
    Report(lab::ReportArgs),
    /// Load generator: players playing real games over HTTP.
    Loadtest(lab::LoadtestArgs),
    /// The raw 32-bit output of a draw source, for outside test suites (dieharder).
    RngStream(rng_stream::RngStreamArgs),
    /// The server key ring: a new key, the ring as the database knows it, the current key (docs/keys.md).
    Keys(keys::KeysArgs),
    /// Operator mode: our rounds of a period against the operator's wallet
    /// transactions; exit 0 clean, 1 on any mismatch, 2 when either side cannot be read.
    Reconcile(lab::ReconcileArgs),
    /// The reference operator (crate `as-capone-operator`) as the wallet chaos runs it.
    #[command(hide = true)]
    ReferenceOperator(lab::OperatorChildArgs),
    /// Fault and load evidence: SIGKILLs under load, a soak, a hostile corpus (RELIABILITY.md).
    Reliability(lab::ReliabilityArgs),
    /// An online backup of a running server's database (docs/backups.md).
    Backup(backup::BackupArgs),
    /// A backup restored into a new database, then checked (docs/backups.md).
    Restore(backup::RestoreArgs),
}

fn main() -> ExitCode {
    // The certification reports this process writes (`report --table`, the
    // desk's download under `serve`) name the commit it was built from.
    lab::certify::BuildInfo::register(lab::build_info());
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Reconcile(a) => {
            return match lab::run_reconcile(a) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("as-capone: error: {e:#}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Odds(a) => odds::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Play(a) => play::run(a),
        Command::Emit(a) => emit::run_emit(a),
        Command::VerifyBlock(a) => emit::run_verify_block(a),
        Command::Serve(a) => serve::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Report(a) => lab::run_report(a),
        Command::Keys(a) => keys::run(a),
        Command::Loadtest(a) => lab::run_loadtest(a),
        Command::RngStream(a) => rng_stream::run(a),
        Command::Reliability(a) => lab::run_reliability(a),
        Command::ReferenceOperator(a) => lab::reference_operator(a),
        Command::Backup(a) => backup::run_backup(a),
        Command::Restore(a) => backup::run_restore(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("as-capone: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
