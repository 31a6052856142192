//! `as-capone verify FILE`: checks a ticket's public record, as saved from
//! `GET /api/tickets/{id}/record` (CONTRACT.md Fairness, guarantee 6). The
//! checks are `server::record::verify`, shared with the server's tests.

use anyhow::Context;
use clap::Args;
use server::record::{Record, verify};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The record (JSON); `-` reads standard input.
    pub file: PathBuf,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<()> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?
    };
    let record: Record = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a ticket record (GET /api/tickets/ID/record)", args.file.display()))?;
    let verdict = verify(&record);
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "serial": verdict.serial,
                "valid": verdict.is_valid(),
                "passed": verdict.passed,
                "problems": verdict.problems,
            })
        );
    } else {
        println!("{verdict}");
    }
    anyhow::ensure!(verdict.is_valid(), "the record of ticket {} does not verify", record.serial);
    Ok(())
}
