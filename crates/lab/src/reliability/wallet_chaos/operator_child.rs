//! The reference operator as a child process of the run: started on a
//! fixed address with its chaos switch, SIGKILLed and started again on the
//! same ledger, and its admin calls; and the hidden `reference-operator`
//! command that runs it.

use super::client::short;
use crate::reliability::args::ReliabilityArgs;
use anyhow::Context;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use wallet::Keys;

/// The keys shared by our server and the reference operator in these runs.
pub(super) const KEYS: &str = "chaos:7d3c5a0e9b1f4e2d8c6a4b2e0f1d3c5a7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f";

/// The reference operator's admin token in these runs.
const ADMIN_TOKEN: &str = "chaos-operator-admin-token-0123456789";

/// The reference operator as a child process on a fixed address, so that
/// our servers find it again after each restart.
pub(super) struct Operator {
    child: Option<Child>,
    program: (PathBuf, Vec<String>),
    listen: String,
    database: PathBuf,
    log: PathBuf,
    chaos: Vec<String>,
    /// How many times it was started.
    pub(super) lives: u32,
}

impl Operator {
    /// The reference operator of a run on `args`' chaos settings, its
    /// ledger and its log in `dir`, on a free port (not started yet).
    pub(super) fn new(args: &ReliabilityArgs, dir: &Path) -> anyhow::Result<Operator> {
        let port = free_port()?;
        let chaos = vec![
            "--chaos-delay-ms".to_string(),
            args.chaos_delay_ms.clone(),
            "--chaos-delay-rate".into(),
            args.chaos_delay_rate.to_string(),
            "--chaos-error-rate".into(),
            args.chaos_error_rate.to_string(),
            "--chaos-drop-rate".into(),
            args.chaos_drop_rate.to_string(),
            "--chaos-duplicate-rate".into(),
            args.chaos_duplicate_rate.to_string(),
            format!("--chaos-skew-ms={}", args.chaos_skew_ms),
        ];
        Ok(Operator {
            child: None,
            program: operator_program(args)?,
            listen: format!("127.0.0.1:{port}"),
            database: dir.join("operator.db"),
            log: dir.join("operator.log"),
            chaos,
            lives: 0,
        })
    }

    pub(super) fn url(&self) -> String {
        format!("http://{}", self.listen)
    }

    /// Starts it (the same database, the same address, a new chaos seed) and
    /// waits until it prints its address.
    pub(super) fn start(&mut self, seed: u64) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log)?;
        let mut last = String::new();
        for attempt in 0..20 {
            let mut child = Command::new(&self.program.0)
                .args(&self.program.1)
                .args(["--listen", &self.listen, "--keys", KEYS, "--admin-token", ADMIN_TOKEN, "--database"])
                .arg(&self.database)
                .args(&self.chaos)
                .args(["--chaos-seed", &seed.wrapping_add(attempt).to_string()])
                .env("RUST_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log.try_clone()?)
                .spawn()
                .with_context(|| format!("starting the reference operator {}", self.program.0.display()))?;
            let stdout = child.stdout.take().context("the operator's stdout")?;
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut lines = BufReader::new(stdout).lines();
                let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
                for _ in lines {} // keep draining
            });
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.contains("listening on") => {
                    self.child = Some(child);
                    self.lives += 1;
                    return Ok(());
                }
                other => {
                    // The address not free yet (the killed process's socket), or a slow start.
                    last = format!("{other:?}");
                    let _ = child.kill();
                    let _ = child.wait();
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        anyhow::bail!("the reference operator did not start ({last}); its log: {}", self.log.display())
    }

    pub(super) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The reference operator's program and the arguments before its own:
/// `--operator-bin`, else this executable's hidden `reference-operator`
/// subcommand ([`OperatorChildArgs`]: the `as-capone-operator` crate's
/// library, the same flags as its binary).
fn operator_program(args: &ReliabilityArgs) -> anyhow::Result<(PathBuf, Vec<String>)> {
    match &args.operator_bin {
        Some(p) => Ok((p.clone(), Vec::new())),
        None => Ok((std::env::current_exe()?, vec!["reference-operator".into()])),
    }
}

