//! Builds the report: both draw streams played and analysed, the exact
//! figures of the table, a block's risk, the checks and their verdict.

use crate::analysis::{self, StreamReport};
use crate::build_info::BuildInfo;
use crate::check::{Check, THRESHOLD, Verdict, overall};
use crate::dieharder::DieharderRun;
use crate::frac::Frac;
use crate::progress::{Progress, Stopped};
use crate::report::{
    Band, BlockRisk, DIEHARDER_COMMAND, DieharderAppendix, Exact, FORMAT, Histogram, Parameters, PrizeChance, RULES,
    Report, RunInfo, Subject, TableInfo, TableRow,
};
use crate::run::{self, DrawFactory, FairFactory, RunConfig, SimFactory};
use math::{LegalBand, Odds, Payout, PrizeTable, block_distribution};
use sha2::{Digest, Sha256};
use std::time::Instant;

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
    /// dieharder's runs for the appendix ([`read_dieharder`](crate::read_dieharder)).
    pub dieharder: Vec<DieharderRun>,
    pub command: String,
    /// Where the executable was built ([`BuildInfo::registered`] unless the caller knows better).
    pub build: BuildInfo,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::CHUNK;
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
