//! `as-capone verify FILE [--manifest FILE | --root HEX]`: checks a ticket's
//! public record, as saved from `GET /api/tickets/{id}/record` (docs/contract.md,
//! "Fairness", guarantee 6): its leaf and inclusion proof up to its block's
//! root, that root against the published one when given, then the seed,
//! every draw and the result. The checks are `record::verify_against`,
//! shared with the server's tests.
//!
//! `--manifest` takes either the `manifest.json` of `as-capone emit` or the
//! answer of a server's `GET /api/emissions` (saved to a file): the root of
//! the record's emission and block is looked up in it.

use anyhow::Context;
use clap::Args;
use record::{Published, Record, verify_against};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The record (JSON); `-` reads standard input.
    pub file: PathBuf,
    /// The published emission: `emit`'s manifest.json, or a saved `GET /api/emissions`.
    #[arg(long, conflicts_with = "root")]
    pub manifest: Option<PathBuf>,
    /// The block's published Merkle root (64 hex digits).
    #[arg(long)]
    pub root: Option<String>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

fn read(path: &Path) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")
    } else {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    }
}

fn hash(hex_root: &str, what: &str) -> anyhow::Result<[u8; 32]> {
    let mut root = [0u8; 32];
    hex::decode_to_slice(hex_root.trim(), &mut root).map_err(|_| anyhow::anyhow!("{what} is not 64 hex digits"))?;
    Ok(root)
}

/// The root of block `block` of emission `emission` in a manifest or an
/// emissions list.
pub fn root_in(text: &str, emission: u32, block: u32) -> anyhow::Result<[u8; 32]> {
    let doc: serde_json::Value = serde_json::from_str(text).context("the manifest is not JSON")?;
    // `as-capone emit`'s manifest.json: one emission.
    if let Some(blocks) = doc.get("blocks").and_then(|b| b.as_array()) {
        let number = doc["emission"].as_u64().context("the manifest has no emission number")?;
        anyhow::ensure!(number == u64::from(emission), "the manifest is emission {number}, the record's is {emission}");
        let entry = blocks
            .iter()
            .find(|b| b["index"].as_u64() == Some(u64::from(block)))
            .with_context(|| format!("the manifest has no block {block}"))?;
        return hash(entry["merkle_root"].as_str().unwrap_or_default(), "the manifest's merkle_root");
    }
    // A server's `GET /api/emissions`.
    let list = doc["emissions"].as_array().context("neither an emit manifest.json nor a GET /api/emissions answer")?;
    let e = list
        .iter()
        .find(|e| e["emission"].as_u64() == Some(u64::from(emission)))
        .with_context(|| format!("emission {emission} is not in the list"))?;
    let b = e["blocks"]
        .as_array()
        .and_then(|bs| bs.iter().find(|b| b["block"].as_u64() == Some(u64::from(block))))
        .with_context(|| format!("block {block} of emission {emission} is not published in the list"))?;
    hash(b["root"].as_str().unwrap_or_default(), "the list's root")
}

pub fn run(args: VerifyArgs) -> anyhow::Result<()> {
    let text = read(&args.file)?;
    let record: Record = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a ticket record (GET /api/tickets/ID/record)", args.file.display()))?;
    let published = match (&args.manifest, &args.root) {
        (Some(path), _) => Some(Published {
            root: root_in(&read(path)?, record.emission, record.block)
                .with_context(|| format!("{}", path.display()))?,
            source: format!("{} (emission {}, block {})", path.display(), record.emission, record.block),
        }),
        (None, Some(root)) => Some(Published { root: hash(root, "--root")?, source: "--root".into() }),
        (None, None) => None,
    };
    let verdict = verify_against(&record, published.as_ref());
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "serial": verdict.serial,
                "valid": verdict.is_valid(),
                "root": record.root,
                "root_published": published.as_ref().map(|p| p.source.clone()),
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
