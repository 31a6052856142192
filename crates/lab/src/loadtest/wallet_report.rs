//! The operator mode's part of the report: the wallet's latencies, each
//! purchase split around its debit, the operator's ledger checked.

use super::latency::latencies;
use super::operator_mode::{self, OperatorSide};
use super::tally::Tally;
use serde_json::json;
use std::time::Duration;

/// Operator mode: the wallet's side of the run, added to the report.
pub(super) struct WalletReport {
    pub(super) json: serde_json::Value,
    pub(super) lines: Vec<String>,
    pub(super) problem: Option<String>,
}

/// The wallet's latencies, each purchase split around its debit, and the
/// operator's ledger checked against what the players saw.
pub(super) async fn wallet_report(side: &OperatorSide, total: &Tally, purchase_p99: f64) -> WalletReport {
    // Prizes reach the operator from the server's outbox, after the game:
    // waited for as long as they keep coming.
    let (money, problem) =
        side.check_money(total.purchases, total.price_cents, total.won, total.won_cents, Duration::from_secs(10)).await;
    let mut by_kind = serde_json::Map::new();
    let mut lines = Vec::new();
    let mut debit_p99 = None;
    for (kind, mut us) in side.wallet_us() {
        let l = latencies(&mut us);
        if kind == "debit" {
            debit_p99 = Some(l.0[2]);
        }
        lines.push(format!("wallet {kind} latency ms ({} calls, at the operator): {l}", us.len()));
        by_kind.insert(kind.to_string(), json!({"calls": us.len(), "latency_ms": l.json()}));
    }
    let (mut before, mut after) = side.purchase_split(&total.purchases_seen);
    let mut outside: Vec<u32> = before.iter().zip(&after).map(|(b, a)| b + a).collect();
    let (b, a, o) = (latencies(&mut before), latencies(&mut after), latencies(&mut outside));
    lines.push(format!("purchase before its debit left ms (reservation): {b}"));
    lines.push(format!("purchase after its debit's answer ms (settlement, answer): {a}"));
    lines.push(format!("purchase outside the wallet ms (both): {o}"));
    let bound = debit_p99.map(|p| p + 10.0);
    let within = bound.map(|b| purchase_p99 <= b);
    if let (Some(bound), Some(within)) = (bound, within) {
        lines.push(format!(
            "purchase p99 {purchase_p99:.2} ms {} the wallet's debit p99 + 10 ms = {bound:.2} ms",
            if within { "<=" } else { "> (not met)" }
        ));
    }
    let cpu = operator_mode::operator_cpu_seconds();
    if let Some(cpu) = cpu {
        lines.push(format!(
            "the operator's side (reference operator, its ledger, the proxy) used {cpu:.2} s of CPU in this process"
        ));
    }
    lines.push(format!("operator's ledger: {money}"));
    WalletReport {
        json: json!({
            "delay_ms": side.delay_ms,
            "calls": by_kind,
            "purchase_split_ms": {"before_debit": b.json(), "after_debit": a.json(), "outside_wallet": o.json(), "purchases": outside.len()},
            "purchase_p99_bound_ms": bound,
            "purchase_p99_within_bound": within,
            "ledger": money,
            "operator_cpu_s": cpu,
        }),
        lines,
        problem,
    }
}
