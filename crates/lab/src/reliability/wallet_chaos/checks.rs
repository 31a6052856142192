//! After the play: the wait until every round is settled, then the
//! reconciliation and the checks of the module's documentation.

use super::client::{Trouble, launch};
use super::operator_child::admin;
use super::player::{Held, Kind, Shared};
use crate::reconcile::{fetch_rounds, fetch_transactions, now_ms, reconcile_period};
use crate::reliability::testbed::OPERATOR_TOKEN;
use anyhow::Context;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use wallet::{OperatorTransaction, OurRound, RoundId, RoundState, TxKind};

/// The longest wait for every round to settle once the play ends.
const SETTLE: Duration = Duration::from_secs(240);

/// The sum of a metric's samples on a Prometheus text page.
pub(super) fn metric(page: &str, name: &str) -> Option<f64> {
    let mut found = None;
    for line in page.lines().filter(|l| !l.starts_with('#')) {
        let Some(rest) = line.strip_prefix(name) else { continue };
        if !(rest.starts_with(' ') || rest.starts_with('{')) {
            continue;
        }
        if let Some(v) = rest.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) {
            *found.get_or_insert(0.0) += v;
        }
    }
    found
}

/// The figures the checks after the play found.
#[derive(Default)]
pub(super) struct Verdict {
    pub(super) settle_ms: u128,
    pub(super) reconciliation: Value,
    pub(super) checks: Vec<Value>,
    pub(super) rounds_sold: usize,
    pub(super) rounds_released: usize,
    pub(super) operator_summary: Value,
}

