//! `as-capone`: one binary for players, operators and auditors. Thin clap
//! commands over the crates `engine`, `math`, `emission` (and `server`).

mod emit;
mod loadtest;
mod serve;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "as-capone", version, about = "As Capone: game server and toolkit for the card-duel instant game")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate ticket blocks and commit them (Merkle roots in manifest.json).
    Emit(emit::EmitArgs),
    /// Re-check an emitted block against its commitment.
    VerifyBlock(emit::VerifyBlockArgs),
    /// The game server and its web page.
    Serve(serve::ServeArgs),
    /// Check a finished ticket's public record (CONTRACT.md Fairness).
    Verify(verify::VerifyArgs),
    /// Load generator: players playing real games over HTTP.
    Loadtest(loadtest::LoadtestArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Emit(a) => emit::run_emit(a),
        Command::VerifyBlock(a) => emit::run_verify_block(a),
        Command::Serve(a) => serve::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Loadtest(a) => loadtest::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("as-capone: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
