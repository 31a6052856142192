//! `as-capone-operator`: the reference operator as a program
//! (crates/operator/README.md).

use as_capone_operator::{ChaosConfig, DropMode, Options, PlayerSeed, start};
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use wallet::Keys;

/// The reference operator: a player wallet speaking the operator's side of
/// As Capone's wallet protocol, with a durable ledger and a chaos switch.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Where to listen (port 0: any; the address is printed).
    #[arg(long, default_value = "127.0.0.1:9300")]
    listen: SocketAddr,
    /// The SQLite ledger (created if missing).
    #[arg(long, default_value = "operator.db")]
    database: PathBuf,
    /// The keys shared with the game server, `ID:HEX,...` (at least 64 hex digits each); the first signs.
    #[arg(long, env = "AS_CAPONE_OPERATOR_KEYS", hide_env_values = true)]
    keys: String,
    /// The bearer token of /admin/* and of the demo page (`/?token=...`).
    #[arg(long, env = "AS_CAPONE_OPERATOR_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// The game server's base URL, for the demo page's launches.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    game_url: String,
    /// A player created at start when missing, `REF:CENTS` (repeatable).
    #[arg(long = "player", value_parser = parse_player)]
    players: Vec<PlayerSeed>,
    /// Chaos: the delay's range in ms, `MIN-MAX`.
    #[arg(long, value_parser = parse_range, default_value = "0-0")]
    chaos_delay_ms: [u64; 2],
    /// Chaos: probability of a delay.
    #[arg(long, default_value_t = 0.0)]
    chaos_delay_rate: f64,
    /// Chaos: probability of a 500/503 answer without applying.
    #[arg(long, default_value_t = 0.0)]
    chaos_error_rate: f64,
    /// Chaos: probability of an applied call whose answer is lost.
    #[arg(long, default_value_t = 0.0)]
    chaos_drop_rate: f64,
    /// Chaos: how an answer is lost.
    #[arg(long, value_enum, default_value_t = DropMode::Close)]
    chaos_drop_mode: DropMode,
    /// Chaos: how long a hung connection is held, in ms.
    #[arg(long, default_value_t = 10_000)]
    chaos_hang_ms: u64,
    /// Chaos: probability of a call processed twice at once.
    #[arg(long, default_value_t = 0.0)]
    chaos_duplicate_rate: f64,
    /// Chaos: offset of the clock that checks requests and signs answers, in ms.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    chaos_skew_ms: i64,
    /// Chaos: the seed of the random stream (reproducible runs).
    #[arg(long)]
    chaos_seed: Option<u64>,
}

fn parse_player(s: &str) -> Result<PlayerSeed, String> {
    let (player, cents) = s.rsplit_once(':').ok_or("a player is REF:CENTS")?;
    let balance_cents = cents.parse::<i64>().ok().filter(|c| *c >= 0).ok_or("CENTS is a whole number >= 0")?;
    Ok(PlayerSeed { player: player.to_string(), balance_cents })
}

fn parse_range(s: &str) -> Result<[u64; 2], String> {
    let (lo, hi) = s.split_once('-').unwrap_or((s, s));
    let lo = lo.trim().parse().map_err(|_| "MIN-MAX in ms")?;
    let hi = hi.trim().parse().map_err(|_| "MIN-MAX in ms")?;
    Ok([lo, hi])
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let keys = Keys::parse(&cli.keys).map_err(anyhow::Error::msg)?;
    let chaos = ChaosConfig {
        delay_ms: cli.chaos_delay_ms,
        delay_rate: cli.chaos_delay_rate,
        error_rate: cli.chaos_error_rate,
        drop_rate: cli.chaos_drop_rate,
        drop_mode: cli.chaos_drop_mode,
        hang_ms: cli.chaos_hang_ms,
        duplicate_rate: cli.chaos_duplicate_rate,
        skew_ms: cli.chaos_skew_ms,
        seed: cli.chaos_seed,
    };
    let mut options = Options::new(cli.listen, cli.database, keys);
    options.admin_token = cli.admin_token;
    options.game_url = Some(cli.game_url);
    options.chaos = chaos;
    options.players = cli.players;
    let running = start(options).await?;
    // The first line of stdout: tests and scripts read the address from it.
    println!("listening on {}", running.url());
    tracing::info!(url = %running.url(), "the reference operator is serving");
    running.run_until_signal().await;
    Ok(())
}
