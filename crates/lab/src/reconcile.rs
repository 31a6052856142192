//! `as-capone reconcile`: our rounds of a period against the operator's
//! transactions (docs/operator-integration.md "Reconciliation"; the rules are `wallet::reconcile`'s).
//!
//! - our side: the game server's operator desk,
//!   `GET /api/admin/wallet/rounds?from_ms=&to_ms=` (bearer operator token),
//!   the rounds begun in the period;
//! - the operator's side: its wallet's `POST /wallet/transactions`, signed
//!   with the shared keys like every wallet call (`wallet::sign`), its
//!   answer's signature checked before the body is read
//!   (docs/operator-integration.md).
//!
//! The operator's transactions are fetched with a margin of [`MARGIN_MS`]
//! either side of the period, so that a debit applied just after its round
//! began (or a prize credited a little later) is found. The margin must not
//! bring in the rounds of the neighbouring periods as "unknown", so our
//! rounds are fetched over the margin too, only to know which rounds are
//! ours: the operator's transactions compared are those of the period's
//! rounds, and those of rounds the game does not know at all applied
//! within the period ([`scope`]).
//!
//! Exit status: 0 when the period is clean, 1 on any mismatch, 2 when either
//! side could not be read (the caller maps [`run`]'s result).

use clap::Args;
use format::{euros, iso8601};
use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;
use wallet::{
    Covered, Keys, OperatorTransaction, OurRound, Report, Signed, TransactionsAnswer, TransactionsRequest, paths,
    reconcile,
};

/// The margin either side of the period over which the operator's
/// transactions are fetched: ten minutes.
pub const MARGIN_MS: i64 = 10 * 60 * 1000;

/// The longest wait for either side's answer.
const TIMEOUT: Duration = Duration::from_secs(60);

/// `as-capone reconcile`'s arguments.
#[derive(Args, Debug, Clone)]
pub struct ReconcileArgs {
    /// The game server's base URL (`http://127.0.0.1:8080`).
    #[arg(long)]
    pub game: String,
    /// A bearer token of the game server's operator desk (`--operator-tokens` of `serve`).
    #[arg(long, env = "AS_CAPONE_OPERATOR_TOKEN")]
    pub operator_token: String,
    /// The operator's wallet base URL (the server's `operator_wallet_url`).
    #[arg(long)]
    pub wallet_url: String,
    /// The keys shared with the operator, `ID:HEX,...` (the first signs).
    #[arg(long, env = "AS_CAPONE_OPERATOR_KEYS", value_parser = parse_keys)]
    pub operator_keys: Keys,
    /// Start of the period (included): unix milliseconds or ISO 8601 UTC
    /// (`2026-12-05`, `2026-12-05T06:00:00Z`, `2026-12-05T06:00:00.250+01:00`).
    #[arg(long, value_parser = parse_moment)]
    pub from: i64,
    /// End of the period (excluded), like `--from`.
    #[arg(long, value_parser = parse_moment)]
    pub to: i64,
    /// One JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// The period covers everything the game ever sold: the operator's
    /// transactions of a round the game does not know are mismatches too
    /// (`unknown_round`), even without a standing debit or a credit.
    #[arg(long)]
    pub strict: bool,
}

fn parse_keys(s: &str) -> Result<Keys, String> {
    Keys::parse(s)
}

/// A moment given on the command line: unix milliseconds, or an ISO 8601
/// date or date and time (UTC unless it has an offset).
pub fn parse_moment(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map_err(|_| format!("{s:?}: too large for milliseconds"));
    }
    iso_ms(s).ok_or_else(|| {
        format!("{s:?} is neither unix milliseconds nor an ISO 8601 date (2026-12-05 or 2026-12-05T06:00:00Z)")
    })
}

