//! The certification report for a test laboratory (GLI, eCOGRA, a
//! regulator): `as-capone report --table FILE --games N --out report.html`
//! (crates/lab/src/report.rs) and the desk's download
//! (`GET /api/admin/emissions/{id}/certification`, crates/server) both call
//! [`build`] then [`html::render`].
//!
//! One [`Report`] value holds every figure; the HTML page ([`html`]) and the
//! JSON (`--json`) are both rendered from it, so they cannot disagree.
//! What is in it, every check and its threshold: `docs/certification.md`.
//!
//! This crate sits below the server (it imports engine, math and format,
//! never the server, lab or an async runtime) and draws no progress bar:
//! the caller passes a [`Progress`] (the CLI's is an indicatif bar).
//!
//! Layout: [`run`] plays tickets through the real engine with a recording
//! adapter around any draw source; [`analysis`] turns the counts into
//! figures and checks; [`html`] and [`svg`] draw the page; [`dieharder`]
//! reads dieharder's output for the appendix.

pub mod analysis;
pub mod dieharder;
pub mod html;
pub mod run;
pub mod svg;

use analysis::StreamReport;
use anyhow::Context;
use math::fraction::{approx, to_string as frac};
use math::payout::{LegalBand, block_distribution};
use math::{Odds, Payout, PrizeTable};
use num_rational::BigRational;
use run::{DrawFactory, FairFactory, RunConfig, SimFactory};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// A check passes when its p-value is at least this.
pub const THRESHOLD: f64 = 0.001;
/// The report's format, first field of the JSON.
pub const FORMAT: &str = "as-capone certification report v1";
/// The rules the engine follows.
pub const RULES: &str = "Annexe 3 to the regulation of the \"Illiko Live\" game offer, game \"As Capone\" \
    (articles 1 to 3), as read in docs/rules.md";
/// How the dieharder appendix is produced.
pub const DIEHARDER_COMMAND: &str = "as-capone rng-stream --source fair | dieharder -a -g 200 > fair.dieharder.txt; \
    as-capone rng-stream --source sim | dieharder -a -g 200 > sim.dieharder.txt";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        }
    }
}

/// An exact fraction `"p/q"` and its floating approximation (for reading and plotting).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frac {
    pub fraction: String,
    pub value: f64,
}

impl Frac {
    pub fn of(r: &BigRational) -> Frac {
        Frac { fraction: frac(r), value: approx(r) }
    }
}

