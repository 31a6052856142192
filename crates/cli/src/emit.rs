//! `as-capone emit` and `as-capone verify-block`: thin commands over the
//! `emission` crate (see its `EmissionWriter` for what lands in the folder).
//!
//! `emit` makes one block at a time, writes it and drops it before the next,
//! so memory stays that of one block whatever `--blocks` is.

use anyhow::{Context, anyhow, bail};
use clap::Args;
use emission::{Emission, EmissionSeed, EmissionWriter, MANIFEST_FILE, MAX_BLOCK, VerifyOptions, write_secret};
use indicatif::{ProgressBar, ProgressStyle};
use math::PrizeTable;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The prize table (TOML, or JSON when the name ends in .json).
    #[arg(long)]
    pub table: PathBuf,
    /// How many blocks to generate (numbered from 1).
    #[arg(long)]
    pub blocks: u32,
    /// Output folder; must be new or empty.
    #[arg(long)]
    pub out: PathBuf,
    /// Emission seed, 64 hex digits; from the OS CSPRNG when absent (then
    /// written to OUT/secret.json).
    #[arg(long)]
    pub seed: Option<String>,
    /// Emission number (1 to 999), printed in every serial.
    #[arg(long, default_value_t = 1)]
    pub emission: u32,
    /// Also render the first K tickets as SVG pages in OUT/print/.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub print: u32,
    /// Where the tickets' QR codes point: BASE_URL/play?code=PLAYCODE.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    /// Add each ticket's Merkle proof to the block files (about 1.3 kB per ticket).
    #[arg(long)]
    pub proofs: bool,
}

#[derive(Args, Debug)]
pub struct VerifyBlockArgs {
    /// The emission folder written by `emit`, or one of its block-NNNN.csv files.
    pub dir: PathBuf,
    /// Only this block (from 1).
    #[arg(long)]
    pub block: Option<u32>,
    /// The emission seed (64 hex digits), to regenerate the blocks and compare
    /// them byte for byte; DIR/secret.json is used when present.
    #[arg(long)]
    pub seed: Option<String>,
}

/// A progress bar on a terminal, nothing otherwise (logs and pipes stay clean).
fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} {{elapsed}}");
    bar.set_style(ProgressStyle::with_template(&template).expect("a valid template"));
    bar
}

pub fn run_emit(args: EmitArgs) -> anyhow::Result<()> {
    let table = PrizeTable::load(&args.table).map_err(|e| anyhow!("{}: {e}", args.table.display()))?;
    if !(1..=MAX_BLOCK).contains(&args.blocks) {
        bail!("--blocks must be 1 to {MAX_BLOCK}, found {}", args.blocks);
    }
    let (seed, from_os) = match &args.seed {
        Some(hex) => (EmissionSeed::parse(hex).context("--seed")?, false),
        None => (EmissionSeed::from_os_rng().context("cannot draw a seed from the OS")?, true),
    };
    let emission = Emission::new(args.emission, table, seed)?;
    let mut writer = EmissionWriter::create(&args.out, &emission, args.proofs)?;
    // Once every argument is accepted, so that a refused run stays one error line.
    crate::odds::warn_if_not_regulation(&args.table, emission.table());
    if from_os {
        let path = write_secret(&args.out, &emission)?;
        eprintln!(
            "as-capone: the seed was drawn from the OS and saved in {}: keep that file secret, apart from the public manifest",
            path.display()
        );
    }
    let print_dir = args.out.join("print");
    if args.print > 0 {
        std::fs::create_dir(&print_dir).with_context(|| format!("cannot create {}", print_dir.display()))?;
    }

    let bar = progress(u64::from(args.blocks), "blocks");
    let mut printed = 0u32;
    for index in 1..=args.blocks {
        let block = emission.generate_block(index)?;
        let entry = writer.write_block(&block)?;
        let line = format!("block {index}: {} tickets, merkle root {}", entry.tickets, entry.merkle_root);
        bar.suspend(|| println!("{line}"));
        for ticket in block.tickets.iter().take((args.print - printed) as usize) {
            printed += 1;
            let path = print_dir.join(format!("ticket-{printed:04}.svg"));
            std::fs::write(&path, emission::ticket_svg(emission.table(), ticket, &args.base_url))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        bar.inc(1);
        // `block` is dropped here, before the next one is made.
    }
    bar.finish_and_clear();
    let manifest = writer.finish()?;
    println!(
        "wrote {} block(s) of {} tickets of emission {} ({}) to {}: manifest.json is public, the block files hold secret play codes{}",
        manifest.blocks.len(),
        manifest.table.block_size,
        manifest.emission,
        manifest.code,
        args.out.display(),
        if printed > 0 { format!("; {printed} ticket(s) drawn in print/") } else { String::new() }
    );
    Ok(())
}

/// `DIR`, or the folder and block number of `DIR/block-0003.csv`.
fn folder_and_block(path: &Path) -> (PathBuf, Option<u32>) {
    if path.is_file() {
        let block = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("block-")?.strip_suffix(".csv")?.parse().ok());
        let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        return (dir, block);
    }
    (path.to_path_buf(), None)
}

pub fn run_verify_block(args: VerifyBlockArgs) -> anyhow::Result<()> {
    let (dir, file_block) = folder_and_block(&args.dir);
    if args.dir.is_file() && file_block.is_none() {
        bail!("{} is not a block-NNNN.csv file nor an emission folder", args.dir.display());
    }
    let seed = args.seed.as_deref().map(EmissionSeed::parse).transpose().context("--seed")?;
    let opts = VerifyOptions { seed, block: args.block.or(file_block) };
    let manifest = emission::read_manifest(&dir).map_err(|e| anyhow!("{e}"))?;
    let bar = progress(if opts.block.is_some() { 1 } else { manifest.blocks.len() as u64 }, "blocks");
    let report = emission::verify_dir(&dir, &opts, &mut |_| bar.inc(1)).map_err(|e| anyhow!("{e}"))?;
    bar.finish_and_clear();
    println!(
        "ok: {} block(s), {} tickets: counts per row, serials, play codes, {}Merkle roots and file hashes match {}{}",
        report.blocks.len(),
        report.tickets,
        if report.proofs > 0 { "proofs, " } else { "" },
        dir.join(MANIFEST_FILE).display(),
        if report.regenerated {
            "; regenerated from the seed, identical byte for byte"
        } else {
            " (no seed: public checks only)"
        }
    );
    Ok(())
}