/// `YYYY-MM-DD[THH:MM[:SS[.fff]][Z|±HH:MM]]` to unix milliseconds.
fn iso_ms(s: &str) -> Option<i64> {
    let num =
        |t: &str| -> Option<i64> { (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())? };
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    // The date: a calendar day that exists (the calendar is format's, written once).
    let mut ms = format::calendar::days_from_civil(format::calendar::parse_day(date)?) * format::calendar::DAY_MS;
    let Some(time) = time else { return Some(ms) };
    let (clock, offset_ms) = if let Some(c) = time.strip_suffix('Z') {
        (c, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (c, off) = time.split_at(i);
        let (sign, off) = off.split_at(1);
        let (oh, om) = off.split_once(':')?;
        if oh.len() != 2 || om.len() != 2 || num(oh)? > 23 || num(om)? > 59 {
            return None;
        }
        let o = (num(oh)? * 60 + num(om)?) * 60_000;
        (c, if sign == "+" { o } else { -o })
    } else {
        (time, 0)
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((h, f)) if (1..=3).contains(&f.len()) => (h, num(f)? * 10i64.pow(3 - f.len() as u32)),
        Some(_) => return None,
        None => (clock, 0),
    };
    let fields: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&fields.len()) || fields.iter().any(|f| f.len() != 2) {
        return None;
    }
    let (h, mi) = (num(fields[0])?, num(fields[1])?);
    let sec = fields.get(2).map_or(Some(0), |f| num(f))?;
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    ms += ((h * 60 + mi) * 60 + sec) * 1000 + frac - offset_ms;
    Some(ms)
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// The HTTP client of both sides' calls.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(TIMEOUT).build().expect("http client")
}

/// The longest period one request to the game's desk asks for, so that a
/// reconciliation of years reads the rounds in answers of bounded size:
/// 90 days.
pub const ROUNDS_CHUNK_MS: i64 = 90 * 24 * 3600 * 1000;

/// Our rounds begun in `[from_ms, to_ms)`, from the game server's operator
/// desk, asked for in pieces of at most [`ROUNDS_CHUNK_MS`].
pub async fn fetch_rounds(
    c: &reqwest::Client,
    game: &str,
    token: &str,
    from_ms: i64,
    to_ms: i64,
) -> anyhow::Result<Vec<OurRound>> {
    #[derive(serde::Deserialize)]
    struct Rounds {
        rounds: Vec<OurRound>,
    }
    let mut all = Vec::new();
    let mut start = from_ms;
    while start < to_ms {
        let end = start.saturating_add(ROUNDS_CHUNK_MS).min(to_ms);
        let url = format!("{}/api/admin/wallet/rounds?from_ms={start}&to_ms={end}", game.trim_end_matches('/'));
        let resp = c.get(&url).bearer_auth(token).send().await.map_err(|e| anyhow::anyhow!("GET {url}: {e}"))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| anyhow::anyhow!("GET {url}: {e}"))?;
        anyhow::ensure!(status.is_success(), "GET {url}: {status} {}", String::from_utf8_lossy(&bytes));
        let rounds: Rounds = serde_json::from_slice(&bytes)
            .map_err(|e| anyhow::anyhow!("GET {url}: the answer is not a list of rounds: {e}"))?;
        all.extend(rounds.rounds);
        start = end;
    }
    Ok(all)
}

