//! `as-capone emit` and `as-capone verify-block` (in progress).
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The prize table (TOML).
    #[arg(long)]
    pub table: PathBuf,
    /// How many blocks to generate.
    #[arg(long)]
    pub blocks: u32,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Emission seed, 64 hex digits; from the OS CSPRNG when absent.
    #[arg(long)]
    pub seed: Option<String>,
}

#[derive(Args, Debug)]
pub struct VerifyBlockArgs {
    /// The emission folder (or one block's files) written by `emit`.
    pub dir: PathBuf,
}

pub fn run_emit(_args: EmitArgs) -> anyhow::Result<()> {
    anyhow::bail!("emit is not implemented yet")
}

pub fn run_verify_block(_args: VerifyBlockArgs) -> anyhow::Result<()> {
    anyhow::bail!("verify-block is not implemented yet")
}