/// `as-capone reference-operator` (hidden): the reference operator
/// (crate `as-capone-operator`) in a process of its own, as the wallet
/// chaos starts and SIGKILLs it. The flags are the `as-capone-operator`
/// binary's, so that `--operator-bin` can name either; it prints
/// `listening on http://ADDR` on its first line of standard output.
#[derive(clap::Args, Debug, Clone)]
pub struct OperatorChildArgs {
    /// Where to listen.
    #[arg(long)]
    pub listen: std::net::SocketAddr,
    /// The SQLite ledger (created if missing).
    #[arg(long)]
    pub database: PathBuf,
    /// The keys shared with the game server, `ID:HEX,...`.
    #[arg(long)]
    pub keys: String,
    /// The bearer token of /admin/*.
    #[arg(long)]
    pub admin_token: String,
    /// Chaos: the delay's range in ms, `MIN-MAX`.
    #[arg(long, default_value = "0-0")]
    pub chaos_delay_ms: String,
    /// Chaos: probability of a delay.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_delay_rate: f64,
    /// Chaos: probability of a 500/503 answer without applying.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_error_rate: f64,
    /// Chaos: probability of an applied call whose answer is lost.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_drop_rate: f64,
    /// Chaos: probability of a call processed twice at once.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_duplicate_rate: f64,
    /// Chaos: offset of the operator's clock, in ms.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub chaos_skew_ms: i64,
    /// Chaos: the seed of the random stream.
    #[arg(long)]
    pub chaos_seed: Option<u64>,
}

/// Runs the reference operator until SIGTERM, Ctrl-C or SIGKILL.
pub fn reference_operator(a: OperatorChildArgs) -> anyhow::Result<()> {
    let (lo, hi) = a.chaos_delay_ms.split_once('-').unwrap_or((&a.chaos_delay_ms, &a.chaos_delay_ms));
    let range = |s: &str| s.trim().parse::<u64>().map_err(|_| anyhow::anyhow!("--chaos-delay-ms is MIN-MAX in ms"));
    let chaos = operator::ChaosConfig {
        delay_ms: [range(lo)?, range(hi)?],
        delay_rate: a.chaos_delay_rate,
        error_rate: a.chaos_error_rate,
        drop_rate: a.chaos_drop_rate,
        duplicate_rate: a.chaos_duplicate_rate,
        skew_ms: a.chaos_skew_ms,
        seed: a.chaos_seed,
        ..Default::default()
    };
    let keys = Keys::parse(&a.keys).map_err(anyhow::Error::msg)?;
    let mut options = operator::Options::new(a.listen, a.database, keys);
    options.admin_token = Some(a.admin_token);
    options.chaos = chaos;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async {
        let running = operator::start(options).await?;
        println!("listening on {}", running.url());
        running.run_until_signal().await;
        anyhow::Ok(())
    })
}

/// A free port on 127.0.0.1 (bound, then released for the operator).
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An admin call to the reference operator (bearer admin token).
pub(super) async fn admin(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let mut r = c.request(method, &url).bearer_auth(ADMIN_TOKEN);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.with_context(|| url.clone())?;
    let status = resp.status();
    let bytes = resp.bytes().await?;
    anyhow::ensure!(status.is_success(), "{url}: {status} {}", short(&bytes));
    Ok(serde_json::from_slice(&bytes)?)
}

/// Chaos counters of the operator's current life (`GET /admin/chaos`).
pub(super) async fn chaos_counters(c: &reqwest::Client, op_url: &str) -> anyhow::Result<BTreeMap<String, u64>> {
    let v = admin(c, reqwest::Method::GET, format!("{op_url}/admin/chaos"), None).await?;
    Ok(v["counters"].as_object().into_iter().flatten().filter_map(|(k, x)| Some((k.clone(), x.as_u64()?))).collect())
}

pub(super) fn add_counts(total: &mut BTreeMap<String, u64>, more: BTreeMap<String, u64>) {
    for (k, v) in more {
        *total.entry(k).or_default() += v;
    }
}