/// The operator's transactions applied in `[from_ms, to_ms)`: a signed
/// `POST /wallet/transactions` whose answer's signature is checked.
pub async fn fetch_transactions(
    c: &reqwest::Client,
    wallet_url: &str,
    keys: &Keys,
    from_ms: i64,
    to_ms: i64,
) -> anyhow::Result<Vec<OperatorTransaction>> {
    let url = format!("{}{}", wallet_url.trim_end_matches('/'), paths::TRANSACTIONS);
    let path = reqwest::Url::parse(&url).map_err(|e| anyhow::anyhow!("{url}: {e}"))?.path().to_string();
    let body = serde_json::to_vec(&TransactionsRequest { from_ms, to_ms })?;
    let signed = keys.sign(Covered::Request { method: "POST", path: &path }, &body, now_ms());
    let mut request = c.post(&url).header("content-type", "application/json").body(body);
    for (name, value) in signed.headers() {
        request = request.header(name, value);
    }
    let resp = request.send().await.map_err(|e| anyhow::anyhow!("POST {url}: {e}"))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.map_err(|e| anyhow::anyhow!("POST {url}: {e}"))?;
    let answer = Signed::from_headers(|name| headers.get(name).and_then(|v| v.to_str().ok()))
        .map_err(|e| anyhow::anyhow!("POST {url}: {status}, the answer's signature: {e}"))?;
    keys.verify(
        Covered::Answer { method: "POST", path: &path, status, request_nonce: &signed.nonce },
        &bytes,
        &answer,
        now_ms(),
    )
    .map_err(|e| anyhow::anyhow!("POST {url}: {status}, the answer's signature is refused: {e}"))?;
    anyhow::ensure!(status == 200, "POST {url}: {status} {}", String::from_utf8_lossy(&bytes));
    let answer: TransactionsAnswer = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("POST {url}: the answer is not a list of transactions: {e}"))?;
    Ok(answer.transactions)
}

/// The operator's transactions a period is compared with: those of the
/// period's rounds (`period`), wherever in the margin they were applied,
/// and those of rounds the game does not know at all (not in `period` nor
/// in `around`, our rounds of the period with its margin) applied within
/// `[from_ms, to_ms)`. The transactions of our rounds of the neighbouring
/// periods are theirs to reconcile.
pub fn scope(
    period: &[OurRound],
    around: &[OurRound],
    theirs: Vec<OperatorTransaction>,
    from_ms: i64,
    to_ms: i64,
) -> Vec<OperatorTransaction> {
    let inside: HashSet<&str> = period.iter().map(|r| r.round_id.as_str()).collect();
    let ours: HashSet<&str> = around.iter().map(|r| r.round_id.as_str()).chain(inside.iter().copied()).collect();
    theirs
        .into_iter()
        .filter(|t| {
            inside.contains(t.round_id.as_str())
                || (!ours.contains(t.round_id.as_str()) && (from_ms..to_ms).contains(&t.applied_ms))
        })
        .collect()
}

/// A reconciled period: the verdict and what it was computed from.
#[derive(Debug, Clone, Serialize)]
pub struct Reconciled {
    /// The period's start (unix ms, included).
    pub from_ms: i64,
    /// The period's end (unix ms, excluded).
    pub to_ms: i64,
    /// Whether transactions of rounds unknown to the game count as mismatches.
    pub strict: bool,
    /// The operator's transactions fetched (the period and its margin),
    /// before [`scope`] kept those compared.
    pub fetched_transactions: usize,
    /// No mismatch.
    pub clean: bool,
    /// `wallet::reconcile`'s figures and mismatches.
    pub report: Report,
}

/// Reads both sides and reconciles `[from_ms, to_ms)`.
pub async fn reconcile_period(
    c: &reqwest::Client,
    game: &str,
    operator_token: &str,
    wallet_url: &str,
    keys: &Keys,
    (from_ms, to_ms): (i64, i64),
    strict: bool,
) -> anyhow::Result<Reconciled> {
    anyhow::ensure!(from_ms < to_ms, "the period is empty: --from must come before --to");
    let (from_m, to_m) = (from_ms.saturating_sub(MARGIN_MS), to_ms.saturating_add(MARGIN_MS));
    let period = fetch_rounds(c, game, operator_token, from_ms, to_ms).await?;
    let around = fetch_rounds(c, game, operator_token, from_m, to_m).await?;
    let theirs = fetch_transactions(c, wallet_url, keys, from_m, to_m).await?;
    let fetched = theirs.len();
    let theirs = scope(&period, &around, theirs, from_ms, to_ms);
    let report = reconcile(&period, &theirs, strict);
    Ok(Reconciled { from_ms, to_ms, strict, fetched_transactions: fetched, clean: report.clean(), report })
}