/// Waits until every round is settled and every outbox empty, then runs
/// the reconciliation and the checks of the module's documentation.
pub(super) async fn settle_and_check(
    c: &reqwest::Client,
    shared: &Shared,
    urls: &[String],
    op_url: &str,
    who: &[(String, Kind)],
    from_ms: i64,
) -> anyhow::Result<Verdict> {
    let mut v = Verdict::default();
    let began = Instant::now();
    let mut ours: Vec<OurRound>;
    loop {
        let mut depth = 0.0;
        for url in urls {
            let page = c.get(format!("{url}/metrics")).send().await?.text().await?;
            depth += metric(&page, "as_capone_wallet_outbox_depth")
                .context("the server's /metrics has no as_capone_wallet_outbox_depth")?;
        }
        ours = fetch_rounds(c, &urls[0], OPERATOR_TOKEN, from_ms, now_ms() + 60_000).await?;
        let unresolved = ours.iter().filter(|r| r.state == RoundState::Unresolved).count();
        let pending = ours.iter().filter(|r| r.prize_cents.unwrap_or(0) > 0 && !r.credit_acknowledged).count();
        if depth == 0.0 && unresolved == 0 && pending == 0 {
            break;
        }
        if began.elapsed() > SETTLE {
            shared.fail(format!(
                "not settled after {} s: outbox depth {depth}, {unresolved} unresolved rounds, {pending} prizes unacknowledged",
                SETTLE.as_secs()
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    v.settle_ms = began.elapsed().as_millis();
    let to_ms = now_ms() + 60_000;
    let keys = &shared.keys;
    let r = reconcile_period(c, &urls[0], OPERATOR_TOKEN, op_url, keys, (from_ms, to_ms), true).await?;
    v.rounds_sold = r.report.sold;
    v.rounds_released = r.report.released;
    let mismatches: Vec<String> =
        r.report.mismatches.iter().take(20).map(|m| format!("{} {}: {}", m.round_id, m.kind, m.detail)).collect();
    v.checks.push(check(
        "reconciliation clean (strict)",
        r.clean,
        json!({
            "rounds": r.report.rounds, "sold": r.report.sold, "released": r.report.released, "prizes": r.report.prizes,
            "operator_transactions": r.report.operator_transactions, "debited_cents": r.report.debited_cents,
            "credited_cents": r.report.credited_cents, "mismatches": r.report.mismatches.len(), "first": mismatches,
        }),
    ));
    v.reconciliation = serde_json::to_value(&r.report)?;
    let theirs = fetch_transactions(c, op_url, keys, from_ms - 60_000, to_ms).await?;
    let held = shared.held.lock().unwrap().clone();
    v.checks.extend(ledger_checks(&ours, &theirs, &held));
    // The operator's own books.
    let summary = admin(c, reqwest::Method::GET, format!("{op_url}/admin/summary"), None).await?;
    v.checks.push(check("operator's ledger balanced", summary["balanced"] == true, json!({
        "entries_sum_cents": summary["entries_sum_cents"], "balances_match_entries": summary["balances_match_entries"],
    })));
    v.operator_summary = summary;
    // Every player's balance: at the operator, from the transactions, and on our /api/me.
    let mut wrong = Vec::new();
    for (name, kind) in who {
        let p = admin(c, reqwest::Method::GET, format!("{op_url}/admin/players/{name}"), None).await?;
        let moved: i64 = theirs
            .iter()
            .filter(|t| &t.player == name)
            .map(|t| match t.kind {
                TxKind::Debit if !t.rolled_back => -t.amount_cents,
                TxKind::Credit => t.amount_cents,
                _ => 0,
            })
            .sum();
        let want = kind.start_cents() + moved;
        if p["balance_cents"].as_i64() != Some(want) {
            wrong.push(format!("{name}: the operator holds {}, start + transactions = {want}", p["balance_cents"]));
        }
        let token = launch(c, &urls[0], keys, name).await.map_err(|e| match e {
            Trouble::Down => anyhow::anyhow!("launch of {name}: no answer"),
            Trouble::Relaunch(w) | Trouble::Failed(w) => anyhow::anyhow!("launch of {name}: {w}"),
        })?;
        let me = c.get(format!("{}/api/me", urls[0])).bearer_auth(&token).send().await?.json::<Value>().await?;
        if me["balance_cents"].as_i64() != Some(want) || me["mode"] != "operator" {
            wrong.push(format!("{name}: /api/me shows {} ({}), the operator {want}", me["balance_cents"], me["mode"]));
        }
    }
    v.checks.push(check(
        "every balance = start - standing debits + credits, at the operator and on /api/me",
        wrong.is_empty(),
        json!(wrong),
    ));
    Ok(v)
}

fn check(name: &str, ok: bool, seen: Value) -> Value {
    json!({"check": name, "ok": ok, "seen": seen})
}

/// The checks of our rounds, the operator's transactions and what the
/// players were answered, against each other.
fn ledger_checks(ours: &[OurRound], theirs: &[OperatorTransaction], held: &[Held]) -> Vec<Value> {
    let serial_of = |round: &str| RoundId::parse(round).map(|r| r.serial).unwrap_or_else(|| round.to_string());
    let standing: Vec<&OperatorTransaction> =
        theirs.iter().filter(|t| t.kind == TxKind::Debit && !t.rolled_back).collect();
    let mut by_serial: HashMap<String, Vec<&OperatorTransaction>> = HashMap::new();
    for d in &standing {
        by_serial.entry(serial_of(&d.round_id)).or_default().push(d);
    }
    let held_by_serial: HashMap<&str, &Held> = held.iter().map(|h| (h.serial.as_str(), h)).collect();
    let mut out = Vec::new();

    let doubles: Vec<String> = by_serial
        .iter()
        .filter(|(_, d)| d.len() > 1)
        .map(|(s, d)| format!("{s}: {}", d.iter().map(|t| t.transaction_id.as_str()).collect::<Vec<_>>().join(", ")))
        .collect();
    let double_held = held.len() - held_by_serial.len();
    out.push(check(
        "no double debit (one standing debit per ticket; no ticket answered twice)",
        doubles.is_empty() && double_held == 0,
        json!({"tickets_with_several_debits": doubles.iter().take(20).collect::<Vec<_>>(), "tickets_answered_twice": double_held}),
    ));

    let orphans: Vec<String> = standing
        .iter()
        .filter(|d| match held_by_serial.get(serial_of(&d.round_id).as_str()) {
            Some(h) => h.player != d.player || h.price_cents != d.amount_cents,
            None => true,
        })
        .map(|d| format!("{} ({}, {} cents)", d.transaction_id, d.player, d.amount_cents))
        .collect();
    out.push(check(
        "no debit without a ticket (every standing debit: a ticket its player was sold, at its price)",
        orphans.is_empty(),
        json!({"standing_debits": standing.len(), "orphans": orphans.iter().take(20).collect::<Vec<_>>()}),
    ));

    let sold_rounds: HashMap<String, &OurRound> =
        ours.iter().filter(|r| r.state == RoundState::Sold).map(|r| (serial_of(&r.round_id), r)).collect();
    let undebited: Vec<String> = held
        .iter()
        .filter(|h| {
            by_serial.get(&h.serial).map_or(0, Vec::len) != 1
                || sold_rounds.get(&h.serial).is_none_or(|r| r.player != h.player)
        })
        .map(|h| format!("{} ({})", h.serial, h.player))
        .collect();
    out.push(check(
        "no ticket without a debit (every ticket sold: one standing debit, a sold round of its player)",
        undebited.is_empty() && sold_rounds.len() == held.len(),
        json!({"tickets": held.len(), "sold_rounds": sold_rounds.len(), "without": undebited.iter().take(20).collect::<Vec<_>>()}),
    ));

    let mut credits: HashMap<String, Vec<&OperatorTransaction>> = HashMap::new();
    for t in theirs.iter().filter(|t| t.kind == TxKind::Credit) {
        credits.entry(serial_of(&t.round_id)).or_default().push(t);
    }
    let unfinished = held.iter().filter(|h| h.prize_cents.is_none()).count();
    let mut wrong: Vec<String> = Vec::new();
    let mut prizes = (0usize, 0i64);
    for h in held {
        let prize = h.prize_cents.unwrap_or(0);
        let got: Vec<i64> =
            credits.get(&h.serial).map(|v| v.iter().map(|t| t.amount_cents).collect()).unwrap_or_default();
        let right = if prize > 0 { got == [prize] } else { got.is_empty() };
        if prize > 0 {
            prizes.0 += 1;
            prizes.1 += prize;
        }
        if !right {
            wrong.push(format!("{}: prize {prize}, credits {got:?}", h.serial));
        }
    }
    let stray: Vec<&String> = credits.keys().filter(|s| !held_by_serial.contains_key(s.as_str())).collect();
    out.push(check(
        "every prize credited exactly once (and nothing else credited)",
        wrong.is_empty() && stray.is_empty() && unfinished == 0,
        json!({"prizes": prizes.0, "prizes_cents": prizes.1, "credits": credits.values().map(Vec::len).sum::<usize>(),
               "wrong": wrong.iter().take(20).collect::<Vec<_>>(), "credits_of_unknown_tickets": stray.iter().take(20).collect::<Vec<_>>(),
               "tickets_not_finished": unfinished}),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(id: &str, player: &str, state: RoundState, prize: Option<i64>) -> OurRound {
        OurRound {
            round_id: id.into(),
            player: player.into(),
            price_cents: 300,
            state,
            prize_cents: prize,
            credit_acknowledged: prize.is_some(),
        }
    }

    fn tx(round: &str, player: &str, kind: TxKind, amount: i64, rolled_back: bool) -> OperatorTransaction {
        OperatorTransaction {
            transaction_id: format!("{round}:{kind}"),
            kind,
            round_id: round.into(),
            player: player.into(),
            amount_cents: amount,
            applied_ms: 1,
            rolled_back,
        }
    }

    fn held(serial: &str, player: &str, prize: Option<i64>) -> Held {
        Held { player: player.into(), serial: serial.into(), price_cents: 300, prize_cents: prize }
    }

    fn failing(checks: &[Value]) -> Vec<String> {
        checks.iter().filter(|c| c["ok"] != true).map(|c| c["check"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn a_sound_run_passes_every_check() {
        let ours = [
            round("A.1", "p", RoundState::Released, None),
            round("A.2", "p", RoundState::Sold, Some(1000)),
            round("B.1", "q", RoundState::Sold, Some(0)),
        ];
        let theirs = [
            tx("A.1", "p", TxKind::Debit, 300, true),
            tx("A.1", "p", TxKind::Rollback, 300, false),
            tx("A.2", "p", TxKind::Debit, 300, false),
            tx("A.2", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, false),
        ];
        let held = [held("A", "p", Some(1000)), held("B", "q", Some(0))];
        let checks = ledger_checks(&ours, &theirs, &held);
        assert_eq!(checks.len(), 4);
        assert!(failing(&checks).is_empty(), "{checks:#?}");
    }

    #[test]
    fn each_departure_fails_its_check() {
        let ours = [round("A.1", "p", RoundState::Sold, Some(1000)), round("B.1", "q", RoundState::Sold, None)];
        let base = [
            tx("A.1", "p", TxKind::Debit, 300, false),
            tx("A.1", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, false),
        ];
        let held_ok = [held("A", "p", Some(1000)), held("B", "q", Some(0))];
        assert!(failing(&ledger_checks(&ours, &base, &held_ok)).is_empty());

        // The ticket's second round debited too: a double debit, and a ticket with two debits.
        let mut theirs = base.to_vec();
        theirs.push(tx("A.2", "p", TxKind::Debit, 300, false));
        let f = failing(&ledger_checks(&ours, &theirs, &held_ok));
        assert!(f[0].starts_with("no double debit"), "{f:?}");
        assert!(f.iter().any(|c| c.starts_with("no ticket without a debit")), "{f:?}");

        // A standing debit for a ticket nobody was sold.
        let mut theirs = base.to_vec();
        theirs.push(tx("C.1", "q", TxKind::Debit, 300, false));
        assert_eq!(
            failing(&ledger_checks(&ours, &theirs, &held_ok)),
            ["no debit without a ticket (every standing debit: a ticket its player was sold, at its price)"]
        );

        // A ticket sold whose debit was rolled back.
        let theirs = [
            tx("A.1", "p", TxKind::Debit, 300, false),
            tx("A.1", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, true),
        ];
        assert_eq!(
            failing(&ledger_checks(&ours, &theirs, &held_ok)),
            ["no ticket without a debit (every ticket sold: one standing debit, a sold round of its player)"]
        );

        // A prize credited twice (as two rounds of the ticket), or not at all, or of another amount.
        for credits in [vec![1000, 1000], vec![], vec![999]] {
            let mut theirs = vec![base[0].clone(), base[2].clone()];
            for (i, amount) in credits.iter().enumerate() {
                theirs.push(tx(&format!("A.{}", i + 1), "p", TxKind::Credit, *amount, false));
            }
            let f = failing(&ledger_checks(&ours, &theirs, &held_ok));
            assert_eq!(f, ["every prize credited exactly once (and nothing else credited)"], "{credits:?}");
        }
        // A ticket left unfinished.
        let held_open = [held("A", "p", Some(1000)), held("B", "q", None)];
        assert_eq!(
            failing(&ledger_checks(&ours, &base, &held_open)),
            ["every prize credited exactly once (and nothing else credited)"]
        );
    }

    #[test]
    fn metrics_are_summed_over_their_labels() {
        let page = "# HELP as_capone_wallet_outbox_depth x\nas_capone_wallet_outbox_depth 3\n\
                    as_capone_wallet_outbox_depth_other 9\nas_capone_wallet_outbox_depth{kind=\"credit\"} 2\n";
        assert_eq!(metric(page, "as_capone_wallet_outbox_depth"), Some(5.0));
        assert_eq!(metric(page, "as_capone_missing"), None);
    }
}