/// One verdict line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    /// The draw stream it is about, if any.
    pub stream: Option<String>,
    pub title: String,
    /// The article of the regulation the property comes from.
    pub rule: String,
    pub statistic: String,
    /// None for an exact check (no sampling).
    pub p_value: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Subject {
    pub game: String,
    pub rules: String,
    /// SHA-256 of the rules' files found at build time, or why not.
    pub rules_files: Vec<String>,
    pub version: String,
    /// `git rev-parse HEAD` at build time, or "unknown".
    pub git_commit: String,
    /// Uncommitted changes to tracked files at build time (None: unknown).
    pub git_dirty: Option<bool>,
    /// SHA-256 of the executable that wrote the report.
    pub binary_sha256: String,
    pub command: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Parameters {
    pub tickets: u64,
    pub seed: u64,
    pub checkpoint_step: u64,
    pub threshold: f64,
    pub min_expected: f64,
    /// Checks with a p-value: under fair streams, the chance that any of
    /// them fails by bad luck is at most their number times the threshold.
    pub statistical_checks: usize,
    pub family_wise_false_alarm_bound: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableRow {
    pub tickets: u32,
    /// Prizes for 5, 6, 7 and 8 tricks.
    pub prizes_cents: [u64; 4],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableInfo {
    pub file: String,
    /// SHA-256 of the file's bytes.
    pub file_sha256: String,
    /// The table's digest: SHA-256 of its canonical form (`PrizeTable::digest`).
    pub digest: String,
    pub canonical: String,
    pub game: String,
    pub code: String,
    pub price_cents: u64,
    pub block_size: u32,
    pub rows: Vec<TableRow>,
    pub regulation_deviations: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrizeChance {
    pub prize_cents: u64,
    pub chance: Frac,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Band {
    pub name: String,
    pub low: Frac,
    pub high: Frac,
    pub inside: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exact {
    /// Tricks 0 to 8 in one game.
    pub per_round: Vec<Frac>,
    pub extra_per_round: Frac,
    /// The ticket: 5, 6, 7, 8 tricks, lost.
    pub final_outcome: Vec<Frac>,
    pub expected_games: Frac,
    pub deck_tie: Frac,
    pub deck_duel_win: Frac,
    pub expected_payout_cents: Frac,
    pub rtp: Frac,
    pub hit_rate: Frac,
    pub variance_cents2: Frac,
    pub std_dev_cents: f64,
    pub largest_prize_cents: u64,
    pub prize_chances: Vec<PrizeChance>,
    pub legal_band: Band,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Histogram {
    pub start_cents: f64,
    pub bin_cents: f64,
    pub probabilities: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BlockRisk {
    pub method: String,
    pub sales_cents: u64,
    pub mean_cents: f64,
    pub std_dev_cents: f64,
    pub p_prizes_exceed_sales: f64,
    pub p99_cents: f64,
    pub p9999_cents: f64,
    pub histogram: Histogram,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DieharderAppendix {
    pub command: String,
    pub runs: Vec<dieharder::DieharderRun>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    pub threads: usize,
    pub seconds: f64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub format: String,
    pub subject: Subject,
    pub parameters: Parameters,
    pub table: TableInfo,
    pub exact: Exact,
    pub block_risk: BlockRisk,
    pub streams: Vec<StreamReport>,
    pub dieharder: DieharderAppendix,
    pub checks: Vec<Check>,
    pub verdict: Verdict,
    /// How the run went (threads, time): the only part that depends on the machine.
    pub run: RunInfo,
}

/// What to build.
#[derive(Clone, Debug)]
pub struct Options {
    /// The prize table, parsed by the caller from `table_bytes`.
    pub table: PrizeTable,
    /// Where the table came from, as the report names it (a file's path, an emission).
    pub table_name: String,
    /// The table's text exactly as read (the report gives its SHA-256).
    pub table_bytes: Vec<u8>,
    pub tickets: u64,
    pub seed: u64,
    pub threads: usize,
    /// dieharder's runs for the appendix ([`dieharder::read`]).
    pub dieharder: Vec<dieharder::DieharderRun>,
    pub command: String,
    /// Where the executable was built ([`BuildInfo::registered`] unless the caller knows better).
    pub build: BuildInfo,
}

/// Where the executable that writes the report was built: the report's
/// subject. The binary's build script knows it (crates/lab/build.rs); this
/// crate has no build script of its own, so that a new commit does not
/// rebuild everything above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub version: String,
    /// `git rev-parse HEAD` at build time, or "unknown".
    pub git_commit: String,
    /// Uncommitted changes to tracked files at build time (None: unknown).
    pub git_dirty: Option<bool>,
    /// `sha256  FILE` of the rules' files found at build time.
    pub rules_files: Vec<String>,
}

static REGISTERED: OnceLock<BuildInfo> = OnceLock::new();

impl BuildInfo {
    /// Nothing known but this crate's version.
    pub fn unknown() -> BuildInfo {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: "unknown".into(),
            git_dirty: None,
            rules_files: Vec::new(),
        }
    }

    /// Records this process's build, once (the binary's `main` does, before
    /// any report): later calls are ignored.
    pub fn register(info: BuildInfo) {
        let _ = REGISTERED.set(info);
    }

    /// The build [`BuildInfo::register`] recorded, or [`BuildInfo::unknown`].
    pub fn registered() -> BuildInfo {
        REGISTERED.get().cloned().unwrap_or_else(BuildInfo::unknown)
    }
}

/// Told how the run goes. Each stream plays `tickets` tickets, so a whole
/// report reports `2 * tickets` through [`Progress::tickets`].
pub trait Progress: Sync {
    /// The run enters a stage: "simulation stream", "fair stream", "block risk".
    fn stage(&self, _name: &'static str) {}
    /// `n` more tickets were played.
    fn tickets(&self, _n: u64) {}
    /// Whether the caller wants the run to stop (a deadline passed): asked
    /// before each chunk of tickets; once true, [`build`] ends with
    /// [`Stopped`] within a chunk's time.
    fn stopped(&self) -> bool {
        false
    }
}

/// [`build`]'s error when its [`Progress`] stopped it before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the report's run was stopped before its end")
    }
}

impl std::error::Error for Stopped {}

/// No progress told.
pub struct Silent;

impl Progress for Silent {}

/// Plays `cfg.tickets` tickets from `factory` and returns the stream's figures.
/// The report's two streams and the tests' biased source all come through here.
#[allow(clippy::too_many_arguments)]
pub fn analyse_stream<F: DrawFactory>(
    factory: &F,
    id: &str,
    name: &str,
    description: &str,
    cfg: &RunConfig,
    table: &PrizeTable,
    odds: &Odds,
    payout: &Payout,
    progress: &(dyn Fn(u64) + Sync),
) -> StreamReport {
    let acc = run::run(factory, cfg, table, progress);
    analysis::stream_report(id, name, description, &acc, odds, payout, cfg.step)
}

/// [`analyse_stream`] told by `progress`, which may stop it.
#[allow(clippy::too_many_arguments)]
fn analyse_stream_until<F: DrawFactory>(
    factory: &F,
    id: &str,
    name: &str,
    description: &str,
    cfg: &RunConfig,
    table: &PrizeTable,
    odds: &Odds,
    payout: &Payout,
    progress: &dyn Progress,
) -> Result<StreamReport, Stopped> {
    let acc = run::run_until(factory, cfg, table, &|n| progress.tickets(n), &|| progress.stopped()).ok_or(Stopped)?;
    Ok(analysis::stream_report(id, name, description, &acc, odds, payout, cfg.step))
}

/// PASS when every check passes.
pub fn overall(checks: &[Check]) -> Verdict {
    if checks.iter().all(|c| c.verdict == Verdict::Pass) { Verdict::Pass } else { Verdict::Fail }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn binary_sha256() -> String {
    std::env::current_exe().and_then(std::fs::read).map(|b| sha256_hex(&b)).unwrap_or_else(|e| format!("unknown ({e})"))
}

fn table_info(name: &str, bytes: &[u8], t: &PrizeTable) -> TableInfo {
    TableInfo {
        file: name.to_string(),
        file_sha256: sha256_hex(bytes),
        digest: t.digest(),
        canonical: t.canonical(),
        game: t.game.clone(),
        code: t.code.clone(),
        price_cents: t.price_cents,
        block_size: t.block_size,
        rows: t.schedules.iter().map(|r| TableRow { tickets: r.tickets, prizes_cents: r.prizes.cents() }).collect(),
        regulation_deviations: t.regulation_deviations().iter().map(|d| d.to_string()).collect(),
    }
}

fn exact(odds: &Odds, p: &Payout) -> Exact {
    let band = LegalBand::scratch();
    Exact {
        per_round: odds.per_round.iter().map(Frac::of).collect(),
        extra_per_round: Frac::of(&odds.extra_per_round),
        final_outcome: odds.final_chances().iter().map(Frac::of).collect(),
        expected_games: Frac::of(&odds.expected_games),
        deck_tie: Frac::of(&odds.deck_tie),
        deck_duel_win: Frac::of(&odds.deck_duel_win),
        expected_payout_cents: Frac::of(&p.expected_payout_cents),
        rtp: Frac::of(&p.rtp),
        hit_rate: Frac::of(&p.hit_rate),
        variance_cents2: Frac::of(&p.variance_cents2),
        std_dev_cents: p.std_dev_cents(),
        largest_prize_cents: p.largest_prize_cents,
        prize_chances: p
            .prize_chances
            .iter()
            .map(|(c, q)| PrizeChance { prize_cents: *c, chance: Frac::of(q) })
            .collect(),
        legal_band: Band {
            name: band.name.to_string(),
            low: Frac::of(&band.low),
            high: Frac::of(&band.high),
            inside: band.check(&p.rtp) == std::cmp::Ordering::Equal,
        },
    }
}

/// Bins of the chart of a block's prizes: the lattice distribution summed
/// into 160 bins over the mean +- 5 standard deviations, widened to the
/// 99.99th percentile.
fn block_risk(table: &PrizeTable, odds: &Odds, p: &Payout) -> BlockRisk {
    let r = &p.block_risk;
    let (w, pmf) = block_distribution(table, odds);
    let lo = (r.mean_cents - 5.0 * r.std_dev_cents).max(0.0);
    let hi = (r.mean_cents + 5.0 * r.std_dev_cents).max(r.p9999_cents * 1.02);
    let bins = 160usize;
    let bin = ((hi - lo) / bins as f64).max(w as f64);
    let mut probabilities = vec![0.0; bins];
    for (k, q) in pmf.iter().enumerate() {
        let x = k as f64 * w as f64;
        if x >= lo {
            let i = ((x - lo) / bin) as usize;
            if i < bins {
                probabilities[i] += q;
            }
        }
    }
    BlockRisk {
        method: r.method.clone(),
        sales_cents: table.price_cents * u64::from(table.block_size),
        mean_cents: r.mean_cents,
        std_dev_cents: r.std_dev_cents,
        p_prizes_exceed_sales: r.p_prizes_exceed_sales,
        p99_cents: r.p99_cents,
        p9999_cents: r.p9999_cents,
        histogram: Histogram { start_cents: lo, bin_cents: bin, probabilities },
    }
}

/// Builds the whole report, telling `progress` how it goes.
pub fn build(opts: &Options, progress: &dyn Progress) -> anyhow::Result<Report> {
    anyhow::ensure!(opts.tickets > 0, "--games must be at least 1");
    let start = Instant::now();
    let table = &opts.table;
    let runs = opts.dieharder.clone();
    let odds = Odds::exact();
    let payout = Payout::compute(table, &odds);
    let step = opts.tickets.div_ceil(200).max(1);
    let cfg = RunConfig { tickets: opts.tickets, seed: opts.seed, threads: opts.threads, step };
    let msg = |m: &'static str| progress.stage(m);
    msg("simulation stream");
    let sim = analyse_stream_until(
        &SimFactory::new(opts.seed),
        "sim",
        "Simulation stream",
        "engine::FastSource: ChaCha8 with Lemire's unbiased scaling, one ChaCha stream per chunk of 65 536 tickets \
         (the draws of as-capone simulate)",
        &cfg,
        table,
        &odds,
        &payout,
        progress,
    )?;
    msg("fair stream");
    let fair = analyse_stream_until(
        &FairFactory::new(opts.seed),
        "fair",
        "Fair stream",
        "engine::FairStream: HMAC-SHA256(server seed, \"client:serial:n:c\") with rejection scaling \
         (docs/contract.md, Fairness), a new server seed per ticket (the draws of played tickets)",
        &cfg,
        table,
        &odds,
        &payout,
        progress,
    )?;
    msg("block risk");
    let risk = block_risk(table, &odds, &payout);

    let exact = exact(&odds, &payout);
    let mut checks = vec![Check {
        id: "table.legal_band".into(),
        stream: None,
        title: "exact return to player inside the legal band".into(),
        rule: "art. 3.1 (prize table); band of French instant games".into(),
        statistic: format!(
            "{} = {:.4} % in {:.0} % to {:.0} %",
            exact.rtp.fraction,
            100.0 * exact.rtp.value,
            100.0 * exact.legal_band.low.value,
            100.0 * exact.legal_band.high.value
        ),
        p_value: None,
        verdict: if exact.legal_band.inside { Verdict::Pass } else { Verdict::Fail },
    }];
    for s in [&sim, &fair] {
        checks.extend(analysis::stream_checks(s));
    }
    for r in &runs {
        checks.push(Check {
            id: format!("dieharder.{}", r.name),
            stream: Some(r.name.clone()),
            title: format!("dieharder -a on the {} stream: no FAILED test", r.name),
            rule: "independent uniform draws (art. 3.2.2, 3.2.4.2)".into(),
            statistic: format!("{} PASSED, {} WEAK, {} FAILED", r.passed, r.weak, r.failed),
            p_value: None,
            verdict: if r.failed == 0 { Verdict::Pass } else { Verdict::Fail },
        });
    }
    let statistical = checks.iter().filter(|c| c.p_value.is_some()).count();
    let verdict = overall(&checks);
    Ok(Report {
        format: FORMAT.into(),
        subject: Subject {
            game: "As Capone".into(),
            rules: RULES.into(),
            rules_files: opts.build.rules_files.clone(),
            version: opts.build.version.clone(),
            git_commit: opts.build.git_commit.clone(),
            git_dirty: opts.build.git_dirty,
            binary_sha256: binary_sha256(),
            command: opts.command.clone(),
        },
        parameters: Parameters {
            tickets: opts.tickets,
            seed: opts.seed,
            checkpoint_step: step,
            threshold: THRESHOLD,
            min_expected: analysis::MIN_EXPECTED,
            statistical_checks: statistical,
            family_wise_false_alarm_bound: (statistical as f64 * THRESHOLD).min(1.0),
        },
        table: table_info(&opts.table_name, &opts.table_bytes, table),
        exact,
        block_risk: risk,
        streams: vec![sim, fair],
        dieharder: DieharderAppendix { command: DIEHARDER_COMMAND.into(), runs },
        checks,
        verdict,
        run: RunInfo { threads: opts.threads, seconds: start.elapsed().as_secs_f64() },
    })
}

/// Renders `html_file` to a PDF with Debian's Chromium, headless.
pub fn pdf(html_file: &Path, pdf_file: &Path) -> anyhow::Result<()> {
    let chromium =
        ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| which(name)).ok_or_else(|| {
            anyhow::anyhow!(
                "--pdf needs Chromium to render the page: install Debian's `chromium` package \
                 (apt-get install chromium), or open the HTML file and print it to PDF"
            )
        })?;
    let html = std::fs::canonicalize(html_file)?;
    let profile = std::env::temp_dir().join(format!("as-capone-pdf-{}-{}", std::process::id(), nanos()));
    let target = if pdf_file.is_absolute() { pdf_file.to_path_buf() } else { std::env::current_dir()?.join(pdf_file) };
    let mut child = std::process::Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-pdf-header-footer",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--print-to-pdf={}", target.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", chromium.display()))?;
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&profile);
            anyhow::bail!("{} did not finish the PDF within 120 s", chromium.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let _ = std::fs::remove_dir_all(&profile);
    let ok = std::fs::read(&target).map(|b| b.starts_with(b"%PDF")).unwrap_or(false);
    anyhow::ensure!(
        status.success() && ok,
        "{} failed to write {}: {status}\n{err}",
        chromium.display(),
        target.display()
    );
    Ok(())
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::run::{CHUNK, DrawFactory, RunConfig, SimFactory};
    use super::*;
    use engine::{DrawSource, FastSource};

    /// A source that favours As Capone's high cards by 1 %: asked for his
    /// card among `m` (`below(m)` with `2 <= m <= 8`; the index counts his
    /// cards from the 7 up, so `m - 1` is his highest, `Game::play`), it
    /// answers `m - 1` with chance `1.01 / m` instead of `1 / m`: with
    /// chance `d = 0.01 / (m - 1)` it forces the top index, otherwise it asks
    /// the honest source. Deck draws (16, 15) are left alone.
    struct Biased(FastSource);

    impl DrawSource for Biased {
        fn start_draw(&mut self, n: u64) {
            self.0.start_draw(n)
        }
        fn below(&mut self, m: u32) -> u32 {
            if (2..=8).contains(&m) {
                let d = 0.01 / f64::from(m - 1);
                let coin = self.0.next_u32();
                if f64::from(coin) < d * 4_294_967_296.0 {
                    return m - 1;
                }
            }
            self.0.below(m)
        }
    }

    struct BiasedFactory(SimFactory);

    impl DrawFactory for BiasedFactory {
        type Source = Biased;
        fn chunk(&self, chunk: u64) -> Biased {
            Biased(self.0.chunk(chunk))
        }
        fn begin_ticket(&self, _source: &mut Biased, _ticket: u64) {}
    }

    fn stream<F: DrawFactory>(f: &F, tickets: u64, seed: u64) -> StreamReport {
        let table = PrizeTable::example();
        let odds = Odds::exact();
        let payout = Payout::compute(&table, &odds);
        let cfg = RunConfig { tickets, seed, threads: 2, step: tickets.div_ceil(200) };
        analyse_stream(f, "sim", "Simulation stream", "", &cfg, &table, &odds, &payout, &|_| {})
    }

    /// art. 3.2.2: a source that favours As Capone's high cards by 1 % is
    /// caught. Power, computed: with 1 000 000 tickets there are about
    /// 1.29 million draws among m cards for each m (one per game); the bias
    /// moves the top index from 1/m to 1.01/m, a chi-square noncentrality of
    /// N * 0.0001 / (m - 1), about 129 for m = 2 (1 degree of freedom).
    /// Failing needs a p-value under 0.001 / 7 (Bonferroni), a statistic
    /// above 14.4: the statistic's mean is 130 and its standard deviation
    /// about 23, so a miss is a 5-sigma event.
    #[test]
    fn a_source_biased_towards_as_capones_high_cards_fails() {
        let s = stream(&BiasedFactory(SimFactory::new(5)), 1_000_000, 5);
        let checks = analysis::stream_checks(&s);
        let by_id = |id: &str| checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"));
        assert_eq!(by_id("sim.capone.cards_left").verdict, Verdict::Fail, "{checks:#?}");
        assert!(s.capone_by_cards_left.p_value_bonferroni < 1e-9, "{:?}", s.capone_by_cards_left);
        assert_eq!(overall(&checks), Verdict::Fail);
        // The bias is where it was put: the top index of 2 cards left is drawn more than half the time.
        let two = s.capone_by_cards_left.tests.iter().find(|t| t.label == "2 cards left").unwrap();
        assert!(two.counts[1] > two.counts[0], "{:?}", two.counts);
        // Deck draws were not touched: that check still passes.
        assert_eq!(by_id("sim.deck.pairs").verdict, Verdict::Pass);
    }

    /// The same code path with the honest source passes every check.
    #[test]
    fn the_honest_source_passes_on_the_same_path() {
        let s = stream(&SimFactory::new(5), 1_000_000, 5);
        let checks = analysis::stream_checks(&s);
        assert!(checks.iter().all(|c| c.verdict == Verdict::Pass), "{checks:#?}");
        assert_eq!(overall(&checks), Verdict::Pass);
        assert_eq!(s.tickets, 1_000_000);
        assert!(s.tickets > 15 * CHUNK);
    }

    /// A progress that stops the run after its first chunks: `build` ends
    /// with [`Stopped`] without playing the rest; a progress that never
    /// stops it gets every ticket of both streams.
    #[test]
    fn a_run_its_progress_stops_ends_with_stopped_and_plays_no_more() {
        struct StopAfter(u64, std::sync::atomic::AtomicU64);
        impl Progress for StopAfter {
            fn tickets(&self, n: u64) {
                self.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
            fn stopped(&self) -> bool {
                self.1.load(std::sync::atomic::Ordering::Relaxed) >= self.0
            }
        }
        let table = PrizeTable::example();
        let opts = Options {
            table_bytes: table.to_toml().into_bytes(),
            table,
            table_name: "example".into(),
            tickets: 40 * CHUNK,
            seed: 1,
            threads: 2,
            dieharder: Vec::new(),
            command: String::new(),
            build: BuildInfo::unknown(),
        };
        let progress = StopAfter(2 * CHUNK, Default::default());
        let e = build(&opts, &progress).unwrap_err();
        assert_eq!(e.downcast_ref::<Stopped>(), Some(&Stopped), "{e:#}");
        let played = progress.1.load(std::sync::atomic::Ordering::Relaxed);
        assert!((2 * CHUNK..=4 * CHUNK).contains(&played), "{played} tickets played after the stop was asked");
        // Nobody stops it: it plays every ticket of both streams.
        let small = Options { tickets: 1000, ..opts };
        let counted = StopAfter(u64::MAX, Default::default());
        let report = build(&small, &counted).unwrap();
        assert!(report.streams.iter().all(|s| s.tickets == 1000), "{:?}", report.streams.len());
        assert_eq!(counted.1.load(std::sync::atomic::Ordering::Relaxed), 2000);
    }
}