/// The text report: the period, the counts, the totals in euros, then each
/// mismatch with its round and code, or the sentence that says it is clean.
pub fn render(r: &Reconciled) -> String {
    let p = &r.report;
    let mut out = format!(
        "reconciliation of {} to {}{}\n\
         our rounds: {} ({} sold, {} released, {} with a prize)\n\
         operator's transactions compared: {} (of {} fetched, {} minutes either side)\n\
         debited for sold tickets: {}\n\
         credited for prizes: {}\n",
        iso8601(r.from_ms),
        iso8601(r.to_ms),
        if r.strict { " (strict)" } else { "" },
        p.rounds,
        p.sold,
        p.released,
        p.prizes,
        p.operator_transactions,
        r.fetched_transactions,
        MARGIN_MS / 60_000,
        euros(p.debited_cents),
        euros(p.credited_cents),
    );
    if p.clean() {
        out.push_str(
            "clean: every sold ticket has one debit of its price, every released ticket none standing, \
             every prize one credit of its amount\n",
        );
    } else {
        let width = p.mismatches.iter().map(|m| m.round_id.len()).max().unwrap_or(0);
        out.push_str(&format!("{} mismatch{}:\n", p.mismatches.len(), if p.mismatches.len() == 1 { "" } else { "es" }));
        for m in &p.mismatches {
            out.push_str(&format!("  {:width$}  {:<24}  {}\n", m.round_id, m.kind, m.detail));
        }
    }
    out
}

