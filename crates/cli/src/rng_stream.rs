//! `as-capone rng-stream --source fair|sim [--seed HEX] [--bytes N]`: the raw
//! output of the game's two draw sources ([`lab::RngStream`]), as 32-bit
//! words on stdout, for outside test suites (`dieharder -a -g 200`).
//!
//! Without `--bytes` the stream runs until the reader closes the pipe. The
//! count of bytes written goes to stderr at the end, so a run can say how
//! much the test suite consumed.

use clap::Args;
use lab::{RNG_STREAM_CLIENT_SEED, RNG_STREAM_SERIAL, RngSource, RngStream};
use std::io::{ErrorKind, Write};

#[derive(Args, Debug)]
pub struct RngStreamArgs {
    /// Which draw source.
    #[arg(long, value_enum)]
    pub source: RngSource,
    /// fair: the 32-byte server seed in hex; sim: a u64 seed in hex.
    /// Default: a fixed seed (printed on stderr).
    #[arg(long)]
    pub seed: Option<String>,
    /// Stop after this many bytes (a multiple of 4); default: until stdout closes.
    #[arg(long)]
    pub bytes: Option<u64>,
}

pub fn run(args: RngStreamArgs) -> anyhow::Result<()> {
    if args.bytes.is_some_and(|b| b % 4 != 0) {
        anyhow::bail!("--bytes must be a multiple of 4 (whole 32-bit words)");
    }
    let mut stream = RngStream::new(args.source, args.seed.as_deref())?;
    eprintln!(
        "rng-stream: source {:?}, seed {}, client seed {RNG_STREAM_CLIENT_SEED:?}, serial {RNG_STREAM_SERIAL:?}",
        args.source,
        args.seed.as_deref().unwrap_or("(default)")
    );
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut written: u64 = 0;
    let mut chunk = [0u8; 32];
    let limit = args.bytes.unwrap_or(u64::MAX);
    let result = loop {
        if written >= limit {
            break out.flush();
        }
        stream.next_chunk(&mut chunk);
        let take = (limit - written).min(32) as usize;
        if let Err(e) = out.write_all(&chunk[..take]) {
            break Err(e);
        }
        written += take as u64;
    };
    eprintln!("rng-stream: {written} bytes written");
    match result {
        Ok(()) => Ok(()),
        // The reader (dieharder) closing the pipe ends an unbounded stream.
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}