/// The command: prints the report (text or JSON) and returns whether the
/// period is clean; an error when either side could not be read.
pub fn run(args: ReconcileArgs) -> anyhow::Result<bool> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let r = rt.block_on(reconcile_period(
        &client(),
        &args.game,
        &args.operator_token,
        &args.wallet_url,
        &args.operator_keys,
        (args.from, args.to),
        args.strict,
    ))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", render(&r));
    }
    Ok(r.clean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wallet::{RoundState, TxKind};

    #[test]
    fn moments_are_milliseconds_or_iso_dates() {
        assert_eq!(parse_moment("1764915200123"), Ok(1_764_915_200_123));
        assert_eq!(parse_moment("1970-01-01"), Ok(0));
        assert_eq!(parse_moment("2026-12-05T06:00:00Z"), Ok(1_796_450_400_000));
        assert_eq!(parse_moment("2026-12-05T06:00Z"), Ok(1_796_450_400_000));
        assert_eq!(parse_moment("2026-12-05T07:00:00+01:00"), Ok(1_796_450_400_000));
        assert_eq!(parse_moment("2026-12-05T05:30:00.5-00:30"), Ok(1_796_450_400_500));
        assert_eq!(parse_moment("2024-02-29"), Ok(1_709_164_800_000));
        // The inverse of format::iso8601, over leap years and centuries.
        for ms in [0, 951_782_400_000, 4_107_542_399_999, 1_796_450_400_123] {
            assert_eq!(parse_moment(&iso8601(ms)), Ok(ms), "{}", iso8601(ms));
        }
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2025-02-29",
            "2026-12-05T24:00Z",
            "2026-12-5",
            "12:00",
            "-5",
            "2026-12-05T06:00:00.1234Z",
            "2026-12-05T06:00+1",
        ] {
            assert!(parse_moment(bad).is_err(), "{bad:?}");
        }
    }

    fn round(id: &str, state: RoundState, prize: Option<i64>) -> OurRound {
        OurRound {
            round_id: id.into(),
            player: "p1".into(),
            price_cents: 300,
            state,
            prize_cents: prize,
            credit_acknowledged: prize.is_some(),
        }
    }

    fn tx(round: &str, kind: TxKind, amount: i64, applied_ms: i64) -> OperatorTransaction {
        OperatorTransaction {
            transaction_id: format!("{round}:{kind}"),
            kind,
            round_id: round.into(),
            player: "p1".into(),
            amount_cents: amount,
            applied_ms,
            rolled_back: false,
        }
    }

    #[test]
    fn the_margin_finds_late_transactions_and_leaves_the_neighbours_theirs() {
        let (from, to) = (1_000_000, 2_000_000);
        let period = [round("IN.1", RoundState::Sold, Some(1000))];
        let around = [round("IN.1", RoundState::Sold, Some(1000)), round("BEFORE.1", RoundState::Sold, None)];
        let theirs = vec![
            tx("IN.1", TxKind::Debit, 300, to + 5),        // applied after the period: found
            tx("IN.1", TxKind::Credit, 1000, to + 60_000), // credited later still: found
            tx("BEFORE.1", TxKind::Debit, 300, from + 3),  // a round of the period before: not ours to judge
            tx("GHOST.1", TxKind::Debit, 300, from + 10),  // unknown to the game, in the period
            tx("LATER.1", TxKind::Debit, 300, to + 10),    // unknown, after the period: the next one's
        ];
        let kept = scope(&period, &around, theirs, from, to);
        let ids: Vec<&str> = kept.iter().map(|t| t.transaction_id.as_str()).collect();
        assert_eq!(ids, ["IN.1:debit", "IN.1:credit", "GHOST.1:debit"]);
        let report = reconcile(&period, &kept, false);
        let kinds: Vec<(&str, &str)> = report.mismatches.iter().map(|m| (m.round_id.as_str(), m.kind)).collect();
        assert_eq!(kinds, [("GHOST.1", "debit_without_ticket")]);
    }

    fn reconciled(ours: &[OurRound], theirs: &[OperatorTransaction]) -> Reconciled {
        let report = reconcile(ours, theirs, true);
        Reconciled {
            from_ms: 1_796_450_400_000,
            to_ms: 1_796_454_000_000,
            strict: true,
            fetched_transactions: theirs.len() + 2,
            clean: report.clean(),
            report,
        }
    }

    #[test]
    fn a_clean_report_gives_counts_and_totals_in_euros() {
        let ours = [round("A.1", RoundState::Sold, Some(150_000)), round("B.1", RoundState::Released, None)];
        let theirs = [tx("A.1", TxKind::Debit, 300, 5), tx("A.1", TxKind::Credit, 150_000, 6)];
        let text = render(&reconciled(&ours, &theirs));
        assert_eq!(
            text,
            "reconciliation of 2026-12-05T06:00:00.000Z to 2026-12-05T07:00:00.000Z (strict)\n\
             our rounds: 2 (1 sold, 1 released, 1 with a prize)\n\
             operator's transactions compared: 2 (of 4 fetched, 10 minutes either side)\n\
             debited for sold tickets: 3,00\u{a0}€\n\
             credited for prizes: 1\u{a0}500,00\u{a0}€\n\
             clean: every sold ticket has one debit of its price, every released ticket none standing, \
             every prize one credit of its amount\n"
        );
    }

    #[test]
    fn a_report_with_mismatches_lists_each_with_its_round_and_code() {
        let ours = [round("A.1", RoundState::Sold, Some(1000)), round("LONGER.2", RoundState::Released, None)];
        let theirs = [tx("A.1", TxKind::Debit, 300, 5), tx("LONGER.2", TxKind::Debit, 300, 6)];
        let r = reconciled(&ours, &theirs);
        assert!(!r.clean);
        let text = render(&r);
        assert!(text.contains("2 mismatches:\n"), "{text}");
        assert!(
            text.contains(
                "  A.1       prize_not_credited        1000 cents acknowledged but not in the operator's list\n"
            ),
            "{text}"
        );
        assert!(text.contains("  LONGER.2  released_but_debited      the ticket went back"), "{text}");
        assert!(!text.contains("clean:"), "{text}");
    }
}
